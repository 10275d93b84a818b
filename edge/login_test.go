package edge_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"golang.ngrok.com/ngrok/v2"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
)

// loginCookieValue matches a login cookie with its value, as an event's
// headers would show it (lower case).
var loginCookieValue = regexp.MustCompile(`(?i)__sluice_(session|login)_\w*=[\w.-]{20,}`)

// TestOpenIDConnectLogin: through the edge, a browser without a session
// goes to the provider, comes back to the callback, gets a session
// cookie and the page it asked for; its application session is in the
// store with what the edge knows of it; the requests' events tell who
// the user is; a later request goes through without a login; and once
// the session is revoked, the next request goes to log in again.
func TestOpenIDConnectLogin(t *testing.T) {
	f := newLoginFixture(t)
	f.provider.QueueUser(&mockoidc.MockUser{Subject: "ann-42", Email: "ann@example.test", PreferredUsername: "ann"})
	b := f.browser(t)
	page := f.endpoint.String() + "/orders?id=7"

	resp, _ := b.get(t, page, false)
	login, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(login.String(), f.provider.AuthorizationEndpoint()) {
		t.Fatalf("GET without a session: %d to %q, want 302 to the provider", resp.StatusCode, login)
	}
	q := login.Query()
	if q.Get("client_id") != f.provider.Config().ClientID || q.Get("code_challenge_method") != "S256" || q.Get("nonce") == "" || q.Get("state") == "" ||
		q.Get("redirect_uri") != f.endpoint.String()+edge.LoginCallbackPath || q.Get("scope") != "openid profile email" {
		t.Fatalf("login URL %s", login)
	}

	before := time.Now()
	resp, body := b.get(t, page, true)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "upstream /orders cookies=") || strings.Contains(body, "__sluice") {
		t.Fatalf("GET through the login: %d %q, want the upstream's page without the edge's cookies", resp.StatusCode, body)
	}
	if len(b.redirects) != 3 || b.redirects[1].Path != edge.LoginCallbackPath || b.redirects[2].RequestURI() != "/orders?id=7" {
		t.Fatalf("redirects %v, want the provider, the callback, and back to /orders?id=7", b.redirects)
	}

	sessions, _, err := f.store.ListAppSessions(t.Context(), f.account.ID, store.Page{})
	if err != nil || len(sessions) != 1 {
		t.Fatalf("app sessions %v, %v: want one", sessions, err)
	}
	s := sessions[0]
	want := store.BrowserSession{
		UserAgent: store.UserAgent{Raw: chromeUA, BrowserName: "Chrome", BrowserVersion: "131.0.0.0", DeviceType: "desktop", OSName: "Windows", OSVersion: "10"},
		IPAddress: "127.0.0.1",
		Location:  store.Location{CountryCode: "DE", Latitude: 52.52, Longitude: 13.40, LatLongRadiusKm: 20},
	}
	if s.BrowserSession != want {
		t.Errorf("browser session %+v\nwant %+v", s.BrowserSession, want)
	}
	endpointID := f.te.endpointID(t, f.endpoint.Hostname())
	if s.EndpointID != endpointID || s.EdgeID != "" || s.RouteID != "" || !strings.HasPrefix(s.ApplicationUserID, "usr_") ||
		s.PublicURL != f.endpoint.String() {
		t.Errorf("session refs: endpoint %s (want %s), edge %q, route %q, user %s, public_url %s", s.EndpointID, endpointID, s.EdgeID, s.RouteID, s.ApplicationUserID, s.PublicURL)
	}
	if exp := s.ExpiresAt.Sub(before); exp < 2*time.Hour-time.Minute || exp > 2*time.Hour+time.Minute {
		t.Errorf("expires_at %s, want the idle timeout (2h) from the login", s.ExpiresAt)
	}

	// A later request: through, without a login.
	if resp, body := b.get(t, f.endpoint.String()+"/staff", false); resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "upstream /staff") {
		t.Fatalf("GET /staff with the session: %d %q", resp.StatusCode, body)
	}
	evs := check.Eventually(t, 5*time.Second, "the /staff event", func() ([]map[string]any, bool) {
		evs := f.te.Events.OfKind(t, "http_request_complete.v0")
		return evs, len(evs) == 5
	})
	decisions := map[string]string{}
	for _, ev := range evs {
		path := dig(ev, "http", "request", "url", "path").(string)
		decisions[path] += fmt.Sprint(dig(ev, "oauth", "decision")) + " "
		if dig(ev, "oauth", "decision") == "allow" {
			if id, name, client := dig(ev, "oauth", "user", "id"), dig(ev, "oauth", "user", "name"), dig(ev, "oauth", "app_client_id"); id != "ann-42" || name != "ann" || client != f.provider.Config().ClientID {
				t.Errorf("%s: oauth user %v %v, client %v", path, id, name, client)
			}
		}
	}
	if decisions["/orders"] != "block block allow " || decisions[edge.LoginCallbackPath] != "allow " || decisions["/staff"] != "allow " {
		t.Errorf("oauth decisions by path %v", decisions)
	}
	// Whoever reads the events must not find a cookie to log in with.
	for _, ev := range evs {
		raw, _ := json.Marshal(ev)
		if m := loginCookieValue.Find(raw); m != nil {
			t.Errorf("an event carries a login cookie: %s", m)
		}
	}

	// Revoked: the next request goes to log in again, and the cookie goes.
	if _, err := f.store.DeleteAppSession(t.Context(), f.account.ID, s.ID); err != nil {
		t.Fatal(err)
	}
	resp = check.Eventually(t, 5*time.Second, "a login after the revocation", func() (*http.Response, bool) {
		resp, _ := b.get(t, f.endpoint.String()+"/staff", false)
		return resp, resp.StatusCode == http.StatusFound
	})
	if !strings.HasPrefix(resp.Header.Get("Location"), f.provider.AuthorizationEndpoint()) || !strings.Contains(strings.Join(resp.Header.Values("Set-Cookie"), "\n"), "__sluice_session_") {
		t.Fatalf("after the revocation: %d to %q, Set-Cookie %q", resp.StatusCode, resp.Header.Get("Location"), resp.Header.Values("Set-Cookie"))
	}
}

