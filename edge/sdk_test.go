package edge_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.ngrok.com/ngrok/v2"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/agenttest"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// fakeStore is the store of the edge's unit tests: credentials by token,
// reserved domains by account. The end-to-end tests of cmd/sluice run the
// edge on the real store.
type fakeStore struct {
	mu        sync.Mutex
	creds     map[string]store.Credential
	bots      map[string]store.BotUser
	domains   map[string][]store.ReservedDomain
	sessions  map[string]store.TunnelSession
	endpoints map[string]store.Endpoint
}

func newFakeStore() *fakeStore {
	return &fakeStore{creds: map[string]store.Credential{}, bots: map[string]store.BotUser{}, domains: map[string][]store.ReservedDomain{},
		sessions: map[string]store.TunnelSession{}, endpoints: map[string]store.Endpoint{}}
}

func (f *fakeStore) AuthenticateCredential(_ context.Context, token string) (store.Credential, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.creds[token]
	if !ok {
		return store.Credential{}, store.ErrUnauthenticated
	}
	return c, nil
}

func (f *fakeStore) GetBotUser(_ context.Context, _, id string) (store.BotUser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.bots[id]
	if !ok {
		return store.BotUser{}, store.ErrNotFound
	}
	return b, nil
}

func (f *fakeStore) ListReservedDomains(_ context.Context, account string, _ store.Page) ([]store.ReservedDomain, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]store.ReservedDomain(nil), f.domains[account]...), "", nil
}

func (f *fakeStore) CreateTunnelSession(_ context.Context, account string, in store.TunnelSession) (store.TunnelSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in.ID, in.AccountID = schemas.NewID("ts_"), account
	f.sessions[in.ID] = in
	return in, nil
}

func (f *fakeStore) DeleteTunnelSession(_ context.Context, _, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.sessions, id)
	return nil
}

func (f *fakeStore) CreateEndpoint(_ context.Context, account string, in store.Endpoint) (store.Endpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in.ID, in.AccountID = schemas.NewID(schemas.PrefixEndpoint), account
	f.endpoints[in.ID] = in
	return in, nil
}

func (f *fakeStore) DeleteEndpoint(_ context.Context, _, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.endpoints, id)
	return nil
}

// events collects what the edge publishes.
type events struct {
	mu  sync.Mutex
	all []schemas.Encoded
}

func (e *events) Publish(ev schemas.Encoded) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

// ofKind returns the objects of the events of a kind, decoded.
func (e *events) ofKind(t *testing.T, kind string) []map[string]any {
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

// testEdge is an edge on loopback with a dev CA.
type testEdge struct {
	edge      *edge.Edge
	store     *fakeStore
	events    *events
	agents    string // host:port of the agents' listener
	httpAddr  string
	httpsAddr string
	ca        *edge.DevCA
}

func startEdge(t *testing.T, options ...func(*edge.Config)) *testEdge {
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
	low := freePortRange(t)
	te := &testEdge{store: newFakeStore(), events: &events{}, agents: agentsLn.Addr().String(), httpAddr: httpLn.Addr().String(),
		httpsAddr: httpsLn.Addr().String(), ca: ca}
	cfg := edge.Config{
		Store: te.store, Events: te.events, Domain: "sluice.localhost", EdgeID: "edge-test",
		HTTPPort: httpLn.Addr().(*net.TCPAddr).Port, HTTPSPort: httpsLn.Addr().(*net.TCPAddr).Port,
		TCPHost: "127.0.0.1", TCPListenHost: "127.0.0.1",
		TCPPorts: edge.PortRange{Low: low, High: low + 9},
	}
	for _, o := range options {
		o(&cfg)
	}
	te.edge, err = edge.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = te.edge.ServeAgents(ctx, agentsLn) })
	srv := te.edge.NewHTTPServer("http", nil)
	wg.Go(func() { _ = srv.Serve(httpLn) })
	tlsSrv := te.edge.NewHTTPServer("https", &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: ca.GetCertificate(te.edge.ServesHTTPS)})
	wg.Go(func() { _ = tlsSrv.ServeTLS(httpsLn, "", "") })
	t.Cleanup(func() {
		cancel()
		_ = srv.Close()
		_ = tlsSrv.Close()
		closeCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		if err := te.edge.Close(closeCtx); err != nil {
			t.Errorf("closing the edge: %v", err)
		}
		wg.Wait()
	})
	return te
}

