package agent_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/agent"
	"github.com/sluicehq/sluice/internal/agent/agentconfig"
	"github.com/sluicehq/sluice/internal/agent/localapi"
	"github.com/sluicehq/sluice/internal/edgetest"
	"github.com/sluicehq/sluice/schemas"
)

// conns is a dialer that remembers its connections, so that a test can
// cut them as a network would.
type conns struct {
	mu  sync.Mutex
	all []net.Conn
	// refuse makes dials fail while set.
	refuse bool
}

func (c *conns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refuse {
		return nil, errors.New("test: the network is down")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err == nil {
		c.all = append(c.all, conn)
	}
	return conn, err
}

func (c *conns) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.all {
		_ = conn.Close()
	}
	c.all = nil
}

// running is an agent running against a test edge.
type running struct {
	*agent.Agent
	te     *edgetest.Edge
	conns  *conns
	cancel context.CancelFunc
	done   chan error
}

func startAgent(t *testing.T, te *edgetest.Edge, token string, tunnels []agentconfig.Tunnel, edit ...func(*agent.Options)) *running {
	t.Helper()
	c := &conns{}
	opts := agent.Options{
		ServerAddrs: []string{te.Agents}, Authtoken: token, RootCAs: te.Roots, Tunnels: tunnels,
		Dial: c.dial, MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Version: "test",
	}
	for _, e := range edit {
		e(&opts)
	}
	a, err := agent.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Agent: a, te: te, conns: c, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- a.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop ends the agent's Run and waits for it.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the agent did not stop within 10 s")
		return nil
	}
}

// waitFor polls cond until it holds, for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// tunnelURL waits for the tunnel to have a public URL and returns it.
func (r *running) tunnelURL(t *testing.T, name string) string {
	t.Helper()
	var u string
	waitFor(t, "tunnel "+name+" to be bound", func() bool {
		for _, tu := range r.Tunnels() {
			if tu.Name == name && tu.PublicURL != "" {
				u = tu.PublicURL
				return true
			}
		}
		return false
	})
	return u
}

