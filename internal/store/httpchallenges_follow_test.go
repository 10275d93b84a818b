package store_test

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
)

// TestHTTPChallengesFollowed: a watch of the HTTP-01 challenges tells
// each one put, and its removal.
func TestHTTPChallengesFollowed(t *testing.T) {
	e := newEnv(t)
	var (
		mu   sync.Mutex
		seen = make(map[string]*store.HTTPChallenge)
	)
	go e.store.Certificates().FollowHTTPChallenges(e.ctx, slog.New(slog.DiscardHandler), func(key string, c *store.HTTPChallenge) {
		mu.Lock()
		defer mu.Unlock()
		seen[key] = c
	}, nil)
	answer := func() string {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range seen {
			if c != nil && c.Domain == "shop.example.com" && c.Token == "tok_1" {
				return c.KeyAuthorization
			}
		}
		return ""
	}
	c := store.HTTPChallenge{Domain: "shop.example.com", Token: "tok_1", KeyAuthorization: "tok_1.thumb"}
	if err := e.store.Certificates().PutHTTPChallenge(e.ctx, c); err != nil {
		t.Fatal(err)
	}
	check.Eventually(t, 10*time.Second, "the watch telling the challenge", func() (string, bool) {
		a := answer()
		return a, a == "tok_1.thumb"
	})
	if err := e.store.Certificates().RemoveHTTPChallenge(e.ctx, c.Domain, c.Token); err != nil {
		t.Fatal(err)
	}
	check.Eventually(t, 10*time.Second, "the watch telling the removal", func() (string, bool) {
		a := answer()
		return a, a == ""
	})
}
