package filters

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// event is the filterable fields of a test event; an empty string or zero
// port is a missing field.
type event struct {
	clientIP, serverIP, serverName string
	serverPort                     int64
}

// fill sets the fields of ev in f.
func (ev event) fill(t testing.TB, f *Fields) {
	t.Helper()
	f.Reset()
	for path, v := range map[string]string{
		"conn.client_ip":   ev.clientIP,
		"conn.server_ip":   ev.serverIP,
		"conn.server_name": ev.serverName,
	} {
		if v == "" {
			continue
		}
		if err := f.SetString(path, v); err != nil {
			t.Fatalf("SetString(%s): %v", path, err)
		}
	}
	if ev.serverPort != 0 {
		if err := f.SetInt("conn.server_port", ev.serverPort); err != nil {
			t.Fatalf("SetInt: %v", err)
		}
	}
}

func TestMatch(t *testing.T) {
	env := newTestEnv(t)
	api := event{clientIP: "203.0.113.7", serverIP: "192.0.2.10", serverName: "api.example.com", serverPort: 443}
	tests := []struct {
		name, expr string
		ev         event
		want       bool
	}{
		{"port matches", `ev.conn.server_port == 443`, api, true},
		{"port differs", `ev.conn.server_port == 443`, event{serverPort: 80}, false},
		{"prefix", `ev.conn.client_ip.startsWith("10.")`, event{clientIP: "10.1.2.3"}, true},
		{"prefix differs", `ev.conn.client_ip.startsWith("10.")`, api, false},
		{"cidr and suffix", `inCIDR(ev.conn.client_ip, "203.0.113.0/24") && ev.conn.server_name.endsWith(".example.com")`, api, true},
		{"cidr outside", `inCIDR(ev.conn.client_ip, "203.0.113.0/24")`, event{clientIP: "198.51.100.1"}, false},
		{"cidr IPv6", `inCIDR(ev.conn.client_ip, "2001:db8::/32")`, event{clientIP: "2001:db8::1"}, true},
		{"cidr IPv4-mapped", `inCIDR(ev.conn.client_ip, "203.0.113.0/24")`, event{clientIP: "::ffff:203.0.113.9"}, true},
		{"cidr IPv6 with zone", `inCIDR(ev.conn.client_ip, "fe80::/10")`, event{clientIP: "fe80::1%eth0"}, true},
		{"cidr v4 address, v6 range", `inCIDR(ev.conn.client_ip, "2001:db8::/32")`, api, false},
		{"cidr not an address", `inCIDR(ev.conn.client_ip, "0.0.0.0/0")`, event{clientIP: "not an ip"}, false},
		{"regex", `ev.conn.server_name.matches("^api[.]")`, api, true},
		{"regex differs", `ev.conn.server_name.matches("^api[.]")`, event{serverName: "www.example.com"}, false},
		{"list", `ev.conn.server_port in [80, 443]`, api, true},
		{"allow-list", `["198.51.100.0/24", "203.0.113.0/24"].exists(c, inCIDR(ev.conn.client_ip, c))`, api, true},
		{"missing string is empty", `ev.conn.server_name == ""`, event{serverPort: 443}, true},
		{"missing int is zero", `ev.conn.server_port == 0`, event{clientIP: "203.0.113.7"}, true},
		{"missing ip is in no range", `inCIDR(ev.conn.client_ip, "0.0.0.0/0")`, event{}, false},
		{"missing field negated", `!ev.conn.server_name.endsWith(".example.com")`, event{}, true},
		{"server ip", `ev.conn.server_ip == "192.0.2.10"`, api, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustCompile(t, env, httpKind, tt.expr)
			f := p.NewFields()
			tt.ev.fill(t, f)
			got, err := p.Match(t.Context(), f)
			if err != nil {
				t.Fatalf("Match: %v", err)
			}
			if got != tt.want {
				t.Errorf("Match(%+v) = %v, want %v", tt.ev, got, tt.want)
			}
		})
	}
}

func TestMatchReusesFields(t *testing.T) {
	env := newTestEnv(t)
	p := mustCompile(t, env, httpKind, `ev.conn.server_name == ""`)
	f := p.NewFields()
	event{serverName: "api.example.com"}.fill(t, f)
	if got, _ := p.Match(t.Context(), f); got {
		t.Fatalf("Match with a server name = true")
	}
	event{}.fill(t, f) // Reset: the server name is missing again
	if got, _ := p.Match(t.Context(), f); !got {
		t.Fatalf("Match after Reset = false, want the missing field to be empty")
	}
}

func TestMatchNilFields(t *testing.T) {
	env := newTestEnv(t)
	p := mustCompile(t, env, httpKind, `ev.conn.server_port == 0 && ev.conn.client_ip == ""`)
	if got, err := p.Match(t.Context(), nil); err != nil || !got {
		t.Fatalf("Match(nil) = %v, %v; want true: every field missing", got, err)
	}
}

