package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
)

// edgeEnv is a test env with an edge, one of its routes and a reserved
// wildcard domain.
type edgeEnv struct {
	*testEnv
	edge  apiwire.HTTPSEdge
	route apiwire.HTTPSEdgeRoute
}

func newEdgeEnv(t *testing.T, opts ...apitest.Option) edgeEnv {
	t.Helper()
	e := edgeEnv{testEnv: newTestEnv(t, opts...)}
	resp, out := e.call(t, e.token, http.MethodPost, "/reserved_domains", `{"domain":"*.apps.example.com"}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	resp, out = e.call(t, e.token, http.MethodPost, "/edges/https", `{"description":"prod","hostports":["a.apps.example.com:443"]}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	e.edge = apitest.DecodeAs[apiwire.HTTPSEdge](t, out)
	resp, out = e.call(t, e.token, http.MethodPost, e.routes(), `{"match_type":"path_prefix","match":"/api"}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	e.route = apitest.DecodeAs[apiwire.HTTPSEdgeRoute](t, out)
	return e
}

func (e edgeEnv) routes() string { return "/edges/https/" + e.edge.ID + "/routes" }

// TestHTTPSEdgeRoundTrip creates, reads, lists, changes and deletes an
// edge and a route, the bodies' fields in order, and deletes the route
// with its edge.
func TestHTTPSEdgeRoundTrip(t *testing.T) {
	e := newEdgeEnv(t)
	if want := fmt.Sprintf(`{"id":%q,"uri":%q,"created_at":%q,"description":"prod","metadata":"","hostports":["a.apps.example.com:443"],"routes":[]}`+"\n",
		e.edge.ID, e.url+"/edges/https/"+e.edge.ID, e.edge.CreatedAt); !strings.HasPrefix(e.edge.ID, "edghts_") || mustJSONLine(t, e.edge) != want {
		t.Fatalf("edge %s\nwant %s", mustJSONLine(t, e.edge), want)
	}
	r := e.route
	if want := fmt.Sprintf(`{"id":%q,"uri":%q,"edge_id":%q,"created_at":%q,"description":"","metadata":"","match_type":"path_prefix","match":"/api","circuit_breaker":null,"websocket_tcp_converter":null,"backend":null,"traffic_policy":null}`+"\n",
		r.ID, e.url+e.routes()+"/"+r.ID, e.edge.ID, r.CreatedAt); !strings.HasPrefix(r.ID, "edghtsrt_") || mustJSONLine(t, r) != want {
		t.Fatalf("route %s\nwant %s", mustJSONLine(t, r), want)
	}
	resp, out := e.call(t, e.token, http.MethodGet, "/edges/https", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	routeJSON := strings.TrimSuffix(mustJSONLine(t, r), "\n")
	if !strings.HasPrefix(string(out), `{"https_edges":[{"id":"`+e.edge.ID) || !strings.Contains(string(out), `"routes":[`+routeJSON+`]}`) {
		t.Fatalf("list %s, want the route inline", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/edges/https/"+e.edge.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.HasSuffix(string(out), `"routes":[`+routeJSON+"]}\n") {
		t.Fatalf("get %s, want the route inline", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, e.routes(), "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.HasPrefix(string(out), `{"routes":[{"id":"`+r.ID) || !strings.Contains(string(out), `"uri":"`+e.url+e.routes()+`"`) {
		t.Fatalf("routes %s", out)
	}
	for filter, want := range map[string]int{
		`obj.match.startsWith("/a")`: 1, `obj.match_type == "exact_path"`: 0, `!has(obj.circuit_breaker)`: 1,
	} {
		resp, out = e.call(t, e.token, http.MethodGet, e.routes()+"?filter="+url.QueryEscape(filter), "")
		apitest.WantStatus(t, resp, out, http.StatusOK)
		if got := strings.Count(string(out), `"edge_id"`); got != want {
			t.Errorf("routes ?filter=%s: %d routes, want %d: %s", filter, got, want, out)
		}
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/edges/https?filter="+url.QueryEscape(`"a.apps.example.com:443" in obj.hostports && size(obj.routes) == 1`), "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.Contains(string(out), e.edge.ID) {
		t.Errorf("edges ?filter= on hostports and routes: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodPatch, "/edges/https/"+e.edge.ID, `{"hostports":[],"metadata":"m"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiwire.HTTPSEdge](t, out); len(got.Hostports) != 0 || got.Description != "prod" || got.Metadata != "m" {
		t.Fatalf("patched %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodPatch, e.routes()+"/"+r.ID, `{"match_type":"exact_path","description":"d"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiwire.HTTPSEdgeRoute](t, out); got.MatchType != "exact_path" || got.Match != "/api" || got.Description != "d" {
		t.Fatalf("patched route %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodDelete, "/edges/https/"+e.edge.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	resp, out = e.call(t, e.token, http.MethodGet, e.routes()+"/"+r.ID, "")
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	resp, out = e.call(t, e.token, http.MethodGet, e.routes(), "")
	if msg := wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", ""); !strings.Contains(msg, "HTTPS edge \""+e.edge.ID) {
		t.Fatalf("the routes of a deleted edge: %s", msg)
	}
	if events := e.storedEvents(t, e.account); len(events) != 1 || events[0].Type != "domain_created.v0" {
		t.Fatalf("edges emit audit events: %d", len(events))
	}
}

func mustJSONLine(t *testing.T, v any) string { return string(apitest.MustJSON(t, v)) + "\n" }

// TestHTTPSEdgeValidation: each bad field or path is answered with its
// code, naming the field and what is allowed.
func TestHTTPSEdgeValidation(t *testing.T) {
	e := newEdgeEnv(t)
	other := newEdgeEnvOf(t, e)
	tests := []struct {
		name, method, path, body string
		status                   int
		code, field, says        string
	}{
		{"hostport not reserved", "POST", "/edges/https", `{"hostports":["app.example.com:443"]}`, 400, "ERR_SLUICE_333", "hostports[0]", "reserve the domain first"},
		{"hostport the wildcard's parent", "POST", "/edges/https", `{"hostports":["apps.example.com:443"]}`, 400, "ERR_SLUICE_333", "hostports[0]", "app"},
		{"hostport port", "POST", "/edges/https", `{"hostports":["a.apps.example.com:8443"]}`, 400, "ERR_SLUICE_333", "hostports[0]", "<domain>:443"},
		{"hostports a string", "POST", "/edges/https", `{"hostports":"a"}`, 400, "ERR_SLUICE_332", "hostports", ""},
		{"description", "POST", "/edges/https", `{"description":"` + strings.Repeat("x", 256) + `"}`, 400, "ERR_SLUICE_333", "description", "255 bytes"},
		{"metadata", "PATCH", "/edges/https/EDGE", `{"metadata":"` + strings.Repeat("x", 4097) + `"}`, 400, "ERR_SLUICE_333", "metadata", "4096 bytes"},
		{"unknown field", "POST", "/edges/https", `{"routes":[]}`, 400, "ERR_SLUICE_331", "", ""},
		{"match type", "POST", "ROUTES", `{"match_type":"regex","match":"/"}`, 400, "ERR_SLUICE_333", "match_type", "exact_path or path_prefix"},
		{"no match type", "POST", "ROUTES", `{"match":"/"}`, 400, "ERR_SLUICE_333", "match_type", "exact_path or path_prefix"},
		{"match", "POST", "ROUTES", `{"match_type":"exact_path","match":"api"}`, 400, "ERR_SLUICE_333", "match", "starting with /"},
		{"long match", "POST", "ROUTES", `{"match_type":"exact_path","match":"/` + strings.Repeat("a", 1024) + `"}`, 400, "ERR_SLUICE_333", "match", "1024 bytes"},
		{"duplicate match", "POST", "ROUTES", `{"match_type":"path_prefix","match":"/api"}`, 409, "ERR_SLUICE_432", "match", "path_prefix /api"},
		{"edge_id in a patch", "PATCH", "ROUTES/ROUTE", `{"edge_id":"edghts_2Ed2q8zQnGAqCS4LCCXyqqmNuQK"}`, 400, "ERR_SLUICE_340", "edge_id", "create the route on the other edge"},
		{"a module in a patch", "PATCH", "ROUTES/ROUTE", `{"circuit_breaker":{}}`, 400, "ERR_SLUICE_331", "", ""},
		{"route of an unknown edge", "POST", "/edges/https/edghts_2Ed2q8zQnGAqCS4LCCXyqqmNuQK/routes", `{"match_type":"exact_path","match":"/"}`, 404, "ERR_SLUICE_420", "", "HTTPS edge"},
		{"routes of another account's edge", "GET", "/edges/https/OTHER/routes", "", 404, "ERR_SLUICE_420", "", "HTTPS edge"},
		{"route create on another account's edge", "POST", "/edges/https/OTHER/routes", `{"match_type":"exact_path","match":"/"}`, 404, "ERR_SLUICE_420", "", "HTTPS edge"},
		{"route of another edge", "GET", "/edges/https/OTHER/routes/ROUTE", "", 404, "ERR_SLUICE_420", "", "route"},
		{"another account's route", "GET", "/edges/https/OTHER/routes/OROUTE", "", 404, "ERR_SLUICE_420", "", "route"},
		{"patch a route of another edge", "PATCH", "/edges/https/SECOND/routes/ROUTE", `{"description":"x"}`, 404, "ERR_SLUICE_420", "", "route"},
		{"delete a route of another edge", "DELETE", "/edges/https/SECOND/routes/ROUTE", "", 404, "ERR_SLUICE_420", "", "route"},
		{"another account's edge", "DELETE", "/edges/https/OTHER", "", 404, "ERR_SLUICE_420", "", "HTTPS edge"},
	}
	resp, out := e.call(t, e.token, http.MethodPost, "/edges/https", `{}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	second := apitest.DecodeAs[apiwire.HTTPSEdge](t, out)
	expand := strings.NewReplacer("ROUTES", e.routes(), "EDGE", e.edge.ID, "OTHER", other.edge.ID, "OROUTE", other.route.ID, "ROUTE", e.route.ID, "SECOND", second.ID)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := e.call(t, e.token, tt.method, expand.Replace(tt.path), tt.body)
			if msg := wantError(t, resp, out, tt.status, tt.code, tt.field); !strings.Contains(msg, tt.says) {
				t.Fatalf("message %q does not say %q", msg, tt.says)
			}
		})
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/reserved_domains", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	domain := apitest.DecodeAs[struct {
		Domains []struct {
			ID string `json:"id"`
		} `json:"reserved_domains"`
	}](t, out).Domains[0].ID
	resp, out = e.call(t, e.token, http.MethodDelete, "/reserved_domains/"+domain, "")
	if msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_433", ""); !strings.Contains(msg, e.edge.ID) || apitest.DecodeError(t, out).Details["https_edges"] != `["`+e.edge.ID+`"]` {
		t.Fatalf("deleting the edge's reserved domain: %s", out)
	}
	resp, out = e.call(t, other.token, http.MethodGet, other.routes()+"/"+other.route.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	resp, out = e.call(t, other.token, http.MethodGet, "/edges/https", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if page := apitest.DecodeAs[struct {
		Edges []apiwire.HTTPSEdge `json:"https_edges"`
	}](t, out); len(page.Edges) != 1 || page.Edges[0].ID != other.edge.ID || len(page.Edges[0].Routes) != 1 {
		t.Fatalf("another account lists %s", out)
	}
}

// newEdgeEnvOf makes another account with its own edge and route, on the
// stack of e.
func newEdgeEnvOf(t *testing.T, e edgeEnv) edgeEnv {
	t.Helper()
	o := edgeEnv{testEnv: &testEnv{}}
	*o.testEnv = *e.testEnv
	o.token = e.otherAccountToken(t)
	resp, out := o.call(t, o.token, http.MethodPost, "/edges/https", `{}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	o.edge = apitest.DecodeAs[apiwire.HTTPSEdge](t, out)
	resp, out = o.call(t, o.token, http.MethodPost, o.routes(), `{"match_type":"path_prefix","match":"/api"}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	o.route = apitest.DecodeAs[apiwire.HTTPSEdgeRoute](t, out)
	return o
}

// TestHTTPSEdgeRouteModules sets, reads, replaces and removes each module
// of a route as spec 4.3 gives them, with their defaults, their rules,
// and their 404s.
func TestHTTPSEdgeRouteModules(t *testing.T) {
	e := newEdgeEnv(t)
	cb := e.routes() + "/" + e.route.ID + "/circuit_breaker"
	ws := e.routes() + "/" + e.route.ID + "/websocket_tcp_converter"
	for _, path := range []string{cb, ws} {
		resp, out := e.call(t, e.token, http.MethodGet, path, "")
		if msg := wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_431", ""); !strings.Contains(msg, "PUT "+path) {
			t.Fatalf("a module never set: %s", msg)
		}
	}
	resp, out := e.call(t, e.token, http.MethodPut, cb, `{"tripped_duration":30,"error_threshold_percentage":0.25}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if string(out) != `{"enabled":true,"tripped_duration":30,"rolling_window":10,"num_buckets":10,"volume_threshold":20,"error_threshold_percentage":0.25}`+"\n" {
		t.Fatalf("put %s", out)
	}
	// -0 is stored, and answered, as 0.
	resp, out = e.call(t, e.token, http.MethodPut, cb, `{"tripped_duration":30,"error_threshold_percentage":-0.0}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.HasSuffix(string(out), `"error_threshold_percentage":0}`+"\n") {
		t.Fatalf("put -0.0: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, cb, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.HasSuffix(string(out), `"error_threshold_percentage":0}`+"\n") {
		t.Fatalf("get after put -0.0: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodPut, ws, `{}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if string(out) != `{"enabled":true}`+"\n" {
		t.Fatalf("put %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodPut, cb, `{"enabled":false,"num_buckets":128}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	resp, out = e.call(t, e.token, http.MethodGet, cb, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiwire.CircuitBreaker](t, out); got.Enabled || got.NumBuckets != 128 || got.TrippedDuration != 10 {
		t.Fatalf("replaced %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, e.routes()+"/"+e.route.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiwire.HTTPSEdgeRoute](t, out); got.CircuitBreaker == nil || got.CircuitBreaker.NumBuckets != 128 || got.WebsocketTCPConverter == nil || !got.WebsocketTCPConverter.Enabled {
		t.Fatalf("the route shows its modules: %s", out)
	}

	for _, tt := range []struct{ name, body, code, field, says string }{
		{"percent", `{"error_threshold_percentage":50}`, "ERR_SLUICE_333", "error_threshold_percentage", "0 to 1.0, not 0 to 100"},
		{"negative percent", `{"error_threshold_percentage":-0.1}`, "ERR_SLUICE_333", "error_threshold_percentage", "0 to 1.0"},
		{"buckets", `{"num_buckets":129}`, "ERR_SLUICE_333", "num_buckets", "1 to 128"},
		{"no buckets", `{"num_buckets":0}`, "ERR_SLUICE_333", "num_buckets", "1 to 128"},
		{"tripped", `{"tripped_duration":0}`, "ERR_SLUICE_333", "tripped_duration", "above 0"},
		{"window", `{"rolling_window":0}`, "ERR_SLUICE_333", "rolling_window", "above 0"},
		{"fractional seconds", `{"rolling_window":1.5}`, "ERR_SLUICE_332", "rolling_window", ""},
		{"negative volume", `{"volume_threshold":-1}`, "ERR_SLUICE_332", "volume_threshold", ""},
		{"volume over uint32", `{"volume_threshold":4294967296}`, "ERR_SLUICE_332", "volume_threshold", "whole number from 0 to 4294967295"},
		{"exponent", `{"num_buckets":1e2}`, "ERR_SLUICE_332", "num_buckets", "whole number from 0 to 4294967295"},
		{"percent over float64", `{"error_threshold_percentage":1e400}`, "ERR_SLUICE_332", "error_threshold_percentage", "at most"},
		{"unknown field", `{"buckets":1}`, "ERR_SLUICE_331", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := e.call(t, e.token, http.MethodPut, cb, tt.body)
			if msg := wantError(t, resp, out, http.StatusBadRequest, tt.code, tt.field); !strings.Contains(msg, tt.says) {
				t.Fatalf("message %q does not say %q", msg, tt.says)
			}
		})
	}
	resp, out = e.call(t, e.token, http.MethodPut, ws, `{"enabled":"yes"}`)
	wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_332", "enabled")

	other := newEdgeEnvOf(t, e)
	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		for _, path := range []string{
			other.routes() + "/" + e.route.ID + "/circuit_breaker",             // another edge's route
			e.routes() + "/" + other.route.ID + "/circuit_breaker",             // another account's route
			"/edges/https/" + e.edge.ID + "/routes/edghtsrt_x/circuit_breaker", // a malformed id
		} {
			resp, out := e.call(t, e.token, method, path, `{}`)
			wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
		}
	}

	for _, path := range []string{cb, ws, cb} {
		resp, out := e.call(t, e.token, http.MethodDelete, path, "")
		apitest.WantStatus(t, resp, out, http.StatusNoContent)
	}
	resp, out = e.call(t, e.token, http.MethodGet, e.routes()+"/"+e.route.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.Contains(string(out), `"circuit_breaker":null,"websocket_tcp_converter":null`) {
		t.Fatalf("after the deletes: %s", out)
	}
}

// TestHTTPSEdgeConcurrentChanges: PATCHes of an edge's fields, and PUTs of
// a route's two modules, at once: none is lost.
func TestHTTPSEdgeConcurrentChanges(t *testing.T) {
	e := newEdgeEnv(t)
	route := e.routes() + "/" + e.route.ID
	var wg sync.WaitGroup
	for _, call := range []struct{ method, path, body string }{
		{http.MethodPatch, "/edges/https/" + e.edge.ID, `{"description":"d"}`},
		{http.MethodPatch, "/edges/https/" + e.edge.ID, `{"metadata":"m"}`},
		{http.MethodPut, route + "/circuit_breaker", `{}`},
		{http.MethodPut, route + "/websocket_tcp_converter", `{}`},
		{http.MethodPatch, route, `{"description":"r"}`},
	} {
		wg.Go(func() {
			resp, out := e.call(t, e.token, call.method, call.path, call.body)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s %s: %d %s", call.method, call.path, resp.StatusCode, out)
			}
		})
	}
	wg.Wait()
	resp, out := e.call(t, e.token, http.MethodGet, "/edges/https/"+e.edge.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiwire.HTTPSEdge](t, out); got.Description != "d" || got.Metadata != "m" {
		t.Fatalf("edge after concurrent patches: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, route, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiwire.HTTPSEdgeRoute](t, out); got.CircuitBreaker == nil || got.WebsocketTCPConverter == nil || got.Description != "r" {
		t.Fatalf("route after concurrent changes: %s", out)
	}
}

// TestHTTPSEdgeLimitsAndPages: routes page over 250 with next_page_uri,
// and an edge or route over its limit is a 409 naming the limit and flag.
func TestHTTPSEdgeLimitsAndPages(t *testing.T) {
	t.Parallel()
	e := newEdgeEnv(t, apitest.WithStoreConfig(store.Config{Limits: store.Limits{HTTPSEdges: 260, HTTPSEdgeRoutes: 260}}))
	for range 259 {
		resp, out := e.call(t, e.token, http.MethodPost, "/edges/https", `{"hostports":["b.apps.example.com:443"]}`)
		apitest.WantStatus(t, resp, out, http.StatusCreated)
	}
	if n := pageAll(t, e, "/edges/https?limit=100", "https_edges"); n != 260 {
		t.Fatalf("paged %d edges, want 260", n)
	}
	resp, out := e.call(t, e.token, http.MethodPost, "/edges/https", `{}`)
	if msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_449", ""); !strings.Contains(msg, "--max-https-edges") {
		t.Fatalf("over the edges' limit: %s", msg)
	}
	for i := range 259 {
		resp, out := e.call(t, e.token, http.MethodPost, e.routes(), fmt.Sprintf(`{"match_type":"exact_path","match":"/%d"}`, i))
		apitest.WantStatus(t, resp, out, http.StatusCreated)
	}
	resp, out = e.call(t, e.token, http.MethodPost, e.routes(), `{"match_type":"exact_path","match":"/over"}`)
	if msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_450", ""); !strings.Contains(msg, "--max-https-edge-routes") {
		t.Fatalf("over the routes' limit: %s", msg)
	}
	if n := pageAll(t, e, e.routes()+"?limit=100", "routes"); n != 260 {
		t.Fatalf("paged %d routes, want 260", n)
	}
}

// pageAll follows next_page_uri from path and returns how many distinct
// ids the pages of listKey held.
func pageAll(t *testing.T, e edgeEnv, path, listKey string) int {
	t.Helper()
	seen := map[string]bool{}
	for next := path; next != ""; {
		resp, out := e.call(t, e.token, http.MethodGet, strings.TrimPrefix(next, e.url), "")
		apitest.WantStatus(t, resp, out, http.StatusOK)
		page := apitest.DecodeAs[map[string]json.RawMessage](t, out)
		for _, item := range apitest.DecodeAs[[]struct {
			ID string `json:"id"`
		}](t, page[listKey]) {
			seen[item.ID] = true
		}
		next = ""
		if string(page["next_page_uri"]) != "null" {
			next = apitest.DecodeAs[string](t, page["next_page_uri"])
		}
	}
	return len(seen)
}
