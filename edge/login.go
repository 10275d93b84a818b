package edge

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/segmentio/ksuid"
	"golang.org/x/oauth2"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/trafficpolicy"
)

// LoginCallbackPath is the path, on every host of an endpoint with an
// openid-connect action, where the provider sends the browser back after
// a login: register <scheme>://<host>/.sluice/oidc/callback as the
// client's redirect URI. The edge answers it itself; it never reaches the
// agent.
const LoginCallbackPath = "/.sluice/oidc/callback"

// LogoutPath is the path, on the same hosts, that logs the browser out:
// its application session ends, and its cookie goes.
const LogoutPath = "/.sluice/oidc/logout"

// Error codes of logins.
const (
	codeLoginProvider = "650" // the provider cannot be reached, or its answer is wrong
	codeLoginState    = "651" // a callback without a login under way: expired, used, or forged
	codeLoginRefused  = "652" // the provider refused the login
	codeLoginSession  = "653" // the session cannot be recorded or checked
)

// Bounds of logins.
const (
	// refreshEvery is how often a session's last_active is written while
	// its user is active: at most once a minute.
	refreshEvery = time.Minute
	// maxReturnPath bounds the path a browser goes back to after its
	// login; a longer one goes back to /.
	maxReturnPath = 2048
	// maxSubject bounds the user id a provider may give.
	maxSubject = 255
	// sessionTimeout bounds the edge's work on the store for one request.
	sessionTimeout = 5 * time.Second
)

// AppSessions keeps the application sessions of logins (specification
// section 2.7): the four calls the edge makes of a session's life.
// *store.Store implements it; it returns errors wrapping
// store.ErrNotFound for a session that has ended.
type AppSessions interface {
	RecordAppSession(ctx context.Context, accountID string, in store.AppSession) (store.AppSession, error)
	GetAppSession(ctx context.Context, accountID, id string) (store.AppSession, error)
	RefreshAppSession(ctx context.Context, accountID, id string, lastActive, expiresAt time.Time) (store.AppSession, error)
	DeleteAppSession(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.AppSession, error)
}

// loginTarget is where a login happens, as its application session
// records it.
type loginTarget struct {
	accountID, endpointID string
	// publicURL is the endpoint's URL, scheme, host and port.
	publicURL string
	// edgeID and routeID are the HTTPS edge and route serving the
	// endpoint, both "" for an agent-initiated endpoint.
	edgeID, routeID string
	// configs are the openid-connect actions a callback or a logout is
	// for: the endpoint's policy's, or those of every route of an HTTPS
	// edge.
	configs []*trafficpolicy.OpenIDConnect
	// forConfig, when not nil, returns the route and the endpoint of a
	// login of cfg, for an HTTPS edge's callback, which serves the
	// logins of all its routes.
	forConfig func(cfg *trafficpolicy.OpenIDConnect) (routeID, endpointID string)
	// secure is set over HTTPS: the cookies are Secure.
	secure bool
}

// newPolicyRecord returns the record of a request of an agent endpoint's
// on the scheme's listener, with where its logins happen.
func newPolicyRecord(ep *endpoint, scheme string) *policyRecord {
	return &policyRecord{login: &loginTarget{
		accountID: ep.record.AccountID, endpointID: ep.record.ID, publicURL: ep.url,
		configs: ep.policy.OpenIDConnects(), secure: scheme == "https",
	}}
}

// logins runs the openid-connect actions of an edge's endpoints
// (trafficpolicy.Logins): their redirects to the providers, their
// callbacks, and the sessions they keep in the store and in cookies.
type logins struct {
	sessions  AppSessions
	geo       *GeoIP
	signer    cookieSigner
	userKey   []byte // keys the application users' ids
	providers *providers
	cache     sessionCache
	now       func() time.Time
	log       *slog.Logger
}

func newLogins(cfg *Config, now func() time.Time) *logins {
	m := hmac.New(sha256.New, cfg.Secret)
	m.Write([]byte("sluice edge application users v1"))
	return &logins{
		sessions: cfg.AppSessions, geo: cfg.GeoIP,
		signer:    newCookieSigner(cfg.Secret),
		userKey:   m.Sum(nil),
		providers: newProviders(now, cfg.LoginPrivateIssuers),
		cache:     newSessionCache(),
		now:       now,
		log:       cfg.Log,
	}
}

var _ trafficpolicy.Logins = (*logins)(nil)

// configKey names the config of an openid-connect action in its cookies:
// its issuer and client.
func configKey(cfg *trafficpolicy.OpenIDConnect) string {
	sum := sha256.Sum256([]byte(cfg.IssuerURL + "\x00" + cfg.ClientID))
	return hex.EncodeToString(sum[:8])
}

