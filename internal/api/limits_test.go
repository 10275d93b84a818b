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
	if body := apitest.DecodeError(t, out); body.Details["limit"] != store.LimitDestinations || body.Details["max"] != "1" ||
		!strings.Contains(msg, "limit of 1 destinations") || !strings.Contains(msg, "--max-destinations") {
		t.Fatalf("over the destinations limit: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodDelete, "/event_destinations/"+dest.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
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

// TestRouteLimit: a subscription that would give the account more routes
// than its limit is a 409 that says the limit, how many routes the write
// would make and how to fix it.
func TestRouteLimit(t *testing.T) {
	e := newTestEnv(t, apitest.WithStoreConfig(store.Config{Limits: store.Limits{Routes: 2}}))
	a, b := e.create(t, kinesisBody), e.create(t, kinesisBody)
	body := `{"sources":[{"type":"` + httpKind + `"}],"destination_ids":["` + a.ID + `","` + b.ID + `"]}`
	e.createSubscription(t, body)
	resp, out := e.call(t, e.token, http.MethodPost, "/event_subscriptions", body)
	msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_451", "")
	if d := apitest.DecodeError(t, out).Details; d["limit"] != store.LimitRoutes || d["max"] != "2" || d["would"] != "4" ||
		!strings.Contains(msg, "4 routes, over its limit of 2") || !strings.Contains(msg, "--max-routes") {
		t.Fatalf("over the routes limit: %s", out)
	}
}
