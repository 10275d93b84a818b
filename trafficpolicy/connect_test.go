package trafficpolicy

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestOnTCPConnect: the rules of on_tcp_connect see the client's address
// and nothing of HTTP; restrict-ips and deny refuse a connection, and
// decisions and logs are told.
func TestOnTCPConnect(t *testing.T) {
	var decisions []Decision
	var logs []LogEntry
	p, err := Parse([]byte(`
on_tcp_connect:
  - name: office
    actions:
      - type: restrict-ips
        config: {allow: [10.0.0.0/8]}
  - name: audit
    actions: [{type: log, config: {metadata: {port: db}}}]
  - name: not this one
    expressions: ["conn.client_ip == '10.9.9.9'"]
    actions: [{type: deny}]
`), WithDecisions(func(_ *http.Request, d Decision) { decisions = append(decisions, d) }),
		WithLogs(func(_ *http.Request, e LogEntry) { logs = append(logs, e) }))
	if err != nil {
		t.Fatal(err)
	}
	if p.ConnectRules() != 3 {
		t.Fatalf("ConnectRules %d", p.ConnectRules())
	}
	for _, c := range []struct {
		addr    string
		allowed bool
		logs    int
	}{{"10.1.2.3:5000", true, 1}, {"192.0.2.1:5000", false, 0}, {"10.9.9.9:1", false, 1}} {
		decisions, logs = nil, nil
		if got := p.Connect(context.Background(), c.addr); got != c.allowed {
			t.Fatalf("%s: Connect %v, want %v", c.addr, got, c.allowed)
		}
		if len(decisions) != 1 || decisions[0].Module != "ip_policy" || len(logs) != c.logs {
			t.Fatalf("%s: decisions %+v, logs %+v", c.addr, decisions, logs)
		}
		if c.logs == 1 && (logs[0].Phase != "on_tcp_connect" || logs[0].Rule != "audit") {
			t.Fatalf("%s: log %+v", c.addr, logs[0])
		}
	}
	for _, bad := range []struct{ doc, want string }{
		{"on_tcp_connect:\n  - expressions: [\"req.method == 'GET'\"]\n    actions: [{type: deny}]\n", "undeclared reference to 'req'"},
		{"on_tcp_connect:\n  - actions: [{type: custom-response, config: {status_code: 200}}]\n", "does not run in on_tcp_connect"},
	} {
		if _, err := Parse([]byte(bad.doc)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.doc, err, bad.want)
		}
	}
}
