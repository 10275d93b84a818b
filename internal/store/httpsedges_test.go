package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// reserve reserves the domains for the account, for the hostports of
// edges.
func reserve(t *testing.T, e env, accountID string, domains ...string) {
	t.Helper()
	for _, d := range domains {
		if _, err := e.store.CreateReservedDomain(e.ctx, accountID, store.ReservedDomain{Domain: d}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHTTPSEdgeHostports takes hostports of the account's reserved
// domains, and names under its wildcards at any depth, and refuses others
// (of another account too) naming the hostport.
func TestHTTPSEdgeHostports(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	reserve(t, e, account.ID, "app.example.com", "*.apps.example.com")
	reserve(t, e, other.ID, "theirs.example.com")

	edge, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{Description: "prod",
		Hostports: []string{"App.Example.com:443", "a.apps.example.com:443", "a.b.apps.example.com:443", "*.apps.example.com:443"}})
	if err != nil {
		t.Fatal(err)
	}
	if schemas.CheckID(schemas.PrefixHTTPSEdge, edge.ID) != nil || edge.Hostports[0] != "app.example.com:443" || edge.Description != "prod" {
		t.Fatalf("created %+v", edge)
	}
	for _, tc := range []struct{ hostport, field, says string }{
		{"theirs.example.com:443", "hostports[0]", "reserve the domain first"},
		{"apps.example.com:443", "hostports[0]", "not a reserved domain"},
		{"app.example.com:80", "hostports[0]", "<domain>:443"},
		{"app.example.com", "hostports[0]", "<domain>:443"},
		{"bad_name!:443", "hostports[0]", "not a valid name"},
	} {
		err := errOf(e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{Hostports: []string{tc.hostport}}))
		var v *store.ValidationError
		if !errors.As(err, &v) || v.Field != tc.field || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("hostport %q: %v; want a ValidationError of %s saying %q", tc.hostport, err, tc.field, tc.says)
		}
	}
	err = errOf(e.store.UpdateHTTPSEdge(e.ctx, account.ID, edge.ID, func(v *store.HTTPSEdge) error {
		v.Hostports = append(v.Hostports, "app.example.com:443")
		return nil
	}))
	if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "once") {
		t.Fatalf("a duplicate hostport: %v", err)
	}
	wantErr(t, errOf(e.store.GetHTTPSEdge(e.ctx, other.ID, edge.ID)), store.ErrNotFound)

	// Another account cannot reserve a name under the account's wildcard.
	err = errOf(e.store.CreateReservedDomain(e.ctx, other.ID, store.ReservedDomain{Domain: "x.apps.example.com"}))
	if taken := (*store.DomainTakenError)(nil); !errors.As(err, &taken) || taken.Within != "apps.example.com" {
		t.Fatalf("another account's name under the account's wildcard: %v, want a *DomainTakenError", err)
	}
	// Where it did, before the domain tree was kept, the name is the
	// other account's, which is more specific; its delete frees it and
	// leaves the wildcard's claim on its names.
	theirs, err := e.store.CreateUntrackedReservedDomain(e.ctx, other.ID, store.ReservedDomain{Domain: "x.apps.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	err = errOf(e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{Hostports: []string{"a.apps.example.com:443", "x.apps.example.com:443"}}))
	if v := (*store.ValidationError)(nil); !errors.As(err, &v) || v.Field != "hostports[1]" || !strings.Contains(err.Error(), "reserved by another account") {
		t.Fatalf("a hostport of another account's domain under the account's wildcard: %v", err)
	}
	if _, err := e.store.DeleteReservedDomain(e.ctx, other.ID, theirs.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{Hostports: []string{"x.apps.example.com:443"}}); err != nil {
		t.Fatalf("once the other account's name is deleted: %v", err)
	}
	if err := errOf(e.store.CreateReservedDomain(e.ctx, other.ID, store.ReservedDomain{Domain: "x.apps.example.com"})); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("reserving the name again: %v, want a conflict", err)
	}
}

