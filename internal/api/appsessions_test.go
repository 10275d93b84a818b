package api_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/appsession"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/sessionservice"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

type appSessionList struct {
	Sessions    []apiwire.AppSession `json:"application_sessions"`
	URI         string               `json:"uri"`
	NextPageURI *string              `json:"next_page_uri"`
}

// sessionEdge runs the session service on the env's NATS and store, and
// returns a client of it, as the edge has.
func (e *testEnv) sessionEdge(t *testing.T) *appsession.Client {
	t.Helper()
	svc := sessionservice.New(e.js.Conn(), e.store, sessionservice.Config{Logger: slog.New(slog.DiscardHandler)})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("session service: %v", err)
		}
	})
	edge := appsession.New(e.js.Conn())
	check.Eventually(t, 5*time.Second, "the session service to answer", func() (error, bool) {
		err := edge.End(t.Context(), appsession.EndRequest{AccountID: e.account, ID: "apps_x"})
		return err, errors.Is(err, appsession.ErrEnded)
	})
	return edge
}

// login is what the edge records when a user logs in through an HTTPS
// edge's route, or, with agent true, to an agent-initiated endpoint.
func login(account string, agent bool) appsession.RecordRequest {
	r := appsession.RecordRequest{
		AccountID: account,
		PublicURL: "https://app.example.com",
		BrowserSession: apiwire.BrowserSession{
			UserAgent: apiwire.UserAgent{Raw: "Mozilla/5.0 (Macintosh) Safari/605.1.15 <&>", BrowserName: "Safari", BrowserVersion: "17.1",
				DeviceType: "desktop", OSName: "macOS", OSVersion: "14.1"},
			IPAddress: "198.51.100.4",
			Location:  apiwire.Location{CountryCode: "JP", Latitude: 35.6762, Longitude: 139.6503, LatLongRadiusKm: 100},
		},
		ApplicationUserID: schemas.NewID(schemas.PrefixAppUser),
		EndpointID:        schemas.NewID(schemas.PrefixEndpoint),
		ExpiresAt:         time.Now().Add(time.Hour),
	}
	if !agent {
		r.EdgeID, r.RouteID = schemas.NewID(schemas.PrefixHTTPSEdge), schemas.NewID(schemas.PrefixHTTPSEdgeRoute)
	}
	return r
}

