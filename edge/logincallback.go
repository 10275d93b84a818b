package edge

import (
	"context"
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/trafficpolicy"
)

// ownPath returns what answers r in place of the endpoint's policy when
// r is for a path of the logins' own (a provider's callback, a logout)
// at an endpoint whose policy has openid-connect actions, and nil
// otherwise.
func (l *logins) ownPath(configs []*trafficpolicy.OpenIDConnect, r *http.Request) func(http.ResponseWriter, *http.Request, http.Handler) {
	if l == nil || len(configs) == 0 {
		return nil
	}
	switch r.URL.Path {
	case LoginCallbackPath:
		return l.serveCallback
	case LogoutPath:
		return l.serveLogout
	}
	return nil
}

// serveCallback finishes a login: it takes the browser's login state
// (single use), exchanges the provider's code, verifies the ID token,
// records the application session and sends the browser back where it
// was going with a session cookie. Anything wrong gets a page that says
// so, never another redirect: a browser cannot loop through logins. It
// has the signature of trafficpolicy.Policy.Serve, in whose place it
// runs; next is not called.
func (l *logins) serveCallback(w http.ResponseWriter, r *http.Request, _ http.Handler) {
	rec, _ := r.Context().Value(policyRecordKey{}).(*policyRecord)
	t := rec.login
	now := l.now()
	q := r.URL.Query()
	states, _ := l.signer.pendingLogins(r, r.Host, now)
	stripLoginCookies(r)
	var st loginState
	stName := ""
	for name, s := range states {
		if subtle.ConstantTimeCompare([]byte(s.State), []byte(q.Get("state"))) == 1 {
			st, stName = s, name
		}
	}
	if stName == "" {
		publicError(w, http.StatusBadRequest, codeLoginState, "This login is not under way in this browser: it expired, was finished already, or was started elsewhere. Open the site again to log in.")
		return
	}
	http.SetCookie(w, loginCookie(stName, "", -1, t.secure))
	var cfg *trafficpolicy.OpenIDConnect
	for _, c := range t.configs {
		if configKey(c) == st.Config {
			cfg = c
		}
	}
	if cfg != nil && t.forConfig != nil {
		t.routeID, t.endpointID = t.forConfig(cfg)
	}
	if cfg == nil {
		publicError(w, http.StatusBadRequest, codeLoginState, "This site's login changed while you were logging in. Open the site again to log in.")
		return
	}
	decide := func(allowed bool, user trafficpolicy.User) {
		collectPolicyDecision(r, trafficpolicy.Decision{Module: "oauth", Allowed: allowed, UserID: user.ID, Username: clip(user.Name, maxClaim), ClientID: cfg.ClientID})
	}
	if e := q.Get("error"); e != "" {
		decide(false, trafficpolicy.User{})
		publicError(w, http.StatusForbidden, codeLoginRefused, "The login provider refused the login: "+plainText(e, 100)+" "+plainText(q.Get("error_description"), 300))
		return
	}
	user, status, msg := l.exchange(r.Context(), cfg, t, r.Host, q.Get("code"), &st)
	if status != 0 {
		decide(false, trafficpolicy.User{})
		code := codeLoginProvider
		if status == http.StatusBadRequest {
			code = codeLoginState
		}
		publicError(w, status, code, msg)
		return
	}
	if err := l.recordSession(w, r, cfg, t, user, now); err != nil {
		decide(false, user)
		l.log.Warn("recording an application session", "account", t.accountID, "error", err)
		publicError(w, http.StatusServiceUnavailable, codeLoginSession, "You logged in, but your session cannot be recorded now. Open the site again shortly.")
		return
	}
	decide(true, user)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, returnPath(st.Return), http.StatusFound)
	redactLoginCookies(w.Header())
}