// TestOpenIDConnectBounds: a callback without its login under way gets a
// page, not another redirect; a provider that is down gets a 502 page,
// and the request's event a block.
func TestOpenIDConnectBounds(t *testing.T) {
	f := newLoginFixture(t)
	b := f.browser(t)
	resp, body := b.get(t, f.endpoint.String()+edge.LoginCallbackPath+"?code=x&state=forged", false)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("X-Sluice-Error-Code") != "ERR_SLUICE_651" || resp.Header.Get("Location") != "" {
		t.Fatalf("a forged callback: %d %q %q", resp.StatusCode, resp.Header.Get("X-Sluice-Error-Code"), body)
	}

	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + closed.Addr().String() + "/oidc"
	_ = closed.Close()
	other := f.listen(t, loginPolicy(down, "c", "s"))
	resp, body = b.get(t, other.String()+"/", false)
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get("X-Sluice-Error-Code") != "ERR_SLUICE_650" || !strings.Contains(body, down) {
		t.Fatalf("a provider that is down: %d %q %q", resp.StatusCode, resp.Header.Get("X-Sluice-Error-Code"), body)
	}
	check.Eventually(t, 5*time.Second, "a block in the event of the request the provider could not take", func() ([]map[string]any, bool) {
		for _, ev := range f.te.Events.OfKind(t, "http_request_complete.v0") {
			if dig(ev, "conn", "server_name") == other.Hostname() {
				return nil, dig(ev, "oauth", "decision") == "block" && dig(ev, "http", "response", "status_code") == float64(http.StatusBadGateway)
			}
		}
		return nil, false
	})

}

