package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apitest"
)

// managementCall is a call of the management API with a body it takes
// ("" for none).
type managementCall struct{ method, path, body string }

// managementCalls returns every call of the management API, on resources
// of e that exist, each with a body it takes, in an order in which each
// succeeds.
func (e *testEnv) managementCalls(t *testing.T) []managementCall {
	t.Helper()
	dest := e.create(t, kinesisBody)
	sub := e.createSubscription(t, `{"sources":[{"type":"`+httpKind+`"}]}`)
	key := e.createKey(t, `{"description":"second"}`)
	source := "/event_subscriptions/" + sub.ID + "/sources"
	return []managementCall{
		{http.MethodPost, "/event_destinations", kinesisBody},
		{http.MethodGet, "/event_destinations", ""},
		{http.MethodGet, "/event_destinations/" + dest.ID, ""},
		{http.MethodPatch, "/event_destinations/" + dest.ID, `{"description":"changed"}`},
		{http.MethodDelete, "/event_destinations/" + dest.ID, ""},
		{http.MethodPost, "/event_subscriptions", `{"description":"changed"}`},
		{http.MethodGet, "/event_subscriptions", ""},
		{http.MethodGet, "/event_subscriptions/" + sub.ID, ""},
		{http.MethodPatch, "/event_subscriptions/" + sub.ID, `{"description":"changed"}`},
		{http.MethodPost, source, `{"type":"` + tcpKind + `"}`},
		{http.MethodGet, source, ""},
		{http.MethodGet, source + "/" + httpKind, ""},
		{http.MethodPatch, source + "/" + httpKind, `{"filter":"true"}`},
		{http.MethodDelete, source + "/" + httpKind, ""},
		{http.MethodDelete, "/event_subscriptions/" + sub.ID, ""},
		{http.MethodPost, "/api_keys", `{"description":"changed"}`},
		{http.MethodGet, "/api_keys", ""},
		{http.MethodGet, "/api_keys/" + key.ID, ""},
		{http.MethodPatch, "/api_keys/" + key.ID, `{"description":"changed"}`},
		{http.MethodDelete, "/api_keys/" + key.ID, ""},
	}
}

// TestManagementCallsNeedKeyAndVersion sends every management call without
// an API key, with a key sluice does not know, and without or with another
// Service-Version: each is refused with its status and code, and nothing
// changes.
func TestManagementCallsNeedKeyAndVersion(t *testing.T) {
	e := newTestEnv(t)
	calls := e.managementCalls(t)
	before := len(e.storedEvents(t, e.account))
	tests := []struct {
		name   string
		edit   func(*http.Request)
		status int
		code   string
	}{
		{"no key", func(r *http.Request) { r.Header.Del("Authorization") }, http.StatusUnauthorized, "ERR_SLUICE_210"},
		{"not a bearer key", func(r *http.Request) { r.Header.Set("Authorization", "Basic "+e.token) }, http.StatusBadRequest, "ERR_SLUICE_212"},
		{"two keys", func(r *http.Request) { r.Header.Add("Authorization", "Bearer "+e.token) }, http.StatusBadRequest, "ERR_SLUICE_212"},
		{"unknown key", func(r *http.Request) { r.Header.Set("Authorization", "Bearer sk_"+strings.Repeat("0", 43)) }, http.StatusUnauthorized, "ERR_SLUICE_211"},
		{"no version", func(r *http.Request) { r.Header.Del("Service-Version") }, http.StatusBadRequest, "ERR_SLUICE_200"},
		{"version 1", func(r *http.Request) { r.Header.Set("Service-Version", "1") }, http.StatusBadRequest, "ERR_SLUICE_201"},
	}
	for _, c := range calls {
		for _, tt := range tests {
			t.Run(c.method+" "+c.path+" "+tt.name, func(t *testing.T) {
				resp, out := e.do(t, c.method, c.path, e.token, strings.NewReader(c.body), func(r *http.Request) {
					if c.body != "" {
						r.Header.Set("Content-Type", "application/json")
					}
					tt.edit(r)
				})
				wantError(t, resp, out, tt.status, tt.code, "")
				if tt.status == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
					t.Errorf("401 with WWW-Authenticate %q", resp.Header.Get("WWW-Authenticate"))
				}
			})
		}
	}
	if after := len(e.storedEvents(t, e.account)); after != before {
		t.Errorf("refused calls stored %d audit events", after-before)
	}
	// The calls themselves are right: with the key and the version, each
	// succeeds.
	for _, c := range calls {
		resp, out := e.call(t, e.token, c.method, c.path, c.body)
		if resp.StatusCode >= 300 {
			t.Errorf("%s %s: %d %s", c.method, c.path, resp.StatusCode, out)
		}
	}
}

// TestListParameters sends every list bad ?limit= and ?before_id= values:
// each is a 400 naming the parameter. A well-formed before_id need not name
// a resource that exists.
func TestListParameters(t *testing.T) {
	e := newTestEnv(t)
	ksuid := strings.TrimPrefix(e.createSubscription(t, `{}`).ID, "esb_")
	lists := []struct{ path, prefix, otherPrefix string }{
		{"/event_destinations", "ed_", "esb_"},
		{"/event_subscriptions", "esb_", "ed_"},
		{"/api_keys", "ak_", "ed_"},
	}
	for _, list := range lists {
		for _, q := range []string{
			"limit=0", "limit=101", "limit=-1", "limit=x", "limit=", "limit=1.5", "limit=1&limit=2",
			"before_id=", "before_id=nope", "before_id=" + list.prefix, "before_id=" + list.prefix + ksuid[1:],
			"before_id=" + list.otherPrefix + ksuid,
		} {
			t.Run(list.path+"?"+q, func(t *testing.T) {
				resp, out := e.call(t, e.token, http.MethodGet, list.path+"?"+q, "")
				param, _, _ := strings.Cut(q, "=")
				apitest.WantStatus(t, resp, out, http.StatusBadRequest)
				if body := apitest.DecodeError(t, out); body.ErrorCode != "ERR_SLUICE_334" || body.Details["parameter"] != param {
					t.Fatalf("?%s: %s", q, out)
				}
			})
		}
		for _, q := range []string{"limit=1", "limit=100", "limit=07", "before_id=" + list.prefix + ksuid} {
			t.Run(list.path+"?"+q, func(t *testing.T) {
				resp, out := e.call(t, e.token, http.MethodGet, list.path+"?"+q, "")
				apitest.WantStatus(t, resp, out, http.StatusOK)
			})
		}
	}
}
