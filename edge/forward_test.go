package edge_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.ngrok.com/ngrok/v2"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/schemas"
)

// peerTable is a directory of which edge serves which host, as the
// store's watch of endpoints and heartbeats gives it.
type peerTable struct {
	mu    sync.Mutex
	hosts map[string]peerEndpoint // by "scheme host"
	// labeled are labeled tunnels' labels and peers, by account.
	labeled map[string][]peerTunnel
}

type peerEndpoint struct{ peer, account string }

type peerTunnel struct {
	labels map[string]string
	peer   string
}

func (p *peerTable) FindLabeled(account string, selects func(map[string]string) bool) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.labeled[account] {
		if selects(t.labels) {
			return t.peer, true
		}
	}
	return "", false
}

func (p *peerTable) setLabeled(account string, labels map[string]string, peer string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.labeled == nil {
		p.labeled = map[string][]peerTunnel{}
	}
	p.labeled[account] = append(p.labeled[account], peerTunnel{labels: labels, peer: peer})
}

func (p *peerTable) Find(scheme, host string) (string, string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ep, ok := p.hosts[scheme+" "+host]
	return ep.peer, ep.account, ok
}

// set has the endpoint of the account at scheme and host served by the
// edge at peer.
func (p *peerTable) set(scheme, host, peer, account string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hosts == nil {
		p.hosts = map[string]peerEndpoint{}
	}
	p.hosts[scheme+" "+host] = peerEndpoint{peer, account}
}

// servePeers serves the edge's peer listener on loopback and returns its
// address.
func servePeers(t *testing.T, te *testEdge) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := te.Service.NewPeerServer()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return ln.Addr().String()
}

// TestEdgesForwardToTheEdgeOfTheAgent: behind a load balancer, a public
// request reaches an edge whose agents do not serve its host; that edge
// forwards it to the edge whose agent does, which answers it and reports
// it with the client's address and the public listener's port. The peer
// listener refuses what no edge signed, and forwards nothing further.
func TestEdgesForwardToTheEdgeOfTheAgent(t *testing.T) {
	secret := []byte("the secret every edge of the test shares")
	peersOfA, peersOfB := &peerTable{}, &peerTable{}
	a := startEdge(t, func(c *edge.Config) { c.Secret, c.Peers = secret, peersOfA })
	b := startEdge(t, func(c *edge.Config) { c.Secret, c.Peers = secret, peersOfB })
	peerB := servePeers(t, b)

	account := schemas.NewID(schemas.PrefixAccount)
	b.Reserve(account, "*.apps.example.test")
	agent := b.agent(t, b.Credential(account, "bind:*.apps.example.test"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := agent.Listen(ctx, ngrok.WithURL("http://demo.apps.example.test"))
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello %s, forwarded header %q", r.URL.Path, r.Header.Get(edge.HeaderForwarded))
		}))
	}()

	// Before A knows where the endpoint is, it has none to offer.
	if resp, _ := a.Get(t, "demo.apps.example.test", "/"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("A, not knowing the endpoint: %d, want 404", resp.StatusCode)
	}
	peersOfA.set("http", "demo.apps.example.test", peerB, account)
	resp, body := a.Get(t, "demo.apps.example.test", "/through-a")
	if resp.StatusCode != http.StatusOK || body != `hello /through-a, forwarded header ""` {
		t.Fatalf("through A: %d %q, want 200 from B's agent, the forwarding header stripped", resp.StatusCode, body)
	}
	ev := check.Eventually(t, 5*time.Second, "B's request event", func() ([]map[string]any, bool) {
		evs := b.Events.OfKind(t, "http_request_complete.v0")
		return evs, len(evs) == 1
	})[0]
	_, aPort, _ := net.SplitHostPort(a.HTTPAddr)
	if got := dig(ev, "conn", "client_ip"); got != "127.0.0.1" {
		t.Errorf("client_ip %v, want the public client's 127.0.0.1", got)
	}
	if got := fmt.Sprint(dig(ev, "conn", "server_port")); got != aPort {
		t.Errorf("server_port %v, want A's public port %s", got, aPort)
	}
	if got := dig(ev, "http", "request", "url", "path"); got != "/through-a" {
		t.Errorf("path %v", got)
	}
	if n := len(a.Events.OfKind(t, "http_request_complete.v0")); n != 0 {
		t.Errorf("A reported %d requests; the edge serving the endpoint reports it", n)
	}

	// The peer listener, reached directly: unsigned, or signed with
	// another secret, is refused.
	for _, header := range []string{"", "scheme=http&client=6.6.6.6%3A1&local=&sn=&tls=0%2F0&at=1&sig=forged"} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+peerB+"/", nil)
		req.Host = "demo.apps.example.test"
		if header != "" {
			req.Header.Set(edge.HeaderForwarded, header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Sluice-Error-Code") != "ERR_SLUICE_636" {
			t.Fatalf("the peer listener, header %q: %d %s, want 403 ERR_SLUICE_636", header, resp.StatusCode, resp.Header.Get("X-Sluice-Error-Code"))
		}
	}

	// A host B does not serve, which B's directory says A serves: B
	// answers 404 rather than forward a forwarded request back.
	peersOfA.set("http", "gone.apps.example.test", peerB, account)
	peersOfB.set("http", "gone.apps.example.test", servePeers(t, a), account)
	if resp, body := a.Get(t, "gone.apps.example.test", "/"); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "ERR_SLUICE_630") {
		t.Fatalf("a host neither serves: %d %q, want 404 ERR_SLUICE_630", resp.StatusCode, body)
	}
	// The edge serving it gone: 502.
	peersOfA.set("http", "demo.apps.example.test", "127.0.0.1:1", account)
	if resp, body := a.Get(t, "demo.apps.example.test", "/"); resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "ERR_SLUICE_631") {
		t.Fatalf("the serving edge unreachable: %d %q, want 502 ERR_SLUICE_631", resp.StatusCode, body)
	}
}