// TestOpenIDConnectLoginFlood: logins past the account's
// --max-app-sessions evict the least recently active sessions, whose
// browsers go to log in again, rather than lock the newest out.
func TestOpenIDConnectLoginFlood(t *testing.T) {
	f := newLoginFixtureWith(t, store.Config{Limits: store.Limits{AppSessions: 2}})
	page := f.endpoint.String() + "/"
	var browsers []*browser
	for range 3 {
		b := f.browser(t)
		if resp, body := b.get(t, page, true); resp.StatusCode != http.StatusOK {
			t.Fatalf("login: %d %q", resp.StatusCode, body)
		}
		browsers = append(browsers, b)
	}
	if sessions, _, err := f.store.ListAppSessions(t.Context(), f.account.ID, store.Page{}); err != nil || len(sessions) != 2 {
		t.Fatalf("app sessions %d, %v: want 2, the limit", len(sessions), err)
	}
	if resp, _ := browsers[2].get(t, page, false); resp.StatusCode != http.StatusOK {
		t.Fatalf("the newest login: %d, want it in", resp.StatusCode)
	}
	check.Eventually(t, 5*time.Second, "one of the first two browsers sent to log in again", func() (int, bool) {
		out := 0
		for _, b := range browsers[:2] {
			if resp, _ := b.get(t, page, false); resp.StatusCode == http.StatusFound {
				out++
			}
		}
		return out, out == 1
	})
}

// TestOpenIDConnectRefresh: a session's last_active is written at most
// once a minute while its user is active, and each write moves its end
// to the idle timeout from then.
func TestOpenIDConnectRefresh(t *testing.T) {
	clock := check.NewClock(time.Now())
	f := newLoginFixtureWith(t, store.Config{Clock: clock.Now})
	b := f.browser(t)
	page := f.endpoint.String() + "/"
	if resp, _ := b.get(t, page, true); resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	session := func() store.AppSession {
		t.Helper()
		sessions, _, err := f.store.ListAppSessions(t.Context(), f.account.ID, store.Page{})
		if err != nil || len(sessions) != 1 {
			t.Fatalf("app sessions %v, %v: want one", sessions, err)
		}
		return sessions[0]
	}
	first := session()
	for _, step := range []struct {
		advance time.Duration
		moved   bool
	}{
		{30 * time.Second, false},
		{29 * time.Second, false},
		{2 * time.Second, true}, // 61s after the login
		{30 * time.Second, false},
		{31 * time.Second, true},
	} {
		clock.Advance(step.advance)
		before := session()
		if resp, _ := b.get(t, page, false); resp.StatusCode != http.StatusOK {
			t.Fatalf("at +%s: %d", clock.Now().Sub(first.CreatedAt).Round(time.Second), resp.StatusCode)
		}
		after := session()
		now := clock.Now().UTC().Truncate(time.Millisecond)
		switch {
		case step.moved && (!after.LastActive.Equal(now) || !after.ExpiresAt.Equal(now.Add(2*time.Hour))):
			t.Fatalf("at +%s: last_active %s, expires_at %s; want both moved (to %s and 2h later)",
				now.Sub(first.CreatedAt).Round(time.Second), after.LastActive, after.ExpiresAt, now)
		case !step.moved && (!after.LastActive.Equal(before.LastActive) || !after.ExpiresAt.Equal(before.ExpiresAt)):
			t.Fatalf("at +%s: last_active %s, written within a minute of %s", now.Sub(first.CreatedAt).Round(time.Second), after.LastActive, before.LastActive)
		}
	}
}

