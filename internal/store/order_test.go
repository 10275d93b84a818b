package store_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store"
)

// orderCount is how many resources of a kind the order tests make in a
// tight loop: far more than fit in a second apart, so that ids sorting by
// creation only to the second would list some out of order.
const orderCount = 40

// listAll pages through a list with pages of limit items and returns the
// ids in the order listed.
func listAll[T any](t *testing.T, limit int, list func(store.Page) ([]T, string, error), id func(T) string) []string {
	t.Helper()
	var got []string
	page := store.Page{Limit: limit}
	for pages := 1; ; pages++ {
		items, next, err := list(page)
		if err != nil {
			t.Fatalf("list %+v: %v", page, err)
		}
		for _, item := range items {
			got = append(got, id(item))
		}
		if next == "" {
			return got
		}
		if pages > orderCount {
			t.Fatalf("still paging after %d pages", pages)
		}
		page.BeforeID = next
	}
}

// newestFirst returns the ids in the reverse of the order they were made.
func newestFirst(made []string) []string {
	want := slices.Clone(made)
	slices.Reverse(want)
	return want
}

// TestListsInCreationOrder makes many resources of each kind within a
// second and checks that every list, through all its pages, holds them in
// exactly the reverse of the order they were made, and that created_at
// never contradicts that order.
func TestListsInCreationOrder(t *testing.T) {
	const limit = 7
	e := newEnvWith(t, store.Config{Limits: store.Limits{
		Destinations: orderCount, Subscriptions: orderCount, APIKeys: orderCount, RunningReplays: orderCount,
	}})
	account := e.createAccount(t, "acme")

	t.Run("api keys", func(t *testing.T) {
		var made []string
		for range orderCount {
			key, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{}, "")
			if err != nil {
				t.Fatalf("CreateAPIKey: %v", err)
			}
			made = append(made, key.ID)
		}
		got := listAll(t, limit, func(p store.Page) ([]store.APIKey, string, error) {
			return e.store.ListAPIKeys(e.ctx, account.ID, p)
		}, func(k store.APIKey) string { return k.ID })
		if want := newestFirst(made); !slices.Equal(got, want) {
			t.Fatalf("API keys listed\n%v\nwant newest first\n%v", got, want)
		}
	})

	var destinations []string
	t.Run("destinations", func(t *testing.T) {
		for range orderCount {
			destinations = append(destinations, e.createDestination(t, account.ID, kinesisDestination()).ID)
		}
		got := listAll(t, limit, func(p store.Page) ([]store.Destination, string, error) {
			return e.store.ListDestinations(e.ctx, account.ID, p)
		}, func(d store.Destination) string { return d.ID })
		if want := newestFirst(destinations); !slices.Equal(got, want) {
			t.Fatalf("destinations listed\n%v\nwant newest first\n%v", got, want)
		}
	})

	var subscription string
	t.Run("subscriptions", func(t *testing.T) {
		var made []string
		for range orderCount {
			made = append(made, e.createSubscription(t, account.ID, store.Subscription{}).ID)
		}
		subscription = made[0]
		got := listAll(t, limit, func(p store.Page) ([]store.Subscription, string, error) {
			return e.store.ListSubscriptions(e.ctx, account.ID, p)
		}, func(s store.Subscription) string { return s.ID })
		if want := newestFirst(made); !slices.Equal(got, want) {
			t.Fatalf("subscriptions listed\n%v\nwant newest first\n%v", got, want)
		}
	})

	t.Run("replays", func(t *testing.T) {
		if subscription == "" {
			t.Skip("no subscription to replay")
		}
		var made []string
		since := time.Now().Add(-time.Hour)
		for range orderCount {
			r, err := e.store.Replays().CreateReplay(e.ctx, account.ID, subscription, store.Replay{Since: since, Until: since.Add(time.Minute)}, nil)
			if err != nil {
				t.Fatalf("CreateReplay: %v", err)
			}
			made = append(made, r.ID)
		}
		replays, err := e.store.Replays().ListReplays(e.ctx, account.ID, subscription)
		if err != nil {
			t.Fatalf("ListReplays: %v", err)
		}
		got := make([]string, len(replays))
		for i, r := range replays {
			got[i] = r.ID
		}
		if want := newestFirst(made); !slices.Equal(got, want) {
			t.Fatalf("replays listed\n%v\nwant newest first\n%v", got, want)
		}
	})

	t.Run("accounts", func(t *testing.T) {
		made := []string{account.ID}
		for i := range orderCount {
			made = append(made, e.createAccount(t, fmt.Sprintf("team-%d", i)).ID)
		}
		accounts, err := e.store.ListAccounts(e.ctx)
		if err != nil {
			t.Fatalf("ListAccounts: %v", err)
		}
		got := make([]string, len(accounts))
		for i, a := range accounts {
			got[i] = a.ID
			if i > 0 && a.CreatedAt.After(accounts[i-1].CreatedAt) {
				t.Fatalf("account %s created at %s lists after %s created at %s", a.ID, a.CreatedAt, accounts[i-1].ID, accounts[i-1].CreatedAt)
			}
		}
		if want := newestFirst(made); !slices.Equal(got, want) {
			t.Fatalf("accounts listed\n%v\nwant newest first\n%v", got, want)
		}
	})
}

// TestListOrderAcrossProcesses has two stores on one bucket, as two
// sluice processes would, make destinations at once: the list holds each
// one's destinations in the reverse of the order it made them, interleaved
// by creation time (created_at never increases down the list), on every
// page.
func TestListOrderAcrossProcesses(t *testing.T) {
	e := newEnvWith(t, store.Config{Limits: store.Limits{Destinations: 2 * orderCount}})
	account := e.createAccount(t, "acme")
	stores := []*store.Store{e.store, e.openAnother(t)}
	made := make([][]string, len(stores))
	var wg sync.WaitGroup
	errs := make(chan error, len(stores))
	for i, s := range stores {
		wg.Go(func() {
			for range orderCount {
				d, err := s.CreateDestination(e.ctx, account.ID, kinesisDestination())
				if err != nil {
					errs <- fmt.Errorf("store %d: CreateDestination: %w", i, err)
					return
				}
				made[i] = append(made[i], d.ID)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	var listed []store.Destination
	page := store.Page{Limit: 9}
	for {
		items, next, err := e.store.ListDestinations(e.ctx, account.ID, page)
		if err != nil {
			t.Fatalf("ListDestinations(%+v): %v", page, err)
		}
		listed = append(listed, items...)
		if next == "" {
			break
		}
		page.BeforeID = next
	}
	if len(listed) != 2*orderCount {
		t.Fatalf("listed %d destinations, want %d", len(listed), 2*orderCount)
	}
	for i := 1; i < len(listed); i++ {
		if listed[i].CreatedAt.After(listed[i-1].CreatedAt) {
			t.Fatalf("destination %s created at %s lists after %s created at %s", listed[i].ID, listed[i].CreatedAt, listed[i-1].ID, listed[i-1].CreatedAt)
		}
	}
	for i, ids := range made {
		var got []string
		for _, d := range listed {
			if slices.Contains(ids, d.ID) {
				got = append(got, d.ID)
			}
		}
		if want := newestFirst(ids); !slices.Equal(got, want) {
			t.Fatalf("store %d's destinations listed\n%v\nwant newest first\n%v", i, got, want)
		}
	}
}
