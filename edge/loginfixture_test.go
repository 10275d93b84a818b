package edge_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/oauth2-proxy/mockoidc"
	"golang.ngrok.com/ngrok/v2"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
)

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

// listen binds an HTTP endpoint of the account with the policy, whose
// upstream answers "upstream <path>" and the cookies it got.
func (f *loginFixture) listen(t *testing.T, policy string) *url.URL {
	t.Helper()
	return f.listenScheme(t, "http", policy)
}

// listenScheme is listen with an endpoint of the scheme, http or https.
func (f *loginFixture) listenScheme(t *testing.T, scheme, policy string) *url.URL {
	t.Helper()
	a := f.te.agent(t, f.te.Credential(f.account.ID))
	ln, err := a.Listen(t.Context(), ngrok.WithURL(scheme+"://"), ngrok.WithTrafficPolicy(policy))
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
	transport := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			// The edge's listeners are on loopback, at the ports of the
			// endpoints' URLs.
			if host, port, _ := net.SplitHostPort(addr); strings.HasSuffix(host, ".sluice.localhost") {
				addr = net.JoinHostPort("127.0.0.1", port)
			}
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{RootCAs: f.te.Roots},
	}
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
