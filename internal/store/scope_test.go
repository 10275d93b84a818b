package store_test

import (
	"testing"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestAccountIsolation checks that an account cannot see, change, delete or
// deliver to another account's destinations and subscriptions: every such
// call finds nothing.
func TestAccountIsolation(t *testing.T) {
	e := newEnv(t)
	mine := e.createAccount(t, "mine")
	theirs := e.createAccount(t, "theirs")
	dest := e.createDestination(t, theirs.ID, kinesisDestination())
	sub := e.createSubscription(t, theirs.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}, DestinationIDs: []string{dest.ID}})
	e.createDestination(t, mine.ID, kinesisDestination())
	e.createSubscription(t, mine.ID, store.Subscription{})
	key, err := e.store.CreateAPIKey(e.ctx, theirs.ID, store.APIKeyInput{}, "")
	if err != nil {
		t.Fatal(err)
	}

	called := false
	calls := map[string]func() error{
		"GetDestination": func() error {
			_, err := e.store.GetDestination(e.ctx, mine.ID, dest.ID)
			return err
		},
		"UpdateDestination": func() error {
			_, err := e.store.UpdateDestination(e.ctx, mine.ID, dest.ID, func(d *store.Destination) error {
				called = true
				d.Description = "taken"
				return nil
			})
			return err
		},
		"DeleteDestination": func() error { return errOf(e.store.DeleteDestination(e.ctx, mine.ID, dest.ID)) },
		"GetSubscription": func() error {
			_, err := e.store.GetSubscription(e.ctx, mine.ID, sub.ID)
			return err
		},
		"UpdateSubscription": func() error {
			_, err := e.store.UpdateSubscription(e.ctx, mine.ID, sub.ID, func(s *store.Subscription) error {
				called = true
				s.Description = "taken"
				return nil
			})
			return err
		},
		"DeleteSubscription": func() error { return errOf(e.store.DeleteSubscription(e.ctx, mine.ID, sub.ID)) },
		"GetAPIKey":          func() error { return errOf(e.store.GetAPIKey(e.ctx, mine.ID, key.ID)) },
		"UpdateAPIKey": func() error {
			return errOf(e.store.UpdateAPIKey(e.ctx, mine.ID, key.ID, func(k *store.APIKey) error {
				called = true
				return nil
			}))
		},
		"DeleteAPIKey": func() error { return errOf(e.store.DeleteAPIKey(e.ctx, mine.ID, key.ID)) },
		"CreateSubscription naming their destination": func() error {
			_, err := e.store.CreateSubscription(e.ctx, mine.ID, store.Subscription{DestinationIDs: []string{dest.ID}})
			wantInvalid(t, err, "destination_ids[0]")
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			wantErr(t, call(), store.ErrNotFound)
		})
	}
	if called {
		t.Fatalf("an update ran its function on another account's resource")
	}

	dests, _, err := e.store.ListDestinations(e.ctx, mine.ID, store.Page{})
	if err != nil {
		t.Fatalf("ListDestinations: %v", err)
	}
	subs, _, err := e.store.ListSubscriptions(e.ctx, mine.ID, store.Page{})
	if err != nil {
		t.Fatalf("ListSubscriptions: %v", err)
	}
	if len(dests) != 1 || dests[0].AccountID != mine.ID || len(subs) != 1 || subs[0].AccountID != mine.ID {
		t.Fatalf("lists of my account show %+v and %+v", dests, subs)
	}

	gotDest, err := e.store.GetDestination(e.ctx, theirs.ID, dest.ID)
	if err != nil {
		t.Fatalf("GetDestination of the owner: %v", err)
	}
	gotSub, err := e.store.GetSubscription(e.ctx, theirs.ID, sub.ID)
	if err != nil {
		t.Fatalf("GetSubscription of the owner: %v", err)
	}
	wantSameJSON(t, gotDest, dest)
	wantSameJSON(t, gotSub, sub)
}

func TestCreateInUnknownAccount(t *testing.T) {
	e := newEnv(t)
	e.createAccount(t, "acme")
	for name, accountID := range map[string]string{"unknown": schemas.NewID(schemas.PrefixAccount), "malformed": "ac_*"} {
		t.Run(name, func(t *testing.T) {
			_, err := e.store.CreateDestination(e.ctx, accountID, kinesisDestination())
			wantErr(t, err, store.ErrNotFound)
			_, err = e.store.CreateSubscription(e.ctx, accountID, store.Subscription{})
			wantErr(t, err, store.ErrNotFound)
		})
	}
	_, _, err := e.store.ListDestinations(e.ctx, "ac_*", store.Page{})
	wantErr(t, err, store.ErrNotFound)
	_, _, err = e.store.ListSubscriptions(e.ctx, "ac_*", store.Page{})
	wantErr(t, err, store.ErrNotFound)
}
