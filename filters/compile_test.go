package filters

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/schemas"
)

const (
	httpKind = "http_request_complete.v0"
	tcpKind  = "tcp_connection_closed.v0"
)

// newTestEnv builds an Env of the default catalogue.
func newTestEnv(t testing.TB) *Env {
	t.Helper()
	env, err := NewEnv(schemas.Default())
	if err != nil {
		t.Fatalf("NewEnv: %v", err)
	}
	return env
}

// mustCompile compiles expr for kind or fails the test.
func mustCompile(t testing.TB, env *Env, kind, expr string) *Program {
	t.Helper()
	p, err := env.Compile(kind, expr)
	if err != nil {
		t.Fatalf("Compile(%q, %q): %v", kind, expr, err)
	}
	return p
}

// zeros returns a CEL list literal of n zeros.
func zeros(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]"
}

func TestNewEnvDeclaresFilterableFields(t *testing.T) {
	env := newTestEnv(t)
	want := []string{"conn.client_ip", "conn.server_ip", "conn.server_name", "conn.server_port"}
	for _, kind := range []string{httpKind, tcpKind} {
		got, err := env.FilterableFields(kind)
		if err != nil {
			t.Fatalf("FilterableFields(%s): %v", kind, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("FilterableFields(%s) = %v, want %v", kind, got, want)
		}
	}
	if _, err := env.FilterableFields("api_key_created.v0"); !errors.Is(err, ErrNotTraffic) {
		t.Errorf("FilterableFields(audit kind) error = %v, want ErrNotTraffic", err)
	}
}

func TestCompileValid(t *testing.T) {
	env := newTestEnv(t)
	tests := []struct {
		name, kind, expr string
		fields           []string
	}{
		{"port", httpKind, `ev.conn.server_port == 443`, []string{"conn.server_port"}},
		{"prefix", httpKind, `ev.conn.client_ip.startsWith("10.")`, []string{"conn.client_ip"}},
		{"cidr and suffix", httpKind,
			`inCIDR(ev.conn.client_ip, "203.0.113.0/24") && ev.conn.server_name.endsWith(".example.com")`,
			[]string{"conn.client_ip", "conn.server_name"}},
		{"regex", httpKind, `ev.conn.server_name.matches("^api[.]")`, []string{"conn.server_name"}},
		{"tcp kind", tcpKind, `ev.conn.server_port in [22, 2222] || ev.conn.server_ip == "192.0.2.1"`,
			[]string{"conn.server_ip", "conn.server_port"}},
		{"string extension", httpKind, `ev.conn.server_name.lowerAscii().split(".").size() > 2`, []string{"conn.server_name"}},
		{"constant", httpKind, `true`, nil},
		{"multi-line", httpKind, "ev.conn.server_port == 443\n  && ev.conn.server_name != \"\"",
			[]string{"conn.server_name", "conn.server_port"}},
		{"CIDR allow-list", httpKind,
			`["203.0.113.0/24", "198.51.100.0/24", "2001:db8::/32"].exists(c, inCIDR(ev.conn.client_ip, c))`,
			[]string{"conn.client_ip"}},
		{"loop variable named ev", httpKind, `[1, 2].exists(ev, ev == 2)`, nil},
		{"nested loops within budget", httpKind, zeros(100) + `.all(x, ` + zeros(100) + `.all(y, x == y))`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustCompile(t, env, tt.kind, tt.expr)
			if p.Kind() != tt.kind || p.Expr() != tt.expr {
				t.Errorf("Kind, Expr = %q, %q; want %q, %q", p.Kind(), p.Expr(), tt.kind, tt.expr)
			}
			if got := p.Fields(); !slices.Equal(got, tt.fields) {
				t.Errorf("Fields() = %v, want %v", got, tt.fields)
			}
			if p.Cost() > MaxCost {
				t.Errorf("Cost() = %d, above MaxCost", p.Cost())
			}
		})
	}
}