// TestForwardedRefusalIsHeld: a request the serving edge refuses for its
// account's rate is held by the edge that took it, on its client's
// connection, which that edge counts against the account's connections,
// as it would hold a refusal of its own; a connection past the limit
// meanwhile is refused there at once, and closed.
func TestForwardedRefusalIsHeld(t *testing.T) {
	const hold = 2 * time.Second
	secret := []byte("the secret every edge of the test shares")
	peersOfA := &peerTable{}
	a := startEdge(t, func(c *edge.Config) {
		c.Secret, c.Peers = secret, peersOfA
		c.Limits.RefusalHold, c.Limits.Connections = hold, 2
	})
	b := startEdge(t, func(c *edge.Config) {
		c.Secret, c.Peers = secret, &peerTable{}
		c.Limits.RequestRate, c.Limits.RequestBurst, c.Limits.RefusalHold = 0.001, 1, hold
	})
	account := schemas.NewID(schemas.PrefixAccount)
	host := serveUp(t, b.agent(t, b.Credential(account)), "http://")
	peersOfA.set("http", host, servePeers(t, b), account)

	// send sends a request for host to A; get does and fails the test
	// when it fails (on the test's goroutine only).
	send := func(c *http.Client) (*http.Response, time.Duration, error) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+a.HTTPAddr+"/", nil)
		req.Host = host
		start := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			return nil, 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp, time.Since(start), nil
	}
	get := func(c *http.Client) (*http.Response, time.Duration) {
		t.Helper()
		resp, took, err := send(c)
		if err != nil {
			t.Fatal(err)
		}
		return resp, took
	}
	// B's burst of one, on a connection A keeps counted.
	kept := &http.Client{Transport: &http.Transport{}}
	defer kept.CloseIdleConnections()
	if resp, _ := get(kept); resp.StatusCode != http.StatusOK {
		t.Fatalf("the burst's request through A: %d", resp.StatusCode)
	}
	// The next, on a second connection: B refuses it, A holds it.
	type answer struct {
		resp *http.Response
		took time.Duration
		err  error
	}
	held := make(chan answer, 1)
	go func() {
		resp, took, err := send(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}})
		held <- answer{resp, took, err}
	}()
	check.Eventually(t, hold, "the refusal held by A", func() (float64, bool) {
		n := testutil.ToFloat64(a.Service.Metrics.ForwardedHeld())
		return n, n == 1
	})
	// A third connection, during the hold: over A's count of two.
	start := time.Now()
	resp, _ := get(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}})
	if time.Since(start) >= hold {
		t.Fatalf("the third request took the whole hold (%v): the machine is too slow to tell", time.Since(start))
	}
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("X-Sluice-Error-Code") != "ERR_SLUICE_632" || !resp.Close {
		t.Fatalf("a third connection during the hold: %d %s (close %v), want 429 ERR_SLUICE_632 closing the connection", resp.StatusCode, resp.Header.Get("X-Sluice-Error-Code"), resp.Close)
	}
	got := <-held
	if got.err != nil {
		t.Fatal(got.err)
	}
	if got.took < hold {
		t.Errorf("the refusal came after %v, want it held %v", got.took, hold)
	}
	resp = got.resp
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("X-Sluice-Error-Code") != "ERR_SLUICE_635" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the refused request: %d %v, want 429 ERR_SLUICE_635 with Retry-After", resp.StatusCode, resp.Header)
	}
	if v := resp.Header.Get("Sluice-Edge-Refusal"); v != "" {
		t.Fatalf("the client saw the edges' refusal mark %q", v)
	}
	if n := testutil.ToFloat64(b.Service.Metrics.RateLimited()); n != 1 {
		t.Fatalf("B refused %v requests for the rate, want 1", n)
	}
}