// Authenticate lets through a browser whose session cookie names an
// application session that goes on, and sends any other to log in.
func (l *logins) Authenticate(w http.ResponseWriter, r *http.Request, cfg *trafficpolicy.OpenIDConnect) (trafficpolicy.User, bool) {
	rec, _ := r.Context().Value(policyRecordKey{}).(*policyRecord)
	if rec == nil || rec.login == nil {
		publicError(w, http.StatusInternalServerError, codeLoginSession, "This endpoint cannot log you in here.")
		return trafficpolicy.User{}, false
	}
	t := rec.login
	now := l.now()
	key := configKey(cfg)
	name := sessionCookiePrefix + key
	if c, err := r.Cookie(name); err == nil {
		var s loginSession
		if l.signer.open(purposeSession, r.Host, c.Value, now, &s) == nil && s.Config == key && s.Account == t.accountID &&
			l.live(r.Context(), t, cfg, &s, now) {
			stripLoginCookies(r)
			return trafficpolicy.User{ID: s.Subject, Name: s.Name, Email: s.Email}, true
		}
		// Logged out: revoked, evicted, expired or not this host's.
		http.SetCookie(w, loginCookie(name, "", -1, t.secure))
	}
	l.startLogin(w, r, cfg, t, key, now)
	stripLoginCookies(r)
	return trafficpolicy.User{}, false
}

// live reports whether the session s goes on, reading the store when this
// edge does not know it, and refreshing its last_active at most every
// refreshEvery.
func (l *logins) live(ctx context.Context, t *loginTarget, cfg *trafficpolicy.OpenIDConnect, s *loginSession, now time.Time) bool {
	ctx, cancel := context.WithTimeout(ctx, sessionTimeout)
	defer cancel()
	key := t.accountID + "/" + s.ID
	state := l.cache.check(key, now)
	if state == sessionUnknown {
		a, err := l.sessions.GetAppSession(ctx, t.accountID, s.ID)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				l.log.Warn("reading an application session", "account", t.accountID, "session", s.ID, "error", err)
			}
			return false
		}
		state = l.cache.put(key, a.ExpiresAt, a.LastActive, now)
	}
	switch state {
	case sessionEnded:
		return false
	case sessionRefresh:
		expires := now.Add(cfg.IdleSessionTimeout)
		if s.expiry().Before(expires) {
			expires = s.expiry()
		}
		a, err := l.sessions.RefreshAppSession(ctx, t.accountID, s.ID, now, expires)
		switch {
		case errors.Is(err, store.ErrNotFound):
			l.cache.end(key)
			return false
		case err != nil:
			// The session went on until now: the user stays in, and the
			// next minute refreshes it.
			l.log.Warn("refreshing an application session", "account", t.accountID, "session", s.ID, "error", err)
		default:
			l.cache.extend(key, a.ExpiresAt)
		}
	}
	return true
}

// startLogin sends the browser to the provider, with the login's state in
// a cookie.
func (l *logins) startLogin(w http.ResponseWriter, r *http.Request, cfg *trafficpolicy.OpenIDConnect, t *loginTarget, key string, now time.Time) {
	ctx, cancel := context.WithTimeout(r.Context(), providerTimeout)
	defer cancel()
	p, err := l.providers.get(ctx, cfg.IssuerURL)
	if err != nil {
		l.log.Info("an OpenID Connect provider cannot be reached", "issuer", cfg.IssuerURL, "error", err)
		publicError(w, http.StatusBadGateway, codeLoginProvider, "This site logs you in with "+cfg.IssuerURL+", which cannot be reached now. Try again shortly.")
		return
	}
	st := loginState{
		State: randomToken(), Nonce: randomToken(), Verifier: oauth2.GenerateVerifier(),
		Config: key, Return: returnPath(r.URL.RequestURI()), Expires: now.Add(loginStateTTL).Unix(),
	}
	value, err := l.signer.seal(purposeState, r.Host, &st)
	if err != nil {
		publicError(w, http.StatusInternalServerError, codeLoginSession, "This site cannot log you in now.")
		return
	}
	http.SetCookie(w, loginCookie(l.signer.stateCookieName(r, r.Host, now), value, int(loginStateTTL/time.Second), t.secure))
	w.Header().Set("Cache-Control", "no-store")
	oc := oauthConfig(cfg, p, t, r.Host)
	http.Redirect(w, r, oc.AuthCodeURL(st.State, oidc.Nonce(st.Nonce), oauth2.S256ChallengeOption(st.Verifier)), http.StatusFound)
	redactLoginCookies(w.Header())
}

