package trafficpolicy

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeLogins lets through the requests with a cookie "user", and
// redirects the others.
type fakeLogins struct{ configs []*OpenIDConnect }

func (f *fakeLogins) Authenticate(w http.ResponseWriter, r *http.Request, cfg *OpenIDConnect) (User, bool) {
	f.configs = append(f.configs, cfg)
	if c, err := r.Cookie("user"); err == nil {
		return User{ID: "usr_1", Name: c.Value, Email: c.Value + "@example.test"}, true
	}
	http.Redirect(w, r, cfg.IssuerURL+"/authorize", http.StatusFound)
	return User{}, false
}

const oidcPolicy = `
on_http_request:
  - actions:
      - type: openid-connect
        config:
          issuer_url: https://id.example.test
          client_id: shop
          client_secret: s3cret
          idle_session_timeout: 1h
  - expressions: ["actions.service.oidc.user.name != 'ann'"]
    actions:
      - type: deny
`

// TestOpenIDConnect: the action asks the caller's logins, answers with
// them when there is no user, lets the user through otherwise with the
// result variables set, and tells each decision.
func TestOpenIDConnect(t *testing.T) {
	logins := &fakeLogins{}
	var got []Decision
	p, err := Parse([]byte(oidcPolicy), WithOpenIDConnect(logins),
		WithDecisions(func(_ *http.Request, d Decision) { got = append(got, d) }))
	if err != nil {
		t.Fatal(err)
	}
	h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "upstream") }))
	for _, c := range []struct {
		name, user string
		status     int
		allowed    bool
	}{
		{"no session", "", http.StatusFound, false},
		{"ann", "ann", http.StatusOK, true},
		{"bob, denied by the next rule", "bob", http.StatusForbidden, true},
	} {
		got = nil
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if c.user != "" {
			r.AddCookie(&http.Cookie{Name: "user", Value: c.user})
		}
		h.ServeHTTP(w, r)
		if w.Code != c.status {
			t.Fatalf("%s: status %d, want %d", c.name, w.Code, c.status)
		}
		want := Decision{Module: "oauth", Allowed: c.allowed, ClientID: "shop"}
		if c.allowed {
			want.UserID, want.Username = "usr_1", c.user
		}
		if len(got) != 1 || got[0] != want {
			t.Fatalf("%s: decisions %+v, want %+v", c.name, got, want)
		}
	}
	cfgs := p.OpenIDConnects()
	if len(cfgs) != 1 || cfgs[0] != logins.configs[0] {
		t.Fatalf("OpenIDConnects %v, want the config the logins saw", cfgs)
	}
	want := OpenIDConnect{IssuerURL: "https://id.example.test", ClientID: "shop", ClientSecret: "s3cret",
		Scopes: []string{"openid", "profile", "email"}, IdleSessionTimeout: time.Hour, MaxSessionDuration: DefaultMaxSessionDuration}
	if c := cfgs[0]; c.IssuerURL != want.IssuerURL || c.ClientID != want.ClientID || c.ClientSecret != want.ClientSecret ||
		!slices.Equal(c.Scopes, want.Scopes) || c.IdleSessionTimeout != want.IdleSessionTimeout || c.MaxSessionDuration != want.MaxSessionDuration {
		t.Fatalf("config %+v, want %+v", *c, want)
	}
}

// TestOpenIDConnectConfig: each mistake of a config is reported at its
// position, and a policy without logins refuses the action.
func TestOpenIDConnectConfig(t *testing.T) {
	for _, c := range []struct {
		name, config string
		want         []string // in the messages, in order
		noLogins     bool
	}{
		{"missing fields", `{}`, []string{"issuer_url: required", "client_id: required", "client_secret: required"}, false},
		{"bad issuer", `{issuer_url: "ftp://id.example.test", client_id: a, client_secret: b}`, []string{"config.issuer_url: must be the provider's issuer"}, false},
		{"issuer with query", `{issuer_url: "https://id.example.test/?x=1", client_id: a, client_secret: b}`, []string{"config.issuer_url: must be"}, false},
		{"bad scope", `{issuer_url: "https://id.example.test", client_id: a, client_secret: b, scopes: ["a b"]}`, []string{"scopes[0]: not a scope"}, false},
		{"too many scopes", `{issuer_url: "https://id.example.test", client_id: a, client_secret: b, scopes: [` + strings.Repeat("s,", MaxScopes) + `s]}`, []string{"over 32"}, false},
		{"short timeout", `{issuer_url: "https://id.example.test", client_id: a, client_secret: b, idle_session_timeout: 1s}`, []string{"idle_session_timeout: must be a duration from 1m0s to 720h0m0s"}, false},
		{"long duration", `{issuer_url: "https://id.example.test", client_id: a, client_secret: b, max_session_duration: 721h}`, []string{"max_session_duration: must be a duration"}, false},
		{"idle past max", `{issuer_url: "https://id.example.test", client_id: a, client_secret: b, idle_session_timeout: 2h, max_session_duration: 1h}`, []string{"idle_session_timeout: must be at most max_session_duration"}, false},
		{"unknown field", `{issuer_url: "https://id.example.test", client_id: a, client_secret: b, tenant: x}`, []string{`unknown field "tenant"`}, false},
		{"no logins", `{issuer_url: "https://id.example.test", client_id: a, client_secret: b}`, []string{"runs no OpenID Connect logins"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var opts []Option
			if !c.noLogins {
				opts = append(opts, WithOpenIDConnect(&fakeLogins{}))
			}
			_, err := Parse([]byte("on_http_request:\n  - actions:\n      - type: openid-connect\n        config: "+c.config+"\n"), opts...)
			var perr *PolicyError
			if !errors.As(err, &perr) {
				t.Fatalf("Parse: %v, want a *PolicyError", err)
			}
			msg := err.Error()
			for _, w := range c.want {
				i := strings.Index(msg, w)
				if i < 0 {
					t.Fatalf("error %q lacks %q", msg, w)
				}
				msg = msg[i:]
			}
			if perr.Problems[0].Line != 4 {
				t.Fatalf("problem at line %d, want 4 (the config's): %v", perr.Problems[0].Line, err)
			}
		})
	}
}

// TestOpenIDConnectPhases: openid-connect runs on requests only.
func TestOpenIDConnectPhases(t *testing.T) {
	_, err := Parse([]byte("on_http_response:\n  - actions:\n      - type: openid-connect\n"), WithOpenIDConnect(&fakeLogins{}))
	if err == nil || !strings.Contains(err.Error(), "does not run in on_http_response") {
		t.Fatalf("Parse: %v, want openid-connect refused in on_http_response", err)
	}
}
