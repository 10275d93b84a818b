package edge_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.ngrok.com/ngrok/v2"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/agenttest"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/edgetest"
	"github.com/sluicehq/sluice/schemas"
)

// testEdge is an edge of edgetest, with the Go SDK's agents.
type testEdge struct{ *edgetest.Edge }

func startEdge(t *testing.T, options ...func(*edge.Config)) *testEdge {
	t.Helper()
	return &testEdge{edgetest.Start(t, options...)}
}

// agent connects the Go SDK to the edge with token.
func (te *testEdge) agent(t *testing.T, token string, options ...ngrok.AgentOption) ngrok.Agent {
	t.Helper()
	a, err := ngrok.NewAgent(append([]ngrok.AgentOption{ngrok.WithAuthtoken(token), ngrok.WithAgentConnectURL(te.Agents), ngrok.WithAgentConnectCAs(te.CA.Pool())}, options...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Disconnect() })
	return a
}

func TestGoSDKServesHTTPThroughTheEdge(t *testing.T) {
	te := startEdge(t)
	account := schemas.NewID(schemas.PrefixAccount)
	te.Reserve(account, "*.apps.example.test")
	a := te.agent(t, te.Credential(account, "bind:*.apps.example.test"))
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
	resp, body := te.Get(t, "demo.apps.example.test", "/hi?x=1")
	if resp.StatusCode != 200 || body != "hello /hi from http" || resp.Header.Get("X-Upstream") != "yes" {
		t.Fatalf("got %d %q (X-Upstream %q), want 200 \"hello /hi from http\"", resp.StatusCode, body, resp.Header.Get("X-Upstream"))
	}
	// A second request on the same keep-alive connection reuses the stream.
	if resp, body := te.Get(t, "demo.apps.example.test", "/again"); resp.StatusCode != 200 || body != "hello /again from http" {
		t.Fatalf("second request: %d %q", resp.StatusCode, body)
	}
	if resp, _ := te.Get(t, "nothing.apps.example.test", "/"); resp.StatusCode != 404 {
		t.Fatalf("a host no endpoint serves: %d, want 404", resp.StatusCode)
	}
	reqs := check.Eventually(t, 5*time.Second, "two request events", func() ([]map[string]any, bool) {
		reqs := te.Events.OfKind(t, "http_request_complete.v0")
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
	if starts := te.Events.OfKind(t, "agent_session_start.v0"); len(starts) != 1 || dig(starts[0], "transport") != "muxado" || dig(starts[0], "error") != "" {
		t.Errorf("agent_session_start events %v, want one of transport muxado without error", starts)
	}
}

func TestGoSDKServesTCPThroughTheEdge(t *testing.T) {
	te := startEdge(t)
	a := te.agent(t, te.Credential(schemas.NewID(schemas.PrefixAccount)))
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
		closed := te.Events.OfKind(t, "tcp_connection_closed.v0")
		return closed, len(closed) == 1
	})
	if in, out := dig(closed[0], "conn", "bytes_in"), dig(closed[0], "conn", "bytes_out"); in != float64(23) || out != float64(23) {
		t.Fatalf("bytes in %v, out %v; want 23 and 23", in, out)
	}
}

func TestEdgeRefusesWhatTheCredentialMayNotDo(t *testing.T) {
	te := startEdge(t)
	accountA, accountB := schemas.NewID(schemas.PrefixAccount), schemas.NewID(schemas.PrefixAccount)
	te.Reserve(accountA, "*.apps.example.test")
	te.Reserve(accountB, "b.example.test")
	good := te.Credential(accountA, "bind:*.apps.example.test")

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
	open := te.agent(t, te.Credential(accountA))
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
	token := te.Credential(account)
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
	if resp, body := te.Get(t, host, "/"); resp.StatusCode != 200 || body != "up" {
		t.Fatalf("before the delete: %d %q", resp.StatusCode, body)
	}
	deleted := time.Now()
	credID := te.DeleteCredential(token)
	check.Eventually(t, 2*time.Second, "the endpoint gone", func() (int, bool) {
		resp, _ := te.Get(t, host, "/")
		return resp.StatusCode, resp.StatusCode == http.StatusNotFound
	})
	stops := check.Eventually(t, 2*time.Second-time.Since(deleted), "an agent_session_stop event", func() ([]map[string]any, bool) {
		stops := te.Events.OfKind(t, "agent_session_stop.v0")
		return stops, len(stops) == 1
	})
	if got := fmt.Sprint(dig(stops[0], "error")); !strings.Contains(got, credID) || !strings.Contains(got, "deleted") {
		t.Fatalf("the stop's error %q, want it to say credential %s was deleted", got, credID)
	}
}

func TestGoSDKServesHTTPSThroughTheEdge(t *testing.T) {
	te := startEdge(t)
	account := schemas.NewID(schemas.PrefixAccount)
	te.Reserve(account, "secure.example.test")
	a := te.agent(t, te.Credential(account))
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
		TLSClientConfig: &tls.Config{RootCAs: te.CA.Pool(), ServerName: "secure.example.test"},
	}}
	req, _ := http.NewRequest(http.MethodGet, "https://"+te.HTTPSAddr+"/", nil)
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
	req, _ = http.NewRequest(http.MethodGet, "https://"+te.HTTPSAddr+"/", nil)
	req.Host = "other.example.test"
	if resp, err := client.Do(req); err != nil || resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("a Host apart from the TLS server name: %v %v, want 421", resp.StatusCode, err)
	}
	// A name no endpoint serves gets no certificate.
	if c, err := tls.Dial("tcp", te.HTTPSAddr, &tls.Config{RootCAs: te.CA.Pool(), ServerName: "nobody.example.test"}); err == nil {
		c.Close()
		t.Fatal("a TLS handshake for a name no endpoint serves succeeded")
	}
	reqs := check.Eventually(t, 5*time.Second, "the request's event", func() ([]map[string]any, bool) {
		reqs := te.Events.OfKind(t, "http_request_complete.v0")
		return reqs, len(reqs) >= 1
	})
	if v, cs := dig(reqs[0], "tls", "version"), dig(reqs[0], "tls", "cipher_suite"); v != "TLSv1.3" || cs == "" || cs == nil {
		t.Fatalf("tls.version %v, tls.cipher_suite %v; want TLSv1.3 and a suite", v, cs)
	}
}
