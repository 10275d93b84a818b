package appsession_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/appsession"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/sessionservice"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// env is a NATS server, a store on a clock the test moves, the service
// answering on it, and a client of it.
type env struct {
	ctx    context.Context
	store  *store.Store
	clock  *check.Clock
	client *appsession.Client
	nc     *nats.Conn
	js     jetstream.JetStream
}

func newEnv(t *testing.T, limits store.Limits) env {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	srv := natstest.Start(t)
	nc, js := natstest.Connect(t, srv)
	c := check.NewClock(time.Now())
	st, err := store.Open(ctx, js, store.Config{Limits: limits, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	svc := sessionservice.New(nc, st, sessionservice.Config{SweepInterval: 10 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	edge, _ := natstest.Connect(t, srv)
	cl := appsession.New(edge)
	// The service subscribes in Run: wait until it answers.
	check.Eventually(t, 5*time.Second, "the service to answer", func() (error, bool) {
		_, err := cl.Refresh(ctx, appsession.RefreshRequest{AccountID: schemas.NewID(schemas.PrefixAccount), ID: "apps_x"})
		return err, errors.Is(err, appsession.ErrEnded)
	})
	return env{ctx: ctx, store: st, clock: c, client: cl, nc: edge, js: js}
}

func (e env) account(t *testing.T, name string) string {
	t.Helper()
	a, err := e.store.CreateAccount(e.ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

func (e env) recordRequest(accountID string) appsession.RecordRequest {
	return appsession.RecordRequest{
		AccountID: accountID,
		PublicURL: "https://app.example.com",
		BrowserSession: apiwire.BrowserSession{
			UserAgent: apiwire.UserAgent{Raw: "Mozilla/5.0 Firefox/133.0", BrowserName: "Firefox", BrowserVersion: "133.0", DeviceType: "desktop", OSName: "Linux"},
			IPAddress: "2001:db8::7",
			Location:  apiwire.Location{CountryCode: "FR", Latitude: 48.85, Longitude: 2.35, LatLongRadiusKm: 50},
		},
		ApplicationUserID: schemas.NewID(schemas.PrefixAppUser),
		EndpointID:        schemas.NewID(schemas.PrefixEndpoint),
		EdgeID:            schemas.NewID("edghts_"),
		RouteID:           schemas.NewID("edghtsrt_"),
		ExpiresAt:         e.clock.Now().Add(time.Hour),
	}
}

// TestRecordRefreshEnd records a session over NATS, refreshes it, ends
// it, and then finds that a refresh fails with ErrEnded, as the edge
// would to log the user out.
func TestRecordRefreshEnd(t *testing.T) {
	e := newEnv(t, store.Limits{})
	account := e.account(t, "team")
	s, err := e.client.Record(e.ctx, e.recordRequest(account))
	if err != nil {
		t.Fatalf("Record: %v", err)
	}
	if schemas.CheckID(schemas.PrefixAppSession, s.ID) != nil || s.AccountID != account || !s.LastActive.Equal(s.CreatedAt) {
		t.Fatalf("recorded %+v", s)
	}
	stored, err := e.store.GetAppSession(e.ctx, account, s.ID)
	if err != nil || stored.BrowserSession.IPAddress != "2001:db8::7" || stored.BrowserSession.UserAgent.BrowserName != "Firefox" {
		t.Fatalf("stored %+v, %v", stored, err)
	}

	e.clock.Advance(time.Minute)
	expires := e.clock.Now().Add(2 * time.Hour).Truncate(time.Millisecond)
	r, err := e.client.Refresh(e.ctx, appsession.RefreshRequest{AccountID: account, ID: s.ID, ExpiresAt: expires})
	if err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if !r.ExpiresAt.Equal(expires) || !r.LastActive.Equal(e.clock.Now().Truncate(time.Millisecond)) {
		t.Fatalf("refreshed %+v; want last_active now and expires_at %s", r, expires)
	}

	if err := e.client.End(e.ctx, appsession.EndRequest{AccountID: account, ID: s.ID}); err != nil {
		t.Fatalf("End: %v", err)
	}
	if _, err := e.client.Refresh(e.ctx, appsession.RefreshRequest{AccountID: account, ID: s.ID}); !errors.Is(err, appsession.ErrEnded) {
		t.Fatalf("Refresh of an ended session: %v, want ErrEnded", err)
	}
	if err := e.client.End(e.ctx, appsession.EndRequest{AccountID: account, ID: s.ID}); !errors.Is(err, appsession.ErrEnded) {
		t.Fatalf("End of an ended session: %v, want ErrEnded", err)
	}
}

// TestRevokedThroughTheStore checks that a session revoked as the API
// does (DeleteAppSession) cannot be refreshed.
func TestRevokedThroughTheStore(t *testing.T) {
	e := newEnv(t, store.Limits{})
	account := e.account(t, "team")
	s, err := e.client.Record(e.ctx, e.recordRequest(account))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DeleteAppSession(e.ctx, account, s.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.client.Refresh(e.ctx, appsession.RefreshRequest{AccountID: account, ID: s.ID})
	if !errors.Is(err, appsession.ErrEnded) || !strings.Contains(err.Error(), "log the user out") {
		t.Fatalf("Refresh of a revoked session: %v, want ErrEnded saying to log the user out", err)
	}
}

// TestAccountIsolation checks that a request naming another account
// touches none of this account's sessions.
func TestAccountIsolation(t *testing.T) {
	e := newEnv(t, store.Limits{})
	account, other := e.account(t, "team"), e.account(t, "other team")
	s, err := e.client.Record(e.ctx, e.recordRequest(account))
	if err != nil {
		t.Fatal(err)
	}
	far := e.clock.Now().Add(20 * time.Hour)
	if _, err := e.client.Refresh(e.ctx, appsession.RefreshRequest{AccountID: other, ID: s.ID, ExpiresAt: far}); !errors.Is(err, appsession.ErrEnded) {
		t.Fatalf("Refresh naming another account: %v, want ErrEnded", err)
	}
	if err := e.client.End(e.ctx, appsession.EndRequest{AccountID: other, ID: s.ID}); !errors.Is(err, appsession.ErrEnded) {
		t.Fatalf("End naming another account: %v, want ErrEnded", err)
	}
	stored, err := e.store.GetAppSession(e.ctx, account, s.ID)
	if err != nil || !stored.ExpiresAt.Equal(s.ExpiresAt) {
		t.Fatalf("the session after another account's requests: %+v, %v; want it unchanged", stored, err)
	}
}

// TestInvalidRequests checks that every bad request is a 400 naming its
// field, and records nothing.
func TestInvalidRequests(t *testing.T) {
	e := newEnv(t, store.Limits{})
	account := e.account(t, "team")
	other := e.account(t, "other")
	for _, tt := range []struct {
		name, field string
		edit        func(*appsession.RecordRequest)
	}{
		{"no account", "account_id", func(r *appsession.RecordRequest) { r.AccountID = "" }},
		{"not an account id", "account_id", func(r *appsession.RecordRequest) { r.AccountID = "ac_../x" }},
		{"no such account", "account_id", func(r *appsession.RecordRequest) { r.AccountID = schemas.NewID(schemas.PrefixAccount) }},
		{"ip address", "browser_session.ip_address", func(r *appsession.RecordRequest) { r.BrowserSession.IPAddress = "localhost" }},
		{"country code", "browser_session.location.country_code", func(r *appsession.RecordRequest) { r.BrowserSession.Location.CountryCode = "ZZ" }},
		{"user agent", "browser_session.user_agent.raw", func(r *appsession.RecordRequest) {
			r.BrowserSession.UserAgent.Raw = strings.Repeat("x", 1025)
		}},
		{"public url", "public_url", func(r *appsession.RecordRequest) { r.PublicURL = "javascript:alert(1)" }},
		{"user id", "application_user.id", func(r *appsession.RecordRequest) { r.ApplicationUserID = account }},
		{"endpoint id", "endpoint.id", func(r *appsession.RecordRequest) { r.EndpointID = "" }},
		{"edge without route", "route.id", func(r *appsession.RecordRequest) { r.RouteID = "" }},
		{"expired", "expires_at", func(r *appsession.RecordRequest) { r.ExpiresAt = e.clock.Now().Add(-time.Hour) }},
		{"far", "expires_at", func(r *appsession.RecordRequest) { r.ExpiresAt = e.clock.Now().Add(40 * 24 * time.Hour) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := e.recordRequest(account)
			tt.edit(&in)
			_, err := e.client.Record(e.ctx, in)
			var invalid *appsession.InvalidError
			if !errors.As(err, &invalid) || invalid.Field != tt.field || !errors.Is(err, appsession.ErrInvalid) {
				t.Fatalf("Record: %v; want an *InvalidError of %s", err, tt.field)
			}
		})
	}
	for _, tt := range []struct{ name, subject, body, field string }{
		{"unknown field", appsession.SubjectRecord, `{"account_id":"` + account + `","is_admin":true}`, ""},
		{"wrong type", appsession.SubjectRefresh, `{"account_id":"` + account + `","id":7}`, "id"},
		{"not json", appsession.SubjectEnd, `{"account_id":`, ""},
		{"two values", appsession.SubjectEnd, `{} {}`, ""},
		{"too large", appsession.SubjectRecord, `{"public_url":"` + strings.Repeat("a", appsession.MaxRequest) + `"}`, ""},
		// A member twice, or named but for case (which encoding/json takes
		// for the field), is refused rather than the last taken.
		{"account twice", appsession.SubjectRecord, withMember(t, e.recordRequest(account), `"account_id":"`+other+`"`), "account_id"},
		{"account in capitals", appsession.SubjectRecord, withMember(t, e.recordRequest(account), `"ACCOUNT_ID":"`+other+`"`), "ACCOUNT_ID"},
		{"ip address twice", appsession.SubjectRecord, strings.Replace(withMember(t, e.recordRequest(account), ""), `"ip_address":`, `"ip_address":"192.0.2.1","ip_address":`, 1), "browser_session.ip_address"},
		{"id twice", appsession.SubjectEnd, `{"account_id":"` + account + `","id":"x","id":"y"}`, "id"},
		{"lone surrogate", appsession.SubjectRecord, strings.Replace(withMember(t, e.recordRequest(account), ""), `"raw":"`, `"raw":"\ud800`, 1), "browser_session.user_agent.raw"},
		{"invalid UTF-8", appsession.SubjectRecord, strings.Replace(withMember(t, e.recordRequest(account), ""), `"raw":"`, "\"raw\":\"\xff", 1), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reply, err := e.nc.RequestWithContext(e.ctx, tt.subject, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if code := reply.Header.Get(appsession.HeaderErrorCode); code != "400" || !strings.Contains(string(reply.Data), `"field":"`+tt.field+`"`) {
				t.Fatalf("answer %s %q %s; want 400 naming %q", code, reply.Header.Get(appsession.HeaderError), reply.Data, tt.field)
			}
		})
	}
	for _, id := range []string{account, other} {
		if page, _, err := e.store.ListAppSessions(e.ctx, id, store.Page{}); err != nil || len(page) != 0 {
			t.Fatalf("sessions after the bad requests: %+v, %v", page, err)
		}
	}
}

// withMember returns the JSON of in with member, unless "", first.
func withMember(t *testing.T, in appsession.RecordRequest, member string) string {
	t.Helper()
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if member == "" {
		return string(data)
	}
	return "{" + member + "," + string(data[1:])
}

// TestExpiredSessionsAreSwept moves the clock past a session's end: the
// service's sweep removes it from the store, and a refresh fails.
func TestExpiredSessionsAreSwept(t *testing.T) {
	e := newEnv(t, store.Limits{})
	account := e.account(t, "team")
	in := e.recordRequest(account)
	in.ExpiresAt = e.clock.Now().Add(time.Minute)
	s, err := e.client.Record(e.ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	if _, err := e.client.Refresh(e.ctx, appsession.RefreshRequest{AccountID: account, ID: s.ID}); !errors.Is(err, appsession.ErrEnded) {
		t.Fatalf("Refresh of an expired session: %v, want ErrEnded", err)
	}
	kv, err := e.js.KeyValue(e.ctx, store.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	check.Eventually(t, 5*time.Second, "the expired session removed from the bucket by the service's sweep", func() (error, bool) {
		_, err := kv.Get(e.ctx, "app_sessions."+account+"."+s.ID)
		return err, errors.Is(err, jetstream.ErrKeyNotFound)
	})
}

// TestLimitEvictsTheLeastRecentlyActive records past the account's limit
// over NATS: every record succeeds, the account keeps the limit's number
// of sessions, and the session evicted can no longer be refreshed.
func TestLimitEvictsTheLeastRecentlyActive(t *testing.T) {
	e := newEnv(t, store.Limits{AppSessions: 2})
	account := e.account(t, "team")
	var ids []string
	for range 4 {
		s, err := e.client.Record(e.ctx, e.recordRequest(account))
		if err != nil {
			t.Fatalf("Record: %v", err)
		}
		ids = append(ids, s.ID)
		e.clock.Advance(time.Second)
	}
	for i, id := range ids {
		_, err := e.client.Refresh(e.ctx, appsession.RefreshRequest{AccountID: account, ID: id})
		if ended := errors.Is(err, appsession.ErrEnded); ended != (i < 2) || (!ended && err != nil) {
			t.Fatalf("Refresh of session %d: %v; want the first two evicted", i, err)
		}
	}
}
