package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store"
)

// TestLimitsHoldUnderConcurrentCreates fires 40 creates of each limited
// kind at once, from two processes, at an account whose limit is 4: at most
// 4 are made, every other create is refused with a *LimitError (or, when
// the claims kept changing, ErrConflict), and creating one at a time then
// reaches the limit exactly; the limit of one account is not another's.
func TestLimitsHoldUnderConcurrentCreates(t *testing.T) {
	const limit, burst = 4, 40
	e := newEnvWith(t, store.Config{Limits: store.Limits{Destinations: limit, Subscriptions: limit, RunningReplays: limit, APIKeys: limit}})
	stores := []*store.Store{e.store, e.openAnother(t)}
	since, until := time.Now().Add(-time.Hour), time.Now()

	var replayDest string // the destination of the running replays case's subscription
	tests := []struct {
		name   string
		limit  string
		create func(s *store.Store, accountID string, replayOf string) (string, error)
		count  func(accountID, replayOf string) int
		free   func(accountID, id string) error
	}{
		{
			name: "destinations", limit: store.LimitDestinations,
			create: func(s *store.Store, account, _ string) (string, error) {
				d, err := s.CreateDestination(e.ctx, account, kinesisDestination())
				return d.ID, err
			},
			count: func(account, _ string) int {
				ds, _, err := e.store.ListDestinations(e.ctx, account, store.Page{})
				if err != nil {
					t.Fatal(err)
				}
				return len(ds)
			},
			free: func(account, id string) error { _, err := e.store.DeleteDestination(e.ctx, account, id); return err },
		},
		{
			name: "subscriptions", limit: store.LimitSubscriptions,
			create: func(s *store.Store, account, _ string) (string, error) {
				sub, err := s.CreateSubscription(e.ctx, account, store.Subscription{Sources: []store.Source{{Type: httpKind}}})
				return sub.ID, err
			},
			count: func(account, _ string) int {
				subs, _, err := e.store.ListSubscriptions(e.ctx, account, store.Page{})
				if err != nil {
					t.Fatal(err)
				}
				return len(subs) - 1 // the one replays are made of
			},
			free: func(account, id string) error { _, err := e.store.DeleteSubscription(e.ctx, account, id); return err },
		},
		{
			name: "api keys", limit: store.LimitAPIKeys,
			create: func(s *store.Store, account, _ string) (string, error) {
				k, err := s.CreateAPIKey(e.ctx, account, store.APIKeyInput{}, "")
				return k.ID, err
			},
			count: func(account, _ string) int {
				keys, _, err := e.store.ListAPIKeys(e.ctx, account, store.Page{})
				if err != nil {
					t.Fatal(err)
				}
				return len(keys)
			},
			free: func(account, id string) error { _, err := e.store.DeleteAPIKey(e.ctx, account, id); return err },
		},
		{
			name: "running replays", limit: store.LimitRunningReplays,
			create: func(s *store.Store, account, replayOf string) (string, error) {
				r, err := s.Replays().CreateReplay(e.ctx, account, replayOf, store.Replay{Since: since, Until: until}, nil)
				return r.ID, err
			},
			count: func(account, replayOf string) int {
				rs, err := e.store.Replays().ListReplays(e.ctx, account, replayOf)
				if err != nil {
					t.Fatal(err)
				}
				return len(rs)
			},
			free: func(account, id string) error { return e.store.Replays().FinishReplay(e.ctx, account, id, replayDest) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			account := e.createAccount(t, "hostile "+tt.name)
			// Replays are of a subscription, made before the limit is tested
			// (the subscriptions case subtracts it).
			replaySub := store.Subscription{Sources: []store.Source{{Type: httpKind}}}
			if tt.name == "running replays" {
				// A replay of a subscription without destinations has
				// nothing to deliver, and is not running.
				replayDest = e.createDestination(t, account.ID, kinesisDestination()).ID
				replaySub.DestinationIDs = []string{replayDest}
			}
			replayOf := e.createSubscription(t, account.ID, replaySub).ID
			want := limit
			if tt.name == "subscriptions" {
				want = limit - 1 // that subscription counts
			}

			var (
				mu      sync.Mutex
				made    int
				last    string // the id of one made
				wg      sync.WaitGroup
				badErrs []error
			)
			for i := range burst {
				wg.Go(func() {
					id, err := tt.create(stores[i%len(stores)], account.ID, replayOf)
					var limitErr *store.LimitError
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						made, last = made+1, id
					case errors.As(err, &limitErr) && limitErr.Limit == tt.limit && limitErr.Max == limit && errors.Is(err, store.ErrLimit):
					case errors.Is(err, store.ErrConflict):
					default:
						badErrs = append(badErrs, err)
					}
				})
			}
			wg.Wait()
			if len(badErrs) > 0 {
				t.Fatalf("creates refused with %v, want *LimitError of %s or ErrConflict", badErrs, tt.limit)
			}
			if made > want || tt.count(account.ID, replayOf) != made {
				t.Fatalf("%d of %d concurrent creates made %d %s, want at most %d", made, burst, tt.count(account.ID, replayOf), tt.name, want)
			}
			for made < want {
				id, err := tt.create(e.store, account.ID, replayOf)
				if err != nil {
					t.Fatalf("create %d of %d, one at a time: %v", made+1, want, err)
				}
				made, last = made+1, id
			}
			if _, err := tt.create(e.store, account.ID, replayOf); !errors.Is(err, store.ErrLimit) {
				t.Fatalf("create beyond the limit: error %v, want ErrLimit", err)
			}
			if err := tt.free(account.ID, last); err != nil {
				t.Fatal(err)
			}
			if _, err := tt.create(e.store, account.ID, replayOf); err != nil {
				t.Fatalf("create after one was freed: %v", err)
			}
			other := e.createAccount(t, "other "+tt.name)
			otherSub := e.createSubscription(t, other.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}}).ID
			if _, err := tt.create(e.store, other.ID, otherSub); err != nil {
				t.Fatalf("another account's create: %v", err)
			}
		})
	}
}

