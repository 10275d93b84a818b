package main

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestAppSessionsCommands runs every verb of `sluice app-sessions` against
// the API, on sessions recorded as the edge records them: list, get and
// delete, and no create or update.
func TestAppSessionsCommands(t *testing.T) {
	e := newCLIEnv(t)
	record := func(edge bool) store.AppSession {
		in := store.AppSession{PublicURL: "https://app.example.com", ApplicationUserID: schemas.NewID(schemas.PrefixAppUser),
			EndpointID: schemas.NewID(schemas.PrefixEndpoint), ExpiresAt: time.Now().Add(time.Hour),
			BrowserSession: store.BrowserSession{IPAddress: "203.0.113.9", UserAgent: store.UserAgent{Raw: "curl/8.5", BrowserName: "curl", BrowserVersion: "8.5"},
				Location: store.Location{CountryCode: "BR", Latitude: -23.5, Longitude: -46.6, LatLongRadiusKm: 20}}}
		if edge {
			in.EdgeID, in.RouteID = schemas.NewID("edghts_"), schemas.NewID("edghtsrt_")
		}
		s, err := e.stack.Store.RecordAppSession(t.Context(), e.stack.AccountID, in)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	agent, routed := record(false), record(true)

	rows := tableRows(t, e.must("app-sessions", "list"), "ID", "CREATED_AT", "LAST_ACTIVE", "EXPIRES_AT", "USER", "IP_ADDRESS", "PUBLIC_URL")
	if len(rows) != 2 || rows[0][0] != routed.ID || rows[1][0] != agent.ID || rows[1][5] != "203.0.113.9" || rows[1][4] != agent.ApplicationUserID {
		t.Errorf("list: %v", rows)
	}
	if page := e.mustJSON("app-sessions", "list", "--all"); len(page["application_sessions"].([]any)) != 2 {
		t.Errorf("list --all --json printed %v", page)
	}
	out := e.must("app-sessions", "get", agent.ID)
	if field(out, "EDGE") != "-" || field(out, "COUNTRY") != "BR" || field(out, "BROWSER") != "curl 8.5" || field(out, "ENDPOINT") != agent.EndpointID {
		t.Errorf("get printed:\n%s", out)
	}
	if got := field(e.must("app-sessions", "get", routed.ID), "ROUTE"); got != routed.RouteID {
		t.Errorf("get shows ROUTE %q, want %s", got, routed.RouteID)
	}

	// No create or update: the parent's help, which lists neither.
	for _, verb := range []string{"create", "update"} {
		help, _, err := e.run("app-sessions", verb)
		check.ErrorContains(t, err, "")
		if !strings.Contains(help, "Available Commands:") || strings.Contains(help, "\n  "+verb+" ") {
			t.Errorf("app-sessions %s printed:\n%s", verb, help)
		}
	}
	_, errOut, err := e.run("app-sessions", "delete", agent.ID)
	check.ErrorContains(t, err, "")
	if errOut != "deleted "+agent.ID+"\n" {
		t.Errorf("delete printed %q on stderr", errOut)
	}
	_, _, err = e.run("app-sessions", "get", agent.ID)
	check.ErrorContains(t, err, "(404): ")
	if _, err := e.stack.Store.RefreshAppSession(t.Context(), e.stack.AccountID, agent.ID, time.Time{}, time.Time{}); !strings.Contains(err.Error(), "not found") {
		t.Errorf("refresh of the revoked session: %v", err)
	}
}
