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
	if _, err := e.store.Replays().CreateReplay(e.ctx, account.ID, sub.ID, store.Replay{Since: until, Until: since}, nil); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("CreateReplay with until before since: error %v, want ErrInvalid", err)
	}
	if _, err := e.store.Replays().CreateReplay(e.ctx, other.ID, sub.ID, store.Replay{Since: since, Until: until}, nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("CreateReplay of another account's subscription: error %v, want ErrNotFound", err)
	}
	r, err := e.store.Replays().CreateReplay(e.ctx, account.ID, sub.ID, store.Replay{Since: since, Until: until, EndSeq: 42}, func(_ context.Context, counted store.Subscription) (uint64, error) {
		if counted.ID != sub.ID {
			t.Errorf("counting the range of subscription %s, want %s", counted.ID, sub.ID)
		}
		return 5, nil
	})
	if err != nil {
		t.Fatalf("CreateReplay: %v", err)
	}
	if r.State != store.ReplayRunning || r.EndSeq != 42 || r.SubscriptionID != sub.ID || r.AccountID != account.ID || r.RangeEvents != 5 || r.EventsTotal != 10 {
		t.Fatalf("created replay = %+v", r)
	}
	created := nextChange(t, changes, "created replay", func(c store.ConfigChange) bool { return c.Kind == store.ConfigReplay && c.ID == r.ID })
	if created.Replay == nil || created.AccountID != account.ID {
		t.Fatalf("created change = %+v", created)
	}
	wantSameJSON(t, *created.Replay, r)

	got, err := e.store.Replays().GetReplay(e.ctx, account.ID, r.ID)
	if err != nil {
		t.Fatalf("GetReplay: %v", err)
	}
	wantSameJSON(t, got, r)
	if _, err := e.store.Replays().GetReplay(e.ctx, other.ID, r.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetReplay from another account: error %v, want ErrNotFound", err)
	}
	list, err := e.store.Replays().ListReplays(e.ctx, account.ID, sub.ID)
	if err != nil || len(list) != 1 || list[0].ID != r.ID {
		t.Fatalf("ListReplays = %+v, %v; want the replay", list, err)
	}

	progress := func(what string, wantReplayed, wantTotal uint64) {
		t.Helper()
		got, err := e.store.Replays().GetReplay(e.ctx, account.ID, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if replayed, total := got.Progress(); replayed != wantReplayed || total != wantTotal {
			t.Fatalf("%s: progress %d of %d, want %d of %d (%+v)", what, replayed, total, wantReplayed, wantTotal, got)
		}
	}
	progress("created", 0, 10)
	if err := e.store.Replays().AddReplayed(e.ctx, account.ID, r.ID, dest.ID, 3); err != nil {
		t.Fatalf("AddReplayed: %v", err)
	}
	progress("3 replayed", 3, 10)
	// An event handed out again is counted twice: the progress shown
	// stays within the total.
	for _, n := range []uint64{4, 5} {
		if err := e.store.Replays().AddReplayed(e.ctx, account.ID, r.ID, second.ID, n); err != nil {
			t.Fatalf("AddReplayed: %v", err)
		}
	}
	progress("12 counted", 10, 10)
	if err := e.store.Replays().AddReplayed(e.ctx, other.ID, r.ID, dest.ID, 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("AddReplayed from another account: error %v, want ErrNotFound", err)
	}

	for range 2 { // finishing twice changes nothing the second time
		if err := e.store.Replays().FinishReplay(e.ctx, account.ID, r.ID, dest.ID); err != nil {
			t.Fatalf("FinishReplay: %v", err)
		}
	}
	if got, err := e.store.Replays().GetReplay(e.ctx, account.ID, r.ID); err != nil || got.State != store.ReplayRunning || len(got.DeliveredTo) != 1 {
		t.Fatalf("replay delivered to one of two destinations = %+v, %v; want running, delivered to one", got, err)
	}
	// A destination with the whole range counts the range's events, and
	// keeps that count.
	if err := e.store.Replays().AddReplayed(e.ctx, account.ID, r.ID, dest.ID, 7); err != nil {
		t.Fatalf("AddReplayed: %v", err)
	}
	if got, err := e.store.Replays().GetReplay(e.ctx, account.ID, r.ID); err != nil || got.Replayed[dest.ID] != 5 {
		t.Fatalf("replay finished at one destination = %+v, %v; want 5 events replayed there", got, err)
	}
	if err := e.store.Replays().FinishReplay(e.ctx, account.ID, r.ID, second.ID); err != nil {
		t.Fatalf("FinishReplay: %v", err)
	}
	done := nextChange(t, changes, "finished replay", func(c store.ConfigChange) bool {
		return c.ID == r.ID && c.Replay != nil && c.Replay.State == store.ReplayDone
	})
	if replayed, total := done.Replay.Progress(); replayed != 10 || total != 10 {
		t.Fatalf("done replay: progress %d of %d, want 10 of 10", replayed, total)
	}
	if done.Revision <= created.Revision {
		t.Fatalf("revision of the finish %d is not after that of the creation %d", done.Revision, created.Revision)
	}
	if err := e.store.Replays().FinishReplay(e.ctx, other.ID, r.ID, dest.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("FinishReplay from another account: error %v, want ErrNotFound", err)
	}
}

// TestReplayProgress checks the figures a replay shows: at most its total
// while it runs; once done, what was replayed, also when a destination
// was taken out of the subscription before it had the whole range.
func TestReplayProgress(t *testing.T) {
	for _, c := range []struct {
		name                    string
		replay                  store.Replay
		wantReplayed, wantTotal uint64
	}{
		{"nothing replayed yet", store.Replay{State: store.ReplayRunning, EventsTotal: 8}, 0, 8},
		{"halfway", store.Replay{State: store.ReplayRunning, EventsTotal: 8, Replayed: map[string]uint64{"ed_a": 4}}, 4, 8},
		{"counted twice", store.Replay{State: store.ReplayRunning, EventsTotal: 8, Replayed: map[string]uint64{"ed_a": 4, "ed_b": 5}}, 8, 8},
		{"done", store.Replay{State: store.ReplayDone, EventsTotal: 8, Replayed: map[string]uint64{"ed_a": 4, "ed_b": 4}}, 8, 8},
		{"done, a destination taken out", store.Replay{State: store.ReplayDone, EventsTotal: 8, Replayed: map[string]uint64{"ed_a": 4, "ed_b": 1}}, 5, 5},
		{"done, an empty range", store.Replay{State: store.ReplayDone}, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if replayed, total := c.replay.Progress(); replayed != c.wantReplayed || total != c.wantTotal {
				t.Fatalf("Progress() = %d of %d, want %d of %d", replayed, total, c.wantReplayed, c.wantTotal)
			}
		})
	}
}
