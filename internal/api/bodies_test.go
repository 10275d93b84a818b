package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// bodyEndpoint is a management call that takes a JSON body, and a string
// field of that body.
type bodyEndpoint struct{ method, path, field string }

// bodyEndpoints returns every management call that takes a body, on
// resources of e that exist, so that only the body can be wrong.
func (e *testEnv) bodyEndpoints(t *testing.T) []bodyEndpoint {
	t.Helper()
	dest := e.create(t, kinesisBody)
	sub := e.createSubscription(t, `{"sources":[{"type":"`+httpKind+`"}]}`)
	return []bodyEndpoint{
		{http.MethodPost, "/event_destinations", "description"},
		{http.MethodPatch, "/event_destinations/" + dest.ID, "description"},
		{http.MethodPost, "/event_subscriptions", "description"},
		{http.MethodPatch, "/event_subscriptions/" + sub.ID, "description"},
		{http.MethodPost, "/event_subscriptions/" + sub.ID + "/sources", "type"},
		{http.MethodPatch, "/event_subscriptions/" + sub.ID + "/sources/" + httpKind, "filter"},
		{http.MethodPost, "/api_keys", "description"},
		{http.MethodPatch, "/api_keys/" + e.keyID, "description"},
	}
}

// TestRequestBodyErrors sends every management call that takes a body the
// bodies and Content-Types it refuses, through the client that holds each
// answer to docs/openapi.yaml: each is refused with its documented status
// and code, and nothing changes.
func TestRequestBodyErrors(t *testing.T) {
	e := newTestEnv(t)
	endpoints := e.bodyEndpoints(t)
	before := len(e.storedEvents(t, e.account))
	tests := []struct {
		name        string
		contentType string
		body        string // FIELD stands for the endpoint's string field
		status      int
		code        string
	}{
		{"over 1 MiB", "application/json", `{"FIELD":"` + strings.Repeat("x", 1<<20) + `"}`, http.StatusRequestEntityTooLarge, "ERR_SLUICE_313"},
		{"text", "text/plain", `{"FIELD":"d"}`, http.StatusUnsupportedMediaType, "ERR_SLUICE_320"},
		{"no Content-Type", "", `{"FIELD":"d"}`, http.StatusUnsupportedMediaType, "ERR_SLUICE_320"},
		{"empty", "application/json", "", http.StatusBadRequest, "ERR_SLUICE_330"},
		{"not JSON", "application/json", `{"FIELD":`, http.StatusBadRequest, "ERR_SLUICE_330"},
		{"unknown field", "application/json", `{"colour":"blue"}`, http.StatusBadRequest, "ERR_SLUICE_331"},
		{"field a number", "application/json", `{"FIELD":7}`, http.StatusBadRequest, "ERR_SLUICE_332"},
		// Refused as ingest refuses them, not stored as U+FFFD (where two
		// names would collide).
		{"invalid UTF-8", "application/json", "{\"FIELD\":\"a\xffb\"}", http.StatusBadRequest, "ERR_SLUICE_330"},
		{"lone surrogate", "application/json", `{"FIELD":"a\ud800b"}`, http.StatusBadRequest, "ERR_SLUICE_330"},
	}
	for _, ep := range endpoints {
		for _, tt := range tests {
			t.Run(ep.method+" "+ep.path+" "+tt.name, func(t *testing.T) {
				body := strings.ReplaceAll(tt.body, "FIELD", ep.field)
				resp, out := e.do(t, ep.method, ep.path, e.token, strings.NewReader(body), func(req *http.Request) {
					if tt.contentType != "" {
						req.Header.Set("Content-Type", tt.contentType)
					}
				})
				field := ""
				if tt.code == "ERR_SLUICE_332" || tt.name == "lone surrogate" {
					field = ep.field
				}
				wantError(t, resp, out, tt.status, tt.code, field)
			})
		}
	}
	if after := len(e.storedEvents(t, e.account)); after != before {
		t.Errorf("refused calls stored %d audit events", after-before)
	}
}
