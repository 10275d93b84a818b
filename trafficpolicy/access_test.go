package trafficpolicy

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestRestrictIPs: deny wins over allow, an allow list lets only its
// ranges through, and enforce false decides without blocking; each
// decision is told.
func TestRestrictIPs(t *testing.T) {
	for _, c := range []struct {
		name, config, client string
		status               int
		allowed              bool
	}{
		{"in allow", "{allow: [203.0.113.0/24]}", "203.0.113.9:5000", 200, true},
		{"outside allow", "{allow: [203.0.113.0/24]}", "198.51.100.1:5000", 403, false},
		{"denied within allow", "{allow: [203.0.113.0/24], deny: [203.0.113.9]}", "203.0.113.9:5000", 403, false},
		{"deny only", "{deny: ['2001:db8::/32']}", "[2001:db8::1]:443", 403, false},
		{"deny only, other", "{deny: ['2001:db8::/32']}", "[2001:db9::1]:443", 200, true},
		{"mapped IPv4", "{allow: [203.0.113.0/24]}", "[::ffff:203.0.113.7]:1", 200, true},
		{"not enforced", "{allow: [203.0.113.0/24], enforce: false}", "198.51.100.1:5000", 200, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []Decision
			p, err := Parse([]byte("on_http_request:\n  - actions:\n      - type: restrict-ips\n        config: "+c.config+"\n"),
				WithDecisions(func(_ *http.Request, d Decision) { got = append(got, d) }))
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = c.client
			p.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})).ServeHTTP(w, r)
			if w.Code != c.status || len(got) != 1 || got[0].Module != "ip_policy" || got[0].Allowed != c.allowed {
				t.Fatalf("status %d, decisions %+v; want %d and allowed %v", w.Code, got, c.status, c.allowed)
			}
		})
	}
}

// TestBasicAuth: one of the credentials lets a request through; none, or
// a wrong one, gets 401 with the realm; the decision and the username
// are told, and the password never kept.
func TestBasicAuth(t *testing.T) {
	var got []Decision
	p, err := Parse([]byte(`
on_http_request:
  - actions:
      - type: basic-auth
        config: {credentials: ["ann:correct-horse", "bob:battery-staple"], realm: staff}
`), WithDecisions(func(_ *http.Request, d Decision) { got = append(got, d) }))
	if err != nil {
		t.Fatal(err)
	}
	h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	for _, c := range []struct {
		user, pass string
		status     int
	}{{"ann", "correct-horse", 200}, {"bob", "battery-staple", 200}, {"ann", "battery-staple", 401}, {"", "", 401}} {
		got = nil
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if c.user != "" {
			r.SetBasicAuth(c.user, c.pass)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.status || len(got) != 1 || got[0].Module != "basic_auth" || got[0].Allowed != (c.status == 200) || got[0].Username != c.user {
			t.Fatalf("%s: status %d, decisions %+v", c.user, w.Code, got)
		}
		if c.status == 401 && w.Header().Get("WWW-Authenticate") != `Basic realm="staff", charset="UTF-8"` {
			t.Fatalf("the challenge: %q", w.Header().Get("WWW-Authenticate"))
		}
	}
}

// TestAccessActionsRefuseBadConfigs: each mistake is named where it is.
func TestAccessActionsRefuseBadConfigs(t *testing.T) {
	for _, c := range []struct{ config, want string }{
		{"type: restrict-ips\n        config: {allow: [not-an-ip]}", "not an IP address or CIDR range"},
		{"type: restrict-ips\n        config: {}", "allow"},
		{"type: restrict-ips\n        config: {allow: [10.0.0.0/8], enforce: maybe}", "true or false"},
		{"type: basic-auth\n        config: {credentials: [\"ann:short\"]}", "8 to 128"},
		{"type: basic-auth\n        config: {credentials: [\"ann:long-enough\"], realm: 'a\"b'}", "without quotes"},
	} {
		_, err := Parse([]byte("on_http_request:\n  - actions:\n      - " + c.config + "\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.config, err, c.want)
		}
	}
	if _, err := Parse([]byte("on_http_response:\n  - actions:\n      - type: basic-auth\n        config: {credentials: [\"ann:long-enough\"]}\n")); err == nil {
		t.Error("basic-auth in on_http_response: no error")
	}
}

// BenchmarkRestrictIPs is restrict-ips' cost a request, with 64 ranges.
func BenchmarkRestrictIPs(b *testing.B) {
	var ranges []string
	for i := range 64 {
		ranges = append(ranges, "10."+strconv.Itoa(i)+".0.0/16")
	}
	p, err := Parse([]byte("on_http_request:\n  - actions: [{type: restrict-ips, config: {allow: [" + strings.Join(ranges, ", ") + "]}}]\n"))
	if err != nil {
		b.Fatal(err)
	}
	benchPolicy(b, p, func(r *http.Request) { r.RemoteAddr = "10.63.1.2:5000" })
}

// BenchmarkBasicAuth is basic-auth's cost a request: a SHA-256 of the
// credentials given, compared with each of 4.
func BenchmarkBasicAuth(b *testing.B) {
	p, err := Parse([]byte(`on_http_request: [{actions: [{type: basic-auth, config: {credentials: ["a:password1", "b:password2", "c:password3", "d:password4"]}}]}]`))
	if err != nil {
		b.Fatal(err)
	}
	benchPolicy(b, p, func(r *http.Request) { r.SetBasicAuth("d", "password4") })
}

// benchPolicy runs p on one request per iteration, in front of a handler
// that does nothing.
func benchPolicy(b *testing.B, p *Policy, edit func(*http.Request)) {
	h := p.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	edit(r)
	w := discard{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}
