package store_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
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
		if err := e.store.AddACMEChallenge(e.ctx, token, v); err != nil {
			t.Fatal(err)
		}
	}
	holds("two values, each once", []string{"first", "second"})
	if err := e.store.RemoveACMEChallenge(e.ctx, token, "first"); err != nil {
		t.Fatal(err)
	}
	if err := e.store.RemoveACMEChallenge(e.ctx, token, "absent"); err != nil {
		t.Fatal(err)
	}
	holds("the second left", []string{"second"})
	if err := e.store.RemoveACMEChallenge(e.ctx, token, "second"); err != nil {
		t.Fatal(err)
	}
	holds("the token gone", nil)
	if err := e.store.RemoveACMEChallenge(e.ctx, token, "second"); err != nil {
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
		for name, call := range map[string]func(context.Context, string, string) error{"add": e.store.AddACMEChallenge, "remove": e.store.RemoveACMEChallenge} {
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
			if err := e.store.AddACMEChallenge(e.ctx, token, v); err != nil {
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
	err := e.store.AddACMEChallenge(e.ctx, token, "one-too-many")
	check.ErrorContains(t, err, "holds 8 TXT values already")
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("one value too many: %v, want ErrInvalid", err)
	}
}