// TestSourcesPerSubscriptionLimit refuses a subscription, made or changed,
// with more sources than the limit.
func TestSourcesPerSubscriptionLimit(t *testing.T) {
	e := newEnvWith(t, store.Config{Limits: store.Limits{SourcesPerSubscription: 1}})
	account := e.createAccount(t, "acme")
	two := []store.Source{{Type: httpKind}, {Type: tcpKind}}
	var limitErr *store.LimitError
	if _, err := e.store.CreateSubscription(e.ctx, account.ID, store.Subscription{Sources: two}); !errors.As(err, &limitErr) || limitErr.Limit != store.LimitSourcesPerSubscription || limitErr.Max != 1 {
		t.Fatalf("CreateSubscription with 2 sources: error %v, want a *LimitError of 1 %s", err, store.LimitSourcesPerSubscription)
	}
	sub := e.createSubscription(t, account.ID, store.Subscription{Sources: two[:1]})
	_, err := e.store.UpdateSubscription(e.ctx, account.ID, sub.ID, func(sub *store.Subscription) error {
		sub.Sources = append(sub.Sources, store.Source{Type: tcpKind})
		return nil
	})
	if !errors.Is(err, store.ErrLimit) {
		t.Fatalf("adding a second source: error %v, want ErrLimit", err)
	}
}

// TestFinishedReplaysDoNotHoldTheLimit: a replay whose subscription was
// deleted stays "running" in the bucket, as no worker is left to mark it
// done; it must not count against the account's running replays.
func TestFinishedReplaysDoNotHoldTheLimit(t *testing.T) {
	e := newEnvWith(t, store.Config{Limits: store.Limits{RunningReplays: 2}})
	account := e.createAccount(t, "a")
	since, until := time.Now().Add(-time.Hour), time.Now()
	for range 2 {
		sub := e.createSubscription(t, account.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}})
		if _, err := e.store.Replays().CreateReplay(e.ctx, account.ID, sub.ID, store.Replay{Since: since, Until: until}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.DeleteSubscription(e.ctx, account.ID, sub.ID); err != nil {
			t.Fatal(err)
		}
	}
	sub := e.createSubscription(t, account.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}})
	if _, err := e.store.Replays().CreateReplay(e.ctx, account.ID, sub.ID, store.Replay{Since: since, Until: until}, nil); err != nil {
		t.Fatalf("a replay after two of deleted subscriptions: %v", err)
	}
}

// TestReplayOverTheLimitIsNotCounted: a replay over the account's limit of
// running replays is refused before its range is counted, which costs
// the events stream two consumers.
func TestReplayOverTheLimitIsNotCounted(t *testing.T) {
	e := newEnvWith(t, store.Config{Limits: store.Limits{RunningReplays: 1}})
	account := e.createAccount(t, "a")
	dest := e.createDestination(t, account.ID, credsDestination())
	sub := e.createSubscription(t, account.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}, DestinationIDs: []string{dest.ID}})
	since, until := time.Now().Add(-time.Hour), time.Now()
	counts := 0
	count := func(context.Context, store.Subscription) (uint64, error) {
		counts++
		return 3, nil
	}
	if _, err := e.store.Replays().CreateReplay(e.ctx, account.ID, sub.ID, store.Replay{Since: since, Until: until}, count); err != nil {
		t.Fatal(err)
	}
	_, err := e.store.Replays().CreateReplay(e.ctx, account.ID, sub.ID, store.Replay{Since: since, Until: until}, count)
	if !errors.Is(err, store.ErrLimit) || counts != 1 {
		t.Fatalf("a second replay over a limit of one: error %v, range counted %d times; want ErrLimit, counted once", err, counts)
	}

	// A count that fails creates no replay, and holds no place.
	other := e.createAccount(t, "b")
	otherSub := e.createSubscription(t, other.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}})
	failed := errors.New("the stream is unreachable")
	_, err = e.store.Replays().CreateReplay(e.ctx, other.ID, otherSub.ID, store.Replay{Since: since, Until: until},
		func(context.Context, store.Subscription) (uint64, error) { return 0, failed })
	if !errors.Is(err, failed) {
		t.Fatalf("error %v, want the count's", err)
	}
	if list, err := e.store.Replays().ListReplays(e.ctx, other.ID, otherSub.ID); err != nil || len(list) != 0 {
		t.Fatalf("replays after a failed count: %d, %v; want none", len(list), err)
	}
	if _, err := e.store.Replays().CreateReplay(e.ctx, other.ID, otherSub.ID, store.Replay{Since: since, Until: until}, count); err != nil {
		t.Fatalf("a replay after a failed count: %v", err)
	}
}
