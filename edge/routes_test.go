package edge_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/edgetest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// labeledListener is a labeled listener the Node SDK starts.
type labeledListener struct {
	Labels   map[string]string `json:"labels"`
	Upstream string            `json:"upstream"`
}

// startLabeledNodeAgent runs the Node SDK (testdata/node-agent.js) with
// the labeled listeners only, and returns their ids.
func startLabeledNodeAgent(t *testing.T, te *testEdge, token string, listeners ...labeledListener) []string {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, te.CA.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(listeners)
	a := startNodeAgent(t,
		"AGENT_AUTHTOKEN="+token, "AGENT_SERVER_ADDR="+te.Agents, "AGENT_CA_FILE="+caFile,
		"AGENT_LABELED_ONLY=1", "AGENT_LABELED="+string(spec),
		"AGENT_LOG_LEVEL="+os.Getenv("AGENT_LOG_LEVEL"))
	if len(a.Labeled) != len(listeners) {
		t.Fatalf("the node agent started %d labeled listeners, want %d", len(a.Labeled), len(listeners))
	}
	return a.Labeled
}

// namedUpstream is an HTTP upstream that answers its name and the path.
func namedUpstream(t *testing.T, name string, status *atomic.Int32) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status != nil && status.Load() != 0 {
			w.WriteHeader(int(status.Load()))
		}
		fmt.Fprintf(w, "%s %s", name, r.URL.Path)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// routedAccount is an account with an HTTPS edge at app.<account>.test.
type routedAccount struct {
	id, host, edgeID string
}

func newRoutedAccount(t *testing.T, te *testEdge) routedAccount {
	t.Helper()
	a := routedAccount{id: schemas.NewID(schemas.PrefixAccount), edgeID: schemas.NewID(schemas.PrefixHTTPSEdge)}
	a.host = "app." + strings.ToLower(a.id[len(a.id)-8:]) + ".test"
	te.Routing.PutEdge(t, store.HTTPSEdge{ID: a.edgeID, AccountID: a.id, Hostports: []string{a.host + ":443"}})
	return a
}

func (a routedAccount) backend(t *testing.T, te *testEdge, labels map[string]string) string {
	t.Helper()
	id := schemas.NewID("bkdtg_")
	te.Routing.PutBackend(t, store.TunnelGroupBackend{ID: id, AccountID: a.id, Labels: labels})
	return id
}

func (a routedAccount) route(t *testing.T, te *testEdge, rt store.HTTPSEdgeRoute) store.HTTPSEdgeRoute {
	t.Helper()
	if rt.ID == "" {
		rt.ID = schemas.NewID(schemas.PrefixHTTPSEdgeRoute)
	}
	rt.AccountID, rt.EdgeID = a.id, a.edgeID
	te.Routing.PutRoute(t, rt)
	return rt
}

func backendOf(id string) *store.RouteBackend {
	return &store.RouteBackend{Enabled: true, BackendID: id}
}

