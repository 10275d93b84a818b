package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
)

// TestDomainToken: the token of a reserved domain is the hex of the first
// 10 bytes of the SHA-256 of its id (spec 2.2's targets).
func TestDomainToken(t *testing.T) {
	// printf rd_1 | sha256sum | cut -c1-20
	if got, want := store.DomainToken("rd_1"), "ce41d6a3fc02efeef40f"; got != want {
		t.Fatalf("DomainToken(rd_1) = %q, want %q", got, want)
	}
}

// TestACMEChallenges: values added to a token are followed by FollowDNS
// in the order added, none twice; removing the last removes the token; a
// token or value out of shape, and a value past MaxACMEChallengeValues,
// are refused; concurrent adds all land.
func TestACMEChallenges(t *testing.T) {
	e := newEnv(t)
	token := store.DomainToken("rd_test")
	var mu sync.Mutex
	held := map[string][]string{} // values by token
	ctx, stop := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.store.FollowDNS(ctx, slog.New(slog.DiscardHandler), func(c store.DNSChange) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case c.Deleted:
				delete(held, c.Key)
			case c.Challenge != nil:
				held[c.Key] = c.Challenge.Values
			}
		}, nil)
	}()
	defer func() {
		stop()
		<-done
	}()
	key := "acme_challenges." + token
	holds := func(what string, want []string) {
		t.Helper()
		check.Eventually(t, 5*time.Second, what, func() ([]string, bool) {
			mu.Lock()
			defer mu.Unlock()
			got, ok := held[key]
			return got, ok == (want != nil) && slices.Equal(got, want)
		})
	}
	for _, v := range []string{"first", "second", "first"} {
		if err := e.store.Certificates().AddACMEChallenge(e.ctx, token, v); err != nil {
			t.Fatal(err)
		}
	}
	holds("two values, each once", []string{"first", "second"})
	if err := e.store.Certificates().RemoveACMEChallenge(e.ctx, token, "first"); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Certificates().RemoveACMEChallenge(e.ctx, token, "absent"); err != nil {
		t.Fatal(err)
	}
	holds("the second left", []string{"second"})
	if err := e.store.Certificates().RemoveACMEChallenge(e.ctx, token, "second"); err != nil {
		t.Fatal(err)
	}
	holds("the token gone", nil)
	if err := e.store.Certificates().RemoveACMEChallenge(e.ctx, token, "second"); err != nil {
		t.Fatalf("removing from a token with none: %v", err)
	}

	for _, tt := range []struct{ token, value, field string }{
		{"", "v", "token"},
		{strings.ToUpper(token), "v", "token"},
		{token + "0", "v", "token"},
		{"zz" + token[2:], "v", "token"},
		{token, "", "value"},
		{token, "a b", "value"},
		{token, strings.Repeat("a", 256), "value"},
	} {
		for name, call := range map[string]func(context.Context, string, string) error{"add": e.store.Certificates().AddACMEChallenge, "remove": e.store.Certificates().RemoveACMEChallenge} {
			err := call(e.ctx, tt.token, tt.value)
			var invalid *store.ValidationError
			if !errors.As(err, &invalid) || invalid.Field != tt.field || !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s %q %q: %v, want a *ValidationError of %s", name, tt.token, tt.value, err, tt.field)
			}
		}
	}

	var wg sync.WaitGroup
	var want []string
	for i := range store.MaxACMEChallengeValues {
		v := fmt.Sprintf("value-%d", i)
		want = append(want, v)
		wg.Go(func() {
			if err := e.store.Certificates().AddACMEChallenge(e.ctx, token, v); err != nil {
				t.Errorf("adding %s: %v", v, err)
			}
		})
	}
	wg.Wait()
	check.Eventually(t, 5*time.Second, "every concurrent add", func() ([]string, bool) {
		mu.Lock()
		defer mu.Unlock()
		got := slices.Sorted(slices.Values(held[key]))
		return got, slices.Equal(got, want)
	})
	err := e.store.Certificates().AddACMEChallenge(e.ctx, token, "one-too-many")
	check.ErrorContains(t, err, "holds 8 TXT values already")
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("one value too many: %v, want ErrInvalid", err)
	}
}

