package store_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/trafficpolicy"
)

// TestTunnelGroupBackendLifecycle creates, reads, lists, updates and
// deletes a backend; another account's id is not found.
func TestTunnelGroupBackendLifecycle(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	labels := map[string]string{"env": "prod", "team": "web"}
	b, err := e.store.CreateTunnelGroupBackend(e.ctx, account.ID, store.TunnelGroupBackend{ID: "bkdtg_chosen", Description: "web", Metadata: "{}", Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	labels["env"] = "changed after the create"
	if schemas.CheckID(schemas.PrefixTunnelGroupBackend, b.ID) != nil || b.AccountID != account.ID || b.CreatedAt.IsZero() ||
		b.Description != "web" || b.Metadata != "{}" || b.Labels["env"] != "prod" || len(b.Labels) != 2 {
		t.Fatalf("created %+v", b)
	}
	got, err := e.store.GetTunnelGroupBackend(e.ctx, account.ID, b.ID)
	if err != nil || got.Labels["team"] != "web" || got.Labels["env"] != "prod" {
		t.Fatalf("GetTunnelGroupBackend = %+v, %v", got, err)
	}
	wantErr(t, errOf(e.store.GetTunnelGroupBackend(e.ctx, other.ID, b.ID)), store.ErrNotFound)
	second, err := e.store.CreateTunnelGroupBackend(e.ctx, account.ID, store.TunnelGroupBackend{Labels: map[string]string{"env": "dev"}})
	if err != nil {
		t.Fatal(err)
	}
	page, next, err := e.store.ListTunnelGroupBackends(e.ctx, account.ID, store.Page{})
	if err != nil || len(page) != 2 || page[0].ID != second.ID || page[1].ID != b.ID || next != "" {
		t.Fatalf("ListTunnelGroupBackends = %v, %q, %v; want the two, newest first", page, next, err)
	}
	if page, _, err := e.store.ListTunnelGroupBackends(e.ctx, other.ID, store.Page{}); err != nil || len(page) != 0 {
		t.Fatalf("the other account's list = %v, %v; want none", page, err)
	}
	updated, err := e.store.UpdateTunnelGroupBackend(e.ctx, account.ID, b.ID, func(v *store.TunnelGroupBackend) error {
		v.Labels = map[string]string{"env": "staging"}
		return nil
	})
	if err != nil || len(updated.Labels) != 1 || updated.Labels["env"] != "staging" {
		t.Fatalf("UpdateTunnelGroupBackend = %+v, %v", updated, err)
	}
	wantErr(t, errOf(e.store.UpdateTunnelGroupBackend(e.ctx, other.ID, b.ID, func(*store.TunnelGroupBackend) error { return nil })), store.ErrNotFound)
	wantErr(t, errOf(e.store.DeleteTunnelGroupBackend(e.ctx, other.ID, b.ID)), store.ErrNotFound)
	deleted, err := e.store.DeleteTunnelGroupBackend(e.ctx, account.ID, b.ID)
	if err != nil || deleted.ID != b.ID {
		t.Fatalf("DeleteTunnelGroupBackend = %+v, %v", deleted, err)
	}
	wantErr(t, errOf(e.store.GetTunnelGroupBackend(e.ctx, account.ID, b.ID)), store.ErrNotFound)
}

// TestTunnelGroupBackendRules refuses a backend without labels, with bad
// ones or too long a description, naming the field and the label.
func TestTunnelGroupBackendRules(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	for _, tc := range []struct {
		name  string
		in    store.TunnelGroupBackend
		field string
		says  string
	}{
		{"no labels", store.TunnelGroupBackend{}, "labels", "there are no labels"},
		{"bad name", store.TunnelGroupBackend{Labels: map[string]string{"env": "prod", "Team": "web"}}, "labels", `label name "Team" is not valid`},
		{"bad value", store.TunnelGroupBackend{Labels: map[string]string{"env": "my prod"}}, "labels", "of label env is not valid"},
		{"long description", store.TunnelGroupBackend{Description: strings.Repeat("d", 256), Labels: map[string]string{"env": "prod"}}, "description", "255"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := errOf(e.store.CreateTunnelGroupBackend(e.ctx, account.ID, tc.in))
			var v *store.ValidationError
			if !errors.As(err, &v) || v.Field != tc.field || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("%v; want a ValidationError of %s saying %q", err, tc.field, tc.says)
			}
		})
	}
	b, err := e.store.CreateTunnelGroupBackend(e.ctx, account.ID, store.TunnelGroupBackend{Labels: map[string]string{"env": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	err = errOf(e.store.UpdateTunnelGroupBackend(e.ctx, account.ID, b.ID, func(v *store.TunnelGroupBackend) error {
		v.Labels = nil
		return nil
	}))
	if !errors.Is(err, resource.ErrInvalidLabels) || !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("an update removing every label: %v; want it refused", err)
	}
}

// TestTunnelGroupBackendLimit refuses a create past
// Limits.TunnelGroupBackends.
func TestTunnelGroupBackendLimit(t *testing.T) {
	e := newEnvWith(t, store.Config{Limits: store.Limits{TunnelGroupBackends: 1}})
	account := e.createAccount(t, "team")
	in := store.TunnelGroupBackend{Labels: map[string]string{"env": "prod"}}
	if _, err := e.store.CreateTunnelGroupBackend(e.ctx, account.ID, in); err != nil {
		t.Fatal(err)
	}
	var limit *store.LimitError
	if err := errOf(e.store.CreateTunnelGroupBackend(e.ctx, account.ID, in)); !errors.As(err, &limit) || limit.Limit != store.LimitTunnelGroupBackends || limit.Max != 1 {
		t.Fatalf("second backend: %v; want the limit of 1 tunnel group backends", err)
	}
}

// newRoute creates an HTTPS edge of the account and a route of it.
func newRoute(t *testing.T, e env, accountID string) store.HTTPSEdgeRoute {
	t.Helper()
	edge, err := e.store.CreateHTTPSEdge(e.ctx, accountID, store.HTTPSEdge{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.store.CreateHTTPSEdgeRoute(e.ctx, accountID, edge.ID, store.HTTPSEdgeRoute{MatchType: "path_prefix", Match: "/"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// setBackend gives the route the backend, enabled.
func setBackend(e env, accountID, routeID, backendID string) (store.HTTPSEdgeRoute, error) {
	return e.store.UpdateHTTPSEdgeRoute(e.ctx, accountID, routeID, func(v *store.HTTPSEdgeRoute) error {
		v.Backend = &store.RouteBackend{Enabled: true, BackendID: backendID}
		return nil
	})
}

// TestRouteBackend gives a route a backend of its account, refuses one
// that is not, and refuses to delete a backend routes use, naming them,
// until they no longer do.
func TestRouteBackend(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	b, err := e.store.CreateTunnelGroupBackend(e.ctx, account.ID, store.TunnelGroupBackend{Labels: map[string]string{"env": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := e.store.CreateTunnelGroupBackend(e.ctx, other.ID, store.TunnelGroupBackend{Labels: map[string]string{"env": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	first, second := newRoute(t, e, account.ID), newRoute(t, e, account.ID)
	for _, tc := range []struct {
		name, backendID, says string
		notFound              bool
	}{
		{"not an id", "web", `is "web": give the id of a tunnel group backend`, false},
		{"another prefix", schemas.NewID(schemas.PrefixBotUser), "bkdtg_", false},
		{"none such", schemas.NewID(schemas.PrefixTunnelGroupBackend), "names no tunnel group backend of the account", true},
		{"another account's", theirs.ID, "names no tunnel group backend of the account", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := errOf(setBackend(e, account.ID, first.ID, tc.backendID))
			var v *store.ValidationError
			if !errors.As(err, &v) || v.Field != "backend.backend_id" || !strings.Contains(err.Error(), tc.says) || errors.Is(err, store.ErrNotFound) != tc.notFound {
				t.Fatalf("%v; want a ValidationError of backend.backend_id saying %q (matching ErrNotFound: %t)", err, tc.says, tc.notFound)
			}
		})
	}
	for _, r := range []store.HTTPSEdgeRoute{first, second} {
		got, err := setBackend(e, account.ID, r.ID, b.ID)
		if err != nil || got.Backend == nil || got.Backend.BackendID != b.ID || !got.Backend.Enabled {
			t.Fatalf("setting the backend: %+v, %v", got, err)
		}
	}
	_, err = e.store.DeleteTunnelGroupBackend(e.ctx, account.ID, b.ID)
	var inUse *store.BackendInUseError
	if !errors.As(err, &inUse) || !errors.Is(err, store.ErrConflict) || inUse.BackendID != b.ID ||
		strings.Join(inUse.Routes, ",") != strings.Join(slices.Sorted(slices.Values([]string{first.ID, second.ID})), ",") || !strings.Contains(err.Error(), first.ID) {
		t.Fatalf("deleting a backend two routes use: %v; want a BackendInUseError naming both", err)
	}
	if _, err := e.store.UpdateHTTPSEdgeRoute(e.ctx, account.ID, first.ID, func(v *store.HTTPSEdgeRoute) error {
		v.Backend.Enabled = false // disabled, it is still the route's
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DeleteHTTPSEdgeRoute(e.ctx, account.ID, second.ID); err != nil {
		t.Fatal(err)
	}
	if err := errOf(e.store.DeleteTunnelGroupBackend(e.ctx, account.ID, b.ID)); !errors.As(err, &inUse) || len(inUse.Routes) != 1 || inUse.Routes[0] != first.ID {
		t.Fatalf("deleting a backend a disabled module names: %v; want it refused, naming %s", err, first.ID)
	}
	if _, err := e.store.UpdateHTTPSEdgeRoute(e.ctx, account.ID, first.ID, func(v *store.HTTPSEdgeRoute) error {
		v.Backend = nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DeleteTunnelGroupBackend(e.ctx, account.ID, b.ID); err != nil {
		t.Fatalf("deleting a backend no route uses: %v", err)
	}
}

// TestRouteBackendRacesDelete gives a route a backend while the backend
// is deleted, many times: exactly one of the two succeeds, and a route
// never names a backend that is gone.
func TestRouteBackendRacesDelete(t *testing.T) {
	e := newEnv(t)
	stores := []*store.Store{e.store, e.openAnother(t)}
	account := e.createAccount(t, "team")
	r := newRoute(t, e, account.ID)
	for i := range 8 {
		b, err := e.store.CreateTunnelGroupBackend(e.ctx, account.ID, store.TunnelGroupBackend{Labels: map[string]string{"env": "prod"}})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var setErr, deleteErr error
		wg.Go(func() {
			_, setErr = stores[0].UpdateHTTPSEdgeRoute(e.ctx, account.ID, r.ID, func(v *store.HTTPSEdgeRoute) error {
				v.Backend = &store.RouteBackend{Enabled: true, BackendID: b.ID}
				return nil
			})
		})
		wg.Go(func() { _, deleteErr = stores[1].DeleteTunnelGroupBackend(e.ctx, account.ID, b.ID) })
		wg.Wait()
		if (setErr == nil) == (deleteErr == nil) {
			t.Fatalf("round %d: the route's backend: %v, the backend's delete: %v; want exactly one to fail", i, setErr, deleteErr)
		}
		if _, err := e.store.UpdateHTTPSEdgeRoute(e.ctx, account.ID, r.ID, func(v *store.HTTPSEdgeRoute) error {
			v.Backend = nil
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRouteTrafficPolicy keeps a policy the parser takes, and refuses one
// it does not with the mistake's line and column, one with on_tcp_connect
// rules, and one too long.
func TestRouteTrafficPolicy(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	r := newRoute(t, e, account.ID)
	setPolicy := func(doc string) (store.HTTPSEdgeRoute, error) {
		return e.store.UpdateHTTPSEdgeRoute(e.ctx, account.ID, r.ID, func(v *store.HTTPSEdgeRoute) error {
			v.TrafficPolicy = &store.RouteTrafficPolicy{Enabled: true, Value: doc}
			return nil
		})
	}
	good := "on_http_request:\n  - actions:\n      - type: deny\n"
	got, err := setPolicy(good)
	if err != nil || got.TrafficPolicy == nil || got.TrafficPolicy.Value != good {
		t.Fatalf("a good policy: %+v, %v", got, err)
	}
	// The edges run openid-connect: a route may have it.
	login := "on_http_request:\n  - actions:\n      - type: openid-connect\n        config: {issuer_url: https://id.example.com, client_id: c, client_secret: s}\n"
	if _, err := setPolicy(login); err != nil {
		t.Fatalf("a policy with openid-connect: %v", err)
	}
	if _, err := setPolicy(good); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, doc string
		says      []string
	}{
		// The unknown action type is on line 4, column 15.
		{"unknown action", "on_http_request:\n  - name: x\n    actions:\n      - type: no-such-action\n", []string{"line 4, column 15", "no-such-action"}},
		{"unknown phase", "on_tcp_request: []\n", []string{"line 1, column 1", "on_tcp_request"}},
		{"empty", "", []string{"the document is empty"}},
		{"tcp rules", "on_tcp_connect:\n  - actions:\n      - type: deny\n", []string{"on_tcp_connect rules", "a route takes HTTP requests"}},
		{"too long", "on_http_request: []\n#" + strings.Repeat("x", resource.MaxRouteTrafficPolicy), []string{"more than the 65536 bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := errOf(setPolicy(tc.doc))
			var v *store.ValidationError
			if !errors.As(err, &v) || v.Field != "traffic_policy.value" {
				t.Fatalf("%v; want a ValidationError of traffic_policy.value", err)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%v; want it to say %q", err, s)
				}
			}
		})
	}
	var policy *trafficpolicy.PolicyError
	err = errOf(setPolicy("on_http_request:\n  - actions:\n      - type: no-such-action\n"))
	if !errors.As(err, &policy) || policy.Problems[0].Line != 3 {
		t.Fatalf("%v; want the parser's *PolicyError with the line of the mistake", err)
	}
	if got, err := e.store.GetHTTPSEdgeRoute(e.ctx, account.ID, r.ID); err != nil || got.TrafficPolicy.Value != good {
		t.Fatalf("after refused policies: %+v, %v; want the good one kept", got, err)
	}
}

// TestLabeledEndpoint records a labeled tunnel's endpoint, with labels and
// no address, and refuses bad labels, an address on it, and labels on an
// endpoint of another proto.
func TestLabeledEndpoint(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	ts := startSession(t, e, account.ID)
	ep, err := e.store.CreateEndpoint(e.ctx, account.ID, store.Endpoint{TunnelSessionID: ts.ID, Proto: store.ProtoLabeled,
		Labels: map[string]string{"env": "prod"}, UpstreamURL: "http://localhost:8080", EdgeID: testEdge})
	if err != nil {
		t.Fatalf("CreateEndpoint: %v", err)
	}
	if ep.Labels["env"] != "prod" || ep.URL != "" || ep.PublicURL != "" || ep.Hostport != "" {
		t.Fatalf("created %+v", ep)
	}
	for _, tc := range []struct {
		name  string
		in    store.Endpoint
		field string
		says  string
	}{
		{"no labels", store.Endpoint{Proto: store.ProtoLabeled}, "labels", "there are no labels"},
		{"bad label", store.Endpoint{Proto: store.ProtoLabeled, Labels: map[string]string{"Env": "prod"}}, "labels", `"Env"`},
		{"a URL", store.Endpoint{Proto: store.ProtoLabeled, Labels: map[string]string{"env": "prod"}, URL: "https://app.example.com"}, "url", "must be empty"},
		{"a domain", store.Endpoint{Proto: store.ProtoLabeled, Labels: map[string]string{"env": "prod"}, Domain: schemas.NewID(schemas.PrefixReservedDomain)}, "domain", "must be empty"},
		{"labels on https", store.Endpoint{Proto: "https", URL: "https://app.example.com", Labels: map[string]string{"env": "prod"}}, "labels", "only for an endpoint of proto labeled"},
		{"another proto", store.Endpoint{Proto: "tls", URL: "tls://app.example.com:443"}, "proto", `"labeled"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.TunnelSessionID, tc.in.EdgeID = ts.ID, testEdge
			err := errOf(e.store.CreateEndpoint(e.ctx, account.ID, tc.in))
			var v *store.ValidationError
			if !errors.As(err, &v) || v.Field != tc.field || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("%v; want a ValidationError of %s saying %q", err, tc.field, tc.says)
			}
		})
	}
}

// TestLabeledEndpoints lists the account's labeled endpoints alone,
// sorted by id, each with its labels; another account has none of them.
func TestLabeledEndpoints(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	ts := startSession(t, e, account.ID)
	var want []string
	for _, env := range []string{"prod", "dev", "prod"} {
		ep, err := e.store.CreateEndpoint(e.ctx, account.ID, store.Endpoint{TunnelSessionID: ts.ID, Proto: store.ProtoLabeled,
			Labels: map[string]string{"env": env}, EdgeID: testEdge})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ep.ID)
	}
	if _, err := e.store.CreateEndpoint(e.ctx, account.ID, store.Endpoint{TunnelSessionID: ts.ID, Proto: "https", URL: "https://app.example.com", EdgeID: testEdge}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	got, err := e.store.LabeledEndpoints(e.ctx, account.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ep := range got {
		ids = append(ids, ep.ID)
		if ep.Proto != store.ProtoLabeled || ep.Labels["env"] == "" {
			t.Errorf("listed %+v", ep)
		}
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("LabeledEndpoints = %v, want %v", ids, want)
	}
	b := store.TunnelGroupBackend{Labels: map[string]string{"env": "prod"}}
	if n := len(slices.DeleteFunc(got, func(ep store.Endpoint) bool { return !b.Selects(ep.Labels) })); n != 2 {
		t.Fatalf("env=prod selects %d, want 2", n)
	}
	if got, err := e.store.LabeledEndpoints(e.ctx, other.ID); err != nil || len(got) != 0 {
		t.Fatalf("the other account's: %v, %v; want none", got, err)
	}
	wantErr(t, errOf(e.store.LabeledEndpoints(e.ctx, "not an account")), store.ErrNotFound)
}

// TestCreateRouteWithBackend creates a route with its backend and traffic
// policy set, checked as an update's: a backend of the account, a policy
// that parses.
func TestCreateRouteWithBackend(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	edge, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.store.CreateTunnelGroupBackend(e.ctx, account.ID, store.TunnelGroupBackend{Labels: map[string]string{"env": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	in := store.HTTPSEdgeRoute{MatchType: "path_prefix", Match: "/", Backend: &store.RouteBackend{Enabled: true, BackendID: b.ID},
		TrafficPolicy: &store.RouteTrafficPolicy{Enabled: true, Value: "on_http_request: []\n"}}
	r, err := e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, edge.ID, in)
	if err != nil || r.Backend == nil || r.Backend.BackendID != b.ID || r.TrafficPolicy == nil || r.TrafficPolicy.Value != in.TrafficPolicy.Value {
		t.Fatalf("CreateHTTPSEdgeRoute = %+v, %v", r, err)
	}
	in.Backend.BackendID = "x" // the input is copied
	if got, err := e.store.GetHTTPSEdgeRoute(e.ctx, account.ID, r.ID); err != nil || got.Backend.BackendID != b.ID {
		t.Fatalf("stored %+v, %v", got, err)
	}
	wantErr(t, errOf(e.store.DeleteTunnelGroupBackend(e.ctx, account.ID, b.ID)), store.ErrConflict)
	in.Match, in.Backend.BackendID = "/other", schemas.NewID(schemas.PrefixTunnelGroupBackend)
	wantErr(t, errOf(e.store.CreateHTTPSEdgeRoute(e.ctx, account.ID, edge.ID, in)), store.ErrInvalid)
}
