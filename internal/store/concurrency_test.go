package store_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
)

// concurrentWriters is how many goroutines update one resource at once.
const concurrentWriters = 20

// TestConcurrentDestinationUpdates has 20 writers, on two connections as
// two processes would, each append its own marker to one destination's
// description: no update may be lost.
func TestConcurrentDestinationUpdates(t *testing.T) {
	e := newEnv(t)
	stores := []*store.Store{e.store, e.openAnother(t)}
	account := e.createAccount(t, "acme")
	d := e.createDestination(t, account.ID, store.Destination{Target: kinesisDestination().Target})

	concurrently(t, concurrentWriters, func(i int) error {
		_, err := stores[i%len(stores)].UpdateDestination(e.ctx, account.ID, d.ID, func(d *store.Destination) error {
			d.Description += fmt.Sprintf("[%02d]", i)
			return nil
		})
		return err
	})
	got, err := e.store.GetDestination(e.ctx, account.ID, d.ID)
	if err != nil {
		t.Fatalf("GetDestination: %v", err)
	}
	wantAllMarkers(t, got.Description)
}

// TestConcurrentSubscriptionUpdates does the same with a subscription's
// metadata.
func TestConcurrentSubscriptionUpdates(t *testing.T) {
	e := newEnv(t)
	stores := []*store.Store{e.store, e.openAnother(t)}
	account := e.createAccount(t, "acme")
	sub := e.createSubscription(t, account.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}})

	concurrently(t, concurrentWriters, func(i int) error {
		_, err := stores[i%len(stores)].UpdateSubscription(e.ctx, account.ID, sub.ID, func(sub *store.Subscription) error {
			sub.Metadata += fmt.Sprintf("[%02d]", i)
			return nil
		})
		return err
	})
	got, err := e.store.GetSubscription(e.ctx, account.ID, sub.ID)
	if err != nil {
		t.Fatalf("GetSubscription: %v", err)
	}
	wantAllMarkers(t, got.Metadata)
}

// wantAllMarkers fails the test unless s holds the marker of every writer
// once.
func wantAllMarkers(t *testing.T, s string) {
	t.Helper()
	for i := range concurrentWriters {
		if n := strings.Count(s, fmt.Sprintf("[%02d]", i)); n != 1 {
			t.Fatalf("marker %02d appears %d times in %q: an update was lost or applied twice", i, n, s)
		}
	}
}

// concurrently runs write n times at once, with 0 to n-1, and fails the test
// if any returns an error.
func concurrently(t *testing.T, n int, write func(i int) error) {
	t.Helper()
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs <- write(i) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestConcurrentKeyDeletesKeepOne deletes every API key of an account at
// once, round after round, from two processes: one key always stays, so
// the account is never locked out of its API.
func TestConcurrentKeyDeletesKeepOne(t *testing.T) {
	const rounds, keys = 20, 4
	e := newEnv(t)
	stores := []*store.Store{e.store, e.openAnother(t)}
	for round := range rounds {
		account := e.createAccount(t, fmt.Sprintf("round %d", round))
		var ids []string
		for range keys {
			k, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{}, "")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, k.ID)
		}
		errs := make(chan error, keys)
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() {
				_, err := stores[i%len(stores)].DeleteAPIKey(e.ctx, account.ID, id)
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		refused := 0
		for err := range errs {
			switch {
			case errors.Is(err, store.ErrLastAPIKey):
				refused++
			case err != nil:
				t.Fatal(err)
			}
		}
		left, _, err := e.store.ListAPIKeys(e.ctx, account.ID, store.Page{})
		if err != nil {
			t.Fatal(err)
		}
		if len(left) != 1 || refused != 1 {
			t.Fatalf("round %d: %d keys left and %d deletes refused, want 1 and 1", round, len(left), refused)
		}
	}
}