// TestHTTPSEdgeRoutes creates routes of an edge, unique by match type and
// match within the edge (case kept), lists them per edge, keeps another
// edge's and account's apart, and deletes them with their edge, index
// keys included.
func TestHTTPSEdgeRoutes(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	edge, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, edge.ID, store.HTTPSEdgeRoute{EdgeID: second.ID, MatchType: "path_prefix", Match: "/api"})
	if err != nil || r.EdgeID != edge.ID || schemas.CheckID(schemas.PrefixHTTPSEdgeRoute, r.ID) != nil || r.CircuitBreaker != nil {
		t.Fatalf("CreateHTTPSEdgeRoute = %+v, %v", r, err)
	}
	var taken *store.TakenError
	if err := errOf(e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, edge.ID, store.HTTPSEdgeRoute{MatchType: "path_prefix", Match: "/api"})); !errors.As(err, &taken) || taken.Field != "match" {
		t.Fatalf("a duplicate match: %v, want a TakenError", err)
	}
	for _, in := range []store.HTTPSEdgeRoute{{MatchType: "exact_path", Match: "/api"}, {MatchType: "path_prefix", Match: "/API"}} {
		if _, err := e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, edge.ID, in); err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
	}
	if _, err := e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, second.ID, store.HTTPSEdgeRoute{MatchType: "path_prefix", Match: "/api"}); err != nil {
		t.Fatalf("the same match on another edge: %v", err)
	}
	wantErr(t, errOf(e.store.CreateHTTPSEdgeRoute(e.ctx, other.ID, edge.ID, store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "/x"})), store.ErrNotFound)
	wantErr(t, errOf(e.store.GetHTTPSEdgeRoute(e.ctx, other.ID, r.ID)), store.ErrNotFound)
	if err := errOf(e.store.UpdateHTTPSEdgeRoute(e.ctx, account.ID, r.ID, func(v *store.HTTPSEdgeRoute) error { v.EdgeID = second.ID; return nil })); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("moving a route to another edge: %v", err)
	}

	items, _, err := e.store.ListHTTPSEdgeRoutes(e.ctx, account.ID, edge.ID, store.Page{})
	if err != nil || len(items) != 3 {
		t.Fatalf("routes of the edge: %d, %v; want 3", len(items), err)
	}
	byEdge, err := e.store.HTTPSEdgeRoutesByEdge(e.ctx, account.ID)
	if err != nil || len(byEdge) != 2 || len(byEdge[edge.ID]) != 3 || byEdge[edge.ID][0].ID != r.ID || len(byEdge[second.ID]) != 1 {
		t.Fatalf("HTTPSEdgeRoutesByEdge = %v, %v; want 3 routes of the edge, oldest first, and 1 of the second", byEdge, err)
	}
	if items, _, _ := e.store.ListHTTPSEdgeRoutes(e.ctx, other.ID, edge.ID, store.Page{}); len(items) != 0 {
		t.Fatalf("another account lists %d routes of the edge", len(items))
	}

	if _, err := e.store.DeleteHTTPSEdge(e.ctx, account.ID, edge.ID); err != nil {
		t.Fatal(err)
	}
	wantErr(t, errOf(e.store.GetHTTPSEdgeRoute(e.ctx, account.ID, r.ID)), store.ErrNotFound)
	raw := e.rawEntries(t)
	if n, idx := countPrefix(raw, "https_edge_routes."), countPrefix(raw, "https_edge_route_matches."); n != 1 || idx != 1 {
		t.Fatalf("%d routes and %d index keys left, want the other edge's 1 and 1", n, idx)
	}
	wantErr(t, errOf(e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, edge.ID, store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "/x"})), store.ErrNotFound)
}

// TestHTTPSEdgeRouteRules refuses a bad match type, match or module,
// naming the field.
func TestHTTPSEdgeRouteRules(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	edge, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{})
	if err != nil {
		t.Fatal(err)
	}
	good := store.CircuitBreaker{Enabled: true, TrippedDuration: 10, RollingWindow: 10, NumBuckets: 10, VolumeThreshold: 20, ErrorThresholdPercentage: 0.5}
	with := func(change func(*store.CircuitBreaker)) *store.CircuitBreaker { c := good; change(&c); return &c }
	for _, tc := range []struct {
		name  string
		route store.HTTPSEdgeRoute
		field string
		says  string
	}{
		{"match type", store.HTTPSEdgeRoute{MatchType: "regex", Match: "/"}, "match_type", "exact_path or path_prefix"},
		{"relative match", store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "api"}, "match", "starting with /"},
		{"long match", store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "/" + strings.Repeat("a", 1024)}, "match", "1024"},
		{"space", store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "/a b"}, "match", "white space"},
		{"percent", store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "/", CircuitBreaker: with(func(c *store.CircuitBreaker) { c.ErrorThresholdPercentage = 50 })}, "circuit_breaker.error_threshold_percentage", "0 to 1.0, not 0 to 100"},
		{"buckets", store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "/", CircuitBreaker: with(func(c *store.CircuitBreaker) { c.NumBuckets = 129 })}, "circuit_breaker.num_buckets", "1 to 128"},
		{"no buckets", store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "/", CircuitBreaker: with(func(c *store.CircuitBreaker) { c.NumBuckets = 0 })}, "circuit_breaker.num_buckets", "1 to 128"},
		{"tripped", store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "/", CircuitBreaker: with(func(c *store.CircuitBreaker) { c.TrippedDuration = 0 })}, "circuit_breaker.tripped_duration", "above 0"},
		{"window", store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "/", CircuitBreaker: with(func(c *store.CircuitBreaker) { c.RollingWindow = 0 })}, "circuit_breaker.rolling_window", "above 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, edge.ID, store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "/" + strings.ReplaceAll(tc.name, " ", "-")})
			if err != nil {
				t.Fatal(err)
			}
			err = errOf(e.store.UpdateHTTPSEdgeRoute(e.ctx, account.ID, r.ID, func(v *store.HTTPSEdgeRoute) error {
				v.MatchType, v.Match, v.CircuitBreaker = tc.route.MatchType, tc.route.Match, tc.route.CircuitBreaker
				return nil
			}))
			var v *store.ValidationError
			if !errors.As(err, &v) || v.Field != tc.field || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("%v; want a ValidationError of %s saying %q", err, tc.field, tc.says)
			}
		})
	}
}

