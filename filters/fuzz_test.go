package filters

import (
	"errors"
	"testing"
)

// FuzzCompile checks that no expression makes Compile or Match panic, and
// that Compile's errors are of the documented kinds.
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		`ev.conn.server_port == 443`,
		`inCIDR(ev.conn.client_ip, "203.0.113.0/24") && ev.conn.server_name.endsWith(".example.com")`,
		`ev.conn.server_name.matches("^api[.]")`,
		`[1, 2].exists(ev, ev == ev.conn.server_port)`,
		`has(ev.conn.client_ip) || ev.http.request.method == "get"`,
		`ev.conn.server_port ==`,
		`((((((((((true))))))))))`,
		`"\u00e9" + ev.conn.server_name == "x"`,
		`{"a": ev.conn}.a == 1`,
		`1 / ev.conn.server_port == 0`,
	} {
		f.Add(seed)
	}
	env := newTestEnv(f)
	f.Fuzz(func(t *testing.T, expr string) {
		p, err := env.Compile(httpKind, expr)
		if err != nil {
			if !errors.Is(err, ErrInvalidFilter) {
				t.Fatalf("Compile(%q): error %v is not an ErrInvalidFilter", expr, err)
			}
			return
		}
		fields := p.NewFields()
		_ = fields.SetString("conn.client_ip", "203.0.113.7")
		_ = fields.SetInt("conn.server_port", 443)
		_, _ = p.Match(t.Context(), fields)
	})
}
