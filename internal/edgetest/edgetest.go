// Package edgetest runs an edge in a test's process, on loopback, with a
// dev CA and an in-memory store of credentials, bot users and reserved
// domains: for the tests of the edge and of the agents that connect to it.
// The end-to-end tests of cmd/sluice run the edge on the real store.
package edgetest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// Store is the store of the edge's unit tests: credentials by token,
// reserved domains by account. The end-to-end tests of cmd/sluice run the
// edge on the real store.
type Store struct {
	Mu        sync.Mutex
	Creds     map[string]store.Credential
	Bots      map[string]store.BotUser
	Domains   map[string][]store.ReservedDomain
	Sessions  map[string]store.TunnelSession
	Endpoints map[string]store.Endpoint
}

func NewStore() *Store {
	return &Store{Creds: map[string]store.Credential{}, Bots: map[string]store.BotUser{}, Domains: map[string][]store.ReservedDomain{},
		Sessions: map[string]store.TunnelSession{}, Endpoints: map[string]store.Endpoint{}}
}

func (f *Store) AuthenticateCredential(_ context.Context, token string) (store.Credential, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	c, ok := f.Creds[token]
	if !ok {
		return store.Credential{}, store.ErrUnauthenticated
	}
	return c, nil
}

func (f *Store) GetBotUser(_ context.Context, _, id string) (store.BotUser, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	b, ok := f.Bots[id]
	if !ok {
		return store.BotUser{}, store.ErrNotFound
	}
	return b, nil
}

func (f *Store) ListReservedDomains(_ context.Context, account string, _ store.Page) ([]store.ReservedDomain, string, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return append([]store.ReservedDomain(nil), f.Domains[account]...), "", nil
}

func (f *Store) CreateTunnelSession(_ context.Context, account string, in store.TunnelSession) (store.TunnelSession, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	in.ID, in.AccountID = schemas.NewID("ts_"), account
	f.Sessions[in.ID] = in
	return in, nil
}

func (f *Store) DeleteTunnelSession(_ context.Context, _, id string) error {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	delete(f.Sessions, id)
	return nil
}

func (f *Store) CreateEndpoint(_ context.Context, account string, in store.Endpoint) (store.Endpoint, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	in.ID, in.AccountID = schemas.NewID(schemas.PrefixEndpoint), account
	f.Endpoints[in.ID] = in
	return in, nil
}

func (f *Store) DeleteEndpoint(_ context.Context, _, id string) error {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	delete(f.Endpoints, id)
	return nil
}

// Events collects what the edge publishes.
type Events struct {
	mu  sync.Mutex
	all []schemas.Encoded
}

func (e *Events) Publish(ev schemas.Encoded) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

// OfKind returns the objects of the events of a kind, decoded.
func (e *Events) OfKind(t *testing.T, kind string) []map[string]any {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []map[string]any
	for _, ev := range e.all {
		if ev.Type != kind {
			continue
		}
		var env struct {
			Object map[string]any `json:"object"`
		}
		if err := json.Unmarshal(ev.Data, &env); err != nil {
			t.Fatal(err)
		}
		out = append(out, env.Object)
	}
	return out
}

// Edge is an edge on loopback with a dev CA.
type Edge struct {
	Service   *edge.Edge
	Store     *Store
	Events    *Events
	Agents    string // host:port of the agents' listener
	HTTPAddr  string
	HTTPSAddr string
	CA        *edge.DevCA
	// Roots trust the CA, for agents and HTTPS clients.
	Roots *x509.CertPool
	// Routing is where the test puts HTTPS edges, routes and backends.
	Routing *Routing
}

// Start runs an edge on loopback until the test ends: its agents'
// listener, with a certificate of a new dev CA, its HTTP and HTTPS
// listeners and ten TCP ports; options change its configuration.
func Start(t testing.TB, options ...func(*edge.Config)) *Edge {
	t.Helper()
	ca, err := edge.LoadOrCreateDevCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue("localhost", "127.0.0.1", "tunnel.us.a-corp.test")
	if err != nil {
		t.Fatal(err)
	}
	agentsLn, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	httpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	httpsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	low := FreePortRange(t)
	te := &Edge{Store: NewStore(), Events: &Events{}, Agents: agentsLn.Addr().String(), HTTPAddr: httpLn.Addr().String(),
		HTTPSAddr: httpsLn.Addr().String(), CA: ca, Roots: x509.NewCertPool(), Routing: NewRouting()}
	te.Roots.AppendCertsFromPEM(ca.PEM)
	cfg := edge.Config{
		Store: te.Store, Events: te.Events, Domain: "sluice.localhost", EdgeID: "edge-test",
		HTTPPort: httpLn.Addr().(*net.TCPAddr).Port, HTTPSPort: httpsLn.Addr().(*net.TCPAddr).Port,
		TCPHost: "127.0.0.1", TCPListenHost: "127.0.0.1",
		TCPPorts: edge.PortRange{Low: low, High: low + 9},
		Routing:  te.Routing,
	}
	for _, o := range options {
		o(&cfg)
	}
	te.Service, err = edge.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = te.Service.ServeAgents(ctx, agentsLn) })
	srv := te.Service.NewHTTPServer("http", nil)
	wg.Go(func() { _ = srv.Serve(httpLn) })
	tlsSrv := te.Service.NewHTTPServer("https", &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: ca.GetCertificate(te.Service.ServesHTTPS)})
	wg.Go(func() { _ = tlsSrv.ServeTLS(httpsLn, "", "") })
	t.Cleanup(func() {
		cancel()
		_ = srv.Close()
		_ = tlsSrv.Close()
		closeCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		if err := te.Service.Close(closeCtx); err != nil {
			t.Errorf("closing the edge: %v", err)
		}
		wg.Wait()
	})
	return te
}

