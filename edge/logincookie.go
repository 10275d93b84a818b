package edge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
)

// The cookies of openid-connect logins are the edge's own: a login's
// pending state, and the session it made. Each is a JSON payload and an
// HMAC of it, keyed from Config.Secret, so that any edge process verifies
// what another wrote, and bound to its purpose and to the host it was
// set for, so that a cookie of one endpoint is worth nothing at another.

// Bounds of the login cookies: a browser is a hostile end user's.
const (
	// maxCookieValue is the longest cookie value the edge reads or
	// writes; longer ones it ignores unread. Browsers keep at least 4096
	// bytes of a cookie, its name included.
	maxCookieValue = 3800
	// maxPendingLogins is how many logins one browser may have under way
	// at once at a host (tabs that each went to log in); a new one
	// replaces the oldest.
	maxPendingLogins = 3
	// loginStateTTL is how long a browser has to come back from the
	// provider.
	loginStateTTL = 10 * time.Minute
	// maxClaim bounds the user's name and email a session cookie keeps.
	maxClaim = 255
)

// Names of the login cookies. A session cookie's name ends with the key of
// its action's config (configKey), so that two actions of a policy keep
// two sessions.
const (
	stateCookiePrefix   = "__sluice_login_"
	sessionCookiePrefix = "__sluice_session_"
)

// Errors of verifying a cookie.
var (
	errCookieForged  = errors.New("the cookie's signature does not match")
	errCookieExpired = errors.New("the cookie has expired")
)

// cookieSigner signs and verifies the login cookies.
type cookieSigner struct {
	key []byte
}

// newCookieSigner derives the cookies' key from the edge's secret.
func newCookieSigner(secret []byte) cookieSigner {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("sluice edge login cookies v1"))
	return cookieSigner{key: m.Sum(nil)}
}

// mac returns the HMAC of a payload for a purpose and host.
func (s cookieSigner) mac(purpose, host string, payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(strings.ToLower(host)))
	m.Write([]byte{0})
	m.Write(payload)
	return m.Sum(nil)
}

// seal returns the cookie value of v, JSON, for purpose at host.
func (s cookieSigner) seal(purpose, host string, v any) (string, error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	value := base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(s.mac(purpose, host, payload))
	if len(value) > maxCookieValue {
		return "", errors.New("the cookie would be longer than browsers keep")
	}
	return value, nil
}

// open verifies a cookie value sealed for purpose at host and decodes it
// into v, whose expiry it then checks against now.
func (s cookieSigner) open(purpose, host, value string, now time.Time, v interface{ expiry() time.Time }) error {
	if len(value) > maxCookieValue {
		return errCookieForged
	}
	p, sig, ok := strings.Cut(value, ".")
	if !ok {
		return errCookieForged
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(purpose, host, payload)) {
		return errCookieForged
	}
	if err := json.Unmarshal(payload, v); err != nil {
		return errCookieForged
	}
	if !now.Before(v.expiry()) {
		return errCookieExpired
	}
	return nil
}

// loginState is a login under way: what the browser brings back from the
// provider to the callback, in a cookie.
type loginState struct {
	// State, Nonce and Verifier are the login's OAuth state, OpenID
	// Connect nonce and PKCE code verifier.
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	// Config is the configKey of the action that started it.
	Config string `json:"k"`
	// Return is where the browser goes once logged in: a path of the
	// host, with its query.
	Return string `json:"r"`
	// Expires is when the login is too old to finish, in Unix seconds.
	Expires int64 `json:"e"`
}

func (s *loginState) expiry() time.Time { return time.Unix(s.Expires, 0) }

// loginSession is a logged-in browser's session, in a cookie: the
// application session it names and who the user is.
type loginSession struct {
	// ID is the application session's ("apps_..."), and Account its
	// account's.
	ID      string `json:"id"`
	Account string `json:"a"`
	// Config is the configKey of the action that logged the user in.
	Config string `json:"k"`
	// Subject, Name and Email are the user's, as the provider told.
	Subject string `json:"sub"`
	Name    string `json:"name,omitempty"`
	Email   string `json:"email,omitempty"`
	// Expires is when the session ends however active (the login's time
	// and max_session_duration), in Unix seconds.
	Expires int64 `json:"e"`
}

func (s *loginSession) expiry() time.Time { return time.Unix(s.Expires, 0) }

// Purposes of the login cookies' signatures.
const (
	purposeState   = "login state"
	purposeSession = "login session"
)

// loginCookie returns a cookie of the edge's logins: HttpOnly, for the
// whole host, SameSite=Lax (the browser brings it back on the provider's
// redirect, a top-level GET, and on no other site's request), Secure
// over HTTPS. maxAge 0 lets it last as long as the browser runs; a
// negative one deletes it.
func loginCookie(name, value string, maxAge int, secure bool) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}
}

// pendingLogins returns the login states r's cookies hold at host that
// verify and have not expired, and the names of the state cookies.
func (s cookieSigner) pendingLogins(r *http.Request, host string, now time.Time) (states map[string]loginState, names []string) {
	states = map[string]loginState{}
	for _, c := range r.Cookies() {
		if !strings.HasPrefix(c.Name, stateCookiePrefix) {
			continue
		}
		names = append(names, c.Name)
		var st loginState
		if s.open(purposeState, host, c.Value, now, &st) == nil {
			states[c.Name] = st
		}
	}
	return states, names
}

// stateCookieName returns the name of the cookie a new login's state goes
// in: a slot of maxPendingLogins that r's cookies leave free, or else
// that of the login that expires first.
func (s cookieSigner) stateCookieName(r *http.Request, host string, now time.Time) string {
	states, _ := s.pendingLogins(r, host, now)
	oldest := ""
	for i := range maxPendingLogins {
		name := stateCookiePrefix + string(rune('0'+i))
		st, ok := states[name]
		if !ok {
			return name
		}
		if oldest == "" || st.Expires < states[oldest].Expires {
			oldest = name
		}
	}
	return oldest
}
