package store_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestListDestinationsPages pages through 250 destinations 7 at a time:
// each comes once, newest first, and the last page says there is no next.
func TestListDestinationsPages(t *testing.T) {
	const count, limit = 250, 7
	e := newEnvWith(t, store.Config{Limits: store.Limits{Destinations: count}})
	account := e.createAccount(t, "acme")
	other := e.createAccount(t, "other")
	e.createDestination(t, other.ID, kinesisDestination())
	var want []string
	for range count {
		want = append(want, e.createDestination(t, account.ID, kinesisDestination()).ID)
	}
	slices.SortFunc(want, func(a, b string) int { return strings.Compare(b, a) })

	var got []string
	page := store.Page{Limit: limit}
	for pages := 1; ; pages++ {
		items, next, err := e.store.ListDestinations(e.ctx, account.ID, page)
		if err != nil {
			t.Fatalf("ListDestinations(%+v): %v", page, err)
		}
		if next != "" && len(items) != limit {
			t.Fatalf("page %d has %d items and a next page, want %d", pages, len(items), limit)
		}
		for _, d := range items {
			got = append(got, d.ID)
		}
		if next == "" {
			break
		}
		if next != items[len(items)-1].ID {
			t.Fatalf("next before_id %s is not the last item of the page, %s", next, items[len(items)-1].ID)
		}
		if pages > count {
			t.Fatalf("still paging after %d pages", pages)
		}
		page.BeforeID = next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged through %d destinations, want each of %d once, newest first", len(got), len(want))
	}

	all, next, err := e.store.ListDestinations(e.ctx, account.ID, store.Page{})
	if err != nil {
		t.Fatalf("ListDestinations with the default limit: %v", err)
	}
	if len(all) != store.DefaultPageLimit || next != all[len(all)-1].ID {
		t.Fatalf("default page: %d items and next %q, want %d and a next page", len(all), next, store.DefaultPageLimit)
	}
}

func TestListSubscriptionsPages(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	var want []string
	for range 5 {
		want = append(want, e.createSubscription(t, account.ID, store.Subscription{}).ID)
	}
	slices.SortFunc(want, func(a, b string) int { return strings.Compare(b, a) })
	first, next, err := e.store.ListSubscriptions(e.ctx, account.ID, store.Page{Limit: 3})
	if err != nil {
		t.Fatalf("ListSubscriptions: %v", err)
	}
	second, last, err := e.store.ListSubscriptions(e.ctx, account.ID, store.Page{Limit: 3, BeforeID: next})
	if err != nil {
		t.Fatalf("ListSubscriptions after %s: %v", next, err)
	}
	var got []string
	for _, sub := range append(first, second...) {
		got = append(got, sub.ID)
	}
	if !slices.Equal(got, want) || last != "" {
		t.Fatalf("pages %v (next %q), want %v and no next page", got, last, want)
	}
	// A cursor need not name an item that still exists.
	if _, err := e.store.DeleteSubscription(e.ctx, account.ID, want[2]); err != nil {
		t.Fatalf("DeleteSubscription: %v", err)
	}
	after, _, err := e.store.ListSubscriptions(e.ctx, account.ID, store.Page{BeforeID: want[2]})
	if err != nil {
		t.Fatalf("ListSubscriptions after a deleted id: %v", err)
	}
	if len(after) != 2 || after[0].ID != want[3] || after[1].ID != want[4] {
		t.Fatalf("page after a deleted id = %+v, want %v", after, want[3:])
	}
}

func TestListPageValidation(t *testing.T) {
	tests := []struct {
		name      string
		page      store.Page
		wantField string
	}{
		{name: "defaults", page: store.Page{}},
		{name: "one", page: store.Page{Limit: 1}},
		{name: "most", page: store.Page{Limit: store.MaxPageLimit}},
		{name: "a destination id", page: store.Page{BeforeID: schemas.NewID(schemas.PrefixDestination)}},
		{name: "negative limit", page: store.Page{Limit: -1}, wantField: "limit"},
		{name: "limit over 100", page: store.Page{Limit: 101}, wantField: "limit"},
		{name: "malformed before_id", page: store.Page{BeforeID: "ed_x"}, wantField: "before_id"},
		{name: "before_id of another resource", page: store.Page{BeforeID: schemas.NewID(schemas.PrefixSubscription)}, wantField: "before_id"},
	}
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := e.store.ListDestinations(e.ctx, account.ID, tt.page)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("ListDestinations: %v", err)
				}
				return
			}
			wantInvalid(t, err, tt.wantField)
		})
	}
}

// TestListMatchPages pages through 250 bot users 10 at a time with a Match
// that keeps one in three: each page holds 10 that match, or fewer on the
// last, the pages hold each match once, newest first, and a page reads no
// further than the one more match that says there is a next page. An
// error of Match is returned as it is.
func TestListMatchPages(t *testing.T) {
	const count, limit = 250, 10
	e := newEnvWith(t, store.Config{Limits: store.Limits{BotUsers: count}})
	account := e.createAccount(t, "acme")
	var want []string
	for i := range count {
		b, err := e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{Name: fmt.Sprintf("bot %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			want = append(want, b.ID)
		}
	}
	slices.SortFunc(want, func(a, b string) int { return strings.Compare(b, a) })
	calls := 0
	keep := func(item any) (bool, error) {
		calls++
		var n int
		_, err := fmt.Sscanf(item.(store.BotUser).Name, "bot %d", &n)
		return n%3 == 0, err
	}

	var got []string
	page := store.Page{Limit: limit, Match: keep}
	for pages := 1; ; pages++ {
		calls = 0
		items, next, err := e.store.ListBotUsers(e.ctx, account.ID, page)
		if err != nil {
			t.Fatalf("ListBotUsers(%+v): %v", page, err)
		}
		if next != "" && (len(items) != limit || next != items[len(items)-1].ID) {
			t.Fatalf("page %d has %d items and next %s, want %d and its last", pages, len(items), next, limit)
		}
		if next != "" && calls > 3*(limit+1) {
			t.Fatalf("page %d called Match %d times, want at most %d", pages, calls, 3*(limit+1))
		}
		for _, b := range items {
			got = append(got, b.ID)
		}
		if next == "" || pages > count {
			break
		}
		page.BeforeID = next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged through %d bot users, want each of the %d that match once, newest first", len(got), len(want))
	}

	failed := errors.New("no")
	_, _, err := e.store.ListBotUsers(e.ctx, account.ID, store.Page{Match: func(any) (bool, error) { return false, failed }})
	if err != failed {
		t.Errorf("a Match failing: %v, want its error", err)
	}
}
