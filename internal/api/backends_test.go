package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// labeledTunnel records, as the edge does, a labeled tunnel of the env's
// account: a session and its endpoint of proto labeled.
func (e *testEnv) labeledTunnel(t *testing.T, labels map[string]string) store.Endpoint {
	t.Helper()
	const edge = "edge-api-test"
	if err := e.store.Edges().HeartbeatEdge(t.Context(), edge, ""); err != nil {
		t.Fatal(err)
	}
	ts, err := e.store.CreateTunnelSession(t.Context(), e.account, store.TunnelSession{AgentVersion: "3.0.0", CredentialID: schemas.NewID(schemas.PrefixCredential),
		IP: "192.0.2.7", OS: "linux", Arch: "arm64", Region: "eu", Transport: "muxado", UserAgent: "sluice-agent/3.0.0", EdgeID: edge})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := e.store.CreateEndpoint(t.Context(), e.account, store.Endpoint{TunnelSessionID: ts.ID, Proto: store.ProtoLabeled, Labels: labels,
		UpstreamURL: "http://localhost:8080", EdgeID: edge})
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// TestTunnelGroupBackendRoundTrip creates, reads, lists, changes and
// deletes a backend, the body's fields in order, with the labeled tunnels
// it selects, and keeps another account out.
func TestTunnelGroupBackendRoundTrip(t *testing.T) {
	e := newTestEnv(t)
	web1 := e.labeledTunnel(t, map[string]string{"app": "web", "env": "prod"})
	web2 := e.labeledTunnel(t, map[string]string{"app": "web", "env": "prod", "zone": "b"})
	e.labeledTunnel(t, map[string]string{"app": "web", "env": "dev"})
	e.startTunnel(t, "") // an https endpoint, never in a group

	resp, out := e.call(t, e.token, http.MethodPost, "/backends/tunnel_group", `{"description":"web","metadata":"{}","labels":{"env":"prod","app":"web"}}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	b := apitest.DecodeAs[apiwire.TunnelGroupBackend](t, out)
	ids := slices.Sorted(slices.Values([]string{web1.ID, web2.ID}))
	want := fmt.Sprintf(`{"id":%q,"uri":%q,"created_at":%q,"description":"web","metadata":"{}","labels":{"app":"web","env":"prod"},"tunnels":[{"id":%q,"uri":%q},{"id":%q,"uri":%q}]}`+"\n",
		b.ID, e.url+"/backends/tunnel_group/"+b.ID, b.CreatedAt, ids[0], e.url+"/endpoints/"+ids[0], ids[1], e.url+"/endpoints/"+ids[1])
	if !strings.HasPrefix(b.ID, "bkdtg_") || string(out) != want {
		t.Fatalf("created %s\nwant    %s", out, want)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/backends/tunnel_group/"+b.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if string(out) != want {
		t.Fatalf("get %s\nwant %s", out, want)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/backends/tunnel_group", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.HasPrefix(string(out), `{"tunnel_group_backends":[`+strings.TrimSuffix(want, "\n")+`],"uri":`) {
		t.Fatalf("list %s", out)
	}
	for filter, n := range map[string]int{`size(obj.tunnels) == 2`: 1, `obj.labels["env"] == "dev"`: 0} {
		resp, out = e.call(t, e.token, http.MethodGet, "/backends/tunnel_group?filter="+url.QueryEscape(filter), "")
		apitest.WantStatus(t, resp, out, http.StatusOK)
		if got := strings.Count(string(out), `"labels"`); got != n {
			t.Errorf("?filter=%s: %d backends, want %d: %s", filter, got, n, out)
		}
	}
	resp, out = e.call(t, e.token, http.MethodPatch, "/backends/tunnel_group/"+b.ID, `{"labels":{"zone":"b"}}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiwire.TunnelGroupBackend](t, out); got.Description != "web" || len(got.Labels) != 1 || len(got.Tunnels) != 1 || got.Tunnels[0].ID != web2.ID {
		t.Fatalf("after the labels changed: %s; want the one tunnel of zone b", out)
	}
	resp, out = e.call(t, e.token, http.MethodPatch, "/backends/tunnel_group/"+b.ID, `{"labels":{"zone":"nowhere"}}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.HasSuffix(string(out), `"tunnels":[]}`+"\n") {
		t.Fatalf("a backend selecting no tunnel: %s; want tunnels []", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/endpoints/"+web1.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiwire.Endpoint](t, out); got.Proto != "labeled" || got.Labels["app"] != "web" || got.URL != "" || got.Hostport != "" {
		t.Fatalf("a labeled endpoint: %s", out)
	}

	otherToken := e.otherAccountToken(t)
	for _, method := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete} {
		resp, out := e.call(t, otherToken, method, "/backends/tunnel_group/"+b.ID, `{}`)
		wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	}
	resp, out = e.call(t, otherToken, http.MethodGet, "/backends/tunnel_group", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if strings.Contains(string(out), b.ID) {
		t.Fatalf("another account's list: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodDelete, "/backends/tunnel_group/"+b.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	resp, out = e.call(t, e.token, http.MethodGet, "/backends/tunnel_group/"+b.ID, "")
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
}

// TestTunnelGroupBackendValidation refuses bad labels and bodies, naming
// the field and the label.
func TestTunnelGroupBackendValidation(t *testing.T) {
	e := newTestEnv(t)
	for _, tt := range []struct{ name, body, code, field, says string }{
		{"no labels", `{"description":"x"}`, "ERR_SLUICE_333", "labels", "there are no labels"},
		{"empty labels", `{"labels":{}}`, "ERR_SLUICE_333", "labels", "there are no labels"},
		{"upper case name", `{"labels":{"Env":"prod"}}`, "ERR_SLUICE_333", "labels", `the label name "Env" is not valid: a label name is 1 to 64 bytes`},
		{"value with a space", `{"labels":{"env":"my prod"}}`, "ERR_SLUICE_333", "labels", "of label env is not valid"},
		{"eleven labels", `{"labels":{"a":"1","b":"1","c":"1","d":"1","e":"1","f":"1","g":"1","h":"1","i":"1","j":"1","k":"1"}}`, "ERR_SLUICE_333", "labels", "more than 10"},
		{"value not a string", `{"labels":{"env":1}}`, "ERR_SLUICE_332", "labels.env", ""},
		{"unknown field", `{"labels":{"env":"prod"},"tunnels":[]}`, "ERR_SLUICE_331", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := e.call(t, e.token, http.MethodPost, "/backends/tunnel_group", tt.body)
			if msg := wantError(t, resp, out, http.StatusBadRequest, tt.code, tt.field); !strings.Contains(msg, tt.says) {
				t.Fatalf("message %q does not say %q", msg, tt.says)
			}
		})
	}
}

// TestRouteBackendAndTrafficPolicy sets, reads, replaces and removes the
// two modules of a route, shows them in the route, refuses a backend that
// is not the account's and a policy that does not parse (with its
// position), and refuses to delete a backend a route uses (409, naming
// the route) until the route no longer does.
func TestRouteBackendAndTrafficPolicy(t *testing.T) {
	e := newEdgeEnv(t)
	bk := e.routes() + "/" + e.route.ID + "/backend"
	tp := e.routes() + "/" + e.route.ID + "/traffic_policy"
	for _, path := range []string{bk, tp} {
		resp, out := e.call(t, e.token, http.MethodGet, path, "")
		if msg := wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_431", ""); !strings.Contains(msg, "PUT "+path) {
			t.Fatalf("a module never set: %s", msg)
		}
	}
	resp, out := e.call(t, e.token, http.MethodPost, "/backends/tunnel_group", `{"labels":{"app":"web"}}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	b := apitest.DecodeAs[apiwire.TunnelGroupBackend](t, out)

	resp, out = e.call(t, e.token, http.MethodPut, bk, `{"backend_id":"`+b.ID+`"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	wantBackend := fmt.Sprintf(`{"enabled":true,"backend":{"id":%q,"uri":%q}}`, b.ID, b.URI)
	if string(out) != wantBackend+"\n" {
		t.Fatalf("put %s, want %s", out, wantBackend)
	}
	resp, out = e.call(t, e.token, http.MethodGet, bk, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if string(out) != wantBackend+"\n" {
		t.Fatalf("get %s, want %s", out, wantBackend)
	}
	policy := "on_http_request:\n  - actions:\n      - type: deny\n"
	body, _ := json.Marshal(map[string]any{"enabled": false, "value": policy})
	resp, out = e.call(t, e.token, http.MethodPut, tp, string(body))
	apitest.WantStatus(t, resp, out, http.StatusOK)
	wantPolicy := `{"enabled":false,"value":` + string(apitest.MustJSON(t, policy)) + `}`
	if string(out) != wantPolicy+"\n" {
		t.Fatalf("put %s, want %s", out, wantPolicy)
	}
	resp, out = e.call(t, e.token, http.MethodGet, e.routes()+"/"+e.route.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.HasSuffix(string(out), `"backend":`+wantBackend+`,"traffic_policy":`+wantPolicy+"}\n") {
		t.Fatalf("the route shows its modules: %s", out)
	}

	resp, out = e.call(t, e.token, http.MethodDelete, "/backends/tunnel_group/"+b.ID, "")
	if msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_434", ""); !strings.Contains(msg, e.route.ID) {
		t.Fatalf("deleting a backend a route uses: %s; want the route named", msg)
	}
	if got := apitest.DecodeError(t, out).Details["https_edge_routes"]; got != `["`+e.route.ID+`"]` {
		t.Fatalf("details.https_edge_routes %q", got)
	}

	account, err := e.store.CreateAccount(t.Context(), "theirs")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := e.store.CreateTunnelGroupBackend(t.Context(), account.ID, store.TunnelGroupBackend{Labels: map[string]string{"app": "web"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, path, body, code, field, says string }{
		{"another account's backend", bk, `{"backend_id":"` + theirs.ID + `"}`, "ERR_SLUICE_333", "backend_id", "names no tunnel group backend of the account"},
		{"no such backend", bk, `{"backend_id":"` + schemas.NewID(schemas.PrefixTunnelGroupBackend) + `"}`, "ERR_SLUICE_333", "backend_id", "POST /backends/tunnel_group"},
		{"no backend id", bk, `{"enabled":true}`, "ERR_SLUICE_333", "backend_id", "give the id of a tunnel group backend"},
		{"not a backend id", bk, `{"backend_id":"` + e.route.ID + `"}`, "ERR_SLUICE_333", "backend_id", "bkdtg_"},
		{"unknown action", tp, `{"value":"on_http_request:\n  - actions:\n      - type: teleport\n"}`, "ERR_SLUICE_333", "value", `line 3, column 15: on_http_request[0].actions[0].type: unknown action type "teleport"`},
		{"not YAML", tp, `{"value":"on_http_request: [\n"}`, "ERR_SLUICE_333", "value", "not YAML or JSON"},
		{"no value", tp, `{"enabled":true}`, "ERR_SLUICE_333", "value", "the document is empty"},
		{"tcp rules", tp, `{"value":"on_tcp_connect:\n  - actions:\n      - type: deny\n"}`, "ERR_SLUICE_333", "value", "a route takes HTTP requests"},
		{"too long", tp, string(apitest.MustJSON(t, map[string]string{"value": "on_http_request: []\n#" + strings.Repeat("x", 65536)})), "ERR_SLUICE_333", "value", "65536"},
		{"unknown field", tp, `{"policy":"x"}`, "ERR_SLUICE_331", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := e.call(t, e.token, http.MethodPut, tt.path, tt.body)
			if msg := wantError(t, resp, out, http.StatusBadRequest, tt.code, tt.field); !strings.Contains(msg, tt.says) {
				t.Fatalf("message %q does not say %q", msg, tt.says)
			}
		})
	}
	resp, out = e.call(t, e.token, http.MethodGet, e.routes()+"/"+e.route.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.HasSuffix(string(out), `"backend":`+wantBackend+`,"traffic_policy":`+wantPolicy+"}\n") {
		t.Fatalf("refused PUTs changed the route: %s", out)
	}

	for _, path := range []string{bk, tp, bk} {
		resp, out := e.call(t, e.token, http.MethodDelete, path, "")
		apitest.WantStatus(t, resp, out, http.StatusNoContent)
	}
	resp, out = e.call(t, e.token, http.MethodGet, e.routes()+"/"+e.route.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.HasSuffix(string(out), `"backend":null,"traffic_policy":null}`+"\n") {
		t.Fatalf("after the deletes: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodDelete, "/backends/tunnel_group/"+b.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
}

// TestTunnelGroupBackendAuditEvents reads back the audit event of each
// change of a backend: its fields and labels, without its tunnels.
func TestTunnelGroupBackendAuditEvents(t *testing.T) {
	e := newTestEnv(t)
	e.labeledTunnel(t, map[string]string{"app": "web"})
	resp, out := e.call(t, e.token, http.MethodPost, "/backends/tunnel_group", `{"description":"web","labels":{"app":"web"}}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	b := apitest.DecodeAs[apiwire.TunnelGroupBackend](t, out)
	resp, out = e.call(t, e.token, http.MethodPatch, "/backends/tunnel_group/"+b.ID, `{"labels":{"app":"api"}}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	resp, out = e.call(t, e.token, http.MethodDelete, "/backends/tunnel_group/"+b.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)

	var got []auditEvent
	for _, ev := range e.storedEvents(t, e.account) {
		if strings.HasPrefix(ev.Type, "tunnel_group_backend_") {
			got = append(got, ev)
		}
	}
	common := fmt.Sprintf(`{"id":%q,"uri":%q,"created_at":%q,"description":"web","metadata":"",`, b.ID, b.URI, b.CreatedAt)
	want := []struct{ kind, object string }{
		{"tunnel_group_backend_created.v0", common + `"labels":{"app":"web"}}`},
		{"tunnel_group_backend_updated.v0", common + `"labels":{"app":"api"}}`},
		{"tunnel_group_backend_deleted.v0", common + `"labels":{"app":"api"}}`},
	}
	if len(got) != len(want) {
		t.Fatalf("%d tunnel group backend events, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Type != w.kind || string(got[i].Object) != w.object || got[i].Principal.ID != e.keyID {
			t.Errorf("event %d: %s %s by %s; want %s %s by %s", i, got[i].Type, got[i].Object, got[i].Principal.ID, w.kind, w.object, e.keyID)
		}
	}
}