// TestNodeSDKLabeledTunnelsServeRoutes: the Node SDK's labeled listeners
// take the requests of an HTTPS edge's routes whose backends select
// their labels: the most specific route first, load spread over a
// group's tunnels, and a tunnel that leaves its group gets no new
// request; a path no route takes is 404, a route without a backend 503,
// a backend with no tunnel online 502, each in an event.
func TestNodeSDKLabeledTunnelsServeRoutes(t *testing.T) {
	te := startEdge(t)
	a := newRoutedAccount(t, te)
	token := te.Credential(a.id)
	web := a.backend(t, te, map[string]string{"edge": "web"})
	api := a.backend(t, te, map[string]string{"edge": "api"})
	a.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/", Backend: backendOf(web)})
	a.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/api", Backend: backendOf(api)})
	a.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchExactPath, Match: "/api/exact", Backend: backendOf(web)})
	a.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchExactPath, Match: "/none"})

	startLabeledNodeAgent(t, te, token,
		labeledListener{Labels: map[string]string{"edge": "web"}, Upstream: namedUpstream(t, "web1", nil)},
		labeledListener{Labels: map[string]string{"edge": "api", "team": "core"}, Upstream: namedUpstream(t, "api", nil)})

	for _, tc := range []struct{ path, want string }{
		{"/api/users", "api /api/users"},
		{"/apiary", "api /apiary"},
		{"/api/exact", "web1 /api/exact"},
		{"/about", "web1 /about"},
		{"/api/../about", "web1 /api/../about"},
	} {
		resp, body := te.Get(t, a.host, tc.path)
		if resp.StatusCode != 200 || body != tc.want {
			t.Errorf("GET %s: %d %q, want 200 %q", tc.path, resp.StatusCode, body, tc.want)
		}
	}
	resp, body := te.Get(t, a.host, "/none")
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "ERR_SLUICE_641") {
		t.Errorf("a route without a backend: %d %q", resp.StatusCode, body)
	}

	// A second agent joins the web group: requests are spread over both
	// tunnels; once it leaves, the first takes them all at once.
	secondToken := te.Credential(a.id)
	stopSecond := startLabeledNodeAgentStoppable(t, te, secondToken,
		labeledListener{Labels: map[string]string{"edge": "web", "zone": "b"}, Upstream: namedUpstream(t, "web2", nil)})
	// Each public connection keeps its tunnel; new ones take the
	// group's tunnels in turn.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	seen := map[string]int{}
	for range 20 {
		req, _ := http.NewRequest(http.MethodGet, "http://"+te.HTTPAddr+"/", nil)
		req.Host = a.host
		resp, err := fresh.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		seen[strings.Fields(string(body))[0]]++
	}
	if seen["web1"] == 0 || seen["web2"] == 0 {
		t.Errorf("20 requests over a group of two tunnels went %v", seen)
	}
	stopSecond()
	for range 10 {
		if _, body := te.Get(t, a.host, "/"); !strings.HasPrefix(body, "web1 ") {
			t.Fatalf("after the second tunnel left, a request went to %q", body)
		}
	}

	events := eventsAtLeast(t, te, 36)
	if len(events) != 36 {
		t.Fatalf("%d events, want one per request", len(events))
	}
	for _, ev := range events {
		if got := dig(ev, "circuit_breaker", "decision"); got != "invalid" {
			t.Errorf("circuit_breaker.decision %v on a route without a breaker", got)
		}
		if got := dig(ev, "conn", "server_name"); got != a.host {
			t.Errorf("conn.server_name %v, want %s", got, a.host)
		}
	}

	// No route takes a path: 404. A backend whose tunnels are gone: 502.
	other := newRoutedAccount(t, te)
	lonely := other.backend(t, te, map[string]string{"edge": "nobody"})
	other.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/app", Backend: backendOf(lonely)})
	if resp, body := te.Get(t, other.host, "/elsewhere"); resp.StatusCode != 404 || !strings.Contains(body, "ERR_SLUICE_640") {
		t.Errorf("a path no route takes: %d %q", resp.StatusCode, body)
	}
	if resp, body := te.Get(t, other.host, "/app"); resp.StatusCode != 502 || !strings.Contains(body, "ERR_SLUICE_642") {
		t.Errorf("a backend without tunnels: %d %q", resp.StatusCode, body)
	}
	// Another account's backend named by a route is not followed.
	other.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/steal", Backend: backendOf(web)})
	if resp, body := te.Get(t, other.host, "/steal"); resp.StatusCode != 503 || strings.Contains(body, "web1") {
		t.Errorf("a route naming another account's backend: %d %q", resp.StatusCode, body)
	}
}

// startLabeledNodeAgentStoppable is startLabeledNodeAgent, and a func
// that stops the agent and waits until the edge has ended its session.
func startLabeledNodeAgentStoppable(t *testing.T, te *testEdge, token string, listeners ...labeledListener) func() {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, te.CA.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(listeners)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := nodeAgentCommand(ctx, t, "AGENT_AUTHTOKEN="+token, "AGENT_SERVER_ADDR="+te.Agents, "AGENT_CA_FILE="+caFile,
		"AGENT_LABELED_ONLY=1", "AGENT_LABELED="+string(spec))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 4096)
	n, _ := out.Read(line)
	var a nodeAgent
	if err := json.Unmarshal(line[:n], &a); err != nil || len(a.Labeled) != len(listeners) {
		cancel()
		_ = cmd.Wait()
		t.Fatalf("the second node agent printed %q (%v):\n%s", line[:n], err, stderr.String())
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = stdin.Close()
			_, _ = io.Copy(io.Discard, out)
			_ = cmd.Wait()
			cancel()
			check.Eventually(t, 10*time.Second, "the second agent's tunnels gone", func() (string, bool) {
				te.Store.Mu.Lock()
				defer te.Store.Mu.Unlock()
				for _, ep := range te.Store.Endpoints {
					if ep.Labels["zone"] == "b" {
						return "its tunnel is still recorded", false
					}
				}
				return "", true
			})
		})
	}
	t.Cleanup(stop)
	return stop
}

