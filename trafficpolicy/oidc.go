package trafficpolicy

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ActionOpenIDConnect lets through the requests of browsers logged in
// with an OpenID Connect provider, and sends the others to log in. The
// caller runs the logins (WithOpenIDConnect): this package checks the
// config and calls it.
const ActionOpenIDConnect = "openid-connect"

// Bounds and defaults of the config of openid-connect.
const (
	// DefaultIdleSessionTimeout ends a session its user has not used for
	// that long; MaxSessionTimeout bounds it and MaxSessionDuration.
	DefaultIdleSessionTimeout = 24 * time.Hour
	// DefaultMaxSessionDuration ends a session that long after its login,
	// however active.
	DefaultMaxSessionDuration = 7 * 24 * time.Hour
	// MinSessionTimeout and MaxSessionTimeout bound both durations: the
	// longest is the furthest an application session may end (30 days).
	MinSessionTimeout = time.Minute
	MaxSessionTimeout = 30 * 24 * time.Hour
	// MaxScopes bounds the scopes of an openid-connect; maxScope,
	// maxIssuerURL, maxClientID and maxClientSecret the length of each.
	MaxScopes       = 32
	maxScope        = 128
	maxIssuerURL    = 1024
	maxClientID     = 255
	maxClientSecret = 1024
)

// OpenIDConnect is the checked config of an openid-connect action.
type OpenIDConnect struct {
	// IssuerURL is the provider's issuer, whose discovery document is at
	// IssuerURL/.well-known/openid-configuration: http or https, no
	// query nor fragment.
	IssuerURL string
	// ClientID and ClientSecret are the client the provider knows the
	// endpoint as.
	ClientID, ClientSecret string
	// Scopes are asked for at login; openid is always among them. Default
	// openid, profile, email.
	Scopes []string
	// IdleSessionTimeout ends a session unused that long;
	// MaxSessionDuration ends it that long after its login.
	IdleSessionTimeout, MaxSessionDuration time.Duration
}

// User is the end user an openid-connect let through, as the provider
// told.
type User struct {
	// ID is the user's id as the provider reports it: the ID token's
	// subject (sub).
	ID string
	// Name is the user's name as the provider gives it, or their
	// preferred username or email when it gives none.
	Name  string
	Email string
}

// Logins runs the logins of openid-connect actions: the caller's, such
// as an edge's, which keeps the sessions.
type Logins interface {
	// Authenticate returns the user of r's session under cfg and true,
	// or answers r itself on w (a redirect to the provider, a page that
	// says what went wrong) and returns false. It is called on the
	// request's goroutine.
	Authenticate(w http.ResponseWriter, r *http.Request, cfg *OpenIDConnect) (User, bool)
}

// WithOpenIDConnect sets what runs the logins of openid-connect actions.
// Without it, Parse refuses a document with one: the caller has no way to
// keep sessions.
func WithOpenIDConnect(l Logins) Option { return func(p *Policy) { p.logins = l } }

// OpenIDConnects returns the configs of the policy's openid-connect
// actions, in the order of the document: the caller finds among them the
// one a login's callback is for.
func (p *Policy) OpenIDConnects() []*OpenIDConnect { return p.oidcs }

// openIDConnect runs an openid-connect action.
type openIDConnect struct {
	p   *Policy
	cfg OpenIDConnect
}

func buildOpenIDConnect(c *checker, cfg node, _ phase) action {
	fields := c.mapping(cfg, "issuer_url", "client_id", "client_secret", "scopes", "idle_session_timeout", "max_session_duration")
	if c.policy.logins == nil {
		c.report(cfg, "this server runs no OpenID Connect logins: openid-connect runs on the endpoints of an edge")
		return nil
	}
	a := &openIDConnect{p: c.policy, cfg: OpenIDConnect{
		Scopes:             []string{"openid", "profile", "email"},
		IdleSessionTimeout: DefaultIdleSessionTimeout,
		MaxSessionDuration: DefaultMaxSessionDuration,
	}}
	if n, ok := fields["issuer_url"]; ok {
		a.cfg.IssuerURL = c.issuerURL(n)
	} else {
		c.missing(cfg, "issuer_url", "the provider's issuer URL, such as https://accounts.google.com")
	}
	a.cfg.ClientID = c.requiredText(fields, cfg, "client_id", maxClientID, "the client id the provider gave the endpoint")
	a.cfg.ClientSecret = c.requiredText(fields, cfg, "client_secret", maxClientSecret, "the client secret the provider gave the endpoint")
	if n, ok := fields["scopes"]; ok {
		a.cfg.Scopes = c.scopes(n)
	}
	if n, ok := fields["idle_session_timeout"]; ok {
		a.cfg.IdleSessionTimeout = c.sessionDuration(n)
	}
	if n, ok := fields["max_session_duration"]; ok {
		a.cfg.MaxSessionDuration = c.sessionDuration(n)
	}
	if a.cfg.IdleSessionTimeout > a.cfg.MaxSessionDuration && a.cfg.MaxSessionDuration > 0 {
		c.report(fields["idle_session_timeout"], "must be at most max_session_duration ("+a.cfg.MaxSessionDuration.String()+")")
	}
	c.policy.oidcs = append(c.policy.oidcs, &a.cfg)
	return a
}

