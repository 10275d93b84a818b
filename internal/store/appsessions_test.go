package store_test

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// newSessionEnv is newEnv with the store on a clock the test moves on.
func newSessionEnv(t *testing.T, cfg store.Config) (env, *check.Clock) {
	t.Helper()
	e := newEnvWith(t, cfg)
	clock := check.NewClock(time.Now())
	_, js := natstest.Connect(t, e.srv)
	cfg.Clock = clock.Now
	s, err := store.Open(e.ctx, js, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	e.store = s
	return e, clock
}

// appSession returns a valid session to record, expiring in an hour by
// clock.
func appSession(clock *check.Clock) store.AppSession {
	return store.AppSession{
		PublicURL: "https://app.example.com",
		BrowserSession: store.BrowserSession{
			UserAgent: store.UserAgent{Raw: "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0", BrowserName: "Firefox", BrowserVersion: "133.0",
				DeviceType: "desktop", OSName: "Linux", OSVersion: ""},
			IPAddress: "203.0.113.7",
			Location:  store.Location{CountryCode: "de", Latitude: 52.52, Longitude: 13.405, LatLongRadiusKm: 20},
		},
		ApplicationUserID: schemas.NewID(schemas.PrefixAppUser),
		EndpointID:        schemas.NewID(schemas.PrefixEndpoint),
		EdgeID:            schemas.NewID("edghts_"),
		RouteID:           schemas.NewID("edghtsrt_"),
		ExpiresAt:         clock.Now().Add(time.Hour),
	}
}

// TestAppSessionNegativeZero records a latitude and longitude of -0: they
// are stored as 0, as JSON readers and writers read and write 0, not as
// -0, which encoding/json writes back as "-0".
func TestAppSessionNegativeZero(t *testing.T) {
	e, clock := newSessionEnv(t, store.Config{})
	account := e.createAccount(t, "team")
	in := appSession(clock)
	in.BrowserSession.Location.Latitude = math.Copysign(0, -1)
	in.BrowserSession.Location.Longitude = math.Copysign(0, -1)
	a, err := e.store.RecordAppSession(e.ctx, account.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := e.store.GetAppSession(e.ctx, account.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []store.Location{a.BrowserSession.Location, stored.BrowserSession.Location} {
		if math.Signbit(l.Latitude) || math.Signbit(l.Longitude) {
			t.Fatalf("location %+v; want latitude and longitude 0, not -0", l)
		}
	}
}

// TestAppSessionLifecycle records, reads, lists, refreshes and deletes a
// session: the store sets its id, account, created_at and last_active;
// another account's id is not found; a deleted session cannot be
// refreshed.
func TestAppSessionLifecycle(t *testing.T) {
	e, clock := newSessionEnv(t, store.Config{})
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")

	in := appSession(clock)
	in.ID, in.AccountID, in.LastActive = "apps_ignored", other.ID, clock.Now().Add(-time.Hour)
	a, err := e.store.RecordAppSession(e.ctx, account.ID, in)
	if err != nil {
		t.Fatalf("RecordAppSession: %v", err)
	}
	if schemas.CheckID(schemas.PrefixAppSession, a.ID) != nil || a.AccountID != account.ID || a.CreatedAt.IsZero() || !a.LastActive.Equal(a.CreatedAt) {
		t.Fatalf("recorded %+v; want an apps_ id of the account, last_active its creation", a)
	}
	if a.BrowserSession.Location.CountryCode != "DE" || a.PublicURL != in.PublicURL || a.EdgeID != in.EdgeID {
		t.Fatalf("recorded %+v; want the country code upper case, the fields as given", a)
	}
	if got, err := e.store.GetAppSession(e.ctx, account.ID, a.ID); err != nil || got != a {
		t.Fatalf("GetAppSession = %+v, %v; want %+v", got, err, a)
	}
	if _, err := e.store.GetAppSession(e.ctx, other.ID, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetAppSession of another account: %v, want ErrNotFound", err)
	}
	if _, err := e.store.RefreshAppSession(e.ctx, other.ID, a.ID, time.Time{}, time.Time{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RefreshAppSession of another account: %v, want ErrNotFound", err)
	}
	if _, err := e.store.DeleteAppSession(e.ctx, other.ID, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DeleteAppSession of another account: %v, want ErrNotFound", err)
	}

	clock.Advance(10 * time.Minute)
	expires := clock.Now().Add(2 * time.Hour)
	refreshed, err := e.store.RefreshAppSession(e.ctx, account.ID, a.ID, time.Time{}, expires)
	if err != nil {
		t.Fatalf("RefreshAppSession: %v", err)
	}
	if !refreshed.LastActive.Equal(clock.Now().Truncate(time.Millisecond)) || !refreshed.ExpiresAt.Equal(expires.Truncate(time.Millisecond)) {
		t.Fatalf("refreshed %+v; want last_active now, expires_at %s", refreshed, expires)
	}
	// An older last_active never moves it back.
	again, err := e.store.RefreshAppSession(e.ctx, account.ID, a.ID, clock.Now().Add(-time.Minute), time.Time{})
	if err != nil || !again.LastActive.Equal(refreshed.LastActive) || !again.ExpiresAt.Equal(refreshed.ExpiresAt) {
		t.Fatalf("RefreshAppSession with an older time = %+v, %v", again, err)
	}
	page, next, err := e.store.ListAppSessions(e.ctx, account.ID, store.Page{})
	if err != nil || len(page) != 1 || page[0].ID != a.ID || next != "" {
		t.Fatalf("ListAppSessions = %+v, %q, %v", page, next, err)
	}
	if page, _, err := e.store.ListAppSessions(e.ctx, other.ID, store.Page{}); err != nil || len(page) != 0 {
		t.Fatalf("ListAppSessions of another account = %+v, %v", page, err)
	}

	if _, err := e.store.DeleteAppSession(e.ctx, account.ID, a.ID); err != nil {
		t.Fatalf("DeleteAppSession: %v", err)
	}
	if _, err := e.store.RefreshAppSession(e.ctx, account.ID, a.ID, time.Time{}, time.Time{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RefreshAppSession of a revoked session: %v, want ErrNotFound", err)
	}
	if n := countPrefix(e.rawEntries(t), "app_sessions."); n != 0 {
		t.Fatalf("%d sessions stored after the delete", n)
	}
}

// TestAppSessionValidation checks each rule of a session's fields: a
// *ValidationError naming the field, and nothing stored.
func TestAppSessionValidation(t *testing.T) {
	e, clock := newSessionEnv(t, store.Config{})
	account := e.createAccount(t, "team")
	long := strings.Repeat("a", 256)
	for _, tt := range []struct {
		name, field string
		edit        func(*store.AppSession)
	}{
		{"no public url", "public_url", func(a *store.AppSession) { a.PublicURL = "" }},
		{"not a url", "public_url", func(a *store.AppSession) { a.PublicURL = "app.example.com" }},
		{"ftp", "public_url", func(a *store.AppSession) { a.PublicURL = "ftp://app.example.com" }},
		{"a path", "public_url", func(a *store.AppSession) { a.PublicURL = "https://app.example.com/login" }},
		{"user info", "public_url", func(a *store.AppSession) { a.PublicURL = "https://u:p@app.example.com" }},
		{"no host", "public_url", func(a *store.AppSession) { a.PublicURL = "https://:443" }},
		{"port out of range", "public_url", func(a *store.AppSession) { a.PublicURL = "https://app.example.com:70000" }},
		{"port 0", "public_url", func(a *store.AppSession) { a.PublicURL = "https://app.example.com:0" }},
		{"long url", "public_url", func(a *store.AppSession) { a.PublicURL = "https://" + strings.Repeat("a", 300) + ".com" }},
		{"long user agent", "browser_session.user_agent.raw", func(a *store.AppSession) { a.BrowserSession.UserAgent.Raw = strings.Repeat("a", 1025) }},
		{"control in user agent", "browser_session.user_agent.raw", func(a *store.AppSession) { a.BrowserSession.UserAgent.Raw = "a\x00b" }},
		{"bad utf-8", "browser_session.user_agent.browser_name", func(a *store.AppSession) { a.BrowserSession.UserAgent.BrowserName = "\xff" }},
		{"long os", "browser_session.user_agent.os_name", func(a *store.AppSession) { a.BrowserSession.UserAgent.OSName = long }},
		{"no ip", "browser_session.ip_address", func(a *store.AppSession) { a.BrowserSession.IPAddress = "" }},
		{"bad ip", "browser_session.ip_address", func(a *store.AppSession) { a.BrowserSession.IPAddress = "203.0.113.300" }},
		{"ip zone", "browser_session.ip_address", func(a *store.AppSession) { a.BrowserSession.IPAddress = "fe80::1%eth0" }},
		{"country of three", "browser_session.location.country_code", func(a *store.AppSession) { a.BrowserSession.Location.CountryCode = "DEU" }},
		{"no such country", "browser_session.location.country_code", func(a *store.AppSession) { a.BrowserSession.Location.CountryCode = "QQ" }},
		{"a continent", "browser_session.location.country_code", func(a *store.AppSession) { a.BrowserSession.Location.CountryCode = "150" }},
		{"latitude", "browser_session.location.latitude", func(a *store.AppSession) { a.BrowserSession.Location.Latitude = 91 }},
		{"latitude NaN", "browser_session.location.latitude", func(a *store.AppSession) { a.BrowserSession.Location.Latitude = math.NaN() }},
		{"longitude", "browser_session.location.longitude", func(a *store.AppSession) { a.BrowserSession.Location.Longitude = -181 }},
		{"radius", "browser_session.location.lat_long_radius_km", func(a *store.AppSession) { a.BrowserSession.Location.LatLongRadiusKm = 1 << 40 }},
		{"no user", "application_user.id", func(a *store.AppSession) { a.ApplicationUserID = "" }},
		{"user of another prefix", "application_user.id", func(a *store.AppSession) { a.ApplicationUserID = schemas.NewID("bot_") }},
		{"no endpoint", "endpoint.id", func(a *store.AppSession) { a.EndpointID = "ep_1" }},
		{"bad edge", "edge.id", func(a *store.AppSession) { a.EdgeID = "edghts_x" }},
		{"bad route", "route.id", func(a *store.AppSession) { a.RouteID = schemas.NewID("edghts_") }},
		{"edge without route", "route.id", func(a *store.AppSession) { a.RouteID = "" }},
		{"route without edge", "route.id", func(a *store.AppSession) { a.EdgeID = "" }},
		{"no expiry", "expires_at", func(a *store.AppSession) { a.ExpiresAt = time.Time{} }},
		{"expired", "expires_at", func(a *store.AppSession) { a.ExpiresAt = clock.Now().Add(-time.Second) }},
		{"too far", "expires_at", func(a *store.AppSession) { a.ExpiresAt = clock.Now().Add(31 * 24 * time.Hour) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := appSession(clock)
			tt.edit(&in)
			_, err := e.store.RecordAppSession(e.ctx, account.ID, in)
			var invalid *store.ValidationError
			if !errors.As(err, &invalid) || invalid.Field != tt.field || !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("RecordAppSession: %v; want a *ValidationError of %s", err, tt.field)
			}
		})
	}
	// Agent-initiated: no edge and no route. An IPv4 address in IPv6 form
	// is kept as IPv4.
	in := appSession(clock)
	in.EdgeID, in.RouteID, in.BrowserSession.IPAddress = "", "", "::ffff:203.0.113.7"
	a, err := e.store.RecordAppSession(e.ctx, account.ID, in)
	if err != nil || a.BrowserSession.IPAddress != "203.0.113.7" {
		t.Fatalf("RecordAppSession agent-initiated = %+v, %v", a, err)
	}
	if _, err := e.store.RefreshAppSession(e.ctx, account.ID, a.ID, clock.Now().Add(time.Hour), time.Time{}); !isInvalid(err, "last_active") {
		t.Fatalf("RefreshAppSession with a future last_active: %v", err)
	}
	if _, err := e.store.RefreshAppSession(e.ctx, account.ID, a.ID, time.Time{}, clock.Now().Add(-time.Minute)); !isInvalid(err, "expires_at") {
		t.Fatalf("RefreshAppSession with a past expires_at: %v", err)
	}
	if n := countPrefix(e.rawEntries(t), "app_sessions."); n != 1 {
		t.Fatalf("%d sessions stored, want the valid one", n)
	}
}

func isInvalid(err error, field string) bool {
	var invalid *store.ValidationError
	return errors.As(err, &invalid) && invalid.Field == field
}

// TestAppSessionExpiry moves the clock past a session's expires_at: it is
// gone to every read at once, and RemoveExpiredAppSessions deletes it
// from the bucket, of every account, keeping the others.
func TestAppSessionExpiry(t *testing.T) {
	e, clock := newSessionEnv(t, store.Config{})
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	short := appSession(clock)
	short.ExpiresAt = clock.Now().Add(time.Minute)
	soon, err := e.store.RecordAppSession(e.ctx, account.ID, short)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.RecordAppSession(e.ctx, other.ID, short); err != nil {
		t.Fatal(err)
	}
	kept, err := e.store.RecordAppSession(e.ctx, account.ID, appSession(clock))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if _, err := e.store.GetAppSession(e.ctx, account.ID, soon.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetAppSession of an expired session: %v, want ErrNotFound", err)
	}
	if _, err := e.store.RefreshAppSession(e.ctx, account.ID, soon.ID, time.Time{}, clock.Now().Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RefreshAppSession of an expired session: %v, want ErrNotFound", err)
	}
	if _, err := e.store.DeleteAppSession(e.ctx, account.ID, soon.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DeleteAppSession of an expired session: %v, want ErrNotFound", err)
	}
	page, _, err := e.store.ListAppSessions(e.ctx, account.ID, store.Page{})
	if err != nil || len(page) != 1 || page[0].ID != kept.ID {
		t.Fatalf("ListAppSessions = %+v, %v; want only %s", page, err, kept.ID)
	}
	if n := countPrefix(e.rawEntries(t), "app_sessions."); n != 3 {
		t.Fatalf("%d sessions stored before the sweep, want 3", n)
	}
	removed, err := e.store.RemoveExpiredAppSessions(e.ctx)
	if err != nil || removed != 2 {
		t.Fatalf("RemoveExpiredAppSessions = %d, %v; want 2", removed, err)
	}
	raw := e.rawEntries(t)
	if _, ok := raw["app_sessions."+account.ID+"."+kept.ID]; !ok || countPrefix(raw, "app_sessions.") != 1 {
		t.Fatalf("stored after the sweep: %d sessions; want only %s", countPrefix(raw, "app_sessions."), kept.ID)
	}
	if removed, err := e.store.RemoveExpiredAppSessions(e.ctx); err != nil || removed != 0 {
		t.Fatalf("RemoveExpiredAppSessions again = %d, %v; want 0", removed, err)
	}
}

// TestAppSessionLimit records more sessions than the account's limit: each
// new one gets in, in the place of the least recently active one, and the
// account never holds more than the limit.
func TestAppSessionLimit(t *testing.T) {
	e, clock := newSessionEnv(t, store.Config{Limits: store.Limits{AppSessions: 3}})
	account := e.createAccount(t, "team")
	var ids []string
	for range 3 {
		a, err := e.store.RecordAppSession(e.ctx, account.ID, appSession(clock))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
		clock.Advance(time.Second)
	}
	// The first is the most recently active now; the second the least.
	if _, err := e.store.RefreshAppSession(e.ctx, account.ID, ids[0], time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	newest, err := e.store.RecordAppSession(e.ctx, account.ID, appSession(clock))
	if err != nil {
		t.Fatalf("RecordAppSession at the limit: %v", err)
	}
	if _, err := e.store.GetAppSession(e.ctx, account.ID, ids[1]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the least recently active session: %v, want evicted", err)
	}
	page, _, err := e.store.ListAppSessions(e.ctx, account.ID, store.Page{})
	if err != nil || len(page) != 3 || page[0].ID != newest.ID || page[1].ID != ids[2] || page[2].ID != ids[0] {
		t.Fatalf("ListAppSessions = %+v, %v", page, err)
	}
	// An expired session is evicted first, however recently active.
	clock.Advance(59*time.Minute + 58*time.Second) // ids[0] expires, though active after ids[2]
	if _, err := e.store.RecordAppSession(e.ctx, account.ID, appSession(clock)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.GetAppSession(e.ctx, account.ID, ids[2]); err != nil {
		t.Fatalf("a live session was evicted before an expired one: %v", err)
	}
	if _, ok := e.rawEntries(t)["app_sessions."+account.ID+"."+ids[0]]; ok {
		t.Fatalf("the expired session is still stored")
	}
	if n := countPrefix(e.rawEntries(t), "app_sessions."); n != 3 {
		t.Fatalf("%d sessions stored, want the limit, 3", n)
	}
}

// TestAppSessionConcurrentRefresh refreshes one session from many writers
// at once, each with its own last_active: none is lost, so last_active
// ends at the latest of them, and a revoke among them ends the session
// for every later refresh.
func TestAppSessionConcurrentRefresh(t *testing.T) {
	e, clock := newSessionEnv(t, store.Config{})
	account := e.createAccount(t, "team")
	a, err := e.store.RecordAppSession(e.ctx, account.ID, appSession(clock))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	base := a.CreatedAt
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			_, err := e.store.RefreshAppSession(e.ctx, account.ID, a.ID, base.Add(time.Duration(i+1)*time.Second), time.Time{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("RefreshAppSession: %v", err)
		}
	}
	got, err := e.store.GetAppSession(e.ctx, account.ID, a.ID)
	if err != nil || !got.LastActive.Equal(base.Add(20*time.Second)) {
		t.Fatalf("after 20 concurrent refreshes: %+v, %v; want last_active %s", got, err, base.Add(20*time.Second))
	}
}

// TestAppSessionLimitEvictsTheFloodingUser: at the limit, a new session
// takes the place of a session of the user with the most, however
// recently active the others are: one user's flood of logins evicts its
// own sessions, not the other users'.
func TestAppSessionLimitEvictsTheFloodingUser(t *testing.T) {
	e, clock := newSessionEnv(t, store.Config{Limits: store.Limits{AppSessions: 4}})
	account := e.createAccount(t, "team")
	ann := appSession(clock)
	ann.ApplicationUserID = schemas.NewID(schemas.PrefixAppUser)
	anns, err := e.store.RecordAppSession(e.ctx, account.ID, ann)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	flooder := appSession(clock)
	flooder.ApplicationUserID = schemas.NewID(schemas.PrefixAppUser)
	for range 10 {
		if _, err := e.store.RecordAppSession(e.ctx, account.ID, flooder); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}
	if _, err := e.store.GetAppSession(e.ctx, account.ID, anns.ID); err != nil {
		t.Fatalf("the other user's session, the least recently active: %v, want kept", err)
	}
	page, _, err := e.store.ListAppSessions(e.ctx, account.ID, store.Page{})
	if err != nil || len(page) != 4 {
		t.Fatalf("ListAppSessions = %d sessions, %v; want the limit, 4", len(page), err)
	}
}