// TestAppSessionRoundTrip records sessions through the edge's package,
// reads them through the API with every field of spec 2.7 in its order,
// revokes one, and finds that the edge's refresh of it fails.
func TestAppSessionRoundTrip(t *testing.T) {
	e := newTestEnv(t)
	edge := e.sessionEdge(t)
	in := login(e.account, false)
	rec, err := edge.Record(t.Context(), in)
	if err != nil {
		t.Fatalf("Record: %v", err)
	}
	resp, out := e.call(t, e.token, http.MethodGet, "/app/sessions/"+rec.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	created := rec.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z")
	want := fmt.Sprintf(`{"id":%q,"uri":"%s/app/sessions/%s","public_url":"https://app.example.com",`+
		`"browser_session":{"user_agent":{"raw":"Mozilla/5.0 (Macintosh) Safari/605.1.15 <&>","browser_name":"Safari","browser_version":"17.1","device_type":"desktop","os_name":"macOS","os_version":"14.1"},`+
		`"ip_address":"198.51.100.4","location":{"country_code":"JP","latitude":35.6762,"longitude":139.6503,"lat_long_radius_km":100}},`+
		`"application_user":{"id":%q,"uri":"%s/app/users/%s"},"created_at":%q,"last_active":%q,"expires_at":%q,`+
		`"endpoint":{"id":%q,"uri":"%s/endpoints/%s"},"edge":{"id":%q,"uri":"%s/edges/https/%s"},"route":{"id":%q,"uri":"%s/edges/https/%s/routes/%s"}}`+"\n",
		rec.ID, e.url, rec.ID,
		in.ApplicationUserID, e.url, in.ApplicationUserID, created, created, rec.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000Z"),
		in.EndpointID, e.url, in.EndpointID, in.EdgeID, e.url, in.EdgeID, in.RouteID, e.url, in.EdgeID, in.RouteID)
	if string(out) != want {
		t.Fatalf("body\n %s\nwant\n %s", out, want)
	}

	// Agent-initiated: edge and route are null.
	agent, err := edge.Record(t.Context(), login(e.account, true))
	if err != nil {
		t.Fatal(err)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/app/sessions/"+agent.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.HasSuffix(string(out), `,"edge":null,"route":null}`+"\n") {
		t.Fatalf("agent-initiated session %s; want edge and route null", out)
	}

	resp, out = e.call(t, e.token, http.MethodGet, "/app/sessions", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	list := apitest.DecodeAs[appSessionList](t, out)
	if len(list.Sessions) != 2 || list.Sessions[0].ID != agent.ID || list.Sessions[1].ID != rec.ID || list.URI != e.url+"/app/sessions" || list.NextPageURI != nil {
		t.Fatalf("list %s", out)
	}

	resp, out = e.call(t, e.token, http.MethodDelete, "/app/sessions/"+rec.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	if len(out) != 0 {
		t.Fatalf("delete answered a body: %s", out)
	}
	if _, err := edge.Refresh(t.Context(), appsession.RefreshRequest{AccountID: e.account, ID: rec.ID}); !errors.Is(err, appsession.ErrEnded) {
		t.Fatalf("the edge's refresh of a revoked session: %v, want ErrEnded", err)
	}
	// Sessions have no audit event kinds: nothing was stored.
	if events := e.storedEvents(t, e.account); len(events) != 0 {
		t.Fatalf("sessions stored %d events, want none: %s", len(events), events[0].raw)
	}
}

// TestAppSessionErrors: every endpoint's errors, with the code and
// status the API gives them.
func TestAppSessionErrors(t *testing.T) {
	e := newTestEnv(t)
	s, err := e.store.RecordAppSession(t.Context(), e.account, storeSession())
	if err != nil {
		t.Fatal(err)
	}
	other := e.otherAccountToken(t)
	tests := []struct {
		name, token, method, path, body string
		status                          int
		code                            string
	}{
		{"get unknown", e.token, http.MethodGet, "/app/sessions/" + schemas.NewID(schemas.PrefixAppSession), "", 404, "ERR_SLUICE_420"},
		{"get malformed", e.token, http.MethodGet, "/app/sessions/apps_1", "", 404, "ERR_SLUICE_420"},
		{"get other prefix", e.token, http.MethodGet, "/app/sessions/" + schemas.NewID(schemas.PrefixBotUser), "", 404, "ERR_SLUICE_420"},
		{"get of another account", other, http.MethodGet, "/app/sessions/" + s.ID, "", 404, "ERR_SLUICE_420"},
		{"delete of another account", other, http.MethodDelete, "/app/sessions/" + s.ID, "", 404, "ERR_SLUICE_420"},
		{"delete unknown", e.token, http.MethodDelete, "/app/sessions/" + schemas.NewID(schemas.PrefixAppSession), "", 404, "ERR_SLUICE_420"},
		{"create", e.token, http.MethodPost, "/app/sessions", `{"public_url":"https://a.example.com"}`, 405, "ERR_SLUICE_405"},
		{"update", e.token, http.MethodPatch, "/app/sessions/" + s.ID, `{"expires_at":"2030-01-01T00:00:00Z"}`, 405, "ERR_SLUICE_405"},
		{"replace", e.token, http.MethodPut, "/app/sessions/" + s.ID, `{}`, 405, "ERR_SLUICE_405"},
		{"limit 0", e.token, http.MethodGet, "/app/sessions?limit=0", "", 400, "ERR_SLUICE_334"},
		{"limit 101", e.token, http.MethodGet, "/app/sessions?limit=101", "", 400, "ERR_SLUICE_334"},
		{"before_id of another family", e.token, http.MethodGet, "/app/sessions?before_id=" + schemas.NewID(schemas.PrefixBotUser), "", 400, "ERR_SLUICE_334"},
		{"no key", "", http.MethodGet, "/app/sessions", "", 401, "ERR_SLUICE_210"},
		{"bad key", "sk_nope", http.MethodGet, "/app/sessions/" + s.ID, "", 401, "ERR_SLUICE_211"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := e.call(t, tt.token, tt.method, tt.path, tt.body)
			wantError(t, resp, out, tt.status, tt.code, "")
		})
	}
	// Another account lists none of them, and nothing changed the session.
	resp, out := e.call(t, other, http.MethodGet, "/app/sessions", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if n := len(apitest.DecodeAs[appSessionList](t, out).Sessions); n != 0 {
		t.Fatalf("another account lists %d sessions", n)
	}
	if got, err := e.store.GetAppSession(t.Context(), e.account, s.ID); err != nil || got != s {
		t.Fatalf("after the refused calls: %+v, %v", got, err)
	}
}

// storeSession is a session to record through the store.
func storeSession() store.AppSession {
	return store.AppSession{
		PublicURL:         "https://app.example.com:8443",
		BrowserSession:    store.BrowserSession{IPAddress: "192.0.2.1"},
		ApplicationUserID: schemas.NewID(schemas.PrefixAppUser),
		EndpointID:        schemas.NewID(schemas.PrefixEndpoint),
		ExpiresAt:         time.Now().Add(time.Hour),
	}
}

// TestAppSessionPaging pages through 250 sessions with several limits, as
// TestPaging does the other families: each once, newest first, none of
// another account's.
func TestAppSessionPaging(t *testing.T) {
	if testing.Short() {
		t.Skip("records 250 sessions")
	}
	t.Parallel()
	e := newTestEnv(t)
	ctx := t.Context()
	other, err := e.store.CreateAccount(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for range pagedCount {
		s, err := e.store.RecordAppSession(ctx, e.account, storeSession())
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, s.ID)
	}
	if _, err := e.store.RecordAppSession(ctx, other.ID, storeSession()); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(want)
	for _, limit := range []int{7, 100} {
		if got := pageThrough(t, e, "/app/sessions", "application_sessions", limit); !slices.Equal(got, want) {
			t.Fatalf("limit %d: listed %d ids, want the %d of the account, newest first, each once", limit, len(got), len(want))
		}
	}
	resp, out := e.call(t, e.token, http.MethodGet, "/app/sessions", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if p := decodePage(t, out, "application_sessions"); !slices.Equal(p.items, want[:100]) || p.nextPageURI == nil {
		t.Fatalf("default page: %d items, next %v", len(p.items), p.nextPageURI)
	}
}

// TestAppSessionListFilter filters sessions on nested fields and on a ref
// that is null for agent-initiated endpoints, as every family's list.
func TestAppSessionListFilter(t *testing.T) {
	e := newTestEnv(t)
	var ids []string
	for _, c := range []struct{ country, edge string }{{"DE", ""}, {"FR", schemas.NewID(schemas.PrefixHTTPSEdge)}, {"DE", schemas.NewID(schemas.PrefixHTTPSEdge)}} {
		in := storeSession()
		in.BrowserSession.Location.CountryCode = c.country
		if c.edge != "" {
			in.EdgeID, in.RouteID = c.edge, schemas.NewID(schemas.PrefixHTTPSEdgeRoute)
		}
		s, err := e.store.RecordAppSession(t.Context(), e.account, in)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	for filter, want := range map[string][]string{
		`obj.browser_session.location.country_code == "DE"`:                   {ids[2], ids[0]},
		`has(obj.edge) && obj.edge.id.startsWith("edghts_")`:                  {ids[2], ids[1]},
		`!has(obj.route) && obj.public_url.startsWith("https://app.")`:        {ids[0]},
		`obj.browser_session.location.country_code == "FR" && has(obj.route)`: {ids[1]},
	} {
		resp, out := e.listFiltered(t, "/app/sessions", filter, "")
		apitest.WantStatus(t, resp, out, http.StatusOK)
		if got := decodePage(t, out, "application_sessions").items; !slices.Equal(got, want) {
			t.Errorf("filter %s: listed %v, want %v", filter, got, want)
		}
	}
	resp, out := e.listFiltered(t, "/app/sessions", `obj.browser_session.country == "DE"`, "")
	apitest.WantStatus(t, resp, out, http.StatusBadRequest)
}

// TestListFilterListCost lists 150 application sessions with a filter
// that matches none at close to the cost limit on each: the list stops
// with a 400 once the evaluations cost MaxObjectListCost in all, rather
// than spending about 150 times the cost limit of one.
func TestListFilterListCost(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	for range 150 {
		if _, err := e.store.RecordAppSession(t.Context(), e.account, storeSession()); err != nil {
			t.Fatal(err)
		}
	}
	ints := "[" + strings.Repeat("1,", 54) + "1]" // a loop in a loop costing about 21,000
	filter := ints + ".all(x, " + ints + ".all(y, x * y > 0)) && obj.id == \"\""
	resp, out := e.listFiltered(t, "/app/sessions", filter, "")
	msg := wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_336", "")
	if !strings.Contains(msg, "for one list") || apitest.DecodeError(t, out).Details["id"] == "" {
		t.Errorf("a filter over its cost for one list: %s", out)
	}
	resp, out = e.listFiltered(t, "/app/sessions", `obj.browser_session.user_agent.raw.contains("Firefox")`, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
}
