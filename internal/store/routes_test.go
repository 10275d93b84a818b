package store_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
)

// TestRouteLimit refuses a subscription, made or changed, that would give
// its account more routes (destinations named, summed over its
// subscriptions) than the limit, saying how many it would make; a write
// that does not add routes passes; the limit of one account is not
// another's.
func TestRouteLimit(t *testing.T) {
	const limit = 5
	e := newEnvWith(t, store.Config{Limits: store.Limits{Routes: limit}})
	account, other := e.createAccount(t, "acme"), e.createAccount(t, "other")
	dests := make([]string, 4)
	for i := range dests {
		d, err := e.store.CreateDestination(e.ctx, account.ID, kinesisDestination())
		if err != nil {
			t.Fatal(err)
		}
		dests[i] = d.ID
	}
	sources := []store.Source{{Type: httpKind}}
	first := e.createSubscription(t, account.ID, store.Subscription{Sources: sources, DestinationIDs: dests})
	wantLimit := func(t *testing.T, err error, would int) {
		t.Helper()
		var limitErr *store.LimitError
		if !errors.As(err, &limitErr) || !errors.Is(err, store.ErrLimit) || limitErr.Limit != store.LimitRoutes || limitErr.Max != limit || limitErr.Would != would {
			t.Fatalf("error %v, want a *LimitError of %d %s that would make %d", err, limit, store.LimitRoutes, would)
		}
	}
	_, err := e.store.CreateSubscription(e.ctx, account.ID, store.Subscription{Sources: sources, DestinationIDs: dests[:2]})
	wantLimit(t, err, 6)
	second := e.createSubscription(t, account.ID, store.Subscription{Sources: sources, DestinationIDs: dests[:1]})
	_, err = e.store.UpdateSubscription(e.ctx, account.ID, second.ID, func(sub *store.Subscription) error {
		sub.DestinationIDs = dests[:2]
		return nil
	})
	wantLimit(t, err, 6)
	// A change that keeps the routes passes, at the limit.
	if _, err := e.store.UpdateSubscription(e.ctx, account.ID, first.ID, func(sub *store.Subscription) error {
		sub.Description = "still four routes"
		return nil
	}); err != nil {
		t.Fatalf("changing the description at the limit: %v", err)
	}
	// Deleting a subscription frees its routes.
	if _, err := e.store.DeleteSubscription(e.ctx, account.ID, second.ID); err != nil {
		t.Fatal(err)
	}
	e.createSubscription(t, account.ID, store.Subscription{Sources: sources, DestinationIDs: dests[1:2]})
	// Another account has routes of its own.
	d, err := e.store.CreateDestination(e.ctx, other.ID, kinesisDestination())
	if err != nil {
		t.Fatal(err)
	}
	e.createSubscription(t, other.ID, store.Subscription{Sources: sources, DestinationIDs: []string{d.ID}})
}

// TestRouteLimitHoldsUnderConcurrentWrites creates subscriptions naming
// two destinations each, 20 at once from two processes, at an account
// whose limit is 6 routes: at most 3 are made, every other write is
// refused with the limit or a conflict.
func TestRouteLimitHoldsUnderConcurrentWrites(t *testing.T) {
	const limit, burst = 6, 20
	e := newEnvWith(t, store.Config{Limits: store.Limits{Routes: limit}})
	stores := []*store.Store{e.store, e.openAnother(t)}
	account := e.createAccount(t, "acme")
	var dests []string
	for range 2 {
		d, err := e.store.CreateDestination(e.ctx, account.ID, kinesisDestination())
		if err != nil {
			t.Fatal(err)
		}
		dests = append(dests, d.ID)
	}
	var wg sync.WaitGroup
	errs := make(chan error, burst)
	for i := range burst {
		wg.Go(func() {
			_, err := stores[i%2].CreateSubscription(e.ctx, account.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}, DestinationIDs: dests})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !errors.Is(err, store.ErrLimit) && !errors.Is(err, store.ErrConflict) {
			t.Fatalf("create refused with %v, want ErrLimit or ErrConflict", err)
		}
	}
	subs, _, err := e.store.ListSubscriptions(e.ctx, account.ID, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	routes := 0
	for _, sub := range subs {
		routes += len(sub.DestinationIDs)
	}
	if routes > limit {
		t.Fatalf("%d routes made by concurrent writes, over the limit of %d", routes, limit)
	}
}
