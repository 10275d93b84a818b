package edge

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/sluicehq/sluice/internal/store"
)

// serveLogout logs the browser out of every openid-connect of the
// endpoint's policy: each session its cookies name ends in the store (so
// that every edge sends its next request to log in) and each cookie goes.
// It answers a page saying so rather than a redirect, which would log a
// user of a provider that approves at once straight back in. It has the
// signature of trafficpolicy.Policy.Serve, in whose place it runs; next
// is not called.
func (l *logins) serveLogout(w http.ResponseWriter, r *http.Request, _ http.Handler) {
	rec, _ := r.Context().Value(policyRecordKey{}).(*policyRecord)
	t := rec.login
	now := l.now()
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		// Another site's link or form: a page elsewhere cannot log the
		// site's users out.
		stripLoginCookies(r)
		publicError(w, http.StatusForbidden, codeLoginRefused, "Log out from "+plainText(r.Host, 300)+" itself: another site cannot log you out of it.")
		return
	}
	for _, cfg := range t.configs {
		name := sessionCookiePrefix + configKey(cfg)
		c, err := r.Cookie(name)
		if err != nil {
			continue
		}
		http.SetCookie(w, loginCookie(name, "", -1, t.secure))
		var s loginSession
		if l.signer.open(purposeSession, r.Host, c.Value, now, &s) != nil || s.Account != t.accountID {
			continue
		}
		l.cache.end(t.accountID + "/" + s.ID)
		ctx, cancel := context.WithTimeout(r.Context(), sessionTimeout)
		_, err = l.sessions.DeleteAppSession(ctx, t.accountID, s.ID)
		cancel()
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			l.log.Warn("ending an application session at its user's logout", "account", t.accountID, "session", s.ID, "error", err)
		}
	}
	stripLoginCookies(r)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, "You are logged out of "+plainText(r.Host, 300)+".\n")
	}
}
