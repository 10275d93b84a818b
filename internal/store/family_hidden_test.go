package store

import (
	"context"
	"errors"
	"testing"
)

// TestFamilyHidden checks that a resource its family hides is absent to
// get, list, update and delete, though still stored, and that the others
// are not touched.
func TestFamilyHidden(t *testing.T) {
	s, ctx := newFamilyTestStore(t)
	account, err := s.CreateAccount(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	fam := botUsers
	fam.hidden = func(context.Context, *Store) (func(BotUser) bool, error) {
		return func(b BotUser) bool { return b.Name == "gone" }, nil
	}
	shown, err := fam.create(ctx, s, account.ID, BotUser{Name: "shown"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := fam.create(ctx, s, account.ID, BotUser{Name: "gone"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fam.get(ctx, s, account.ID, gone.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("get of a hidden resource: %v, want ErrNotFound", err)
	}
	if _, err := fam.update(ctx, s, account.ID, gone.ID, func(b *BotUser) error { b.Active = false; return nil }, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("update of a hidden resource: %v, want ErrNotFound", err)
	}
	if _, err := fam.remove(ctx, s, account.ID, gone.ID, nil, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete of a hidden resource: %v, want ErrNotFound", err)
	}
	items, next, err := fam.list(ctx, s, account.ID, Page{})
	if err != nil || len(items) != 1 || items[0].ID != shown.ID || next != "" {
		t.Errorf("list = %+v, %q, %v; want only %s", items, next, err, shown.ID)
	}
	// Still stored: the family's own hook decides when it goes.
	if stored, err := botUsers.get(ctx, s, account.ID, gone.ID); err != nil || stored.ID != gone.ID {
		t.Errorf("stored = %+v, %v", stored, err)
	}
	if got, err := fam.get(ctx, s, account.ID, shown.ID); err != nil || got != shown {
		t.Errorf("get of a shown resource = %+v, %v", got, err)
	}
}