// TestOpenIDConnectLogout: the logout path ends the browser's session
// in the store and takes its cookie; the next request goes to log in.
// Another site's link to it logs no one out.
func TestOpenIDConnectLogout(t *testing.T) {
	f := newLoginFixture(t)
	b := f.browser(t)
	page := f.endpoint.String() + "/"
	if resp, _ := b.get(t, page, true); resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	// Another site's link does not log the user out.
	cross, _ := http.NewRequest(http.MethodGet, f.endpoint.String()+edge.LogoutPath, nil)
	cross.Header.Set("Sec-Fetch-Site", "cross-site")
	crossResp, err := b.client.Do(cross)
	if err != nil {
		t.Fatal(err)
	}
	crossResp.Body.Close()
	if crossResp.StatusCode != http.StatusForbidden {
		t.Fatalf("a cross-site logout: %d, want 403", crossResp.StatusCode)
	}
	if sessions, _, err := f.store.ListAppSessions(t.Context(), f.account.ID, store.Page{}); err != nil || len(sessions) != 1 {
		t.Fatalf("app sessions after a cross-site logout: %v, %v; want the one", sessions, err)
	}
	resp, body := b.get(t, f.endpoint.String()+edge.LogoutPath, false)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "logged out") {
		t.Fatalf("logout: %d %q", resp.StatusCode, body)
	}
	if sessions, _, err := f.store.ListAppSessions(t.Context(), f.account.ID, store.Page{}); err != nil || len(sessions) != 0 {
		t.Fatalf("app sessions after the logout: %v, %v; want none", sessions, err)
	}
	for _, c := range b.client.Jar.Cookies(f.endpoint) {
		if strings.HasPrefix(c.Name, "__sluice_session_") {
			t.Fatalf("the session cookie stayed: %s", c.Name)
		}
	}
	if resp, _ := b.get(t, page, false); resp.StatusCode != http.StatusFound {
		t.Fatalf("after the logout: %d, want 302 to log in", resp.StatusCode)
	}
}

// TestOpenIDConnectOverHTTPS: over HTTPS the redirect URI is https and
// the cookies are Secure, and the login goes through.
func TestOpenIDConnectOverHTTPS(t *testing.T) {
	f := newLoginFixture(t)
	client := f.provider.Config()
	endpoint := f.listenScheme(t, "https", loginPolicy(f.provider.Issuer(), client.ClientID, client.ClientSecret))
	b := f.browser(t)
	resp, _ := b.get(t, endpoint.String()+"/", false)
	login, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || login.Query().Get("redirect_uri") != endpoint.String()+edge.LoginCallbackPath {
		t.Fatalf("GET over HTTPS: %d to %s, want 302 with the redirect URI %s", resp.StatusCode, login, endpoint.String()+edge.LoginCallbackPath)
	}
	if c := resp.Header.Get("Set-Cookie"); !strings.Contains(c, "; Secure") || !strings.Contains(c, "; HttpOnly") || !strings.Contains(c, "; SameSite=Lax") {
		t.Fatalf("the login's cookie over HTTPS: %q, want Secure, HttpOnly, SameSite=Lax", c)
	}
	if resp, body := b.get(t, endpoint.String()+"/", true); resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "upstream /") {
		t.Fatalf("through the login over HTTPS: %d %q", resp.StatusCode, body)
	}
}

// TestOpenIDConnectBind: a bind whose openid-connect has a mistake is
// refused with it, and so is any openid-connect at an edge that keeps no
// application sessions.
func TestOpenIDConnectBind(t *testing.T) {
	f := newLoginFixture(t)
	a := f.te.agent(t, f.te.Credential(f.account.ID))
	_, err := a.Listen(t.Context(), ngrok.WithURL("http://"), ngrok.WithTrafficPolicy(loginPolicy("ftp://id.example.test", "c", "s")))
	if err == nil || !strings.Contains(err.Error(), "ERR_SLUICE_622") || !strings.Contains(err.Error(), "issuer_url") {
		t.Fatalf("a bind with a bad issuer_url: %v, want ERR_SLUICE_622 naming it", err)
	}
	plain := startEdge(t)
	a = plain.agent(t, plain.Credential(f.account.ID))
	_, err = a.Listen(t.Context(), ngrok.WithURL("http://"), ngrok.WithTrafficPolicy(loginPolicy("https://id.example.test", "c", "s")))
	if err == nil || !strings.Contains(err.Error(), "runs no OpenID Connect logins") {
		t.Fatalf("an openid-connect at an edge without sessions: %v, want refused", err)
	}
}