// eventsAtLeast waits until the edge has published n request events (it
// publishes one once its answer is written) and returns them.
func eventsAtLeast(t *testing.T, te *testEdge, n int) []map[string]any {
	t.Helper()
	var events []map[string]any
	check.Eventually(t, 10*time.Second, fmt.Sprintf("%d request events", n), func() (string, bool) {
		events = te.Events.OfKind(t, "http_request_complete.v0")
		return fmt.Sprintf("%d events", len(events)), len(events) >= n
	})
	return events
}

// TestRouteCircuitBreakerThroughTheEdge: a route's breaker trips when
// its upstream fails, blocks with 503 while open, lets one probe through
// after tripped_duration, and closes when the probe succeeds; every
// request's event carries the decision.
func TestRouteCircuitBreakerThroughTheEdge(t *testing.T) {
	clock := check.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	te := startEdge(t, func(c *edge.Config) { c.Now = clock.Now })
	a := newRoutedAccount(t, te)
	var status atomic.Int32
	status.Store(500)
	web := a.backend(t, te, map[string]string{"edge": "web"})
	a.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/", Backend: backendOf(web),
		CircuitBreaker: &store.CircuitBreaker{Enabled: true, TrippedDuration: 5, RollingWindow: 10, NumBuckets: 10, VolumeThreshold: 4, ErrorThresholdPercentage: 0.5}})
	startLabeledNodeAgent(t, te, te.Credential(a.id),
		labeledListener{Labels: map[string]string{"edge": "web"}, Upstream: namedUpstream(t, "web", &status)})

	sent := 0
	get := func(wantStatus int, wantDecision string) {
		t.Helper()
		resp, body := te.Get(t, a.host, "/x")
		if resp.StatusCode != wantStatus {
			t.Fatalf("status %d (%q), want %d", resp.StatusCode, body, wantStatus)
		}
		sent++
		events := eventsAtLeast(t, te, sent)
		if got := dig(events[sent-1], "circuit_breaker", "decision"); got != wantDecision {
			t.Fatalf("circuit_breaker.decision %v, want %s", got, wantDecision)
		}
		if wantDecision == "block" && (resp.Header.Get("Retry-After") != "5" || !strings.Contains(body, "ERR_SLUICE_643")) {
			t.Fatalf("a blocked request: Retry-After %q, body %q", resp.Header.Get("Retry-After"), body)
		}
	}
	for range 4 {
		get(500, "allow")
	}
	get(503, "block")
	clock.Advance(4 * time.Second)
	get(503, "block")
	clock.Advance(time.Second)
	get(500, "allow_while_open") // the probe fails: open again
	get(503, "block")
	clock.Advance(5 * time.Second)
	status.Store(0)
	get(200, "allow_while_open") // the probe succeeds: closed
	get(200, "allow")
}