// FreePortRange returns the first of ten ports that were free, below
// the ephemeral range (32768 and up on Linux), where the machine's own
// outgoing connections would take ports from under the test.
func FreePortRange(t testing.TB) int {
	t.Helper()
	for range 200 {
		low := 20000 + rand.IntN(12000)
		ok := true
		for p := low; p <= low+9 && ok; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				continue
			}
			_ = l.Close()
		}
		if ok {
			return low
		}
	}
	t.Fatal("no ten free ports in a row")
	return 0
}

// Credential adds a credential of the account to the store and returns
// its token.
func (te *Edge) Credential(account string, acl ...string) string {
	token := "ct_" + schemas.NewID("x")
	te.Store.Mu.Lock()
	defer te.Store.Mu.Unlock()
	te.Store.Creds[token] = store.Credential{ID: schemas.NewID(schemas.PrefixCredential), AccountID: account, ACL: acl}
	return token
}

// DeleteCredential removes the credential of token from the store and
// tells the edge, as the store's watch does, and returns its id.
func (te *Edge) DeleteCredential(token string) string {
	te.Store.Mu.Lock()
	c := te.Store.Creds[token]
	delete(te.Store.Creds, token)
	te.Store.Mu.Unlock()
	te.Service.CredentialDeleted(c.AccountID, c.ID)
	return c.ID
}

func (te *Edge) Reserve(account, domain string) {
	te.Store.Mu.Lock()
	defer te.Store.Mu.Unlock()
	te.Store.Domains[account] = append(te.Store.Domains[account], store.ReservedDomain{ID: schemas.NewID(schemas.PrefixReservedDomain), AccountID: account, Domain: domain})
}

// Get sends a GET to the edge's HTTP listener with the Host.
func (te *Edge) Get(t testing.TB, host, path string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+te.HTTPAddr+path, nil)
	req.Host = host
	req.Header.Set("User-Agent", "edge-test/1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// Routing is the edge's routing source in tests (edge.Config.Routing):
// Put hands it a change and returns once the edge has applied it.
type Routing struct {
	feed chan routingPut
}

type routingPut struct {
	change store.RoutingChange
	done   chan struct{}
}

// NewRouting returns a routing source with nothing in it.
func NewRouting() *Routing { return &Routing{feed: make(chan routingPut)} }

// FollowRouting applies each change Put gives until ctx ends.
func (r *Routing) FollowRouting(ctx context.Context, _ *slog.Logger, apply func(store.RoutingChange), ready func()) {
	if ready != nil {
		ready()
	}
	for {
		select {
		case p := <-r.feed:
			apply(p.change)
			close(p.done)
		case <-ctx.Done():
			return
		}
	}
}

// Put hands the edge a change and waits until it has applied it.
func (r *Routing) Put(t *testing.T, c store.RoutingChange) {
	t.Helper()
	p := routingPut{change: c, done: make(chan struct{})}
	select {
	case r.feed <- p:
		<-p.done
	case <-time.After(10 * time.Second):
		t.Fatal("the edge took no routing change for 10s: does it serve agents?")
	}
}

// PutEdge puts an HTTPS edge of the account with the hostports
// (<domain>:443).
func (r *Routing) PutEdge(t *testing.T, e store.HTTPSEdge) {
	t.Helper()
	r.Put(t, store.RoutingChange{Key: "https_edges." + e.AccountID + "." + e.ID, Edge: &e})
}

// PutRoute puts a route of an HTTPS edge.
func (r *Routing) PutRoute(t *testing.T, rt store.HTTPSEdgeRoute) {
	t.Helper()
	r.Put(t, store.RoutingChange{Key: "https_edge_routes." + rt.AccountID + "." + rt.ID, Route: &rt})
}

// DeleteRoute deletes a route.
func (r *Routing) DeleteRoute(t *testing.T, account, id string) {
	t.Helper()
	r.Put(t, store.RoutingChange{Key: "https_edge_routes." + account + "." + id, Deleted: true})
}

// PutBackend puts a tunnel group backend.
func (r *Routing) PutBackend(t *testing.T, b store.TunnelGroupBackend) {
	t.Helper()
	r.Put(t, store.RoutingChange{Key: "tunnel_group_backends." + b.AccountID + "." + b.ID, Backend: &b})
}

// TCPEcho runs a TCP server on loopback that writes back what it reads,
// until the test ends, and returns its address.
func TCPEcho(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// WebSocketEcho dials a WebSocket at ws://host+path through the edge's
// public HTTP listener (httpAddr), sends binary messages of 5 B, 100 KB
// and 3 B, checks that each comes back whole (in as many messages as
// the far end sends), and closes it: for a route whose WebSocket TCP
// converter reaches a TCP echo.
func WebSocketEcho(t *testing.T, ctx context.Context, httpAddr, host, path string) {
	t.Helper()
	var dialer net.Dialer
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, httpAddr)
	}}}
	c, resp, err := websocket.Dial(ctx, "ws://"+host+path, &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatalf("dialing the WebSocket: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	for _, msg := range []string{"hello", strings.Repeat("x", 100_000), "bye"} {
		if err := c.Write(ctx, websocket.MessageBinary, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		var got []byte
		for len(got) < len(msg) {
			_, b, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("reading the echo of %d bytes after %d: %v", len(msg), len(got), err)
			}
			got = append(got, b...)
		}
		if string(got) != msg {
			t.Fatalf("echo of %d bytes: got %d bytes", len(msg), len(got))
		}
	}
	_ = c.Close(websocket.StatusNormalClosure, "")
}