// freePortRange returns the first of ten ports that were free, below
// the ephemeral range (32768 and up on Linux), where the machine's own
// outgoing connections would take ports from under the test.
func freePortRange(t *testing.T) int {
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

// credential adds a credential of the account to the store and returns
// its token.
func (te *testEdge) credential(account string, acl ...string) string {
	token := "ct_" + schemas.NewID("x")
	te.store.mu.Lock()
	defer te.store.mu.Unlock()
	te.store.creds[token] = store.Credential{ID: schemas.NewID(schemas.PrefixCredential), AccountID: account, ACL: acl}
	return token
}

// deleteCredential removes the credential of token from the store and
// tells the edge, as the store's watch does, and returns its id.
func (te *testEdge) deleteCredential(token string) string {
	te.store.mu.Lock()
	c := te.store.creds[token]
	delete(te.store.creds, token)
	te.store.mu.Unlock()
	te.edge.CredentialDeleted(c.AccountID, c.ID)
	return c.ID
}

func (te *testEdge) reserve(account, domain string) {
	te.store.mu.Lock()
	defer te.store.mu.Unlock()
	te.store.domains[account] = append(te.store.domains[account], store.ReservedDomain{ID: schemas.NewID(schemas.PrefixReservedDomain), AccountID: account, Domain: domain})
}

// agent connects the Go SDK to the edge with token.
func (te *testEdge) agent(t *testing.T, token string, options ...ngrok.AgentOption) ngrok.Agent {
	t.Helper()
	a, err := ngrok.NewAgent(append([]ngrok.AgentOption{ngrok.WithAuthtoken(token), ngrok.WithAgentConnectURL(te.agents), ngrok.WithAgentConnectCAs(te.ca.Pool())}, options...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Disconnect() })
	return a
}

// get sends a GET to the edge's HTTP listener with the Host.
func (te *testEdge) get(t *testing.T, host, path string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+te.httpAddr+path, nil)
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

func TestGoSDKServesHTTPThroughTheEdge(t *testing.T) {
	te := startEdge(t)
	account := schemas.NewID(schemas.PrefixAccount)
	te.reserve(account, "*.apps.example.test")
	a := te.agent(t, te.credential(account, "bind:*.apps.example.test"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := a.Listen(ctx, ngrok.WithURL("http://demo.apps.example.test"))
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	if got := ln.URL().String(); !strings.HasPrefix(got, "http://demo.apps.example.test:") {
		t.Fatalf("endpoint URL %q, want http://demo.apps.example.test:<port>", got)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Upstream", "yes")
			fmt.Fprintf(w, "hello %s from %s", r.URL.Path, r.Header.Get("X-Forwarded-Proto"))
		}))
	}()
	resp, body := te.get(t, "demo.apps.example.test", "/hi?x=1")
	if resp.StatusCode != 200 || body != "hello /hi from http" || resp.Header.Get("X-Upstream") != "yes" {
		t.Fatalf("got %d %q (X-Upstream %q), want 200 \"hello /hi from http\"", resp.StatusCode, body, resp.Header.Get("X-Upstream"))
	}
	// A second request on the same keep-alive connection reuses the stream.
	if resp, body := te.get(t, "demo.apps.example.test", "/again"); resp.StatusCode != 200 || body != "hello /again from http" {
		t.Fatalf("second request: %d %q", resp.StatusCode, body)
	}
	if resp, _ := te.get(t, "nothing.apps.example.test", "/"); resp.StatusCode != 404 {
		t.Fatalf("a host no endpoint serves: %d, want 404", resp.StatusCode)
	}
	reqs := check.Eventually(t, 5*time.Second, "two request events", func() ([]map[string]any, bool) {
		reqs := te.events.ofKind(t, "http_request_complete.v0")
		return reqs, len(reqs) >= 2
	})
	ev := reqs[0]
	if got := dig(ev, "http", "response", "status_code"); got != float64(200) {
		t.Errorf("status_code %v, want 200", got)
	}
	if got := dig(ev, "http", "request", "method"); got != "get" {
		t.Errorf("method %v, want get", got)
	}
	if got := dig(ev, "http", "request", "url", "raw"); !strings.HasSuffix(fmt.Sprint(got), "/hi?x=1") {
		t.Errorf("url.raw %v", got)
	}
	if got := dig(ev, "conn", "server_name"); got != "demo.apps.example.test" {
		t.Errorf("server_name %v", got)
	}
	if got := dig(ev, "http", "request", "user_agent"); got != "edge-test/1" {
		t.Errorf("user_agent %v", got)
	}
	if got := dig(ev, "http", "response", "body_length"); got != float64(len("hello /hi from http")) {
		t.Errorf("response body_length %v", got)
	}
	if got := dig(ev, "basic_auth", "decision"); got != "invalid" {
		t.Errorf("basic_auth.decision %v, want invalid (the module did not run)", got)
	}
	if starts := te.events.ofKind(t, "agent_session_start.v0"); len(starts) != 1 || dig(starts[0], "transport") != "muxado" || dig(starts[0], "error") != "" {
		t.Errorf("agent_session_start events %v, want one of transport muxado without error", starts)
	}
}