// TestRouteWebSocketTCPConverter: a route with the websocket TCP
// converter accepts a real WebSocket client's upgrade and carries its
// binary messages to a TCP echo behind the Node SDK's labeled listener,
// both ways; a plain request on it is 400.
func TestRouteWebSocketTCPConverter(t *testing.T) {
	te := startEdge(t)
	a := newRoutedAccount(t, te)
	echo := edgetest.TCPEcho(t)
	raw := a.backend(t, te, map[string]string{"edge": "raw"})
	a.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/ws", Backend: backendOf(raw),
		WebsocketTCPConverter: &store.WebsocketTCPConverter{Enabled: true}})
	startLabeledNodeAgent(t, te, te.Credential(a.id),
		labeledListener{Labels: map[string]string{"edge": "raw"}, Upstream: "tcp://" + echo})

	if resp, body := te.Get(t, a.host, "/ws"); resp.StatusCode != 400 || !strings.Contains(body, "ERR_SLUICE_645") {
		t.Errorf("a plain request on a converter's route: %d %q", resp.StatusCode, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dialer := &net.Dialer{}
	edgetest.WebSocketEcho(t, ctx, te.HTTPAddr, a.host, "/ws")

	// Converted WebSockets count against the account's public
	// connections while they last: with a limit of 2, a third is
	// refused while two are open.
	limited := startEdge(t, func(c *edge.Config) { c.Limits.Connections = 2 })
	b := newRoutedAccount(t, limited)
	rawB := b.backend(t, limited, map[string]string{"edge": "raw"})
	b.route(t, limited, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/ws", Backend: backendOf(rawB),
		WebsocketTCPConverter: &store.WebsocketTCPConverter{Enabled: true}})
	startLabeledNodeAgent(t, limited, limited.Credential(b.id),
		labeledListener{Labels: map[string]string{"edge": "raw"}, Upstream: "tcp://" + echo})
	toLimited := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, limited.HTTPAddr)
	}}}
	for i := range 3 {
		ws, _, err := websocket.Dial(ctx, "ws://"+b.host+"/ws", &websocket.DialOptions{HTTPClient: toLimited})
		if err == nil {
			defer ws.CloseNow()
			err = ws.Write(ctx, websocket.MessageBinary, []byte("ping"))
			if err == nil {
				_, _, err = ws.Read(ctx)
			}
		}
		if (err == nil) != (i < 2) {
			t.Fatalf("WebSocket %d of 3 with a limit of 2 connections: %v", i+1, err)
		}
	}
	check.Eventually(t, 10*time.Second, "the WebSocket's event", func() (string, bool) {
		for _, ev := range te.Events.OfKind(t, "http_request_complete.v0") {
			if dig(ev, "http", "response", "status_code") == float64(101) {
				return "", true
			}
		}
		return "no event with status 101", false
	})
}

// TestRouteTrafficPolicy: a route's traffic policy runs on its requests
// and not on another route's; a policy that does not load closes its
// route with 503; routes answer on the HTTPS listener too.
func TestRouteTrafficPolicy(t *testing.T) {
	te := startEdge(t)
	a := newRoutedAccount(t, te)
	web := a.backend(t, te, map[string]string{"edge": "web"})
	a.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/admin", Backend: backendOf(web),
		TrafficPolicy: &store.RouteTrafficPolicy{Enabled: true, Value: `{"on_http_request":[{"actions":[{"type":"deny","config":{"status_code":403}}]}]}`}})
	a.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/", Backend: backendOf(web)})
	a.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/broken", Backend: backendOf(web),
		TrafficPolicy: &store.RouteTrafficPolicy{Enabled: true, Value: `{"on_http_request":[{"actions":[{"type":"no-such-action"}]}]}`}})
	startLabeledNodeAgent(t, te, te.Credential(a.id),
		labeledListener{Labels: map[string]string{"edge": "web"}, Upstream: namedUpstream(t, "web", nil)})
	if resp, body := te.Get(t, a.host, "/admin/users"); resp.StatusCode != 403 || strings.Contains(body, "web") {
		t.Errorf("the route with a deny policy: %d %q", resp.StatusCode, body)
	}
	if resp, body := te.Get(t, a.host, "/public/../admin"); resp.StatusCode != 403 {
		t.Errorf("a path that cleans to the denied route: %d %q", resp.StatusCode, body)
	}
	if resp, body := te.Get(t, a.host, "/home"); resp.StatusCode != 200 || body != "web /home" {
		t.Errorf("the route without a policy: %d %q", resp.StatusCode, body)
	}
	if resp, body := te.Get(t, a.host, "/broken"); resp.StatusCode != 503 || !strings.Contains(body, "ERR_SLUICE_644") {
		t.Errorf("a route whose policy does not load: %d %q", resp.StatusCode, body)
	}

	// Over HTTPS: the edge has a certificate for the hostport.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: te.CA.Pool(), ServerName: a.host}}}
	req, _ := http.NewRequest(http.MethodGet, "https://"+te.HTTPSAddr+"/home", nil)
	req.Host = a.host
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("a route over HTTPS: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "web /home" {
		t.Errorf("a route over HTTPS: %d %q", resp.StatusCode, body)
	}
}

