package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store"
)

func TestReplays(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	other := e.createAccount(t, "other")
	dest := e.createDestination(t, account.ID, credsDestination())
	second := e.createDestination(t, account.ID, kinesisDestination())
	sub := e.createSubscription(t, account.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}, DestinationIDs: []string{dest.ID, second.ID}})

	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	changes, err := e.openAnother(t).WatchConfig(ctx)
	if err != nil {
		t.Fatalf("WatchConfig: %v", err)
	}

	since := time.Now().Add(-time.Hour)
	until := time.Now()
	if _, err := e.store.CreateReplay(e.ctx, account.ID, sub.ID, store.Replay{Since: until, Until: since}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("CreateReplay with until before since: error %v, want ErrInvalid", err)
	}
	if _, err := e.store.CreateReplay(e.ctx, other.ID, sub.ID, store.Replay{Since: since, Until: until}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("CreateReplay of another account's subscription: error %v, want ErrNotFound", err)
	}
	r, err := e.store.CreateReplay(e.ctx, account.ID, sub.ID, store.Replay{Since: since, Until: until, EndSeq: 42})
	if err != nil {
		t.Fatalf("CreateReplay: %v", err)
	}
	if r.State != store.ReplayRunning || r.EndSeq != 42 || r.SubscriptionID != sub.ID || r.AccountID != account.ID {
		t.Fatalf("created replay = %+v", r)
	}
	created := nextChange(t, changes, "created replay", func(c store.ConfigChange) bool { return c.Kind == store.ConfigReplay && c.ID == r.ID })
	if created.Replay == nil || created.AccountID != account.ID {
		t.Fatalf("created change = %+v", created)
	}
	wantSameJSON(t, *created.Replay, r)

	got, err := e.store.GetReplay(e.ctx, account.ID, r.ID)
	if err != nil {
		t.Fatalf("GetReplay: %v", err)
	}
	wantSameJSON(t, got, r)
	if _, err := e.store.GetReplay(e.ctx, other.ID, r.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetReplay from another account: error %v, want ErrNotFound", err)
	}
	list, err := e.store.ListReplays(e.ctx, account.ID, sub.ID)
	if err != nil || len(list) != 1 || list[0].ID != r.ID {
		t.Fatalf("ListReplays = %+v, %v; want the replay", list, err)
	}

	for range 2 { // finishing twice changes nothing the second time
		if err := e.store.FinishReplay(e.ctx, account.ID, r.ID, dest.ID); err != nil {
			t.Fatalf("FinishReplay: %v", err)
		}
	}
	if got, err := e.store.GetReplay(e.ctx, account.ID, r.ID); err != nil || got.State != store.ReplayRunning || len(got.DeliveredTo) != 1 {
		t.Fatalf("replay delivered to one of two destinations = %+v, %v; want running, delivered to one", got, err)
	}
	if err := e.store.FinishReplay(e.ctx, account.ID, r.ID, second.ID); err != nil {
		t.Fatalf("FinishReplay: %v", err)
	}
	done := nextChange(t, changes, "finished replay", func(c store.ConfigChange) bool {
		return c.ID == r.ID && c.Replay != nil && c.Replay.State == store.ReplayDone
	})
	if done.Revision <= created.Revision {
		t.Fatalf("revision of the finish %d is not after that of the creation %d", done.Revision, created.Revision)
	}
	if err := e.store.FinishReplay(e.ctx, other.ID, r.ID, dest.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("FinishReplay from another account: error %v, want ErrNotFound", err)
	}
}
