package agent_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/agent"
	"github.com/sluicehq/sluice/internal/agent/agentconfig"
	"github.com/sluicehq/sluice/internal/agent/localapi"
	"github.com/sluicehq/sluice/internal/edgetest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

func labeledTunnel(name, addr string, labels map[string]string) agentconfig.Tunnel {
	return agentconfig.Tunnel{Name: name, Proto: "labeled", Labels: labels, Addr: addr, Inspect: true}
}

// routedEdge is an HTTPS edge of acct at host, whose route "/" (and
// "/ws", with the websocket TCP converter) sends its requests to a
// tunnel group backend of labels edge=web.
func routedEdge(t *testing.T, te *edgetest.Edge, host string) {
	t.Helper()
	edgeID, backend := schemas.NewID(schemas.PrefixHTTPSEdge), schemas.NewID("bkdtg_")
	te.Routing.PutEdge(t, store.HTTPSEdge{ID: edgeID, AccountID: acct, Hostports: []string{host + ":443"}})
	te.Routing.PutBackend(t, store.TunnelGroupBackend{ID: backend, AccountID: acct, Labels: map[string]string{"edge": "web"}})
	to := &store.RouteBackend{Enabled: true, BackendID: backend}
	te.Routing.PutRoute(t, store.HTTPSEdgeRoute{ID: schemas.NewID(schemas.PrefixHTTPSEdgeRoute), AccountID: acct, EdgeID: edgeID,
		MatchType: store.MatchPathPrefix, Match: "/", Backend: to})
	te.Routing.PutRoute(t, store.HTTPSEdgeRoute{ID: schemas.NewID(schemas.PrefixHTTPSEdgeRoute), AccountID: acct, EdgeID: edgeID,
		MatchType: store.MatchPathPrefix, Match: "/ws", Backend: to, WebsocketTCPConverter: &store.WebsocketTCPConverter{Enabled: true}})
}

// labeledID waits for the labeled tunnel to be started and returns its
// id.
func (r *running) labeledID(t *testing.T, name string) string {
	t.Helper()
	var id string
	waitFor(t, "labeled tunnel "+name+" to be started", func() bool {
		for _, tu := range r.Tunnels() {
			if tu.Name == name && tu.ID != "" {
				id = tu.ID
				return true
			}
		}
		return false
	})
	return id
}

// labeledRecords returns the edge's endpoint records of labeled tunnels.
func labeledRecords(te *edgetest.Edge) []store.Endpoint {
	te.Store.Mu.Lock()
	defer te.Store.Mu.Unlock()
	var out []store.Endpoint
	for _, ep := range te.Store.Endpoints {
		if ep.Proto == store.ProtoLabeled {
			out = append(out, ep)
		}
	}
	return out
}

// TestLabeledTunnelServesARoute: a labeled tunnel of the configuration
// is started with its labels, recorded by the edge as a labeled
// endpoint, and takes the requests of the HTTPS edge's route whose
// backend selects it, captured for the inspector; after a reconnect it
// is started again, and once stopped the route has no tunnel.
func TestLabeledTunnelServesARoute(t *testing.T) {
	te := edgetest.Start(t)
	up := upstream(t)
	const host = "shop.example.test"
	routedEdge(t, te, host)
	captures := localapi.NewCaptures(localapi.CapturesConfig{})
	labels := map[string]string{"edge": "web", "team": "shop"}
	r := startAgent(t, te, te.Credential(acct), []agentconfig.Tunnel{labeledTunnel("shop", up.URL, labels)},
		func(o *agent.Options) { o.Captures = captures })

	id := r.labeledID(t, "shop")
	recs := labeledRecords(te)
	if len(recs) != 1 || recs[0].ID != id || !maps.Equal(recs[0].Labels, labels) || recs[0].UpstreamURL != up.URL {
		t.Fatalf("the edge's labeled records %+v, want one of id %s, labels %v and upstream %s", recs, id, labels, up.URL)
	}
	tu := r.Tunnels()[0]
	if tu.Proto != "labeled" || tu.PublicURL != "" || !maps.Equal(tu.Config.Labels, labels) {
		t.Fatalf("the tunnel as listed: %+v", tu)
	}
	resp, body := te.Get(t, host, "/cart")
	if resp.StatusCode != http.StatusOK || body != "hello from /cart" {
		t.Fatalf("GET through the route: %d %q", resp.StatusCode, body)
	}
	if got := resp.Header.Get("X-Host-Seen"); got != host {
		t.Errorf("the upstream saw Host %q, want the edge's %q", got, host)
	}
	waitFor(t, "the request's capture", func() bool { return len(captures.List(10, "shop")) == 1 })

	first := r.Status().SessionID
	r.conns.cut()
	waitFor(t, "a new session", func() bool { st := r.Status(); return st.State == "online" && st.SessionID != first })
	waitFor(t, "the tunnel started again", func() bool {
		ts := r.Tunnels()
		return len(ts) == 1 && ts[0].ID != "" && ts[0].ID != id
	})
	if resp, body := te.Get(t, host, "/again"); resp.StatusCode != http.StatusOK || body != "hello from /again" {
		t.Fatalf("GET after the reconnect: %d %q", resp.StatusCode, body)
	}

	if err := r.StopTunnel(context.Background(), "shop"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the edge to forget the tunnel", func() bool { return len(labeledRecords(te)) == 0 })
	if resp, _ := te.Get(t, host, "/gone"); resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("GET with the tunnel stopped: %d, want 502 (no tunnel online)", resp.StatusCode)
	}
}

