package store_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
)

// TestFollowRouting: FollowRouting tells the HTTPS edges and routes
// written before it started and after, and their deletions (a route
// deleted with its edge among them), each under the key that names it.
func TestFollowRouting(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	reserve(t, e, account.ID, "app.example.com", "*.apps.example.com")
	before, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{Hostports: []string{"app.example.com:443"}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	held := map[string]store.RoutingChange{}
	ctx, stop := context.WithCancel(e.ctx)
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.store.FollowRouting(ctx, slog.New(slog.DiscardHandler), func(c store.RoutingChange) {
			mu.Lock()
			defer mu.Unlock()
			if c.Deleted {
				delete(held, c.Key)
			} else {
				held[c.Key] = c
			}
		}, func() { close(ready) })
	}()
	defer func() {
		stop()
		<-done
	}()
	<-ready
	holds := func(what string, want func(map[string]store.RoutingChange) bool) {
		t.Helper()
		check.Eventually(t, 5*time.Second, what, func() (string, bool) {
			mu.Lock()
			defer mu.Unlock()
			return "not yet", want(held)
		})
	}
	edgeKey := "https_edges." + account.ID + "." + before.ID
	holds("the edge written before", func(h map[string]store.RoutingChange) bool {
		c, ok := h[edgeKey]
		return ok && c.Edge != nil && c.Edge.Hostports[0] == "app.example.com:443"
	})
	route, err := e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, before.ID, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/api"})
	if err != nil {
		t.Fatal(err)
	}
	routeKey := "https_edge_routes." + account.ID + "." + route.ID
	holds("the route written after", func(h map[string]store.RoutingChange) bool {
		c, ok := h[routeKey]
		return ok && c.Route != nil && c.Route.EdgeID == before.ID && c.Route.Match == "/api"
	})
	if _, err := e.store.DeleteHTTPSEdge(e.ctx, account.ID, before.ID); err != nil {
		t.Fatal(err)
	}
	holds("the edge and its route deleted", func(h map[string]store.RoutingChange) bool {
		_, edgeHeld := h[edgeKey]
		_, routeHeld := h[routeKey]
		return !edgeHeld && !routeHeld
	})
}

// TestFollowRoutingAgain: a second FollowRouting in one process sees the
// edges the first saw. nats.go's WatchFiltered rewrites the filters it is
// given into subjects, in place: a second watch given the same slice, as
// every watch again after a failed one is, watched subjects of subjects,
// and never got its initial values.
func TestFollowRoutingAgain(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	reserve(t, e, account.ID, "app.example.com")
	edge, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{Hostports: []string{"app.example.com:443"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		var mu sync.Mutex
		var seen []string
		ctx, stop := context.WithCancel(e.ctx)
		ready := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.store.FollowRouting(ctx, slog.New(slog.DiscardHandler), func(c store.RoutingChange) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, c.Key)
			}, func() { close(ready) })
		}()
		select {
		case <-ready:
		case <-time.After(10 * time.Second):
		}
		stop()
		<-done
		if want := "https_edges." + account.ID + "." + edge.ID; len(seen) != 1 || seen[0] != want {
			t.Fatalf("follow %d saw %q, want [%s]", i+1, seen, want)
		}
	}
}
