package edge_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestRouteLogin: an HTTPS edge whose /admin route logs users in answers
// the login's callback itself though no route with a login matches its
// path; the session names the edge, the route and a tunnel of its
// group; and no upstream, of any route, gets the edge's login cookies.
func TestRouteLogin(t *testing.T) {
	f := newLoginFixture(t)
	te := f.te
	f.provider.QueueUser(&mockoidc.MockUser{Subject: "ann-42", Email: "ann@example.test"})
	a := routedAccount{id: f.account.ID, edgeID: schemas.NewID(schemas.PrefixHTTPSEdge), host: "shop.sluice.localhost"}
	te.Routing.PutEdge(t, store.HTTPSEdge{ID: a.edgeID, AccountID: a.id, Hostports: []string{a.host + ":443"}})
	web := a.backend(t, te, map[string]string{"edge": "web"})
	client := f.provider.Config()
	policy := fmt.Sprintf(`{"on_http_request":[{"actions":[{"type":"openid-connect","config":{"issuer_url":%q,"client_id":%q,"client_secret":%q}}]}]}`,
		f.provider.Issuer(), client.ClientID, client.ClientSecret)
	admin := a.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/admin", Backend: backendOf(web),
		TrafficPolicy: &store.RouteTrafficPolicy{Enabled: true, Value: policy}})
	a.route(t, te, store.HTTPSEdgeRoute{MatchType: store.MatchPathPrefix, Match: "/", Backend: backendOf(web)})
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "upstream %s cookies %q", r.URL.Path, r.Header.Get("Cookie"))
	})}
	go func() { _ = srv.Serve(up) }()
	t.Cleanup(func() { _ = srv.Close() })
	tunnels := startLabeledNodeAgent(t, te, te.Credential(a.id), labeledListener{Labels: map[string]string{"edge": "web"}, Upstream: "http://" + up.Addr().String()})

	_, port, _ := net.SplitHostPort(te.HTTPAddr)
	base := "http://" + a.host + ":" + port
	b := f.browser(t)
	resp, body := b.get(t, base+"/admin/users", true)
	if resp.StatusCode != 200 || body != `upstream /admin/users cookies ""` {
		t.Fatalf("after the login: %d %q (redirects %v)", resp.StatusCode, body, b.redirects)
	}
	if !strings.Contains(fmt.Sprint(b.redirects), "/.sluice/oidc/callback") {
		t.Errorf("the login went through no callback: %v", b.redirects)
	}
	if resp, body := b.get(t, base+"/home", true); resp.StatusCode != 200 || body != `upstream /home cookies ""` {
		t.Errorf("a route without a login, from a logged-in browser: %d %q", resp.StatusCode, body)
	}
	sessions, _, err := f.store.ListAppSessions(t.Context(), a.id, store.Page{})
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %+v, %v; want one", sessions, err)
	}
	if s := sessions[0]; s.EdgeID != a.edgeID || s.RouteID != admin.ID || s.EndpointID != tunnels[0] {
		t.Errorf("the session names edge %s, route %s, endpoint %s; want %s, %s, %s", s.EdgeID, s.RouteID, s.EndpointID, a.edgeID, admin.ID, tunnels[0])
	}
	for _, ev := range te.Events.OfKind(t, "http_request_complete.v0") {
		if strings.Contains(fmt.Sprint(dig(ev, "http", "request", "headers")), "__sluice_") {
			t.Errorf("an event carries the edge's login cookies: %v", dig(ev, "http", "request", "headers"))
		}
	}
}