func TestGoSDKServesTCPThroughTheEdge(t *testing.T) {
	te := startEdge(t)
	a := te.agent(t, te.credential(schemas.NewID(schemas.PrefixAccount)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := a.Listen(ctx, ngrok.WithURL("tcp://"))
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(c)
				_, _ = c.Write([]byte(strings.ToUpper(string(b))))
			}()
		}
	}()
	te.pingTCP(t, strings.TrimPrefix(ln.URL().String(), "tcp://"))
}

// pingTCP sends "ping through the tunnel" to a TCP endpoint whose agent
// answers it in upper case, and checks the answer and the connection's
// event, 23 bytes each way.
func (te *testEdge) pingTCP(t *testing.T, addr string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dialing the TCP endpoint %s: %v", addr, err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = c.Write([]byte("ping through the tunnel"))
	_ = c.(*net.TCPConn).CloseWrite()
	got, _ := io.ReadAll(c)
	_ = c.Close()
	if string(got) != "PING THROUGH THE TUNNEL" {
		t.Fatalf("got %q through the TCP endpoint", got)
	}
	closed := check.Eventually(t, 5*time.Second, "a tcp_connection_closed event", func() ([]map[string]any, bool) {
		closed := te.events.ofKind(t, "tcp_connection_closed.v0")
		return closed, len(closed) == 1
	})
	if in, out := dig(closed[0], "conn", "bytes_in"), dig(closed[0], "conn", "bytes_out"); in != float64(23) || out != float64(23) {
		t.Fatalf("bytes in %v, out %v; want 23 and 23", in, out)
	}
}

