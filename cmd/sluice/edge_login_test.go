package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/oauth2-proxy/mockoidc"
	"golang.ngrok.com/ngrok/v2"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/check"
)

// TestServeDevEdgeLogin runs sluice serve --dev --edge-geoip FILE with an
// OpenID Connect provider in the test's process: a browser logs in
// through an endpoint's openid-connect, the API lists its application
// session located by the database, and a DELETE of it through the API
// sends the browser's next request to log in again: the store's watch of
// the sessions' ends reaches the edge.
func TestServeDevEdgeLogin(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sluice serve")
	}
	provider, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = provider.Shutdown() })
	const token = "sk_test_edge_login_0123456789"
	clearSluiceEnv(t)
	t.Setenv(bootstrapKeyEnv, token)
	p := startServeInProcess(t, "--dev", "--dev-aws-listen", "127.0.0.1:0", "--edge-geoip", writeLoopbackGeoIP(t))
	waitReady(t, p.url)
	logs := p.logs.String()
	agents := strings.TrimPrefix(logAttrOf(t, logs, "the edge is serving", "agents"), "tls://")
	public := strings.TrimPrefix(logAttrOf(t, logs, "the edge is serving", "http"), "http://")
	caPEM, err := os.ReadFile(logAttrOf(t, logs, "the edge is serving", "agents_ca"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)

	status, body := request(t, http.MethodPost, p.url+"/credentials", token, `{"description": "login test"}`)
	var cred struct{ Token string }
	if status != http.StatusCreated || json.Unmarshal([]byte(body), &cred) != nil {
		t.Fatalf("creating a credential: %d %s", status, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	agent, err := ngrok.NewAgent(ngrok.WithAuthtoken(cred.Token), ngrok.WithAgentConnectURL(agents), ngrok.WithAgentConnectCAs(pool))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Disconnect()
	client := provider.Config()
	ln, err := agent.Listen(ctx, ngrok.WithURL("http://"), ngrok.WithTrafficPolicy(fmt.Sprintf(`
on_http_request:
  - actions:
      - type: openid-connect
        config: {issuer_url: %q, client_id: %q, client_secret: %q}
`, provider.Issuer(), client.ClientID, client.ClientSecret)))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "upstream %s", r.URL.Path) }))
	}()

	// A browser: cookies, and the endpoint's name reaching the edge.
	jar, _ := cookiejar.New(nil)
	transport := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, _ := net.SplitHostPort(addr); strings.HasSuffix(host, ".sluice.localhost") {
			addr = public
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	defer transport.CloseIdleConnections()
	browser := &http.Client{Jar: jar, Transport: transport}
	get := func(follow bool) (int, string) {
		t.Helper()
		c := *browser
		if !follow {
			c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		}
		resp, err := c.Get(ln.URL().String() + "/account")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := get(true); status != http.StatusOK || body != "upstream /account" {
		t.Fatalf("through the login: %d %q", status, body)
	}

	status, body = request(t, http.MethodGet, p.url+apiwire.AppSessionsPath, token, "")
	var list struct {
		Sessions []apiwire.AppSession `json:"application_sessions"`
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil || len(list.Sessions) != 1 {
		t.Fatalf("GET /app/sessions: %d %s, want one session", status, body)
	}
	s := list.Sessions[0]
	if loc := s.BrowserSession.Location; loc.CountryCode != "NZ" || s.BrowserSession.IPAddress != "127.0.0.1" || !strings.HasPrefix(s.Endpoint.ID, "ep_") || s.Edge != nil {
		t.Fatalf("the session %+v, want one from 127.0.0.1 located in NZ, of the endpoint, without an edge", s)
	}
	if status, body := request(t, http.MethodDelete, p.url+apiwire.AppSessionsPath+"/"+s.ID, token, ""); status != http.StatusNoContent {
		t.Fatalf("DELETE the session: %d %s", status, body)
	}
	check.Eventually(t, 5*time.Second, "the browser sent to log in again", func() (int, bool) {
		status, _ := get(false)
		return status, status == http.StatusFound
	})
}

// writeLoopbackGeoIP writes a GeoIP2 City database that places
// 127.0.0.0/8 in Wellington, and returns its path.
func writeLoopbackGeoIP(t *testing.T) string {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoIP2-City", IncludeReservedNetworks: true, RecordSize: 28})
	if err != nil {
		t.Fatal(err)
	}
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	if err := tree.Insert(loopback, mmdbtype.Map{
		"country":  mmdbtype.Map{"iso_code": mmdbtype.String("NZ")},
		"location": mmdbtype.Map{"latitude": mmdbtype.Float64(-41.29), "longitude": mmdbtype.Float64(174.78), "accuracy_radius": mmdbtype.Uint16(50)},
	}); err != nil {
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