// TestStaleACMEChallenges: a value added MaxACMEChallengeAge ago is
// dropped by the next add to its token, which makes room in a full
// token, and by DropStaleACMEChallenges, which deletes a token left with
// none; a younger value is kept, an add renews a value's time, and a
// value stored without a time (before the store kept them) is stamped,
// then dropped a MaxACMEChallengeAge later.
func TestStaleACMEChallenges(t *testing.T) {
	clock := check.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	e := newEnvWith(t, store.Config{Clock: clock.Now})
	token := store.DomainToken("rd_stale")
	key := "acme_challenges." + token
	stored := func(t *testing.T) (store.ACMEChallenge, bool) {
		t.Helper()
		entry, err := e.kv.Get(e.ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return store.ACMEChallenge{}, false
		}
		if err != nil {
			t.Fatal(err)
		}
		var c store.ACMEChallenge
		if err := json.Unmarshal(entry.Value(), &c); err != nil {
			t.Fatal(err)
		}
		return c, true
	}
	holds := func(t *testing.T, want ...string) {
		t.Helper()
		c, ok := stored(t)
		if !slices.Equal(c.Values, want) || ok != (want != nil) {
			t.Fatalf("the token holds %q (stored %v), want %q", c.Values, ok, want)
		}
		for _, v := range c.Values {
			if c.AddedAt[v].IsZero() || len(c.AddedAt) != len(c.Values) {
				t.Fatalf("the times of %q are %v", c.Values, c.AddedAt)
			}
		}
	}
	add := func(t *testing.T, values ...string) {
		t.Helper()
		for _, v := range values {
			if err := e.store.Certificates().AddACMEChallenge(e.ctx, token, v); err != nil {
				t.Fatalf("adding %s: %v", v, err)
			}
		}
	}
	sweep := func(t *testing.T, want int) {
		t.Helper()
		n, err := e.store.Certificates().DropStaleACMEChallenges(e.ctx)
		if err != nil || n != want {
			t.Fatalf("DropStaleACMEChallenges: %d, %v; want %d dropped", n, err, want)
		}
	}

	t.Run("dropped on add", func(t *testing.T) {
		add(t, "old", "renewed")
		clock.Advance(store.MaxACMEChallengeAge - time.Minute)
		add(t, "fresh", "renewed")
		clock.Advance(time.Minute)
		add(t, "new")
		holds(t, "renewed", "fresh", "new")
		for _, v := range []string{"renewed", "fresh", "new"} {
			if err := e.store.Certificates().RemoveACMEChallenge(e.ctx, token, v); err != nil {
				t.Fatal(err)
			}
		}
		holds(t)
	})

	t.Run("a full token makes room", func(t *testing.T) {
		var full []string
		for i := range store.MaxACMEChallengeValues {
			full = append(full, fmt.Sprintf("left-%d", i))
		}
		add(t, full...)
		clock.Advance(store.MaxACMEChallengeAge - time.Second)
		check.ErrorContains(t, e.store.Certificates().AddACMEChallenge(e.ctx, token, "refused"), "holds 8 TXT values already")
		clock.Advance(time.Second)
		add(t, "room")
		holds(t, "room")
	})

	t.Run("dropped by the sweep", func(t *testing.T) {
		sweep(t, 0)
		holds(t, "room")
		clock.Advance(store.MaxACMEChallengeAge - time.Second)
		sweep(t, 0)
		holds(t, "room")
		clock.Advance(time.Second)
		sweep(t, 1)
		holds(t)
	})

	t.Run("stamped by other clocks", func(t *testing.T) {
		// The operator's `sluice acme-challenges add` writes with its
		// machine's clock, a year ahead here, or two hours behind.
		skewed := func(d time.Duration) *store.Store {
			_, js := natstest.Connect(t, e.srv)
			s, err := store.Open(e.ctx, js, store.Config{Clock: func() time.Time { return clock.Now().Add(d) }})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		if err := skewed(365*24*time.Hour).Certificates().AddACMEChallenge(e.ctx, token, "ahead"); err != nil {
			t.Fatal(err)
		}
		add(t, "job")
		if err := skewed(-2*time.Hour).Certificates().AddACMEChallenge(e.ctx, token, "behind"); err != nil {
			t.Fatal(err)
		}
		sweep(t, 1) // "behind", two hours old by the sweep's clock
		holds(t, "ahead", "job")
		if c, _ := stored(t); !c.AddedAt["ahead"].Equal(clock.Now()) || !c.AddedAt["job"].Equal(clock.Now()) {
			t.Fatalf("after the sweep, the times are %v; want the value ahead stamped with the sweep's now, the job's kept", c.AddedAt)
		}
		clock.Advance(store.MaxACMEChallengeAge - time.Second)
		sweep(t, 0)
		clock.Advance(time.Second)
		sweep(t, 2)
		holds(t)
	})

	t.Run("stored without times", func(t *testing.T) {
		if _, err := e.kv.Put(e.ctx, key, []byte(`{"token":"`+token+`","values":["legacy"]}`)); err != nil {
			t.Fatal(err)
		}
		sweep(t, 0)
		holds(t, "legacy")
		clock.Advance(store.MaxACMEChallengeAge - time.Second)
		sweep(t, 0)
		clock.Advance(time.Second)
		sweep(t, 1)
		holds(t)
	})
}