// TestRoutesForwardToTheEdgeOfTheTunnel: an edge with no tunnel of a
// route's group forwards the request to the edge that has one, which
// serves it, the route's modules and all.
func TestRoutesForwardToTheEdgeOfTheTunnel(t *testing.T) {
	secret := []byte("the secret every edge of the test shares")
	peersOfA, peersOfB := &peerTable{}, &peerTable{}
	a := startEdge(t, func(c *edge.Config) { c.Secret, c.Peers = secret, peersOfA })
	b := startEdge(t, func(c *edge.Config) { c.Secret, c.Peers = secret, peersOfB })
	peerB := servePeers(t, b)
	acct := newRoutedAccount(t, a)
	b.Routing.PutEdge(t, store.HTTPSEdge{ID: acct.edgeID, AccountID: acct.id, Hostports: []string{acct.host + ":443"}})
	labels := map[string]string{"edge": "web"}
	web := acct.backend(t, a, labels)
	b.Routing.PutBackend(t, store.TunnelGroupBackend{ID: web, AccountID: acct.id, Labels: labels})
	rt := acct.route(t, a, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/", Backend: backendOf(web),
		CircuitBreaker: &store.CircuitBreaker{Enabled: true, TrippedDuration: 5, RollingWindow: 10, NumBuckets: 10, VolumeThreshold: 100, ErrorThresholdPercentage: 0.5}})
	b.Routing.PutRoute(t, rt)
	startLabeledNodeAgent(t, b, b.Credential(acct.id), labeledListener{Labels: map[string]string{"edge": "web", "zone": "b"}, Upstream: namedUpstream(t, "on-b", nil)})

	if resp, body := a.Get(t, acct.host, "/x"); resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "ERR_SLUICE_642") {
		t.Fatalf("A, knowing no edge with the tunnel: %d %q", resp.StatusCode, body)
	}
	peersOfA.setLabeled(acct.id, map[string]string{"edge": "web", "zone": "b"}, peerB)
	if resp, body := a.Get(t, acct.host, "/through-a"); resp.StatusCode != 200 || body != "on-b /through-a" {
		t.Fatalf("through A: %d %q", resp.StatusCode, body)
	}
	ev := eventsAtLeast(t, b, 1)[0]
	if got := dig(ev, "circuit_breaker", "decision"); got != "allow" {
		t.Errorf("B's event: circuit_breaker.decision %v, want allow (B ran the route)", got)
	}
}

// TestRouteBreakerIgnoresClientsCutBodies: clients that break off their
// own requests' bodies do not trip a route's breaker: their requests
// are 400, not upstream failures, and the next request is served.
func TestRouteBreakerIgnoresClientsCutBodies(t *testing.T) {
	te := startEdge(t)
	a := newRoutedAccount(t, te)
	web := a.backend(t, te, map[string]string{"edge": "web"})
	a.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/", Backend: backendOf(web),
		CircuitBreaker: &store.CircuitBreaker{Enabled: true, TrippedDuration: 60, RollingWindow: 10, NumBuckets: 10, VolumeThreshold: 4, ErrorThresholdPercentage: 0.5}})
	startLabeledNodeAgent(t, te, te.Credential(a.id),
		labeledListener{Labels: map[string]string{"edge": "web"}, Upstream: namedUpstream(t, "web", nil)})
	for i := range 6 {
		c, err := net.Dial("tcp", te.HTTPAddr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST /x HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\n\r\nabcde", a.host)
		_ = c.(*net.TCPConn).CloseWrite()
		_, _ = io.ReadAll(c)
		c.Close()
		ev := eventsAtLeast(t, te, i+1)[i]
		if got := dig(ev, "http", "response", "status_code"); got != float64(400) {
			t.Fatalf("a request whose client cut its body: status %v, want 400", got)
		}
	}
	if resp, body := te.Get(t, a.host, "/x"); resp.StatusCode != 200 || body != "web /x" {
		t.Fatalf("after clients cut their bodies, a healthy upstream's route answers %d %q", resp.StatusCode, body)
	}
}
