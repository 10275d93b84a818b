package store_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/store"
)

func TestCreateAccount(t *testing.T) {
	tests := []struct {
		name        string
		accountName string
		wantErr     error
	}{
		{name: "plain", accountName: "acme"},
		{name: "longest name", accountName: strings.Repeat("a", 255)},
		{name: "empty name", accountName: "", wantErr: store.ErrInvalid},
		{name: "name too long", accountName: strings.Repeat("a", 256), wantErr: store.ErrInvalid},
		{name: "name not utf-8", accountName: "\xff", wantErr: store.ErrInvalid},
	}
	e := newEnv(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			account, err := e.store.CreateAccount(e.ctx, tt.accountName)
			wantErr(t, err, tt.wantErr)
			if tt.wantErr != nil {
				return
			}
			if err := schemas.CheckID(schemas.PrefixAccount, account.ID); err != nil {
				t.Fatalf("account id: %v", err)
			}
			if account.Name != tt.accountName || account.CreatedAt.IsZero() {
				t.Fatalf("account = %+v", account)
			}
			got, err := e.store.GetAccount(e.ctx, account.ID)
			if err != nil {
				t.Fatalf("GetAccount: %v", err)
			}
			if got != account {
				t.Fatalf("GetAccount = %+v, want %+v", got, account)
			}
		})
	}
}

func TestGetAccountNotFound(t *testing.T) {
	tests := []struct {
		name string
		id   string
	}{
		{name: "unknown id", id: schemas.NewID(schemas.PrefixAccount)},
		{name: "api key id", id: schemas.NewID(schemas.PrefixAPIKey)},
		{name: "wildcard", id: "ac_*"},
		{name: "empty", id: ""},
	}
	e := newEnv(t)
	e.createAccount(t, "other")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.store.GetAccount(e.ctx, tt.id)
			wantErr(t, err, store.ErrNotFound)
		})
	}
}

func TestListAccountsNewestFirst(t *testing.T) {
	e := newEnv(t)
	got, err := e.store.ListAccounts(e.ctx)
	if err != nil {
		t.Fatalf("ListAccounts on an empty store: %v", err)
	}
	if len(got) != 0 {
		t.Fatalf("ListAccounts on an empty store = %+v", got)
	}

	created := make(map[string]store.Account)
	for _, name := range []string{"first", "second", "third", "fourth"} {
		account := e.createAccount(t, name)
		created[account.ID] = account
	}
	got, err = e.store.ListAccounts(e.ctx)
	if err != nil {
		t.Fatalf("ListAccounts: %v", err)
	}
	if len(got) != len(created) {
		t.Fatalf("ListAccounts returned %d accounts, want %d", len(got), len(created))
	}
	for i, account := range got {
		if created[account.ID] != account {
			t.Fatalf("account %d = %+v, want %+v", i, account, created[account.ID])
		}
		if i == 0 {
			continue
		}
		prev := got[i-1]
		if prev.CreatedAt.Before(account.CreatedAt) ||
			(prev.CreatedAt.Equal(account.CreatedAt) && prev.ID < account.ID) {
			t.Fatalf("accounts %d and %d out of order: %+v before %+v", i-1, i, prev, account)
		}
	}
}
