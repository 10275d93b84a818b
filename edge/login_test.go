package edge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/oauth2-proxy/mockoidc"
	"golang.ngrok.com/ngrok/v2"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
)

// loginCookieValue matches a login cookie with its value, as an event's
// headers would show it (lower case).
var loginCookieValue = regexp.MustCompile(`(?i)__sluice_(session|login)_\w*=[\w.-]{20,}`)

// chromeUA is the User-Agent of the test's browser client.
const chromeUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

// loginFixture is an edge on a real store keeping application sessions,
// with a GeoIP database the test wrote, an OpenID Connect provider in the
// process, and an agent's endpoint whose policy logs users in with it.
type loginFixture struct {
	te       *testEdge
	store    *store.Store
	account  store.Account
	provider *mockoidc.MockOIDC
	endpoint *url.URL // the endpoint's URL, http://<name>.sluice.localhost:<port>
}

// loginPolicy logs users in with the provider at issuer, and lets only
// ann-42 reach /staff.
func loginPolicy(issuer, clientID, secret string) string {
	return fmt.Sprintf(`
on_http_request:
  - actions:
      - type: openid-connect
        config: {issuer_url: %q, client_id: %q, client_secret: %q, idle_session_timeout: 2h}
  - expressions: ["req.url.path == '/staff' && actions.service.oidc.user.id != 'ann-42'"]
    actions: [{type: deny}]
`, issuer, clientID, secret)
}

func newLoginFixture(t *testing.T) *loginFixture {
	t.Helper()
	return newLoginFixtureWith(t, store.Config{})
}

// newLoginFixtureWith is newLoginFixture with the store opened with cfg;
// the edge reads the time from cfg.Clock too, when it is set.
func newLoginFixtureWith(t *testing.T, cfg store.Config) *loginFixture {
	t.Helper()
	provider, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = provider.Shutdown() })
	_, js := natstest.Connect(t, natstest.Start(t))
	st, err := store.Open(t.Context(), js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	account, err := st.CreateAccount(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	geo, err := edge.OpenGeoIP(writeGeoIP(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = geo.Close() })
	te := startEdge(t, func(c *edge.Config) {
		c.AppSessions, c.GeoIP, c.LoginPrivateIssuers = st, geo, true
		if cfg.Clock != nil {
			c.Now = cfg.Clock
		}
	})
	f := &loginFixture{te: te, store: st, account: account, provider: provider}
	f.watchEnds(t)
	client := provider.Config()
	f.endpoint = f.listen(t, loginPolicy(provider.Issuer(), client.ClientID, client.ClientSecret))
	return f
}

// watchEnds tells the edge of the sessions that end, as serve does.
func (f *loginFixture) watchEnds(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ends, err := f.store.WatchAppSessionEnds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for end := range ends {
			f.te.Service.AppSessionEnded(end.AccountID, end.ID)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// listen binds an endpoint of the account with the policy, whose
// upstream answers "upstream <path>" and the cookies it got.
func (f *loginFixture) listen(t *testing.T, policy string) *url.URL {
	t.Helper()
	a := f.te.agent(t, f.te.Credential(f.account.ID))
	ln, err := a.Listen(t.Context(), ngrok.WithURL("http://"), ngrok.WithTrafficPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "upstream %s cookies=%q", r.URL.Path, r.Header.Get("Cookie"))
		}))
	}()
	return ln.URL()
}

// writeGeoIP writes a GeoIP2 City database that places 127.0.0.0/8 in
// Berlin, and returns its path.
func writeGeoIP(t *testing.T) string {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoIP2-City", IncludeReservedNetworks: true, RecordSize: 28})
	if err != nil {
		t.Fatal(err)
	}
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	err = tree.Insert(loopback, mmdbtype.Map{
		"country":  mmdbtype.Map{"iso_code": mmdbtype.String("DE")},
		"location": mmdbtype.Map{"latitude": mmdbtype.Float64(52.52), "longitude": mmdbtype.Float64(13.40), "accuracy_radius": mmdbtype.Uint16(20)},
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "city.mmdb")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := tree.WriteTo(out); err != nil {
		t.Fatal(err)
	}
	return path
}

// browser is an HTTP client with cookies that reaches the edge's
// endpoints by their names, as a browser would, and records the
// redirects it follows.
type browser struct {
	client    *http.Client
	redirects []*url.URL
}

func (f *loginFixture) browser(t *testing.T) *browser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{}
	edgeAddr := f.te.HTTPAddr
	transport := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, _ := net.SplitHostPort(addr); strings.HasSuffix(host, ".sluice.localhost") {
			addr = edgeAddr
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(transport.CloseIdleConnections)
	b.client = &http.Client{Jar: jar, Transport: transport, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		b.redirects = append(b.redirects, r.URL)
		return nil
	}}
	return b
}

// get sends a GET of the browser, following redirects unless follow is
// false.
func (b *browser) get(t *testing.T, u string, follow bool) (*http.Response, string) {
	t.Helper()
	b.redirects = nil
	c := *b.client
	if !follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("User-Agent", chromeUA)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

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

// endpointID returns the id of the endpoint the edge recorded for host.
func (te *testEdge) endpointID(t *testing.T, host string) string {
	t.Helper()
	te.Store.Mu.Lock()
	defer te.Store.Mu.Unlock()
	for id, ep := range te.Store.Endpoints {
		if strings.Contains(ep.URL, "://"+host) {
			return id
		}
	}
	t.Fatalf("no endpoint of %s recorded", host)
	return ""
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

// testClock is a clock the test moves on.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestOpenIDConnectRefresh: a session's last_active is written at most
// once a minute while its user is active, and each write moves its end
// to the idle timeout from then.
func TestOpenIDConnectRefresh(t *testing.T) {
	clock := &testClock{t: time.Now()}
	f := newLoginFixtureWith(t, store.Config{Clock: clock.now})
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
		clock.advance(step.advance)
		before := session()
		if resp, _ := b.get(t, page, false); resp.StatusCode != http.StatusOK {
			t.Fatalf("at +%s: %d", clock.now().Sub(first.CreatedAt).Round(time.Second), resp.StatusCode)
		}
		after := session()
		now := clock.now().UTC().Truncate(time.Millisecond)
		switch {
		case step.moved && (!after.LastActive.Equal(now) || !after.ExpiresAt.Equal(now.Add(2*time.Hour))):
			t.Fatalf("at +%s: last_active %s, expires_at %s; want both moved (to %s and 2h later)",
				now.Sub(first.CreatedAt).Round(time.Second), after.LastActive, after.ExpiresAt, now)
		case !step.moved && (!after.LastActive.Equal(before.LastActive) || !after.ExpiresAt.Equal(before.ExpiresAt)):
			t.Fatalf("at +%s: last_active %s, written within a minute of %s", now.Sub(first.CreatedAt).Round(time.Second), after.LastActive, before.LastActive)
		}
	}
}