// TestLabeledTunnelStartedThroughTheAPI: a labeled tunnel started as the
// local API starts one serves the route, without inspection when asked.
func TestLabeledTunnelStartedThroughTheAPI(t *testing.T) {
	te := edgetest.Start(t)
	up := upstream(t)
	routedEdge(t, te, "api.example.test")
	r := startAgent(t, te, te.Credential(acct), nil)
	waitFor(t, "the session", func() bool { return r.Status().State == "online" })
	cfg, err := agentconfig.DecodeTunnelJSON([]byte(`{"name":"routed","proto":"http","labels":["edge=web"],"addr":"` + up.URL + `","inspect":false}`))
	if err != nil {
		t.Fatal(err)
	}
	tu, err := r.StartTunnel(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tu.Proto != "labeled" || tu.PublicURL != "" || !strings.HasPrefix(tu.ID, schemas.PrefixEndpoint) {
		t.Fatalf("the tunnel started: %+v", tu)
	}
	if resp, body := te.Get(t, "api.example.test", "/x"); resp.StatusCode != http.StatusOK || body != "hello from /x" {
		t.Fatalf("GET through the route: %d %q", resp.StatusCode, body)
	}
}

// TestLabeledTunnelRefusedByTheEdge: labels the credential may not use
// fail the tunnel with the edge's words, and it is not listed.
func TestLabeledTunnelRefusedByTheEdge(t *testing.T) {
	te := edgetest.Start(t)
	r := startAgent(t, te, te.Credential(acct, "bind:team=web"), nil)
	waitFor(t, "the session", func() bool { return r.Status().State == "online" })
	_, err := r.StartTunnel(context.Background(), labeledTunnel("routed", "http://127.0.0.1:1", map[string]string{"edge": "web"}))
	var edgeErr *localapi.EdgeError
	if !errors.As(err, &edgeErr) || !strings.Contains(edgeErr.Msg, "bind:edge=web") {
		t.Fatalf("labels the credential may not use: %v, want the edge's refusal", err)
	}
	if ts := r.Tunnels(); len(ts) != 0 {
		t.Fatalf("a refused labeled tunnel is listed: %+v", ts)
	}
}

// TestLabeledTunnelWebSocketConverter: the raw bytes of a WebSocket that
// the route's converter turns into a byte stream are spliced to the
// tunnel's upstream as they are, both ways, not taken for HTTP.
func TestLabeledTunnelWebSocketConverter(t *testing.T) {
	te := edgetest.Start(t)
	const host = "ws.example.test"
	routedEdge(t, te, host)
	echo := edgetest.TCPEcho(t)
	// The tunnel inspects: its HTTP requests go through the agent's
	// reverse proxy, which the byte stream must not.
	captures := localapi.NewCaptures(localapi.CapturesConfig{})
	r := startAgent(t, te, te.Credential(acct), []agentconfig.Tunnel{labeledTunnel("raw", "http://"+echo, map[string]string{"edge": "web"})},
		func(o *agent.Options) { o.Captures = captures })
	r.labeledID(t, "raw")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	edgetest.WebSocketEcho(t, ctx, te.HTTPAddr, host, "/ws")
	if got := captures.List(10, ""); len(got) != 0 {
		t.Errorf("the byte stream was captured as HTTP: %+v", got[0])
	}
}
