package edge

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
)

// TestRouteMatch: an exact route before any prefix, the longest prefix
// first, paths cleaned of dot segments before matching (a trailing slash
// kept), and matches compared decoded.
func TestRouteMatch(t *testing.T) {
	tr := newRouting()
	tr.apply(store.RoutingChange{Key: "https_edges.a.e1", Edge: &store.HTTPSEdge{ID: "e1", AccountID: "a", Hostports: []string{"App.example.com:443"}}})
	for _, r := range []store.HTTPSEdgeRoute{
		{ID: "root", MatchType: store.MatchPathPrefix, Match: "/"},
		{ID: "api", MatchType: store.MatchPathPrefix, Match: "/api"},
		{ID: "apiv2", MatchType: store.MatchPathPrefix, Match: "/api/v2/"},
		{ID: "exact", MatchType: store.MatchExactPath, Match: "/api/v2/health"},
		{ID: "space", MatchType: store.MatchExactPath, Match: "/a%20b"},
		{ID: "admin", MatchType: store.MatchPathPrefix, Match: "/admin"},
	} {
		r.AccountID, r.EdgeID = "a", "e1"
		tr.apply(store.RoutingChange{Key: "https_edge_routes.a." + r.ID, Route: &r})
	}
	for path, want := range map[string]string{
		"/":                    "root",
		"":                     "root",
		"/apiary":              "api",
		"/api/v2":              "api",
		"/api/v2/":             "apiv2",
		"/api/v2/users":        "apiv2",
		"/api/v2/health":       "exact",
		"/api/v2/health/":      "apiv2",
		"/a b":                 "space",
		"/public/../admin/x":   "admin",
		"/admin/./../admin":    "admin",
		"//admin":              "admin",
		"/api/v2/x/../../../x": "root",
		"/api/v2/./users/../":  "apiv2",
	} {
		er, rt := tr.lookup("app.example.com", path)
		if er == nil || rt == nil || rt.rec.ID != want {
			got := "none"
			if rt != nil {
				got = rt.rec.ID
			}
			t.Errorf("path %q: route %s, want %s", path, got, want)
		}
	}
	if er, _ := tr.lookup("other.example.com", "/"); er != nil {
		t.Error("a host of no edge is served")
	}
	// The route deleted, the prefix under it takes its paths; the edge
	// deleted, its host is served no more.
	tr.apply(store.RoutingChange{Key: "https_edge_routes.a.exact", Deleted: true})
	if _, rt := tr.lookup("app.example.com", "/api/v2/health"); rt == nil || rt.rec.ID != "apiv2" {
		t.Errorf("after the exact route's deletion: %v", rt)
	}
	tr.apply(store.RoutingChange{Key: "https_edges.a.e1", Deleted: true})
	if er, _ := tr.lookup("app.example.com", "/"); er != nil {
		t.Error("a deleted edge's host is served")
	}
}

// TestRoutingOldestEdgeServesAHost: two edges of an account with one
// hostport: the older (smaller id) serves it, and the other once it
// goes; a route keeps its breaker across a change that keeps the
// breaker's settings, and gets a new one when they change.
func TestRoutingOldestEdgeServesAHost(t *testing.T) {
	tr := newRouting()
	for _, id := range []string{"e2", "e1"} {
		tr.apply(store.RoutingChange{Key: "https_edges.a." + id, Edge: &store.HTTPSEdge{ID: id, AccountID: "a", Hostports: []string{"x.example.com:443"}}})
	}
	if er, _ := tr.lookup("x.example.com", "/"); er == nil || er.edge.ID != "e1" {
		t.Fatalf("served by %v, want e1", er)
	}
	tr.apply(store.RoutingChange{Key: "https_edges.a.e1", Deleted: true})
	if er, _ := tr.lookup("x.example.com", "/"); er == nil || er.edge.ID != "e2" {
		t.Fatalf("after e1's deletion served by %v, want e2", er)
	}
	cb := &store.CircuitBreaker{Enabled: true, TrippedDuration: 1, RollingWindow: 10, NumBuckets: 10, VolumeThreshold: 1, ErrorThresholdPercentage: 0.5}
	r := store.HTTPSEdgeRoute{ID: "r", AccountID: "a", EdgeID: "e2", MatchType: store.MatchPathPrefix, Match: "/", CircuitBreaker: cb}
	tr.apply(store.RoutingChange{Key: "https_edge_routes.a.r", Route: &r})
	_, first := tr.lookup("x.example.com", "/")
	r.Description = "renamed"
	tr.apply(store.RoutingChange{Key: "https_edge_routes.a.r", Route: &r})
	_, second := tr.lookup("x.example.com", "/")
	if first.breaker == nil || second.breaker != first.breaker || second.rec.Description != "renamed" {
		t.Error("a change that keeps the breaker's settings did not keep the breaker")
	}
	changed := *cb
	changed.VolumeThreshold = 2
	r.CircuitBreaker = &changed
	tr.apply(store.RoutingChange{Key: "https_edge_routes.a.r", Route: &r})
	if _, third := tr.lookup("x.example.com", "/"); third.breaker == nil || third.breaker == first.breaker {
		t.Error("new breaker settings kept the old breaker")
	}
}

// BenchmarkRouteLookup is a request's route lookup at an edge of ten
// prefix routes and ten exact ones, a path taking the shortest prefix
// (every longer one compared first).
func BenchmarkRouteLookup(b *testing.B) {
	tr := newRouting()
	tr.apply(store.RoutingChange{Key: "https_edges.a.e1", Edge: &store.HTTPSEdge{ID: "e1", AccountID: "a", Hostports: []string{"app.example.com:443"}}})
	for i := range 10 {
		for _, mt := range []string{store.MatchPathPrefix, store.MatchExactPath} {
			r := store.HTTPSEdgeRoute{ID: mt + string(rune('a'+i)), AccountID: "a", EdgeID: "e1", MatchType: mt, Match: "/" + strings.Repeat("x", i)}
			tr.apply(store.RoutingChange{Key: "https_edge_routes.a." + r.ID, Route: &r})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, rt := tr.lookup("app.example.com", "/api/v1/users/42"); rt == nil {
			b.Fatal("no route")
		}
	}
}

// TestRoutesThatDecodeAlike: of two routes whose matches decode to one
// path, the older (the smaller id) takes it, at every rebuild.
func TestRoutesThatDecodeAlike(t *testing.T) {
	for range 20 {
		tr := newRouting()
		tr.apply(store.RoutingChange{Key: "https_edges.a.e1", Edge: &store.HTTPSEdge{ID: "e1", AccountID: "a", Hostports: []string{"app.example.com:443"}}})
		for _, r := range []store.HTTPSEdgeRoute{
			{ID: "r2", MatchType: store.MatchExactPath, Match: "/%61dmin"},
			{ID: "r1", MatchType: store.MatchExactPath, Match: "/admin"},
			{ID: "r4", MatchType: store.MatchPathPrefix, Match: "/%70ub"},
			{ID: "r3", MatchType: store.MatchPathPrefix, Match: "/pub"},
		} {
			r.AccountID, r.EdgeID = "a", "e1"
			tr.apply(store.RoutingChange{Key: "https_edge_routes.a." + r.ID, Route: &r})
		}
		if _, rt := tr.lookup("app.example.com", "/admin"); rt == nil || rt.rec.ID != "r1" {
			t.Fatalf("/admin went to %v, want r1, the older", rt)
		}
		if _, rt := tr.lookup("app.example.com", "/pub/x"); rt == nil || rt.rec.ID != "r3" {
			t.Fatalf("/pub/x went to %v, want r3, the older", rt)
		}
	}
}