func TestEdgeRefusesWhatTheCredentialMayNotDo(t *testing.T) {
	te := startEdge(t)
	accountA, accountB := schemas.NewID(schemas.PrefixAccount), schemas.NewID(schemas.PrefixAccount)
	te.reserve(accountA, "*.apps.example.test")
	te.reserve(accountB, "b.example.test")
	good := te.credential(accountA, "bind:*.apps.example.test")

	bad := te.agent(t, "ct_not-a-token")
	badCtx, badCancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer badCancel()
	if err := bad.Connect(badCtx); err == nil || !strings.Contains(err.Error(), "authtoken is not valid") {
		t.Fatalf("a bad token: %v, want the authtoken refused", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := te.agent(t, good)
	for _, tc := range []struct{ url, want string }{
		{"http://x.other.example.test", "ACL does not let it bind x.other.example.test"},
		{"http://demo.unreserved.test", "ACL"},
		{"http://b.example.test", "ACL"},
	} {
		if _, err := a.Listen(ctx, ngrok.WithURL(tc.url)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Listen(%s): %v, want an error saying %q", tc.url, err, tc.want)
		}
	}
	// Without an ACL, a domain nobody reserved and one another account
	// reserved are refused alike.
	open := te.agent(t, te.credential(accountA))
	var msgs []string
	for _, u := range []string{"http://demo.unreserved.test", "http://b.example.test"} {
		_, err := open.Listen(ctx, ngrok.WithURL(u))
		if err == nil {
			t.Fatalf("Listen(%s) bound a domain the account did not reserve", u)
		}
		msgs = append(msgs, strings.ReplaceAll(err.Error(), strings.TrimPrefix(u, "http://"), "<host>"))
	}
	if msgs[0] != msgs[1] || !strings.Contains(msgs[0], "not a reserved domain of the account") {
		t.Fatalf("an unreserved domain and another account's are refused differently:\n%s\n%s", msgs[0], msgs[1])
	}
}

// dig returns the value at a path of nested objects.
func dig(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[p]
	}
	return v
}

func TestDeletedCredentialEndsItsSessions(t *testing.T) {
	te := startEdge(t)
	account := schemas.NewID(schemas.PrefixAccount)
	token := te.credential(account)
	// It connects once: its session ended, it stays off the edge (see
	// agenttest.OneConnection).
	a := te.agent(t, token, agenttest.DialOnce(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := a.Listen(ctx, ngrok.WithURL("http://"))
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "up") }))
	}()
	host := ln.URL().Hostname()
	if !strings.HasSuffix(host, ".sluice.localhost") {
		t.Fatalf("a random endpoint at %s, want one under the edge domain", host)
	}
	if resp, body := te.get(t, host, "/"); resp.StatusCode != 200 || body != "up" {
		t.Fatalf("before the delete: %d %q", resp.StatusCode, body)
	}
	deleted := time.Now()
	credID := te.deleteCredential(token)
	check.Eventually(t, 2*time.Second, "the endpoint gone", func() (int, bool) {
		resp, _ := te.get(t, host, "/")
		return resp.StatusCode, resp.StatusCode == http.StatusNotFound
	})
	stops := check.Eventually(t, 2*time.Second-time.Since(deleted), "an agent_session_stop event", func() ([]map[string]any, bool) {
		stops := te.events.ofKind(t, "agent_session_stop.v0")
		return stops, len(stops) == 1
	})
	if got := fmt.Sprint(dig(stops[0], "error")); !strings.Contains(got, credID) || !strings.Contains(got, "deleted") {
		t.Fatalf("the stop's error %q, want it to say credential %s was deleted", got, credID)
	}
}

func TestGoSDKServesHTTPSThroughTheEdge(t *testing.T) {
	te := startEdge(t)
	account := schemas.NewID(schemas.PrefixAccount)
	te.reserve(account, "secure.example.test")
	a := te.agent(t, te.credential(account))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := a.Listen(ctx, ngrok.WithURL("https://secure.example.test"))
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "secure %s", r.Header.Get("X-Forwarded-Proto"))
		}))
	}()
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: te.ca.Pool(), ServerName: "secure.example.test"},
	}}
	req, _ := http.NewRequest(http.MethodGet, "https://"+te.httpsAddr+"/", nil)
	req.Host = "secure.example.test"
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "secure https" {
		t.Fatalf("got %d %q, want 200 \"secure https\"", resp.StatusCode, body)
	}
	// A request whose Host is not its connection's name is misdirected.
	req, _ = http.NewRequest(http.MethodGet, "https://"+te.httpsAddr+"/", nil)
	req.Host = "other.example.test"
	if resp, err := client.Do(req); err != nil || resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("a Host apart from the TLS server name: %v %v, want 421", resp.StatusCode, err)
	}
	// A name no endpoint serves gets no certificate.
	if c, err := tls.Dial("tcp", te.httpsAddr, &tls.Config{RootCAs: te.ca.Pool(), ServerName: "nobody.example.test"}); err == nil {
		c.Close()
		t.Fatal("a TLS handshake for a name no endpoint serves succeeded")
	}
	reqs := check.Eventually(t, 5*time.Second, "the request's event", func() ([]map[string]any, bool) {
		reqs := te.events.ofKind(t, "http_request_complete.v0")
		return reqs, len(reqs) >= 1
	})
	if v, cs := dig(reqs[0], "tls", "version"), dig(reqs[0], "tls", "cipher_suite"); v != "TLSv1.3" || cs == "" || cs == nil {
		t.Fatalf("tls.version %v, tls.cipher_suite %v; want TLSv1.3 and a suite", v, cs)
	}
}
