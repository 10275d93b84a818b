package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.ngrok.com/ngrok/v2"

	"github.com/sluicehq/sluice/internal/agenttest"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/pipeline"
)

// TestServeDevEdgeEndToEnd runs sluice serve --dev with its edge, and
// the Go agent SDK, unchanged, against it: a credential limited to a
// wildcard the account reserved opens an HTTP endpoint and a TCP one;
// the public requests reach the agent's server and the bytes go both
// ways; the traffic and session events are delivered to a destination
// of the account with the fields the edge knows; a bind outside the ACL,
// a domain another account reserved and a bad token are refused; and
// deleting the credential ends the session.
func TestServeDevEdgeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve --dev")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	const token = "sk_serve_dev_edge_0123456789abcdef"
	dataDir := t.TempDir()
	p := startServe(t, bin, dataDir, "SLUICE_BOOTSTRAP_API_KEY="+token, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0")
	p.waitLog(t, "the edge is serving")
	agents := strings.TrimPrefix(p.logAttr(t, "the edge is serving", "agents"), "tls://")
	public := strings.TrimPrefix(p.logAttr(t, "the edge is serving", "http"), "http://")
	caFile := p.logAttr(t, "the edge is serving", "agents_ca")
	if caFile != filepath.Join(dataDir, "edge", "ca.pem") {
		t.Fatalf("agents_ca %q, want <data-dir>/edge/ca.pem", caFile)
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("%s holds no certificate", caFile)
	}

	// The account's destination of the edge's events, its wildcard and
	// a credential that may bind only under it.
	dest := createID(t, p.url+"/event_destinations", token,
		`{"target": {"kinesis": {"stream_arn": "arn:aws:kinesis:eu-west-1:123456789012:stream/edge", "auth": {"role": {"role_arn": "arn:aws:iam::123456789012:role/sluice"}}}}}`)
	createID(t, p.url+"/event_subscriptions", token,
		`{"sources": [{"type": "http_request_complete.v0"}, {"type": "tcp_connection_closed.v0"}, {"type": "agent_session_start.v0"}, {"type": "agent_session_stop.v0"}], "destination_ids": ["`+dest+`"]}`)
	createID(t, p.url+"/reserved_domains", token, `{"domain": "*.apps.example.test"}`)
	status, body := request(t, http.MethodPost, p.url+"/credentials", token, `{"description": "edge test", "acl": ["bind:*.apps.example.test"]}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the credential: %d %s", status, body)
	}
	var cred struct{ ID, Token string }
	if err := json.Unmarshal([]byte(body), &cred); err != nil || cred.Token == "" {
		t.Fatalf("the credential's answer %s: %v", body, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The agent connects once: the credential's delete below ends its
	// session, and its reconnects are kept off the edge (see
	// agenttest.OneConnection).
	agent, err := ngrok.NewAgent(ngrok.WithAuthtoken(cred.Token), ngrok.WithAgentConnectURL(agents), ngrok.WithAgentConnectCAs(pool),
		agenttest.DialOnce(t))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Disconnect()
	ln, err := agent.Listen(ctx, ngrok.WithURL("http://demo.apps.example.test"))
	if err != nil {
		t.Fatalf("binding http://demo.apps.example.test: %v", err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "%s %s %d", r.Method, r.URL.Path, len(body))
		}))
	}()
	req, _ := http.NewRequest(http.MethodPost, "http://"+public+"/orders?id=7", strings.NewReader("twelve bytes"))
	req.Host = "demo.apps.example.test"
	req.Header.Set("User-Agent", "edge-e2e/1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(answer) != "POST /orders 12" {
		t.Fatalf("through the edge: %d %q, want 200 \"POST /orders 12\"", resp.StatusCode, answer)
	}

	// TCP, with a credential without an ACL.
	status, body = request(t, http.MethodPost, p.url+"/credentials", token, `{"description": "edge test, tcp"}`)
	var open struct{ Token string }
	if status != http.StatusCreated || json.Unmarshal([]byte(body), &open) != nil {
		t.Fatalf("creating the second credential: %d %s", status, body)
	}
	tcpAgent, err := ngrok.NewAgent(ngrok.WithAuthtoken(open.Token), ngrok.WithAgentConnectURL(agents), ngrok.WithAgentConnectCAs(pool))
	if err != nil {
		t.Fatal(err)
	}
	defer tcpAgent.Disconnect()
	tcp, err := tcpAgent.Listen(ctx, ngrok.WithURL("tcp://"))
	if err != nil {
		t.Fatalf("binding a TCP endpoint: %v", err)
	}
	go func() {
		c, err := tcp.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		_, _ = c.Write(append([]byte("echo:"), b...))
	}()
	conn, err := net.Dial("tcp", strings.TrimPrefix(tcp.URL().String(), "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = conn.Write([]byte("0123456789"))
	_ = conn.(*net.TCPConn).CloseWrite()
	echoed, _ := io.ReadAll(conn)
	conn.Close()
	if string(echoed) != "echo:0123456789" {
		t.Fatalf("through the TCP endpoint: %q", echoed)
	}

	// What the edge made, through the API: two sessions, two endpoints.
	status, body = request(t, http.MethodGet, p.url+"/endpoints", token, "")
	var eps struct {
		Endpoints []struct {
			ID, URL, Proto string
			Domain         *struct{ ID string }
			TunnelSession  struct{ ID string } `json:"tunnel_session"`
		}
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &eps) != nil || len(eps.Endpoints) != 2 {
		t.Fatalf("GET /endpoints: %d %s, want the two endpoints", status, body)
	}
	tcpSession := ""
	for _, ep := range eps.Endpoints {
		switch ep.Proto {
		case "http":
			if ep.URL != "http://demo.apps.example.test:"+portOfAddr(public) || ep.Domain == nil {
				t.Errorf("the HTTP endpoint %+v, want its URL and its reserved domain", ep)
			}
		case "tcp":
			tcpSession = ep.TunnelSession.ID
		}
	}
	status, body = request(t, http.MethodGet, p.url+"/tunnel_sessions", token, "")
	if status != http.StatusOK || strings.Count(body, `"transport":"muxado"`) != 2 || !strings.Contains(body, cred.ID) {
		t.Errorf("GET /tunnel_sessions: %d %s, want the two sessions, one of credential %s", status, body, cred.ID)
	}
	// Stopping the TCP agent's session through the API ends it.
	if status, body := request(t, http.MethodPost, p.url+"/tunnel_sessions/"+tcpSession+"/stop", token, ""); status != http.StatusNoContent {
		t.Fatalf("POST /tunnel_sessions/%s/stop: %d %s", tcpSession, status, body)
	}
	check.Eventually(t, 2*time.Second, "the stopped session's TCP endpoint closed", func() (string, bool) {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(tcp.URL().String(), "tcp://"), time.Second)
		if err != nil {
			return err.Error(), true
		}
		c.Close()
		return "still accepting", false
	})

	// Refusals, each with what is wrong.
	for _, tc := range []struct{ url, want string }{
		{"http://demo.elsewhere.test", "ACL does not let it bind demo.elsewhere.test"},
	} {
		if _, err := agent.Listen(ctx, ngrok.WithURL(tc.url)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("binding %s: %v, want %q", tc.url, err, tc.want)
		}
	}
	bad, _ := ngrok.NewAgent(ngrok.WithAuthtoken("ct_not_a_token"), ngrok.WithAgentConnectURL(agents), ngrok.WithAgentConnectCAs(pool))
	badCtx, badCancel := context.WithTimeout(ctx, 3*time.Second)
	if err := bad.Connect(badCtx); err == nil || !strings.Contains(err.Error(), "authtoken is not valid") {
		t.Errorf("a bad token: %v, want it refused", err)
	}
	badCancel()

	// The events, delivered.
	type delivered struct{ byKind map[string][]map[string]any }
	got := check.Eventually(t, 60*time.Second, "the edge's events delivered", func() (delivered, bool) {
		out, _ := tailWithoutAWS(t, bin, p.url, token, dest, "--since", "5m", "--follow=false", "--json")
		d := delivered{byKind: map[string][]map[string]any{}}
		for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
			var ev struct {
				Type   string         `json:"event_type"`
				Object map[string]any `json:"object"`
			}
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Type != "" {
				d.byKind[ev.Type] = append(d.byKind[ev.Type], ev.Object)
			}
		}
		return d, len(d.byKind["http_request_complete.v0"]) >= 1 && len(d.byKind["tcp_connection_closed.v0"]) >= 1 && len(d.byKind["agent_session_start.v0"]) >= 1
	})
	httpEv := got.byKind["http_request_complete.v0"][0]
	for path, want := range map[string]any{
		"http.request.method":       "post",
		"http.request.url.path":     "/orders",
		"http.request.url.query":    "id=7",
		"http.request.body_length":  float64(12),
		"http.request.user_agent":   "edge-e2e/1",
		"http.response.status_code": float64(200),
		"http.response.body_length": float64(len("POST /orders 12")),
		"conn.server_name":          "demo.apps.example.test",
		"conn.client_ip":            "127.0.0.1",
		"backend.connection_reused": false,
		"ip_policy.decision":        "invalid",
	} {
		if v := digPath(httpEv, path); v != want {
			t.Errorf("http_request_complete.v0 %s = %v, want %v", path, v, want)
		}
	}
	tcpEv := got.byKind["tcp_connection_closed.v0"][0]
	if in, out := digPath(tcpEv, "conn.bytes_in"), digPath(tcpEv, "conn.bytes_out"); in != float64(10) || out != float64(15) {
		t.Errorf("tcp_connection_closed.v0 bytes in %v out %v, want 10 and 15", in, out)
	}
	start := got.byKind["agent_session_start.v0"][0]
	if digPath(start, "transport") != "muxado" || digPath(start, "credential.id") != cred.ID || digPath(start, "error") != "" {
		t.Errorf("agent_session_start.v0 %v, want transport muxado, credential %s, no error", start, cred.ID)
	}

	// Deleting the credential ends the session within two seconds.
	if status, body := request(t, http.MethodDelete, p.url+"/credentials/"+cred.ID, token, ""); status != http.StatusNoContent {
		t.Fatalf("deleting the credential: %d %s", status, body)
	}
	deleted := time.Now()
	check.Eventually(t, 2*time.Second, "the endpoint gone after the credential's delete", func() (int, bool) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+public+"/", nil)
		req.Host = "demo.apps.example.test"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, false
		}
		resp.Body.Close()
		return resp.StatusCode, resp.StatusCode == http.StatusNotFound
	})
	t.Logf("the endpoint was gone %v after the credential's delete", time.Since(deleted))
}

// createID posts body and returns the id of what was created.
func createID(t *testing.T, url, token, body string) string {
	t.Helper()
	status, answer := request(t, http.MethodPost, url, token, body)
	if status != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", url, status, answer)
	}
	var v struct{ ID string }
	if err := json.Unmarshal([]byte(answer), &v); err != nil || v.ID == "" {
		t.Fatalf("POST %s answered %s", url, answer)
	}
	return v.ID
}

// digPath returns the value at a dotted path of nested objects.
func digPath(m map[string]any, path string) any {
	var v any = m
	for p := range strings.SplitSeq(path, ".") {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[p]
	}
	return v
}

// TestServeDevEdgeSurvivesKill runs serve --dev with its edge on fixed
// ports, sends requests through an agent of the Go SDK until the edge
// has published their events, kills serve with SIGKILL, and starts it
// again on the same data dir and ports: the agent reconnects by itself
// and traffic resumes, and every event published before the kill is
// delivered. The route's consumer is paused until after the restart, so
// that the events are in JetStream, not delivered, when the process dies:
// the dev emulator, in the killed process, saves what it was given up to
// a second late (docs/emulator.md), and would lose records delivered just
// before the kill, which sluice never sends again. (The redelivery of
// events a killed process held is TestServeCrashLosesNothing's, against
// kinesalite, which outlives the kill.)
func TestServeDevEdgeSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve --dev")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	const token = "sk_serve_dev_edge_kill_0123456789ab"
	dataDir := t.TempDir()
	ports := freePorts(t, 2)
	env := []string{"SLUICE_BOOTSTRAP_API_KEY=" + token, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0",
		fmt.Sprintf("SLUICE_EDGE_AGENTS=127.0.0.1:%d", ports[0]), fmt.Sprintf("SLUICE_EDGE_HTTP=127.0.0.1:%d", ports[1]),
		"SLUICE_NATS_LISTEN=127.0.0.1:0"}
	p := startServe(t, bin, dataDir, env...)
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(filepath.Join(dataDir, "edge", "ca.pem"))
	if err != nil || !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("the dev CA: %v", err)
	}
	dest := createID(t, p.url+"/event_destinations", token,
		`{"target": {"kinesis": {"stream_arn": "arn:aws:kinesis:eu-west-1:123456789012:stream/edge-kill", "auth": {"role": {"role_arn": "arn:aws:iam::123456789012:role/sluice"}}}}}`)
	sub := createID(t, p.url+"/event_subscriptions", token, `{"sources": [{"type": "http_request_complete.v0"}], "destination_ids": ["`+dest+`"]}`)
	p.waitLog(t, "route delivering")
	route := watchRouteConsumer(t, p, pipeline.ConsumerName(sub, dest))
	route.pause(t, time.Now().Add(10*time.Minute))
	createID(t, p.url+"/reserved_domains", token, `{"domain": "kill.example.test"}`)
	status, body := request(t, http.MethodPost, p.url+"/credentials", token, `{"description": "kill test"}`)
	var cred struct{ Token string }
	if status != http.StatusCreated || json.Unmarshal([]byte(body), &cred) != nil {
		t.Fatalf("creating the credential: %d %s", status, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	agent, err := ngrok.NewAgent(ngrok.WithAuthtoken(cred.Token), ngrok.WithAgentConnectURL(fmt.Sprintf("127.0.0.1:%d", ports[0])), ngrok.WithAgentConnectCAs(pool))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Disconnect()
	ln, err := agent.Listen(ctx, ngrok.WithURL("http://kill.example.test"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.URL.Path) }))
	}()
	get := func(path string) (int, error) {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", ports[1], path), nil)
		req.Host = "kill.example.test"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.ReadAll(resp.Body)
		return resp.StatusCode, nil
	}
	const before = 50
	for i := range before {
		if code, err := get(fmt.Sprintf("/before/%d", i)); code != 200 {
			t.Fatalf("request %d before the kill: %d %v", i, code, err)
		}
	}
	// The requests' events and the session's start.
	check.Eventually(t, 30*time.Second, "the edge's events published", func() (string, bool) {
		_, metrics := request(t, http.MethodGet, p.metricsURL+"/metrics", "", "")
		n := metricLine(metrics, "sluice_edge_events_published_total")
		return n, n == fmt.Sprint(before+1)
	})
	if info, err := route.info(); err != nil || info.Delivered.Consumer != 0 {
		t.Fatalf("before the kill, the paused route's consumer is %+v (%v); want nothing handed out", info, err)
	}
	p.kill(t)
	route.close()
	p = startServe(t, bin, dataDir, env...)
	route = watchRouteConsumer(t, p, route.name)
	route.resume(t)
	route.close()
	check.Eventually(t, 90*time.Second, "traffic through the reconnected agent", func() (int, bool) {
		code, _ := get("/after")
		return code, code == 200
	})
	delivered := check.Eventually(t, 90*time.Second, "every event published before the kill delivered", func() (int, bool) {
		out, _ := tailWithoutAWS(t, bin, p.url, token, dest, "--since", "10m", "--follow=false", "--json")
		seen := map[string]bool{}
		for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
			var ev struct {
				Object map[string]any `json:"object"`
			}
			if json.Unmarshal([]byte(line), &ev) == nil {
				if path, _ := digPath(ev.Object, "http.request.url.path").(string); strings.HasPrefix(path, "/before/") {
					seen[path] = true
				}
			}
		}
		return len(seen), len(seen) == before
	})
	t.Logf("%d events published before the kill, %d delivered", before, delivered)
}

// metricLine returns the value of an unlabelled metric in a /metrics
// answer, or "".
func metricLine(metrics, name string) string {
	for line := range strings.SplitSeq(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// portOfAddr is the port of host:port.
func portOfAddr(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}