// TestCircuitBreakerNegativeZero stores an error_threshold_percentage of
// -0 as 0, as JSON readers and writers read and write 0: not as -0, which
// encoding/json writes back as "-0" and which compares equal to 0 but
// for its sign.
func TestCircuitBreakerNegativeZero(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	edge, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, edge.ID, store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "/"})
	if err != nil {
		t.Fatal(err)
	}
	negZero := math.Copysign(0, -1)
	updated, err := e.store.UpdateHTTPSEdgeRoute(e.ctx, account.ID, r.ID, func(v *store.HTTPSEdgeRoute) error {
		v.CircuitBreaker = &store.CircuitBreaker{Enabled: true, TrippedDuration: 10, RollingWindow: 10, NumBuckets: 10, VolumeThreshold: 20, ErrorThresholdPercentage: negZero}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := e.store.GetHTTPSEdgeRoute(e.ctx, account.ID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []store.HTTPSEdgeRoute{updated, stored} {
		data, _ := json.Marshal(v.CircuitBreaker)
		if math.Signbit(v.CircuitBreaker.ErrorThresholdPercentage) || !strings.Contains(string(data), `"error_threshold_percentage":0}`) {
			t.Fatalf("circuit breaker %s; want error_threshold_percentage 0", data)
		}
	}
}

// TestHTTPSEdgeRouteModulesConcurrent sets the two modules of a route
// from two processes at once, many times: neither is lost.
func TestHTTPSEdgeRouteModulesConcurrent(t *testing.T) {
	e := newEnv(t)
	stores := []*store.Store{e.store, e.openAnother(t)}
	account := e.createAccount(t, "team")
	edge, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		r, err := e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, edge.ID, store.HTTPSEdgeRoute{MatchType: "exact_path", Match: fmt.Sprintf("/%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var errs [2]error
		wg.Go(func() {
			_, errs[0] = stores[0].UpdateHTTPSEdgeRoute(e.ctx, account.ID, r.ID, func(v *store.HTTPSEdgeRoute) error {
				v.CircuitBreaker = &store.CircuitBreaker{TrippedDuration: 1, RollingWindow: 1, NumBuckets: 1}
				return nil
			})
		})
		wg.Go(func() {
			_, errs[1] = stores[1].UpdateHTTPSEdgeRoute(e.ctx, account.ID, r.ID, func(v *store.HTTPSEdgeRoute) error {
				v.WebsocketTCPConverter = &store.WebsocketTCPConverter{Enabled: true}
				return nil
			})
		})
		wg.Wait()
		if err := errors.Join(errs[:]...); err != nil {
			t.Fatal(err)
		}
		got, err := e.store.GetHTTPSEdgeRoute(e.ctx, account.ID, r.ID)
		if err != nil || got.CircuitBreaker == nil || got.WebsocketTCPConverter == nil {
			t.Fatalf("after two concurrent module changes: %+v, %v; want both", got, err)
		}
	}
}

// TestHTTPSEdgeRouteCreateRacesEdgeDelete creates a route while its edge
// is deleted: either the route fails, or it is deleted with the edge;
// none is left behind.
func TestHTTPSEdgeRouteCreateRacesEdgeDelete(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	for range 5 {
		edge, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var deleteErr error
		wg.Go(func() {
			_, _ = e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, edge.ID, store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "/"})
		})
		wg.Go(func() { _, deleteErr = e.store.DeleteHTTPSEdge(e.ctx, account.ID, edge.ID) })
		wg.Wait()
		if deleteErr != nil {
			t.Fatal(deleteErr)
		}
		if n := countPrefix(e.rawEntries(t), "https_edge_route"); n != 0 {
			t.Fatalf("%d route keys left after the edge's delete", n)
		}
	}
}

// TestHTTPSEdgeLimitsAndPages refuses an edge or route over its limit and
// pages routes over 250 newest first.
func TestHTTPSEdgeLimitsAndPages(t *testing.T) {
	e := newEnvWith(t, store.Config{Limits: store.Limits{HTTPSEdges: 1, HTTPSEdgeRoutes: 260}})
	account := e.createAccount(t, "team")
	edge, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{})
	if err != nil {
		t.Fatal(err)
	}
	var limit *store.LimitError
	if err := errOf(e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{})); !errors.As(err, &limit) || limit.Limit != store.LimitHTTPSEdges {
		t.Fatalf("an edge over the limit: %v", err)
	}
	var made []string
	for i := range 260 {
		r, err := e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, edge.ID, store.HTTPSEdgeRoute{MatchType: "exact_path", Match: fmt.Sprintf("/%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, r.ID)
	}
	if err := errOf(e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, edge.ID, store.HTTPSEdgeRoute{MatchType: "exact_path", Match: "/over"})); !errors.As(err, &limit) || limit.Limit != store.LimitHTTPSEdgeRoutes {
		t.Fatalf("a route over the limit: %v", err)
	}
	var seen []string
	page := store.Page{Limit: 100}
	for {
		items, next, err := e.store.ListHTTPSEdgeRoutes(e.ctx, account.ID, edge.ID, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range items {
			seen = append(seen, r.ID)
		}
		if next == "" {
			break
		}
		page.BeforeID = next
	}
	if len(seen) != 260 || seen[0] != made[259] || seen[259] != made[0] {
		t.Fatalf("paged %d routes, want 260 newest first", len(seen))
	}
	if _, err := e.store.DeleteHTTPSEdge(e.ctx, account.ID, edge.ID); err != nil {
		t.Fatalf("deleting an edge with 260 routes in one batch: %v", err)
	}
}

// TestDeleteReservedDomainUsedByEdge refuses to release a reserved domain
// while an edge has a hostport only it covers, so that another account
// cannot reserve the domain under the edge; one covered by another of the
// account's domains, or no longer used, is released. An edge given the
// hostport while the domain is deleted either holds it, the delete
// refused, or is refused.
func TestDeleteReservedDomainUsedByEdge(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	reserve(t, e, account.ID, "app.example.com", "*.apps.example.com", "*.b.apps.example.com")
	domains := map[string]string{}
	list, _, err := e.store.ListReservedDomains(e.ctx, account.ID, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range list {
		domains[d.Domain] = d.ID
	}
	edge, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{Hostports: []string{"app.example.com:443", "a.b.apps.example.com:443"}})
	if err != nil {
		t.Fatal(err)
	}
	err = errOf(e.store.DeleteReservedDomain(e.ctx, account.ID, domains["app.example.com"]))
	var inUse *store.DomainInUseError
	if !errors.As(err, &inUse) || !errors.Is(err, store.ErrConflict) || len(inUse.Edges) != 1 || inUse.Edges[0] != edge.ID {
		t.Fatalf("deleting a domain an edge uses: %v", err)
	}
	if _, err := e.store.CreateReservedDomain(e.ctx, other.ID, store.ReservedDomain{Domain: "app.example.com"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("another account reserves the edge's domain: %v", err)
	}
	// *.apps.example.com covers a.b.apps.example.com as well: either
	// wildcard may go, not both.
	if _, err := e.store.DeleteReservedDomain(e.ctx, account.ID, domains["*.b.apps.example.com"]); err != nil {
		t.Fatal(err)
	}
	wantErr(t, errOf(e.store.DeleteReservedDomain(e.ctx, account.ID, domains["*.apps.example.com"])), store.ErrConflict)
	if _, err := e.store.UpdateHTTPSEdge(e.ctx, account.ID, edge.ID, func(v *store.HTTPSEdge) error {
		v.Hostports = nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"app.example.com", "*.apps.example.com"} {
		if _, err := e.store.DeleteReservedDomain(e.ctx, account.ID, domains[d]); err != nil {
			t.Fatalf("deleting %s, no longer used: %v", d, err)
		}
	}

	for i := range 5 {
		domain := fmt.Sprintf("race%d.example.com", i)
		d, err := e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: domain})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var createErr, deleteErr error
		wg.Go(func() {
			_, createErr = e.store.UpdateHTTPSEdge(e.ctx, account.ID, edge.ID, func(v *store.HTTPSEdge) error {
				v.Hostports = []string{domain + ":443"}
				return nil
			})
		})
		wg.Go(func() { _, deleteErr = e.store.DeleteReservedDomain(e.ctx, account.ID, d.ID) })
		wg.Wait()
		if (createErr == nil) == (deleteErr == nil) {
			t.Fatalf("round %d: the edge's hostport: %v, the domain's delete: %v; want exactly one to fail", i, createErr, deleteErr)
		}
		if _, err := e.store.UpdateHTTPSEdge(e.ctx, account.ID, edge.ID, func(v *store.HTTPSEdge) error {
			v.Hostports = nil
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}