// oauthConfig returns the OAuth client of an action at host.
func oauthConfig(cfg *trafficpolicy.OpenIDConnect, p *oidc.Provider, t *loginTarget, host string) *oauth2.Config {
	scheme := "http"
	if t.secure {
		scheme = "https"
	}
	return &oauth2.Config{
		ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: scheme + "://" + host + LoginCallbackPath, Scopes: cfg.Scopes,
	}
}

// randomToken returns 32 random bytes, base64url.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// returnPath returns where a browser goes back to after its login: uri,
// a path of the same host with its query, or / for anything else (a
// path that a browser would read as another host's, //evil.example or
// /\evil.example, the callback itself, one too long for a cookie).
func returnPath(uri string) string {
	// No backslash anywhere: http.Redirect cleans the path, and
	// /./\evil.example would become /\evil.example, which browsers
	// read as //evil.example.
	if !strings.HasPrefix(uri, "/") || strings.HasPrefix(uri, "//") || strings.ContainsRune(uri, '\\') ||
		len(uri) > maxReturnPath || strings.HasPrefix(uri, LoginCallbackPath) ||
		strings.ContainsFunc(uri, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "/"
	}
	return uri
}

// stripLoginCookies removes the edge's login cookies from a request once
// read: they are the edge's, not the upstream's, and the request's event,
// which reports its headers, must not carry them to whoever reads the
// events.
func stripLoginCookies(r *http.Request) {
	if !hasLoginCookie(r.Header) {
		return
	}
	cookies := r.Cookies()
	kept := make([]string, 0, len(cookies))
	for _, c := range cookies {
		if !strings.HasPrefix(c.Name, sessionCookiePrefix) && !strings.HasPrefix(c.Name, stateCookiePrefix) {
			kept = append(kept, c.String())
		}
	}
	if len(kept) == len(cookies) {
		return
	}
	r.Header.Del("Cookie")
	if len(kept) > 0 {
		r.Header.Set("Cookie", strings.Join(kept, "; "))
	}
}

// hasLoginCookie reports whether h's Cookie headers may hold one of the
// edge's login cookies: a check that costs no parse, for every request.
func hasLoginCookie(h http.Header) bool {
	for _, v := range h.Values("Cookie") {
		if strings.Contains(v, "__sluice_") {
			return true
		}
	}
	return false
}

// withoutLoginCookies returns h without the edge's login cookies: h
// itself when it has none, else a copy.
func withoutLoginCookies(h http.Header) http.Header {
	if !hasLoginCookie(h) {
		return h
	}
	r := &http.Request{Header: h.Clone()}
	stripLoginCookies(r)
	return r.Header
}

// dropLoginSetCookies removes from an upstream's answer the cookies it
// sets under the names of the edge's login cookies: an upstream, which
// may be anyone's, cannot plant a login in a browser.
func dropLoginSetCookies(h http.Header) {
	values := h["Set-Cookie"]
	if !slices.ContainsFunc(values, func(v string) bool { return strings.Contains(v, "__sluice_") }) {
		return
	}
	kept := values[:0:0]
	for _, v := range values {
		name, _, _ := strings.Cut(strings.TrimSpace(v), "=")
		if !strings.HasPrefix(name, sessionCookiePrefix) && !strings.HasPrefix(name, stateCookiePrefix) {
			kept = append(kept, v)
		}
	}
	if len(kept) == 0 {
		h.Del("Set-Cookie")
	} else {
		h["Set-Cookie"] = kept
	}
}

// redactLoginCookies replaces the values of the login cookies an answer
// set, once written, with "redacted": the event reports the answer's
// headers, and whoever reads the events must not be able to log in as
// the user. net/http sent the headers as they were when the answer was
// written.
func redactLoginCookies(h http.Header) {
	values := h["Set-Cookie"]
	for i, v := range values {
		name, rest, ok := strings.Cut(v, "=")
		if !ok || !strings.HasPrefix(name, sessionCookiePrefix) && !strings.HasPrefix(name, stateCookiePrefix) {
			continue
		}
		_, attrs, _ := strings.Cut(rest, ";")
		values[i] = name + "=redacted"
		if attrs != "" {
			values[i] += ";" + attrs
		}
	}
}

// applicationUserID returns the id of the application user the provider
// issuer knows as subject, in the account: the same at every login, on
// every edge, and telling nothing of the subject to whoever reads it.
func (l *logins) applicationUserID(account, issuer, subject string) string {
	m := hmac.New(sha256.New, l.userKey)
	m.Write([]byte(account + "\x00" + issuer + "\x00" + subject))
	id, _ := ksuid.FromBytes(m.Sum(nil)[:20])
	return schemas.PrefixAppUser + id.String()
}

// clientAddr returns the address of r's client.
func clientAddr(r *http.Request) (netip.Addr, bool) {
	addr, err := netip.ParseAddr(hostOf(addrString(r.RemoteAddr)))
	return addr, err == nil
}
