package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/appsession"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/natsserver"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/schemas"
)

// TestServeRecordsAppSessions runs sluice serve on a NATS server the test
// also connects to, as the edge does: sessions recorded through package
// appsession are listed by the API, --max-app-sessions keeps the newest,
// and a session revoked through the API can no longer be refreshed.
func TestServeRecordsAppSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	srv := natstest.Start(t)
	const token = "sk_serve_app_sessions_0123456789"
	sluiceSeed := srv.SeedFile(natsserver.IdentitySluice)
	p := startServe(t, bin, t.TempDir(), "SLUICE_BOOTSTRAP_API_KEY="+token, "SLUICE_NATS_URL="+srv.ClientURL(), "SLUICE_NATS_NKEY="+sluiceSeed, "SLUICE_MAX_APP_SESSIONS=2")
	account := p.logAttr(t, "created the first account and API key", "account_id")

	// The edge connects as its own identity, which may call the service.
	nc, err := nats.Connect(srv.ClientURL(), srv.ClientOptions(natsserver.IdentityEdge)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	edge := appsession.New(nc)
	ctx := t.Context()
	check.Eventually(t, 10*time.Second, "serve's session service to answer", func() (error, bool) {
		err := edge.End(ctx, appsession.EndRequest{AccountID: account, ID: schemas.NewID(schemas.PrefixAppSession)})
		return err, errors.Is(err, appsession.ErrEnded)
	})

	var ids []string
	for range 3 {
		s, err := edge.Record(ctx, appsession.RecordRequest{
			AccountID: account, PublicURL: "https://app.example.com",
			BrowserSession:    apiwire.BrowserSession{IPAddress: "192.0.2.44"},
			ApplicationUserID: schemas.NewID(schemas.PrefixAppUser), EndpointID: schemas.NewID(schemas.PrefixEndpoint),
			ExpiresAt: time.Now().Add(time.Hour),
		})
		if err != nil {
			t.Fatalf("Record: %v", err)
		}
		ids = append(ids, s.ID)
	}
	status, body := request(t, http.MethodGet, p.url+"/app/sessions", token, "")
	var page struct {
		Sessions []apiwire.AppSession `json:"application_sessions"`
	}
	if err := json.Unmarshal([]byte(body), &page); status != http.StatusOK || err != nil || len(page.Sessions) != 2 ||
		page.Sessions[0].ID != ids[2] || page.Sessions[1].ID != ids[1] {
		t.Fatalf("GET /app/sessions: %d %s; want the two newest of %v", status, body, ids)
	}
	if _, err := edge.Refresh(ctx, appsession.RefreshRequest{AccountID: account, ID: ids[0]}); !errors.Is(err, appsession.ErrEnded) {
		t.Fatalf("refresh of the evicted session: %v, want ErrEnded", err)
	}

	if status, body := request(t, http.MethodDelete, p.url+"/app/sessions/"+ids[2], token, ""); status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", status, body)
	}
	if _, err := edge.Refresh(ctx, appsession.RefreshRequest{AccountID: account, ID: ids[2]}); !errors.Is(err, appsession.ErrEnded) {
		t.Fatalf("refresh of the revoked session: %v, want ErrEnded", err)
	}
	if _, err := edge.Refresh(ctx, appsession.RefreshRequest{AccountID: account, ID: ids[1]}); err != nil {
		t.Fatalf("refresh of a live session: %v", err)
	}

	// The CLI does what the edge does.
	natsFlags := []string{"--nats-url", srv.ClientURL(), "--nats-nkey", sluiceSeed, "--account-id", account}
	out, errOut, err := runSluice(t, "", append([]string{"app-sessions", "record", "--public-url", "https://cli.example.com", "--ip-address", "192.0.2.9",
		"--country-code", "se", "--expires-in", "2h"}, natsFlags...)...)
	check.ErrorContains(t, err, "")
	id := field(out, "ID")
	if schemas.CheckID(schemas.PrefixAppSession, id) != nil || field(out, "ACCOUNT_ID") != account {
		t.Fatalf("record printed %s %s", out, errOut)
	}
	// Its times are in the one layout of the API's.
	for _, name := range []string{"CREATED_AT", "LAST_ACTIVE", "EXPIRES_AT"} {
		if !timeLayoutRE.MatchString(field(out, name)) {
			t.Errorf("record printed %s %q, want RFC 3339 in UTC with milliseconds", name, field(out, name))
		}
	}
	status, body = request(t, http.MethodGet, p.url+"/app/sessions/"+id, token, "")
	var got apiwire.AppSession
	if err := json.Unmarshal([]byte(body), &got); status != http.StatusOK || err != nil || got.BrowserSession.Location.CountryCode != "SE" || got.PublicURL != "https://cli.example.com" {
		t.Fatalf("GET the CLI's session: %d %s", status, body)
	}
	out, _, err = runSluice(t, "", append([]string{"app-sessions", "refresh", id, "--expires-in", "3h", "--json"}, natsFlags...)...)
	check.ErrorContains(t, err, "")
	var refreshed map[string]string
	if err := json.Unmarshal([]byte(out), &refreshed); err != nil || refreshed["id"] != id || !timeLayoutRE.MatchString(refreshed["expires_at"]) || !timeLayoutRE.MatchString(refreshed["last_active"]) {
		t.Errorf("refresh --json printed %s (%v), want the session with its times RFC 3339 in UTC with milliseconds", out, err)
	}
	_, errOut, err = runSluice(t, "", append([]string{"app-sessions", "end", id}, natsFlags...)...)
	check.ErrorContains(t, err, "")
	if errOut != "ended "+id+"\n" {
		t.Errorf("end printed %q", errOut)
	}
	_, _, err = runSluice(t, "", append([]string{"app-sessions", "refresh", id}, natsFlags...)...)
	check.ErrorContains(t, err, "the session has ended")
	_, _, err = runSluice(t, "", append([]string{"app-sessions", "record", "--public-url", "https://cli.example.com", "--ip-address", "nope"}, natsFlags...)...)
	check.ErrorContains(t, err, "browser_session.ip_address")
}

// timeLayoutRE matches a time as the API and the CLI show every time:
// schemas.TimeLayout, RFC 3339 in UTC with milliseconds.
var timeLayoutRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$`)