func TestCompileInvalid(t *testing.T) {
	env := newTestEnv(t)
	tests := []struct {
		name, kind, expr string
		want             error    // sentinel the error matches
		msg              []string // substrings of the message
	}{
		{"not boolean", httpKind, `ev.conn.server_port`, ErrNotBoolean,
			[]string{"ERROR: <input>:1:1: a filter must be a boolean expression, this one is int"}},
		{"string not boolean", httpKind, "\n  ev.conn.server_name + \"x\"", ErrNotBoolean,
			[]string{"ERROR: <input>:2:3: a filter must be a boolean expression, this one is string"}},
		{"field not filterable", httpKind, `ev.http.request.method == "get"`, ErrInvalidFilter,
			[]string{"ERROR: <input>:1:1: undeclared reference to 'ev.http.request.method'",
				"http.request.method is a field of http_request_complete.v0 but not one a filter may use",
				"only the filterable fields ev.conn.client_ip, ev.conn.server_ip, ev.conn.server_name, ev.conn.server_port"}},
		{"field not filterable, later", httpKind, `ev.conn.server_port == 443 && ev.http.response.status_code == 200`, ErrInvalidFilter,
			[]string{"ERROR: <input>:1:31: undeclared reference to 'ev.http.response.status_code'"}},
		{"inside a map field", httpKind, `ev.http.request.headers.Host == "x"`, ErrInvalidFilter,
			[]string{"1:1: undeclared reference to 'ev.http.request.headers.Host'", "http.request.headers is a field"}},
		{"unknown field", httpKind, `ev.conn.nope == 1`, ErrInvalidFilter,
			[]string{"1:1: undeclared reference to 'ev.conn.nope'", "http_request_complete.v0 has no field conn.nope"}},
		{"field of the other kind", httpKind, `ev.conn.bytes_in > 0`, ErrInvalidFilter,
			[]string{"has no field conn.bytes_in"}},
		{"group", httpKind, `ev.conn == 1`, ErrInvalidFilter,
			[]string{"1:1: undeclared reference to 'ev.conn'", "conn is a group of fields"}},
		{"whole object", httpKind, `ev != null`, ErrInvalidFilter,
			[]string{"1:1: undeclared reference to 'ev'"}},
		{"has", httpKind, `has(ev.conn.client_ip)`, ErrInvalidFilter,
			[]string{"1:5:", "has() does not apply"}},
		{"unknown variable", httpKind, `request.method == "get"`, ErrInvalidFilter,
			[]string{"1:1: undeclared reference to 'request'"}},
		{"syntax", httpKind, `ev.conn.server_port ==`, ErrInvalidFilter,
			[]string{"ERROR: <input>:1:23: Syntax error"}},
		{"syntax on line 2", httpKind, "ev.conn.server_port == 443 &&\n  (", ErrInvalidFilter,
			[]string{"ERROR: <input>:2:"}},
		{"type mismatch", httpKind, `ev.conn.server_port == "443"`, ErrInvalidFilter,
			[]string{"1:21: found no matching overload for '_==_' applied to '(int, string)'"}},
		{"invalid CIDR literal", httpKind, `inCIDR(ev.conn.client_ip, "203.0.113.0/33")`, ErrInvalidFilter,
			[]string{"1:27: invalid CIDR range \"203.0.113.0/33\""}},
		{"invalid regex literal", httpKind, `ev.conn.server_name.matches("[")`, ErrInvalidFilter,
			[]string{"1:29: invalid matches argument"}},
		{"empty", httpKind, ``, ErrEmptyFilter, []string{"must not be empty"}},
		{"blank", httpKind, " \n\t", ErrEmptyFilter, []string{"must not be empty"}},
		{"too long", httpKind, `ev.conn.server_name == "` + strings.Repeat("a", MaxExprLen) + `"`, ErrFilterTooLong,
			[]string{"at most 4096 bytes long"}},
		{"too costly", httpKind, zeros(1000) + `.all(x, ` + zeros(1000) + `.all(y, x == y))`, ErrFilterTooCostly,
			[]string{"estimated cost", "above the limit of 100000"}},
		{"too costly, three loops", httpKind,
			zeros(40) + `.all(x, ` + zeros(40) + `.all(y, ` + zeros(40) + `.all(z, x == y + z)))`, ErrFilterTooCostly,
			[]string{"estimated cost"}},
		{"audit kind", "api_key_created.v0", `ev.id == "x"`, ErrNotTraffic, []string{"api_key_created.v0"}},
		{"unknown kind", "nope.v0", `true`, ErrUnknownKind, []string{`"nope.v0"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := env.Compile(tt.kind, tt.expr)
			if err == nil {
				t.Fatalf("Compile(%q) = %v, want an error", tt.expr, p)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %v does not match %v", err, tt.want)
			}
			for _, s := range tt.msg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			var ce *CompileError
			isCompileErr := errors.As(err, &ce)
			if wantCompileErr := tt.want != ErrNotTraffic && tt.want != ErrUnknownKind; isCompileErr != wantCompileErr {
				t.Fatalf("error %T: *CompileError is %v, want %v", err, isCompileErr, wantCompileErr)
			}
			if !isCompileErr {
				return
			}
			if !errors.Is(err, ErrInvalidFilter) || ce.Expr != tt.expr || len(ce.Issues) == 0 {
				t.Errorf("CompileError = %+v: want ErrInvalidFilter, the expression and issues", ce)
			}
			if tt.want == ErrInvalidFilter || tt.want == ErrNotBoolean {
				if iss := ce.Issues[0]; iss.Line < 1 || iss.Column < 1 {
					t.Errorf("first issue %+v has no position", iss)
				}
			}
		})
	}
}

func TestCompileErrorMessage(t *testing.T) {
	env := newTestEnv(t)
	_, err := env.Compile(httpKind, `1 == 1 && ev.http.request.method == "get"`)
	want := "invalid filter: ERROR: <input>:1:11: undeclared reference to 'ev.http.request.method': " +
		"http.request.method is a field of http_request_complete.v0 but not one a filter may use; " +
		"a filter may use only the filterable fields ev.conn.client_ip, ev.conn.server_ip, ev.conn.server_name, ev.conn.server_port"
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n got %v\nwant %s", err, want)
	}
	var ce *CompileError
	if !errors.As(err, &ce) || len(ce.Issues) != 1 || ce.Issues[0].Line != 1 || ce.Issues[0].Column != 11 {
		t.Fatalf("issues = %+v, want one at 1:11", ce)
	}
}

func TestCompileErrorListsEveryIssue(t *testing.T) {
	env := newTestEnv(t)
	_, err := env.Compile(httpKind, `ev.conn.nope == 1 || ev.http.request.method == "get"`)
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v, want a *CompileError", err)
	}
	if len(ce.Issues) != 2 || ce.Issues[0].Column != 1 || ce.Issues[1].Column != 22 {
		t.Fatalf("issues = %+v, want two, at columns 1 and 22", ce.Issues)
	}
}
