package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
)

// TestAccountLimits: a create over a limit of the account is a 409 that
// names the limit and says how to free room; freeing room lets the create
// through.
func TestAccountLimits(t *testing.T) {
	e := newTestEnv(t, apitest.WithStoreConfig(store.Config{Limits: store.Limits{Destinations: 1, APIKeys: 2, SourcesPerSubscription: 1}}))

	dest := e.create(t, kinesisBody)
	resp, out := e.call(t, e.token, http.MethodPost, "/event_destinations", kinesisBody)
	msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_440", "")
	if body := decodeError(t, out); body.Details["limit"] != store.LimitDestinations || body.Details["max"] != float64(1) ||
		!strings.Contains(msg, "limit of 1 destinations") || !strings.Contains(msg, "--max-destinations") {
		t.Fatalf("over the destinations limit: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodDelete, "/event_destinations/"+dest.ID, "")
	wantStatus(t, resp, out, http.StatusNoContent)
	e.create(t, kinesisBody)

	e.createKey(t, `{"description":"second"}`)
	resp, out = e.call(t, e.token, http.MethodPost, "/api_keys", `{"description":"third"}`)
	wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_444", "")

	resp, out = e.call(t, e.token, http.MethodPost, "/event_subscriptions", `{"sources":[{"type":"`+httpKind+`"},{"type":"`+tcpKind+`"}]}`)
	wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_442", "")
	sub := e.createSubscription(t, `{"sources":[{"type":"`+httpKind+`"}]}`)
	resp, out = e.call(t, e.token, http.MethodPost, "/event_subscriptions/"+sub.ID+"/sources", `{"type":"`+tcpKind+`"}`)
	wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_442", "")
}