// issuerURL returns an issuer URL: absolute, http or https, no query nor
// fragment nor credentials.
func (c *checker) issuerURL(n node) string {
	s := c.string(n)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || len(s) > maxIssuerURL {
		c.report(n, "must be the provider's issuer, an http or https URL without query nor fragment, at most "+strconv.Itoa(maxIssuerURL)+" bytes, such as https://accounts.google.com")
	}
	return s
}

// requiredText returns the required string field key of cfg: at most max
// bytes, without control characters.
func (c *checker) requiredText(fields map[string]node, cfg node, key string, max int, what string) string {
	n, ok := fields[key]
	if !ok {
		c.missing(cfg, key, what)
		return ""
	}
	s := c.string(n)
	if s == "" || len(s) > max || strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		c.report(n, "must be "+what+": 1 to "+strconv.Itoa(max)+" bytes without control characters")
	}
	return s
}

// scopes returns the scopes of a list, openid first whether given or
// not.
func (c *checker) scopes(n node) []string {
	elems := c.list(n)
	if len(elems) > MaxScopes {
		c.report(n, "has "+strconv.Itoa(len(elems))+" scopes, over "+strconv.Itoa(MaxScopes))
		return nil
	}
	out := []string{"openid"}
	for _, e := range elems {
		s := c.string(e)
		switch {
		case s == "" || len(s) > maxScope || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == '"' || r == '\\' || r >= 0x7f }):
			c.report(e, "not a scope: 1 to "+strconv.Itoa(maxScope)+" printable ASCII characters without spaces, quotes or backslashes")
		case !slices.Contains(out, s):
			out = append(out, s)
		}
	}
	return out
}

// sessionDuration returns a duration of a session from
// MinSessionTimeout to MaxSessionTimeout, such as "8h", or 0 when it is
// not one.
func (c *checker) sessionDuration(n node) time.Duration {
	s := c.string(n)
	d, err := time.ParseDuration(s)
	if err != nil || d < MinSessionTimeout || d > MaxSessionTimeout {
		c.report(n, "must be a duration from "+MinSessionTimeout.String()+" to "+MaxSessionTimeout.String()+", such as 8h")
		return 0
	}
	return d
}

func (a *openIDConnect) run(x *exchange, w http.ResponseWriter, _ *rule) bool {
	user, ok := a.p.logins.Authenticate(w, x.req, &a.cfg)
	if a.p.decisions != nil {
		a.p.decisions(x.req, Decision{Module: "oauth", Allowed: ok, UserID: user.ID, Username: clipUTF8(user.Name, maxUsername), ClientID: a.cfg.ClientID})
	}
	if !ok {
		return true
	}
	x.oidcUser = user
	return false
}

// CheckingOnly is the option of a document checked where it does not
// run, such as a route's policy that the store keeps for the edges: its
// openid-connect actions are checked as an edge checks them, and a
// request that reaches one is answered 503, since nothing here keeps
// sessions.
func CheckingOnly() Option { return WithOpenIDConnect(noLogins{}) }

// noLogins is CheckingOnly's Logins.
type noLogins struct{}

func (noLogins) Authenticate(w http.ResponseWriter, _ *http.Request, _ *OpenIDConnect) (User, bool) {
	http.Error(w, "this server runs no OpenID Connect logins", http.StatusServiceUnavailable)
	return User{}, false
}
