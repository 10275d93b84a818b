package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apitest"
)

// TestUnknownQueryParameters: a query parameter a route does not read is
// refused as a body's unknown field is, naming it and the parameters the
// route takes, rather than ignored (and echoed into a list's uri); those
// it reads still work.
func TestUnknownQueryParameters(t *testing.T) {
	e := newTestEnv(t)
	bot := e.createBotUser(t, "b")
	dest := e.createdID(t, "/event_destinations", kinesisBody)
	sub := e.createdID(t, "/event_subscriptions", `{"sources":[{"type":"`+httpKind+`"}],"destination_ids":["`+dest+`"]}`)

	tests := []struct {
		name, method, path, body, code, parameter string
		says                                      []string
	}{
		{"a list's page", http.MethodGet, "/bot_users?page=2", "", "ERR_SLUICE_331", "page",
			[]string{`unknown query parameter "page"`, "GET /bot_users takes only limit, before_id, filter"}},
		{"a list's limit misspelt", http.MethodGet, "/api_keys?limt=1", "", "ERR_SLUICE_331", "limt", []string{"takes only limit, before_id, filter"}},
		{"a list's limit in capitals", http.MethodGet, "/credentials?Limit=1", "", "ERR_SLUICE_331", "Limit", []string{"did you mean limit?"}},
		{"one of two unknown, by name", http.MethodGet, "/bot_users?z=1&limit=2&a=1", "", "ERR_SLUICE_331", "a", []string{`"a"`}},
		{"a get", http.MethodGet, "/bot_users/" + bot.ID + "?expand=all", "", "ERR_SLUICE_331", "expand",
			[]string{"GET /bot_users/{id} takes no query parameters"}},
		{"a patch", http.MethodPatch, "/bot_users/" + bot.ID + "?dry_run=1", `{"name":"c"}`, "ERR_SLUICE_331", "dry_run", []string{"PATCH /bot_users/{id} takes no query parameters"}},
		{"a create", http.MethodPost, "/bot_users?name=x", `{"name":"c"}`, "ERR_SLUICE_331", "name", []string{"POST /bot_users takes no query parameters"}},
		{"a delete", http.MethodDelete, "/bot_users/" + bot.ID + "?force=true", "", "ERR_SLUICE_331", "force", nil},
		{"sources filtered", http.MethodGet, "/event_subscriptions/" + sub + "/sources?filter=true", "", "ERR_SLUICE_335", "filter", []string{"one per event kind"}},
		{"sources paged", http.MethodGet, "/event_subscriptions/" + sub + "/sources?limit=1", "", "ERR_SLUICE_331", "limit", []string{"takes no query parameters"}},
		// A name of 100 KB is shown by its start, not sent back whole.
		{"a long name", http.MethodGet, "/bot_users?" + strings.Repeat("p", 100_000) + "=1", "", "ERR_SLUICE_331", strings.Repeat("p", 64),
			[]string{`"` + strings.Repeat("p", 64) + `"...`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := e.call(t, e.token, tt.method, tt.path, tt.body)
			apitest.WantStatus(t, resp, out, http.StatusBadRequest)
			body := apitest.DecodeError(t, out)
			if body.ErrorCode != tt.code || body.Details["parameter"] != tt.parameter {
				t.Fatalf("%s, details.parameter %v; want %s, %s: %s", body.ErrorCode, body.Details["parameter"], tt.code, tt.parameter, out)
			}
			for _, says := range tt.says {
				if !strings.Contains(body.Msg, says) {
					t.Errorf("message %q does not say %q", body.Msg, says)
				}
			}
		})
	}

	// Nothing refused was done, and the parameters a route reads work.
	resp, out := e.call(t, e.token, http.MethodGet, "/bot_users/"+bot.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[botUser](t, out); got.Name != "b" {
		t.Fatalf("a refused PATCH or DELETE was done: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/bot_users?limit=1&filter="+`obj.name%20==%20"b"`, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)

	// Without a good key, the key is what is wrong.
	resp, out = e.call(t, "sk_unknown", http.MethodGet, "/bot_users?page=2", "")
	wantError(t, resp, out, http.StatusUnauthorized, "ERR_SLUICE_211", "")
}

// TestDeadLettersQuery: the dead letters of a destination take limit and
// before_id, refuse a filter saying why, and any other parameter as
// unknown.
func TestDeadLettersQuery(t *testing.T) {
	e := newDeadLetterEnv(t)
	dest := e.createdID(t, "/event_destinations", kinesisBody)
	letters := "/event_destinations/" + dest + "/dead_letters"
	resp, out := e.call(t, e.token, http.MethodGet, letters+"?filter=true", "")
	if msg := wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_335", ""); !strings.Contains(msg, "takes no ?filter=: they are read one by one") {
		t.Errorf("message %q does not say why", msg)
	}
	resp, out = e.call(t, e.token, http.MethodGet, letters+"?page=2", "")
	if msg := wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_331", ""); !strings.Contains(msg, "GET /event_destinations/{id}/dead_letters takes only limit, before_id") {
		t.Errorf("message %q does not list the parameters taken", msg)
	}
	resp, out = e.call(t, e.token, http.MethodGet, letters+"?limit=5", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
}
