package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/ingest"
)

// routeIngest routes POST /events (package ingest) on srv, behind its
// front door, as sluice serve does with the ingest role.
func routeIngest(t testing.TB, srv *api.Server, pub ingest.Publisher, reg prometheus.Registerer) {
	t.Helper()
	in, err := ingest.New(ingest.Config{}, ingest.Deps{Door: srv.FrontDoor(), Publisher: pub, Logger: slog.New(slog.DiscardHandler), Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	srv.Handle(ingest.Pattern, in)
}

// TestRouteGroups serves the ingest route only when it is routed (package
// ingest) and the management routes only when their stores are given: a
// route a process does not serve answers 404 with the API's error body,
// and routes added with Handle are served either way.
func TestRouteGroups(t *testing.T) {
	event := `[{"event_type":"ip_policy_created.v0","object":{}}]`
	tests := []struct {
		name       string
		ingest     bool
		wantIngest int
	}{
		{name: "ingest", ingest: true, wantIngest: http.StatusAccepted},
		{name: "without ingest", ingest: false, wantIngest: http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub := apitest.FakePublisher{Publish: apitest.StoreAll}
			srv, err := api.New(api.Config{}, api.Deps{
				Keys:      apitest.FakeKeysFor("ac_fake"),
				Publisher: pub,
				Logger:    slog.New(slog.DiscardHandler),
			})
			if err != nil {
				t.Fatal(err)
			}
			if tt.ingest {
				routeIngest(t, srv, pub, nil)
			}
			srv.Handle("GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, "ok\n")
			}))
			hs := httptest.NewServer(srv)
			t.Cleanup(hs.Close)

			checkStatus(t, hs.URL, http.MethodPost, "/events", event, tt.wantIngest)
			// No Destinations, Subscriptions nor APIKeys: no management routes.
			for _, path := range []string{"/event_destinations", "/event_subscriptions", "/api_keys"} {
				checkStatus(t, hs.URL, http.MethodGet, path, "", http.StatusNotFound)
			}
			checkStatus(t, hs.URL, http.MethodGet, "/healthz", "", http.StatusOK)
		})
	}
}

// checkStatus sends an authenticated request and fails the test unless it
// is answered with want, and a 404 with the API's error body.
func checkStatus(t *testing.T, base, method, path, body string, want int) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apitest.FakeToken)
	req.Header.Set(apiconv.HeaderVersion, apiconv.SupportedVersion)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, out, want)
	}
	if want != http.StatusNotFound {
		return
	}
	var e apitest.ErrorBody
	if err := json.Unmarshal(out, &e); err != nil || e.ErrorCode != apiconv.CodeNotFound.String() {
		t.Fatalf("%s %s: 404 body %s, want error code %s", method, path, out, apiconv.CodeNotFound)
	}
}
