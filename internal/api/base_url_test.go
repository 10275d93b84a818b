package api_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apitest"
)

// TestHostHeaderIsNotStored makes management changes with a Host header
// of the client's choosing: neither the responses nor the audit events
// stored carry it, only the configured base URL.
func TestHostHeaderIsNotStored(t *testing.T) {
	e := newTestEnv(t)
	const evil = "evil.example.com"
	withHost := func(req *http.Request) {
		req.Host = evil
		req.Header.Set("Content-Type", "application/json")
	}
	resp, out := e.do(t, http.MethodPost, "/event_destinations", e.token, strings.NewReader(credsBody), withHost)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	dest := apitest.DecodeAs[destination](t, out)
	resp, out = e.do(t, http.MethodPost, "/event_subscriptions", e.token, strings.NewReader(`{"sources":[{"type":"`+httpKind+`"}],"destination_ids":["`+dest.ID+`"]}`), withHost)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	if strings.Contains(string(out), evil) || dest.URI != e.url+"/event_destinations/"+dest.ID {
		t.Errorf("responses name the request's host: %s, uri %s", out, dest.URI)
	}
	events := e.storedEvents(t, e.account)
	if len(events) != 2 {
		t.Fatalf("%d audit events stored, want 2", len(events))
	}
	for _, ev := range events {
		if strings.Contains(ev.raw, evil) || !strings.Contains(ev.raw, `"uri":"`+e.url+`/`) {
			t.Errorf("stored %s: %s, want every uri under %s and none under the request's Host %s", ev.Type, ev.raw, e.url, evil)
		}
	}
}

// TestNewNeedsBaseURL refuses management routes without a base URL to
// build their uris from, rather than taking each request's Host.
func TestNewNeedsBaseURL(t *testing.T) {
	deps := api.Deps{
		Keys:         apitest.FakeKeysFor("ac_fake"),
		Publisher:    apitest.FakePublisher{Publish: apitest.StoreAll},
		Logger:       slog.New(slog.DiscardHandler),
		Destinations: failingStore{},
	}
	for _, base := range []string{"", "sluice.example.com", "ftp://sluice.example.com"} {
		if _, err := api.New(api.Config{BaseURL: base}, deps); err == nil || !strings.Contains(err.Error(), "is not a full http or https URL") {
			t.Errorf("New with BaseURL %q: %v, want an error asking for a full URL", base, err)
		}
	}
	if _, err := api.New(api.Config{BaseURL: "https://sluice.example.com"}, deps); err != nil {
		t.Errorf("New with a base URL: %v", err)
	}
	deps.Destinations = nil
	if _, err := api.New(api.Config{}, deps); err != nil {
		t.Errorf("New for ingest only, without a base URL: %v", err)
	}
}
