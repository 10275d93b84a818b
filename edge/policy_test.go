package edge_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.ngrok.com/ngrok/v2"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/schemas"
)

// endpointPolicy is the traffic policy the test's agent binds with: a
// deny, a custom response, a rate limit of two requests a minute per
// client, a log of every request, and a header on every answer.
const endpointPolicy = `
on_http_request:
  - name: no admin
    expressions: ["req.url.path.startsWith('/admin')"]
    actions:
      - type: deny
        config: {status_code: 404}
  - name: teapot
    expressions: ["req.url.path == '/tea'"]
    actions:
      - type: custom-response
        config: {status_code: 418, body: "short and stout"}
  - name: audit
    actions:
      - type: log
        config:
          metadata: {team: payments, reason: audit}
  - name: staff only
    expressions: ["req.url.path == '/staff'"]
    actions:
      - type: basic-auth
        config: {credentials: ["ann:correct-horse"]}
  - name: office
    expressions: ["req.url.path == '/office'"]
    actions:
      - type: restrict-ips
        config: {allow: [198.51.100.0/24]}
  - name: squeeze
    expressions: ["req.url.path == '/big'"]
    actions: [{type: compress-response}]
  - name: per client
    expressions: ["req.url.path == '/limited'"]
    actions:
      - type: rate-limit
        config: {name: two a minute, algorithm: sliding_window, capacity: 2, rate: 60s, bucket_key: ["conn.client_ip"]}
on_http_response:
  - actions:
      - type: custom-response
        config: {status_code: 299, body: "replaced"}
    expressions: ["res.status_code == 204"]
`

// TestEndpointTrafficPolicy: the Go SDK binds an endpoint with a traffic
// policy (its WithTrafficPolicy), and the edge runs it on each public
// request: it denies, answers itself, limits, replaces an answer, and
// what its log action logs lands in the request's event.
func TestEndpointTrafficPolicy(t *testing.T) {
	te := startEdge(t)
	account := schemas.NewID(schemas.PrefixAccount)
	a := te.agent(t, te.Credential(account))
	ln, err := a.Listen(t.Context(), ngrok.WithURL("http://"), ngrok.WithTrafficPolicy(endpointPolicy))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/big" {
				_, _ = io.WriteString(w, strings.Repeat("compress me ", 1000))
				return
			}
			if r.URL.Path == "/empty" {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			_, _ = io.WriteString(w, "upstream "+r.URL.Path)
		}))
	}()
	host := ln.URL().Hostname()
	for _, c := range []struct {
		path   string
		status int
		body   string
	}{
		{"/hello", 200, "upstream /hello"},
		{"/admin/users", 404, ""},
		{"/tea", 418, "short and stout"},
		{"/empty", 299, "replaced"},
		{"/limited", 200, "upstream /limited"},
		{"/limited", 200, "upstream /limited"},
		{"/limited", 429, ""},
		{"/staff", 401, ""},
		{"/big", 200, strings.Repeat("compress me ", 1000)},
		{"/office", 403, ""},
	} {
		resp, body := te.Get(t, host, c.path)
		if resp.StatusCode != c.status || c.body != "" && body != c.body {
			t.Fatalf("GET %s: %d %q, want %d %q", c.path, resp.StatusCode, body, c.status, c.body)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+te.HTTPAddr+"/staff", nil)
	req.Host = host
	req.SetBasicAuth("ann", "correct-horse")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /staff as ann: %d", resp.StatusCode)
	}
	evs := check.Eventually(t, 5*time.Second, "the requests' events", func() ([]map[string]any, bool) {
		evs := te.Events.OfKind(t, "http_request_complete.v0")
		return evs, len(evs) == 11
	})
	statuses := map[string][]float64{}
	for _, ev := range evs {
		path := dig(ev, "http", "request", "url", "path").(string)
		statuses[path] = append(statuses[path], dig(ev, "http", "response", "status_code").(float64))
		logs := dig(ev, "traffic_policy", "logs").([]any)
		// The log rule runs after deny and custom-response, which end
		// the phase for their requests.
		wantLogs := 1
		if path == "/admin/users" || path == "/tea" {
			wantLogs = 0
		}
		if len(logs) != wantLogs {
			t.Fatalf("%s: traffic_policy.logs %v, want %d entries", path, logs, wantLogs)
		}
		if wantLogs == 1 {
			entry := logs[0].(map[string]any)
			if entry["rule"] != "audit" || entry["phase"] != "on_http_request" || dig(entry, "metadata", "team") != "payments" {
				t.Fatalf("%s: the log entry %v", path, entry)
			}
		}
	}
	if s := statuses["/empty"]; len(s) != 1 || s[0] != 299 {
		t.Fatalf("the replaced answer's event says %v, want 299", s)
	}
	if s := statuses["/admin/users"]; len(s) != 1 || s[0] != 404 {
		t.Fatalf("the denied request's event says %v, want 404", s)
	}
	for _, ev := range evs {
		path := dig(ev, "http", "request", "url", "path").(string)
		wantAuth, wantIP := "invalid", "invalid"
		switch path {
		case "/staff":
			wantAuth = "block"
			if dig(ev, "http", "response", "status_code") == 200.0 {
				wantAuth = "allow"
				if got := dig(ev, "basic_auth", "username"); got != "ann" {
					t.Errorf("basic_auth.username %v, want ann", got)
				}
			}
		case "/office":
			wantIP = "block"
		}
		if got := dig(ev, "basic_auth", "decision"); got != wantAuth {
			t.Errorf("%s: basic_auth.decision %v, want %s", path, got, wantAuth)
		}
		wantCompression := "none"
		if path == "/big" {
			wantCompression = "gzip"
			if saved, _ := dig(ev, "compression", "bytes_saved").(float64); saved < 10000 {
				t.Errorf("compression.bytes_saved %v of 12000", saved)
			}
		}
		if got := dig(ev, "compression", "algorithm"); got != wantCompression {
			t.Errorf("%s: compression.algorithm %v, want %s", path, got, wantCompression)
		}
		if got := dig(ev, "ip_policy", "decision"); got != wantIP {
			t.Errorf("%s: ip_policy.decision %v, want %s", path, got, wantIP)
		}
	}
}

