package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// startTunnel records, as the edge does, a tunnel session of the env's
// account with an endpoint of the reserved domain domainID ("" for none).
func (e *testEnv) startTunnel(t *testing.T, domainID string) (store.TunnelSession, store.Endpoint) {
	t.Helper()
	const edge = "edge-api-test"
	if err := e.store.Edges().HeartbeatEdge(t.Context(), edge, ""); err != nil {
		t.Fatal(err)
	}
	ts, err := e.store.CreateTunnelSession(t.Context(), e.account, store.TunnelSession{AgentVersion: "3.0.0", CredentialID: schemas.NewID(schemas.PrefixCredential),
		IP: "192.0.2.7", Metadata: `{"team":"<a>"}`, OS: "linux", Arch: "arm64", Region: "eu", Transport: "muxado", UserAgent: "sluice-agent/3.0.0", EdgeID: edge})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := e.store.CreateEndpoint(t.Context(), e.account, store.Endpoint{TunnelSessionID: ts.ID, Proto: "https", URL: "https://app.example.com",
		Domain: domainID, UpstreamURL: "http://localhost:8080", EdgeID: edge})
	if err != nil {
		t.Fatal(err)
	}
	return ts, ep
}

// TestTunnelSessionsRead lists and shows tunnel sessions and endpoints
// with their references and without what only the edge knows, stops a
// session, and keeps another account out.
func TestTunnelSessionsRead(t *testing.T) {
	e := newTestEnv(t)
	domain := schemas.NewID(schemas.PrefixReservedDomain)
	ts, ep := e.startTunnel(t, domain)
	older, _ := e.startTunnel(t, "")
	ts, older = older, ts // the newer first

	resp, out := e.call(t, e.token, http.MethodGet, "/tunnel_sessions?limit=1", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	p := decodePage(t, out, apiwire.TunnelSessionsListKey)
	if len(p.items) != 1 || p.items[0] != ts.ID || p.nextPageURI == nil || !strings.Contains(*p.nextPageURI, "before_id="+ts.ID) {
		t.Fatalf("first page %+v, want %s and a next page", p, ts.ID)
	}
	for _, hidden := range []string{"edge_id", "stop_requested", "account_id", "edge-api-test"} {
		if strings.Contains(string(out), hidden) {
			t.Fatalf("the list shows %s: %s", hidden, out)
		}
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/tunnel_sessions/"+older.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	got := apitest.DecodeAs[apiwire.TunnelSession](t, out)
	if got.ID != older.ID || !strings.HasSuffix(got.URI, "/tunnel_sessions/"+older.ID) || got.Credential.ID != older.CredentialID ||
		!strings.HasSuffix(got.Credential.URI, "/credentials/"+older.CredentialID) || got.IP != "192.0.2.7" || got.Transport != "muxado" ||
		got.StartedAt != older.StartedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00") {
		t.Fatalf("GET tunnel session = %+v", got)
	}

	resp, out = e.call(t, e.token, http.MethodGet, "/endpoints?filter="+url.QueryEscape(`has(obj.domain)`), "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if p := decodePage(t, out, apiwire.EndpointsListKey); len(p.items) != 1 || p.items[0] != ep.ID {
		t.Fatalf("filtered endpoints %+v, want %s", p, ep.ID)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/endpoints/"+ep.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	body := apitest.DecodeAs[apiwire.Endpoint](t, out)
	if body.ID != ep.ID || body.Proto != "https" || body.PublicURL != "https://app.example.com" || body.Hostport != "app.example.com:443" ||
		body.Domain == nil || body.Domain.ID != domain || !strings.HasSuffix(body.Domain.URI, "/reserved_domains/"+domain) ||
		body.TunnelSession.ID != older.ID || !strings.HasSuffix(body.TunnelSession.URI, "/tunnel_sessions/"+older.ID) || strings.Contains(string(out), "edge_id") {
		t.Fatalf("GET endpoint = %s", out)
	}

	other := e.otherAccountToken(t)
	for _, call := range []struct{ method, path string }{
		{http.MethodGet, "/tunnel_sessions/" + ts.ID},
		{http.MethodPost, "/tunnel_sessions/" + ts.ID + "/stop"},
		{http.MethodGet, "/endpoints/" + ep.ID},
	} {
		resp, out := e.call(t, other, call.method, call.path, "")
		apitest.WantStatus(t, resp, out, http.StatusNotFound)
	}
	resp, out = e.call(t, other, http.MethodGet, "/tunnel_sessions", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if p := decodePage(t, out, apiwire.TunnelSessionsListKey); len(p.items) != 0 {
		t.Fatalf("another account lists %v", p.items)
	}

	resp, out = e.call(t, e.token, http.MethodPost, "/tunnel_sessions/"+ts.ID+"/stop", "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	if stopped, err := e.store.GetTunnelSession(t.Context(), e.account, ts.ID); err != nil || !stopped.StopRequested {
		t.Fatalf("after the stop: %+v, %v; want StopRequested", stopped, err)
	}
	resp, out = e.call(t, e.token, http.MethodPost, "/tunnel_sessions/"+schemas.NewID(schemas.PrefixTunnelSession)+"/stop", "")
	apitest.WantStatus(t, resp, out, http.StatusNotFound)
}

// TestTunnelSessionsNotMadeByTheAPI answers 405 to a create, update or
// delete of tunnel sessions and endpoints, saying who makes them.
func TestTunnelSessionsNotMadeByTheAPI(t *testing.T) {
	e := newTestEnv(t)
	ts, ep := e.startTunnel(t, "")
	for _, call := range []struct{ method, path, body string }{
		{http.MethodPost, "/tunnel_sessions", "{}"},
		{http.MethodPatch, "/tunnel_sessions/" + ts.ID, "{}"},
		{http.MethodDelete, "/tunnel_sessions/" + ts.ID, ""},
		{http.MethodPost, "/endpoints", "{}"},
		{http.MethodPatch, "/endpoints/" + ep.ID, "{}"},
		{http.MethodDelete, "/endpoints/" + ep.ID, ""},
	} {
		t.Run(call.method+" "+call.path, func(t *testing.T) {
			resp, out := e.call(t, e.token, call.method, call.path, call.body)
			apitest.WantStatus(t, resp, out, http.StatusMethodNotAllowed)
			if msg := apitest.DecodeError(t, out).Msg; !strings.Contains(msg, "agents") || resp.Header.Get("Allow") != "GET" {
				t.Fatalf("405 %q, Allow %q: want it to say agents make them, and Allow GET", msg, resp.Header.Get("Allow"))
			}
		})
	}
	if _, err := e.store.GetTunnelSession(t.Context(), e.account, ts.ID); err != nil {
		t.Fatalf("the session after the refused delete: %v", err)
	}
}
