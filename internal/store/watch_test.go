package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store"
)

// changeWithin is how soon every process must see a change.
const changeWithin = time.Second

// nextChange returns the first change from changes that match accepts,
// failing the test if none comes within changeWithin. Other changes are
// skipped: a subscription naming a destination also rewrites the
// destination, unchanged.
func nextChange(t *testing.T, changes <-chan store.ConfigChange, what string, match func(store.ConfigChange) bool) store.ConfigChange {
	t.Helper()
	timer := time.NewTimer(changeWithin)
	defer timer.Stop()
	for {
		select {
		case change, ok := <-changes:
			if !ok {
				t.Fatalf("watch closed while waiting for %s", what)
			}
			if change.Err != nil {
				t.Fatalf("change %+v: %v", change, change.Err)
			}
			if match(change) {
				return change
			}
		case <-timer.C:
			t.Fatalf("no %s within %v", what, changeWithin)
		}
	}
}

func TestWatchConfig(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	existing := e.createDestination(t, account.ID, credsDestination())
	deleted := e.createDestination(t, account.ID, kinesisDestination())
	if _, err := e.store.DeleteDestination(e.ctx, account.ID, deleted.ID); err != nil {
		t.Fatalf("DeleteDestination: %v", err)
	}

	// The watch runs in another process than the writes.
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	changes, err := e.openAnother(t).WatchConfig(ctx)
	if err != nil {
		t.Fatalf("WatchConfig: %v", err)
	}

	initial := nextChange(t, changes, "initial state", func(store.ConfigChange) bool { return true })
	if initial.Kind != store.ConfigDestination || initial.ID != existing.ID || initial.AccountID != account.ID ||
		initial.Deleted || initial.Destination == nil {
		t.Fatalf("initial change = %+v, want destination %s", initial, existing.ID)
	}
	if initial.Destination.Target.Firehose.Auth.Creds.SecretAccessKey != testSecret {
		t.Fatalf("the watch lost the secret access key, which delivery needs")
	}
	wantSameJSON(t, *initial.Destination, existing)
	if synced := nextChange(t, changes, "synced marker", func(store.ConfigChange) bool { return true }); !synced.Synced {
		t.Fatalf("change after the initial state = %+v, want the Synced marker (and no deleted destination)", synced)
	}

	sub := e.createSubscription(t, account.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}, DestinationIDs: []string{existing.ID}})
	created := nextChange(t, changes, "created subscription", func(c store.ConfigChange) bool {
		return c.Kind == store.ConfigSubscription && c.ID == sub.ID
	})
	if created.Subscription == nil || created.Deleted || created.AccountID != account.ID {
		t.Fatalf("created change = %+v", created)
	}
	wantSameJSON(t, *created.Subscription, sub)

	updated, err := e.store.UpdateSubscription(e.ctx, account.ID, sub.ID, func(sub *store.Subscription) error {
		sub.Description = "updated"
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateSubscription: %v", err)
	}
	change := nextChange(t, changes, "updated subscription", func(c store.ConfigChange) bool {
		return c.ID == sub.ID && c.Subscription != nil && c.Subscription.Description == "updated"
	})
	if change.Revision <= created.Revision {
		t.Fatalf("revision of the update %d is not after that of the creation %d", change.Revision, created.Revision)
	}
	wantSameJSON(t, *change.Subscription, updated)

	if _, err := e.store.DeleteSubscription(e.ctx, account.ID, sub.ID); err != nil {
		t.Fatalf("DeleteSubscription: %v", err)
	}
	gone := nextChange(t, changes, "deleted subscription", func(c store.ConfigChange) bool { return c.ID == sub.ID && c.Deleted })
	if gone.Kind != store.ConfigSubscription || gone.Subscription != nil || gone.AccountID != account.ID {
		t.Fatalf("deleted change = %+v", gone)
	}

	if _, err := e.store.DeleteDestination(e.ctx, account.ID, existing.ID); err != nil {
		t.Fatalf("DeleteDestination: %v", err)
	}
	nextChange(t, changes, "deleted destination", func(c store.ConfigChange) bool {
		return c.Kind == store.ConfigDestination && c.ID == existing.ID && c.Deleted
	})

	cancel()
	timer := time.NewTimer(changeWithin)
	defer timer.Stop()
	for {
		select {
		case _, ok := <-changes:
			if !ok {
				return
			}
		case <-timer.C:
			t.Fatalf("the watch did not close its channel when its context ended")
		}
	}
}

func TestWatchConfigOfEmptyStore(t *testing.T) {
	e := newEnv(t)
	changes, err := e.store.WatchConfig(e.ctx)
	if err != nil {
		t.Fatalf("WatchConfig: %v", err)
	}
	e.createAccount(t, "not watched") // accounts are not part of the watch
	if first := nextChange(t, changes, "synced marker", func(store.ConfigChange) bool { return true }); !first.Synced {
		t.Fatalf("first change of an empty store = %+v, want the Synced marker", first)
	}
}