// TestBadEndpointPolicyIsRefused: a policy the edge cannot run refuses
// the bind, saying where it is wrong.
func TestBadEndpointPolicyIsRefused(t *testing.T) {
	te := startEdge(t)
	a := te.agent(t, te.Credential(schemas.NewID(schemas.PrefixAccount)))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := a.Listen(ctx, ngrok.WithURL("http://"), ngrok.WithTrafficPolicy("on_http_request:\n  - actions:\n      - type: teleport\n"))
	if err == nil || !strings.Contains(err.Error(), "ERR_SLUICE_622") || !strings.Contains(err.Error(), "teleport") {
		t.Fatalf("Listen with a bad policy: %v, want the edge's refusal naming the action", err)
	}
}

// TestTCPEndpointPolicy: a TCP endpoint's on_tcp_connect runs as each
// connection comes: restrict-ips refuses a client outside its list
// before a byte passes, and the connection's event says so, with what
// the log action logged.
func TestTCPEndpointPolicy(t *testing.T) {
	for _, c := range []struct {
		name, allow, decision string
		passes                bool
	}{{"allowed", "127.0.0.0/8", "allow", true}, {"refused", "192.0.2.0/24", "block", false}} {
		t.Run(c.name, func(t *testing.T) {
			te := startEdge(t)
			a := te.agent(t, te.Credential(schemas.NewID(schemas.PrefixAccount)))
			policy := "on_tcp_connect:\n  - name: audit\n    actions: [{type: log, config: {metadata: {db: main}}}]\n  - name: office\n    actions: [{type: restrict-ips, config: {allow: [" + c.allow + "]}}]\n"
			ln, err := a.Listen(t.Context(), ngrok.WithURL("tcp://"), ngrok.WithTrafficPolicy(policy))
			if err != nil {
				t.Fatalf("Listen: %v", err)
			}
			go func() {
				for {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					_, _ = conn.Write([]byte("hello"))
					_ = conn.Close()
				}
			}()
			conn, err := net.Dial("tcp", strings.TrimPrefix(ln.URL().String(), "tcp://"))
			if err != nil {
				t.Fatal(err)
			}
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			got, _ := io.ReadAll(conn)
			conn.Close()
			if (string(got) == "hello") != c.passes {
				t.Fatalf("read %q through the endpoint; passes %v", got, c.passes)
			}
			ev := check.Eventually(t, 5*time.Second, "the connection's event", func() ([]map[string]any, bool) {
				evs := te.Events.OfKind(t, "tcp_connection_closed.v0")
				return evs, len(evs) == 1
			})[0]
			logs := dig(ev, "traffic_policy", "logs").([]any)
			if got := dig(ev, "ip_policy", "decision"); got != c.decision || len(logs) != 1 || dig(logs[0].(map[string]any), "metadata", "db") != "main" {
				t.Fatalf("ip_policy.decision %v, logs %v", got, logs)
			}
		})
	}
}

// TestEndpointPolicyPhasesMatchTheProtocol: an HTTP endpoint's policy
// has no on_tcp_connect rules, and a TCP endpoint's only those.
func TestEndpointPolicyPhasesMatchTheProtocol(t *testing.T) {
	te := startEdge(t)
	a := te.agent(t, te.Credential(schemas.NewID(schemas.PrefixAccount)))
	for _, c := range []struct{ url, policy, want string }{
		{"http://", "on_tcp_connect: [{actions: [{type: deny}]}]", "on_tcp_connect is for TCP endpoints"},
		{"tcp://", "on_http_request: [{actions: [{type: deny}]}]", "runs on_tcp_connect only"},
	} {
		_, err := a.Listen(t.Context(), ngrok.WithURL(c.url), ngrok.WithTrafficPolicy(c.policy))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with %q: %v, want %q", c.url, c.policy, err, c.want)
		}
	}
}