// exchange exchanges a login's code for the user's ID token, and checks
// it. On failure it returns the status and message of the page to show.
func (l *logins) exchange(ctx context.Context, cfg *trafficpolicy.OpenIDConnect, t *loginTarget, host, code string, st *loginState) (trafficpolicy.User, int, string) {
	ctx, cancel := context.WithTimeout(ctx, providerTimeout)
	defer cancel()
	p, err := l.providers.get(ctx, cfg.IssuerURL)
	if err != nil {
		return trafficpolicy.User{}, http.StatusBadGateway, "The login provider " + cfg.IssuerURL + " cannot be reached now. Open the site again shortly."
	}
	ctx = context.WithValue(l.providers.context(ctx), oauth2.HTTPClient, l.providers.client)
	tok, err := oauthConfig(cfg, p, t, host).Exchange(ctx, code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		l.log.Info("exchanging an OpenID Connect code", "issuer", cfg.IssuerURL, "error", err)
		return trafficpolicy.User{}, http.StatusBadGateway, "The login provider did not confirm the login. Open the site again to log in."
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return trafficpolicy.User{}, http.StatusBadGateway, "The login provider gave no ID token: is openid among the scopes?"
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: cfg.ClientID}).Verify(ctx, raw)
	if err != nil {
		l.log.Info("verifying an OpenID Connect ID token", "issuer", cfg.IssuerURL, "error", err)
		return trafficpolicy.User{}, http.StatusBadGateway, "The login provider's ID token does not verify."
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(st.Nonce)) != 1 {
		return trafficpolicy.User{}, http.StatusBadRequest, "This login's ID token is another login's. Open the site again to log in."
	}
	if idt.Subject == "" || len(idt.Subject) > maxSubject {
		return trafficpolicy.User{}, http.StatusBadGateway, "The login provider's user id is empty or longer than 255 bytes."
	}
	var claims struct {
		Name              string `json:"name"`
		PreferredUsername string `json:"preferred_username"`
		Email             string `json:"email"`
	}
	_ = idt.Claims(&claims)
	user := trafficpolicy.User{ID: idt.Subject, Name: claims.Name, Email: plainText(claims.Email, maxClaim)}
	for _, name := range []string{claims.Name, claims.PreferredUsername, claims.Email} {
		if user.Name == "" {
			user.Name = name
		}
	}
	user.Name = plainText(user.Name, maxClaim)
	return user, 0, ""
}

// recordSession records the application session of a login and sets the
// browser's session cookie.
func (l *logins) recordSession(w http.ResponseWriter, r *http.Request, cfg *trafficpolicy.OpenIDConnect, t *loginTarget, user trafficpolicy.User, now time.Time) error {
	ctx, cancel := context.WithTimeout(r.Context(), sessionTimeout)
	defer cancel()
	addr, _ := clientAddr(r)
	a, err := l.sessions.RecordAppSession(ctx, t.accountID, store.AppSession{
		PublicURL:         t.publicURL,
		BrowserSession:    l.geo.browserSession(addr, r.UserAgent()),
		ApplicationUserID: l.applicationUserID(t.accountID, cfg.IssuerURL, user.ID),
		EndpointID:        t.endpointID,
		EdgeID:            t.edgeID,
		RouteID:           t.routeID,
		ExpiresAt:         now.Add(min(cfg.IdleSessionTimeout, cfg.MaxSessionDuration)),
	})
	if err != nil {
		return err
	}
	key := configKey(cfg)
	l.cache.put(t.accountID+"/"+a.ID, a.ExpiresAt, a.LastActive, now)
	s := loginSession{ID: a.ID, Account: t.accountID, Config: key, Subject: user.ID, Name: user.Name, Email: user.Email,
		Expires: now.Add(cfg.MaxSessionDuration).Unix()}
	value, err := l.signer.seal(purposeSession, r.Host, &s)
	if err != nil {
		// Names and emails of many bytes of many runes: the cookie
		// keeps the user's id, and the session.
		s.Name, s.Email = "", ""
		if value, err = l.signer.seal(purposeSession, r.Host, &s); err != nil {
			return err
		}
	}
	http.SetCookie(w, loginCookie(sessionCookiePrefix+key, value, int(cfg.MaxSessionDuration/time.Second), t.secure))
	return nil
}