func upstream(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Host-Seen", r.Host)
		w.Header().Set("X-Forwarded-For-Seen", r.Header.Get("X-Forwarded-For"))
		_, _ = io.WriteString(w, "hello from "+r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func httpTunnel(name, addr string) agentconfig.Tunnel {
	return agentconfig.Tunnel{Name: name, Proto: "http", Addr: addr, Schemes: []string{"http"}, Inspect: true}
}

func hostOf(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Hostname()
}

// acct is the tests' account.
var acct = schemas.NewID(schemas.PrefixAccount)

func TestHTTPTunnelServesThroughTheEdge(t *testing.T) {
	te := edgetest.Start(t)
	up := upstream(t)
	te.Reserve(acct, "app.example.test")
	tunnels := []agentconfig.Tunnel{
		httpTunnel("random", up.URL),
		{Name: "named", Proto: "http", Addr: up.URL, Domain: "app.example.test", Schemes: []string{"http"}, HostHeader: "rewrite"},
	}
	r := startAgent(t, te, te.Credential(acct), tunnels)
	random := r.tunnelURL(t, "random")
	if !strings.HasSuffix(hostOf(t, random), ".sluice.localhost") {
		t.Fatalf("random tunnel's URL %s, want a subdomain of sluice.localhost", random)
	}
	resp, body := te.Get(t, hostOf(t, random), "/a/b")
	if resp.StatusCode != http.StatusOK || body != "hello from /a/b" {
		t.Fatalf("GET through the random tunnel: %d %q", resp.StatusCode, body)
	}
	if got := resp.Header.Get("X-Host-Seen"); got != hostOf(t, random) {
		t.Errorf("the upstream saw Host %q, want the public host %q", got, hostOf(t, random))
	}
	if resp.Header.Get("X-Forwarded-For-Seen") == "" {
		t.Error("the upstream saw no X-Forwarded-For from the edge")
	}
	if u := r.tunnelURL(t, "named"); u != "http://app.example.test:"+portOf(t, te.HTTPAddr) && u != "http://app.example.test" {
		t.Fatalf("named tunnel's URL %s", u)
	}
	resp, _ = te.Get(t, "app.example.test", "/")
	if got, want := resp.Header.Get("X-Host-Seen"), strings.TrimPrefix(up.URL, "http://"); got != want {
		t.Errorf("host_header rewrite: the upstream saw Host %q, want %q", got, want)
	}
	waitFor(t, "the edge's request events", func() bool { return len(te.Events.OfKind(t, "http_request_complete.v0")) == 2 })
	st := r.Status()
	if st.State != "online" || st.Edge != te.Agents || !strings.HasPrefix(st.SessionID, "ts_") {
		t.Fatalf("status %+v", st)
	}
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTCPTunnelServesThroughTheEdge(t *testing.T) {
	te := edgetest.Start(t)
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = echo.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	r := startAgent(t, te, te.Credential(acct), []agentconfig.Tunnel{{Name: "db", Proto: "tcp", Addr: echo.Addr().String()}})
	u := r.tunnelURL(t, "db")
	if !strings.HasPrefix(u, "tcp://127.0.0.1:") {
		t.Fatalf("TCP tunnel URL %s", u)
	}
	c, err := net.Dial("tcp", strings.TrimPrefix(u, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "ping"); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "ping" {
		t.Fatalf("echo through the tunnel: %q, %v", got, err)
	}
}

func TestStartTunnelThroughTheAPI(t *testing.T) {
	te := edgetest.Start(t)
	up := upstream(t)
	te.Reserve(acct, "*.apps.example.test")
	token := te.Credential(acct, "bind:*.apps.example.test")
	r := startAgent(t, te, token, nil)
	waitFor(t, "the session", func() bool { return r.Status().State == "online" })

	tu, err := r.StartTunnel(context.Background(), agentconfig.Tunnel{Name: "api", Proto: "http", Addr: up.URL, Domain: "demo.apps.example.test", Schemes: []string{"http"}})
	if err != nil {
		t.Fatal(err)
	}
	if hostOf(t, tu.PublicURL) != "demo.apps.example.test" {
		t.Fatalf("public URL %s", tu.PublicURL)
	}
	if _, err := r.StartTunnel(context.Background(), agentconfig.Tunnel{Name: "api", Proto: "http", Addr: up.URL, Schemes: []string{"http"}}); !errors.Is(err, localapi.ErrTunnelExists) {
		t.Fatalf("a second tunnel of the name: %v, want ErrTunnelExists", err)
	}
	_, err = r.StartTunnel(context.Background(), agentconfig.Tunnel{Name: "other", Proto: "http", Addr: up.URL, Domain: "other.example.test", Schemes: []string{"http"}})
	var edgeErr *localapi.EdgeError
	if !errors.As(err, &edgeErr) || !strings.Contains(edgeErr.Msg, "ACL") {
		t.Fatalf("a domain the credential may not bind: %v, want the edge's refusal", err)
	}
	if resp, body := te.Get(t, "demo.apps.example.test", "/x"); resp.StatusCode != http.StatusOK || body != "hello from /x" {
		t.Fatalf("GET: %d %q", resp.StatusCode, body)
	}
	if err := r.StopTunnel(context.Background(), "api"); err != nil {
		t.Fatal(err)
	}
	if err := r.StopTunnel(context.Background(), "api"); !errors.Is(err, localapi.ErrNoTunnel) {
		t.Fatalf("stopping it again: %v, want ErrNoTunnel", err)
	}
	if resp, _ := te.Get(t, "demo.apps.example.test", "/x"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET after the tunnel stopped: %d, want 404", resp.StatusCode)
	}
}

func TestStartTunnelBeforeTheSession(t *testing.T) {
	te := edgetest.Start(t)
	r := startAgent(t, te, te.Credential(acct), nil, func(o *agent.Options) {
		o.Dial = func(context.Context, string, string) (net.Conn, error) { return nil, errors.New("test: no network") }
	})
	_, err := r.StartTunnel(context.Background(), httpTunnel("early", "http://127.0.0.1:1"))
	if !errors.Is(err, localapi.ErrNotReady) {
		t.Fatalf("StartTunnel without a session: %v, want ErrNotReady", err)
	}
	waitFor(t, "the failed attempt to show", func() bool { return strings.Contains(r.Status().LastError, "no network") })
}

// TestReconnectRestoresConfiguredTunnels: after the connection is cut,
// the agent reconnects and binds its configuration's tunnels again, at
// the same URL; a tunnel started through the API does not come back.
func TestReconnectRestoresConfiguredTunnels(t *testing.T) {
	te := edgetest.Start(t)
	up := upstream(t)
	r := startAgent(t, te, te.Credential(acct), []agentconfig.Tunnel{httpTunnel("web", up.URL)})
	before := r.tunnelURL(t, "web")
	if _, err := r.StartTunnel(context.Background(), httpTunnel("temp", up.URL)); err != nil {
		t.Fatal(err)
	}
	firstSession := r.Status().SessionID
	r.conns.cut()
	waitFor(t, "a new session", func() bool {
		st := r.Status()
		return st.State == "online" && st.SessionID != firstSession
	})
	if after := r.tunnelURL(t, "web"); after != before {
		t.Fatalf("after the reconnect the tunnel is at %s, was %s", after, before)
	}
	for _, tu := range r.Tunnels() {
		if tu.Name == "temp" {
			t.Fatal("the API's tunnel came back after a reconnect")
		}
	}
	if resp, body := te.Get(t, hostOf(t, before), "/again"); resp.StatusCode != http.StatusOK || body != "hello from /again" {
		t.Fatalf("GET after the reconnect: %d %q", resp.StatusCode, body)
	}
}

// TestStopTellsTheEdgeWhy: the agent's reason for closing its session is
// in the edge's agent_session_stop.v0.
func TestStopTellsTheEdgeWhy(t *testing.T) {
	te := edgetest.Start(t)
	r := startAgent(t, te, te.Credential(acct), nil)
	waitFor(t, "the session", func() bool { return r.Status().State == "online" })
	r.SetStopReason("the agent received SIGTERM")
	if err := r.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	waitFor(t, "the stop event", func() bool { return len(te.Events.OfKind(t, "agent_session_stop.v0")) == 1 })
	ev := te.Events.OfKind(t, "agent_session_stop.v0")[0]
	if got := ev["error"]; got != "the agent closed its session: the agent received SIGTERM" {
		t.Fatalf("stop event's error %q", got)
	}
}

func TestBadAuthtokenEndsRun(t *testing.T) {
	te := edgetest.Start(t)
	r := startAgent(t, te, "ct_not_a_token", nil)
	select {
	case err := <-r.done:
		r.done <- err
		if err == nil || !strings.Contains(err.Error(), "authtoken") {
			t.Fatalf("Run: %v, want the edge's refusal of the authtoken", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run went on with a bad authtoken")
	}
}

// TestUpstreamDownAnswers502: the public client learns that the agent is
// up and its upstream is not.
func TestUpstreamDownAnswers502(t *testing.T) {
	te := edgetest.Start(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	// The raw tunnel forwards bytes; the other, which rewrites the
	// Host, goes through the agent's reverse proxy.
	raw := httpTunnel("raw", "http://"+addr)
	proxied := httpTunnel("proxied", "http://"+addr)
	proxied.HostHeader = "rewrite"
	r := startAgent(t, te, te.Credential(acct), []agentconfig.Tunnel{raw, proxied})
	for _, name := range []string{"raw", "proxied"} {
		t.Run(name, func(t *testing.T) {
			resp, body := te.Get(t, hostOf(t, r.tunnelURL(t, name)), "/")
			if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "sluice-agent) is up") || !strings.Contains(body, addr) || !strings.Contains(body, "refused") {
				t.Fatalf("%d %q", resp.StatusCode, body)
			}
		})
	}
}

func TestBasicAuth(t *testing.T) {
	te := edgetest.Start(t)
	up := upstream(t)
	tu := httpTunnel("private", up.URL)
	tu.BasicAuth = []string{"ann:correct-horse"}
	r := startAgent(t, te, te.Credential(acct), []agentconfig.Tunnel{tu})
	host := hostOf(t, r.tunnelURL(t, "private"))
	if resp, _ := te.Get(t, host, "/"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without credentials: %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+te.HTTPAddr+"/in", nil)
	req.Host = host
	req.SetBasicAuth("ann", "correct-horse")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("with credentials: %d", resp.StatusCode)
	}
}

// TestEdgeStopsTheAgent: a session the edge stops (the API's stop of a
// tunnel session) ends Run with ErrEdgeStopped, not a reconnect.
func TestEdgeStopsTheAgent(t *testing.T) {
	te := edgetest.Start(t)
	r := startAgent(t, te, te.Credential(acct), nil)
	waitFor(t, "the session", func() bool { return r.Status().State == "online" })
	te.Service.StopSession(acct, r.Status().SessionID)
	select {
	case err := <-r.done:
		r.done <- err
		if !errors.Is(err, agent.ErrEdgeStopped) {
			t.Fatalf("Run: %v, want ErrEdgeStopped", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run went on after the edge stopped the agent")
	}
}

// TestTunnelTrafficPolicy: a tunnel's traffic_policy goes to the edge
// with its bind, and the edge runs it on the tunnel's requests; one the
// edge refuses fails the tunnel with the edge's words.
func TestTunnelTrafficPolicy(t *testing.T) {
	te := edgetest.Start(t)
	up := upstream(t)
	guarded := httpTunnel("guarded", up.URL)
	guarded.TrafficPolicy = "on_http_request:\n  - expressions: [\"req.url.path == '/private'\"]\n    actions: [{type: deny}]\n"
	r := startAgent(t, te, te.Credential(acct), []agentconfig.Tunnel{guarded})
	host := hostOf(t, r.tunnelURL(t, "guarded"))
	if resp, _ := te.Get(t, host, "/private"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a path the policy denies: %d, want 403", resp.StatusCode)
	}
	if resp, body := te.Get(t, host, "/public"); resp.StatusCode != http.StatusOK || body != "hello from /public" {
		t.Fatalf("a path the policy lets through: %d %q", resp.StatusCode, body)
	}
	bad := httpTunnel("bad", up.URL)
	bad.TrafficPolicy = "on_http_request: [{actions: [{type: teleport}]}]"
	_, err := r.StartTunnel(context.Background(), bad)
	var edgeErr *localapi.EdgeError
	if !errors.As(err, &edgeErr) || !strings.Contains(edgeErr.Msg, "teleport") {
		t.Fatalf("a policy the edge cannot run: %v, want its refusal", err)
	}
}
