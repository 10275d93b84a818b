package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
)

// TestErrorDetailsAreStrings: every value of an error's details is a JSON
// string, as the official API clients decode details (map[string]string),
// across errors of every kind, those whose details hold numbers or lists
// included; a value that is not text by nature is its JSON text.
func TestErrorDetailsAreStrings(t *testing.T) {
	e := newTestEnv(t, apitest.WithStoreConfig(store.Config{Limits: store.Limits{BotUsers: 1}}))
	dest := e.createdID(t, "/event_destinations", kinesisBody)
	e.createdID(t, "/event_subscriptions", `{"sources":[{"type":"`+httpKind+`"}],"destination_ids":["`+dest+`"]}`)
	bot := e.createBotUser(t, "b")

	tests := []struct {
		name         string
		send         func() (*http.Response, []byte)
		code         string
		jsonText     string // a member of details whose value is JSON text; "" for none
		wantJSONText string // what it holds, decoded and encoded again
	}{
		{"no version", func() (*http.Response, []byte) {
			return e.do(t, http.MethodGet, "/bot_users", e.token, nil, func(r *http.Request) { r.Header.Del("Service-Version") })
		}, "ERR_SLUICE_200", "", ""},
		{"unknown key", func() (*http.Response, []byte) { return e.call(t, "sk_unknown", http.MethodGet, "/bot_users", "") }, "ERR_SLUICE_211", "", ""},
		{"no such path", func() (*http.Response, []byte) { return e.call(t, e.token, http.MethodGet, "/widgets", "") }, "ERR_SLUICE_404", "", ""},
		{"method", func() (*http.Response, []byte) { return e.call(t, e.token, http.MethodPut, "/bot_users", `{}`) }, "ERR_SLUICE_405", "", ""},
		{"malformed body", func() (*http.Response, []byte) { return e.call(t, e.token, http.MethodPost, "/bot_users", `{"name":`) }, "ERR_SLUICE_330", "", ""},
		{"unknown field", func() (*http.Response, []byte) {
			return e.call(t, e.token, http.MethodPost, "/bot_users", `{"nom":"x"}`)
		}, "ERR_SLUICE_331", "", ""},
		{"unknown parameter", func() (*http.Response, []byte) { return e.call(t, e.token, http.MethodGet, "/bot_users?page=2", "") }, "ERR_SLUICE_331", "", ""},
		{"wrong type", func() (*http.Response, []byte) {
			return e.call(t, e.token, http.MethodPatch, "/bot_users/"+bot.ID, `{"active":"yes"}`)
		}, "ERR_SLUICE_332", "", ""},
		{"invalid field", func() (*http.Response, []byte) {
			return e.call(t, e.token, http.MethodPost, "/event_subscriptions", `{"sources":[{"type":"nope.v0"}]}`)
		}, "ERR_SLUICE_333", "", ""},
		{"bad limit", func() (*http.Response, []byte) { return e.call(t, e.token, http.MethodGet, "/bot_users?limit=0", "") }, "ERR_SLUICE_334", "", ""},
		{"bad filter", func() (*http.Response, []byte) {
			return e.call(t, e.token, http.MethodGet, "/bot_users?filter=obj.nom", "")
		}, "ERR_SLUICE_335", "issues", ""},
		{"id changed", func() (*http.Response, []byte) {
			return e.call(t, e.token, http.MethodPatch, "/bot_users/"+bot.ID, `{"id":"bot_other"}`)
		}, "ERR_SLUICE_340", "", ""},
		{"not found", func() (*http.Response, []byte) {
			return e.call(t, e.token, http.MethodGet, "/bot_users/bot_2Ed2q8zQnGAqCS4LCCXyqqmNuQK", "")
		}, "ERR_SLUICE_420", "", ""},
		{"in use", func() (*http.Response, []byte) {
			return e.call(t, e.token, http.MethodDelete, "/event_destinations/"+dest, "")
		},
			"ERR_SLUICE_421", "subscriptions", ""},
		{"over a limit", func() (*http.Response, []byte) {
			return e.call(t, e.token, http.MethodPost, "/bot_users", `{"name":"c"}`)
		},
			"ERR_SLUICE_445", "max", "1"},
		{"invalid events", func() (*http.Response, []byte) { return e.post(t, []byte(`[{"event_type":"nope.v0"}]`), nil) },
			"ERR_SLUICE_301", "errors", ""},
		{"no events", func() (*http.Response, []byte) { return e.post(t, []byte(`[]`), nil) }, "ERR_SLUICE_302", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := tt.send()
			if resp.StatusCode < 400 {
				t.Fatalf("status %d: %s", resp.StatusCode, out)
			}
			var body struct {
				ErrorCode string                     `json:"error_code"`
				Details   map[string]json.RawMessage `json:"details"`
			}
			if err := json.Unmarshal(out, &body); err != nil || body.ErrorCode != tt.code {
				t.Fatalf("want %s: %s (%v)", tt.code, out, err)
			}
			if _, ok := body.Details["operation_id"]; !ok {
				t.Errorf("no details.operation_id: %s", out)
			}
			for key, raw := range body.Details {
				var text string
				if err := json.Unmarshal(raw, &text); err != nil {
					t.Errorf("details.%s is %s, not a string: %s", key, raw, out)
				}
			}
			if tt.jsonText == "" {
				return
			}
			var text string
			_ = json.Unmarshal(body.Details[tt.jsonText], &text)
			var v any
			if err := json.Unmarshal([]byte(text), &v); err != nil || text == "" {
				t.Fatalf("details.%s = %q, not JSON text: %v", tt.jsonText, text, err)
			}
			if tt.wantJSONText != "" && text != tt.wantJSONText {
				t.Errorf("details.%s = %q, want %q", tt.jsonText, text, tt.wantJSONText)
			}
			if list, ok := v.([]any); ok && len(list) == 0 || strings.HasPrefix(text, "null") {
				t.Errorf("details.%s = %q holds nothing", tt.jsonText, text)
			}
		})
	}
}