func TestMatchFieldsOfAnotherKind(t *testing.T) {
	env := newTestEnv(t)
	p := mustCompile(t, env, httpKind, `ev.conn.server_port == 0`)
	f, err := env.NewFields(tcpKind)
	if err != nil {
		t.Fatalf("NewFields: %v", err)
	}
	if f.Kind() != tcpKind {
		t.Errorf("Kind() = %s", f.Kind())
	}
	if _, err := p.Match(t.Context(), f); err == nil {
		t.Fatal("Match with fields of tcp_connection_closed.v0 succeeded")
	}
}

func TestMatchRuntimeErrors(t *testing.T) {
	env := newTestEnv(t)
	tests := []struct {
		name, expr string
		ev         event
		want       error  // sentinel, or nil for any error
		msg        string // substring of the message
	}{
		{"division by zero", `100 / ev.conn.server_port == 1`, event{}, nil, "division by zero"},
		{"CIDR computed at run time", `inCIDR(ev.conn.client_ip, ev.conn.server_name)`,
			event{clientIP: "203.0.113.7", serverName: "api.example.com"}, nil, `invalid CIDR range "api.example.com"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustCompile(t, env, httpKind, tt.expr)
			f := p.NewFields()
			tt.ev.fill(t, f)
			got, err := p.Match(t.Context(), f)
			if err == nil {
				t.Fatalf("Match = %v, want an error", got)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v does not match %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
		})
	}
}

func TestFieldsSetErrors(t *testing.T) {
	env := newTestEnv(t)
	f, err := env.NewFields(httpKind)
	if err != nil {
		t.Fatalf("NewFields: %v", err)
	}
	tests := []struct {
		name string
		set  func() error
		want error
	}{
		{"not filterable", func() error { return f.SetString("http.request.method", "get") }, ErrNotFilterable},
		{"unknown", func() error { return f.SetString("conn.nope", "x") }, ErrNotFilterable},
		{"int into a string", func() error { return f.SetInt("conn.client_ip", 1) }, ErrFieldType},
		{"string into an int", func() error { return f.SetString("conn.server_port", "443") }, ErrFieldType},
		{"uint into an int", func() error { return f.SetUint("conn.server_port", 443) }, ErrFieldType},
		{"bool", func() error { return f.SetBool("conn.server_name", true) }, ErrFieldType},
		{"double", func() error { return f.SetDouble("conn.server_name", 1) }, ErrFieldType},
		{"timestamp", func() error { return f.SetTimestamp("conn.server_name", time.Now()) }, ErrFieldType},
		{"host name over its maximum", func() error { return f.SetString("conn.server_name", strings.Repeat("a", 254)) }, ErrFieldTooLong},
		{"IP over its maximum", func() error { return f.SetString("conn.client_ip", strings.Repeat("1", 46)) }, ErrFieldTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.set(); !errors.Is(err, tt.want) {
				t.Errorf("error = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := env.NewFields("api_key_created.v0"); !errors.Is(err, ErrNotTraffic) {
		t.Errorf("NewFields(audit kind) error = %v, want ErrNotTraffic", err)
	}
}

func TestMatchCancelledContext(t *testing.T) {
	env := newTestEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, expr := range []string{
		`ev.conn.server_port == 0`,
		`[1, 2, 3].exists(x, x == ev.conn.server_port)`,
	} {
		p := mustCompile(t, env, httpKind, expr)
		if _, err := p.Match(ctx, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("Match(%q) with a cancelled context: error = %v, want context.Canceled", expr, err)
		}
	}
}

func TestMatchDeadlineStopsLoop(t *testing.T) {
	env := newTestEnv(t)
	// About 60,000 cost units, several milliseconds of looping.
	p := mustCompile(t, env, httpKind, zeros(100)+`.all(x, `+zeros(100)+`.all(y, x == y + ev.conn.server_port))`)
	// expiresDuringEval is not done when Match first looks, and done as soon
	// as evaluation starts, so only CEL's interrupt checks in the loop can
	// stop it.
	ctx := &expiresDuringEval{Context: t.Context(), done: make(chan struct{})}
	close(ctx.done)
	_, err := p.Match(ctx, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Match: error = %v, want context.DeadlineExceeded from an interrupted loop", err)
	}
	if !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("error %q does not say the evaluation was interrupted", err)
	}
}

// expiresDuringEval is a context whose Err is nil the first time it is
// asked and context.DeadlineExceeded after, and whose Done is closed.
type expiresDuringEval struct {
	context.Context
	done  chan struct{}
	asked atomic.Bool
}

func (c *expiresDuringEval) Done() <-chan struct{} { return c.done }

func (c *expiresDuringEval) Err() error {
	if c.asked.Swap(true) {
		return context.DeadlineExceeded
	}
	return nil
}
