package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apitest"
)

// subscription is a subscription as the API returns it.
type subscription struct {
	ID           string   `json:"id"`
	URI          string   `json:"uri"`
	CreatedAt    string   `json:"created_at"`
	Metadata     string   `json:"metadata"`
	Description  string   `json:"description"`
	Sources      []source `json:"sources"`
	Destinations []struct {
		ID  string `json:"id"`
		URI string `json:"uri"`
	} `json:"destinations"`
}

type source struct {
	Type   string   `json:"type"`
	URI    string   `json:"uri"`
	Filter string   `json:"filter"`
	Fields []string `json:"fields"`
}

type subscriptionList struct {
	Subscriptions []subscription `json:"event_subscriptions"`
	URI           string         `json:"uri"`
	NextPageURI   *string        `json:"next_page_uri"`
}

const (
	httpKind = "http_request_complete.v0"
	tcpKind  = "tcp_connection_closed.v0"
	keyKind  = "api_key_created.v0"
)

// createSubscription creates a subscription from body and returns it.
func (e *testEnv) createSubscription(t *testing.T, body string) subscription {
	t.Helper()
	resp, out := e.call(t, e.token, http.MethodPost, "/event_subscriptions", body)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	return apitest.DecodeAs[subscription](t, out)
}

// wantError fails the test unless the response is the status with the
// error code and, when field is not "", details.field; it returns the
// message.
func wantError(t *testing.T, resp *http.Response, out []byte, status int, code, field string) string {
	t.Helper()
	apitest.WantStatus(t, resp, out, status)
	body := apitest.DecodeError(t, out)
	if body.ErrorCode != code {
		t.Fatalf("%s %s: code %s, want %s: %s", resp.Request.Method, resp.Request.URL.Path, body.ErrorCode, code, body.Msg)
	}
	if field != "" && body.Details["field"] != field {
		t.Fatalf("%s %s: details.field %v, want %s: %s", resp.Request.Method, resp.Request.URL.Path, body.Details["field"], field, body.Msg)
	}
	return body.Msg
}

func TestSubscriptionRoundTrip(t *testing.T) {
	e := newTestEnv(t)
	dest := e.create(t, kinesisBody)
	created := e.createSubscription(t, `{"description":"édge logs","metadata":"{}","sources":[
		{"type":"`+httpKind+`","filter":"ev.conn.server_port == 443","fields":["conn.client_ip","http.request.method"]},
		{"type":"`+keyKind+`"}],"destination_ids":["`+dest.ID+`"]}`)
	subURI := e.url + "/event_subscriptions/" + created.ID
	if !strings.HasPrefix(created.ID, "esb_") || created.URI != subURI || created.Description != "édge logs" || !strings.HasSuffix(created.CreatedAt, "Z") {
		t.Fatalf("created %+v", created)
	}
	wantSources := []source{
		{Type: httpKind, URI: subURI + "/sources/" + httpKind, Filter: "ev.conn.server_port == 443", Fields: []string{"conn.client_ip", "http.request.method"}},
		{Type: keyKind, URI: subURI + "/sources/" + keyKind},
	}
	if !sourcesEqual(created.Sources, wantSources) {
		t.Fatalf("sources %+v, want %+v", created.Sources, wantSources)
	}
	if len(created.Destinations) != 1 || created.Destinations[0].ID != dest.ID || created.Destinations[0].URI != dest.URI {
		t.Fatalf("destinations %+v, want a ref to %s", created.Destinations, dest.URI)
	}

	resp, out := e.call(t, e.token, http.MethodGet, "/event_subscriptions/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[subscription](t, out); got.ID != created.ID || !sourcesEqual(got.Sources, wantSources) {
		t.Fatalf("got %s", out)
	}

	// PATCH changes what is sent: the lists are replaced whole.
	resp, out = e.call(t, e.token, http.MethodPatch, "/event_subscriptions/"+created.ID, `{"sources":[{"type":"`+tcpKind+`"}],"destination_ids":[]}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	patched := apitest.DecodeAs[subscription](t, out)
	if patched.Description != "édge logs" || len(patched.Sources) != 1 || patched.Sources[0].Type != tcpKind || len(patched.Destinations) != 0 {
		t.Fatalf("patched %s", out)
	}

	resp, out = e.call(t, e.token, http.MethodGet, "/event_subscriptions", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if list := apitest.DecodeAs[subscriptionList](t, out); len(list.Subscriptions) != 1 || list.NextPageURI != nil || list.URI != e.url+"/event_subscriptions" {
		t.Fatalf("list %s", out)
	}

	resp, out = e.call(t, e.token, http.MethodDelete, "/event_subscriptions/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	if len(out) != 0 {
		t.Fatalf("delete answered a body: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/event_subscriptions/"+created.ID, "")
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	// The destination is free to go once no subscription uses it.
	resp, out = e.call(t, e.token, http.MethodDelete, "/event_destinations/"+dest.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
}

func sourcesEqual(got, want []source) bool {
	return slices.EqualFunc(got, want, func(a, b source) bool {
		return a.Type == b.Type && a.URI == b.URI && a.Filter == b.Filter && slices.Equal(a.Fields, b.Fields)
	})
}

func TestSubscriptionEmpty(t *testing.T) {
	e := newTestEnv(t)
	created := e.createSubscription(t, `{}`)
	if created.Sources == nil || created.Destinations == nil || len(created.Sources)+len(created.Destinations) != 0 {
		t.Fatalf("an empty subscription must have empty lists: %+v", created)
	}
}

func TestSubscriptionValidation(t *testing.T) {
	e := newTestEnv(t)
	dest := e.create(t, kinesisBody)
	tests := []struct {
		name  string
		body  string
		code  string
		field string
		msg   string // in the message, "" for any
	}{
		{"unknown kind", `{"sources":[{"type":"http_request_completed.v0"}]}`, "ERR_SLUICE_333", "sources[0].type", `did you mean "http_request_complete.v0"`},
		{"no kind", `{"sources":[{"filter":"true"}]}`, "ERR_SLUICE_333", "sources[0].type", "is required"},
		{"kind twice", `{"sources":[{"type":"` + tcpKind + `"},{"type":"` + tcpKind + `"}]}`, "ERR_SLUICE_333", "sources[1].type", "once"},
		{"filter not CEL", `{"sources":[{"type":"` + httpKind + `","filter":"ev.conn.server_port =="}]}`, "ERR_SLUICE_333", "sources[0].filter", "1:"},
		{"filter not boolean", `{"sources":[{"type":"` + httpKind + `","filter":"ev.conn.server_port"}]}`, "ERR_SLUICE_333", "sources[0].filter", "bool"},
		{"filter on a field not filterable", `{"sources":[{"type":"` + httpKind + `","filter":"ev.http.response.status_code >= 500"}]}`, "ERR_SLUICE_333", "sources[0].filter", "conn.client_ip"},
		{"filter on an audit kind", `{"sources":[{"type":"` + keyKind + `","filter":"true"}]}`, "ERR_SLUICE_333", "sources[0].filter", "audit"},
		{"filter with a regular expression from the event", `{"sources":[{"type":"` + httpKind + `","filter":"ev.conn.server_name.matches(ev.conn.server_name)"}]}`, "ERR_SLUICE_333", "sources[0].filter", "must be a constant string"},
		{"filter with a constant that cannot be evaluated", `{"sources":[{"type":"` + httpKind + `","filter":"int('x') == 1"}]}`, "ERR_SLUICE_333", "sources[0].filter", "cannot be evaluated"},
		{"fields on an audit kind", `{"sources":[{"type":"` + keyKind + `","fields":["id"]}]}`, "ERR_SLUICE_333", "sources[0].fields", "audit"},
		{"unknown field path", `{"sources":[{"type":"` + httpKind + `","fields":["conn.client_ip","conn.nope"]}]}`, "ERR_SLUICE_333", "sources[0].fields[1]", ""},
		{"unknown destination", `{"destination_ids":["ed_2ZVXCKvrcw0TxPDk1JLmC8b3eBQ"]}`, "ERR_SLUICE_333", "destination_ids[0]", "create the destination first"},
		{"destination twice", `{"destination_ids":["` + dest.ID + `","` + dest.ID + `"]}`, "ERR_SLUICE_333", "destination_ids[1]", ""},
		{"not a destination id", `{"destination_ids":["nope"]}`, "ERR_SLUICE_333", "destination_ids[0]", ""},
		{"description of 256 characters", `{"description":"` + strings.Repeat("é", 256) + `"}`, "ERR_SLUICE_333", "description", "255 characters"},
		{"metadata of 4097 characters", `{"metadata":"` + strings.Repeat("m", 4097) + `"}`, "ERR_SLUICE_333", "metadata", "4096 characters"},
		{"metadata of 4097 two-byte characters", `{"metadata":"` + strings.Repeat("é", 4097) + `"}`, "ERR_SLUICE_333", "metadata", "this one is 4097"},
		{"unknown field", `{"name":"x"}`, "ERR_SLUICE_331", "", `"name"`},
		{"unknown source field", `{"sources":[{"type":"` + httpKind + `","kind":"x"}]}`, "ERR_SLUICE_331", "sources[0].kind", `"sources[0].kind"`},
		{"field name in another case", `{"Description":"x"}`, "ERR_SLUICE_331", "Description", `did you mean "description"`},
		{"field twice", `{"description":"a","description":"b"}`, "ERR_SLUICE_330", "description", "twice"},
		{"source field twice", `{"sources":[{"type":"` + tcpKind + `","type":"` + httpKind + `"}]}`, "ERR_SLUICE_330", "sources[0].type", "twice"},
		{"null", `null`, "ERR_SLUICE_330", "", "not a JSON object"},
		{"array", `[{}]`, "ERR_SLUICE_330", "", "not a JSON object"},
		{"sources not a list", `{"sources":{"type":"` + httpKind + `"}}`, "ERR_SLUICE_332", "sources", "array"},
		{"destination id a number", `{"destination_ids":["` + dest.ID + `",7]}`, "ERR_SLUICE_332", "destination_ids[1]", "field destination_ids[1]: expected string, got number"},
		{"second source's kind a number", `{"sources":[{"type":"` + tcpKind + `"},{"type":7}]}`, "ERR_SLUICE_332", "sources[1].type", "field sources[1].type: expected string, got number"},
		{"a field path an object", `{"sources":[{"type":"` + httpKind + `","fields":["conn",{}]}]}`, "ERR_SLUICE_332", "sources[0].fields[1]", "expected string, got object"},
		{"filter a boolean", `{"sources":[{"type":"` + httpKind + `","filter":true}]}`, "ERR_SLUICE_332", "sources[0].filter", "expected string, got bool"},
		{"description an array", `{"description":["d"]}`, "ERR_SLUICE_332", "description", "expected string, got array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := e.call(t, e.token, http.MethodPost, "/event_subscriptions", tt.body)
			msg := wantError(t, resp, out, http.StatusBadRequest, tt.code, tt.field)
			if !strings.Contains(msg, tt.msg) {
				t.Fatalf("message %q does not say %q", msg, tt.msg)
			}
		})
	}
	// 255 and 4096 characters of two bytes each (510 and 8192 bytes) are
	// within the limits, on create and on update: they count characters.
	desc, meta := strings.Repeat("é", 255), strings.Repeat("é", 4096)
	created := e.createSubscription(t, `{"description":"`+desc+`","metadata":"`+meta+`"}`)
	if created.Description != desc || created.Metadata != meta {
		t.Fatalf("created with description %d bytes, metadata %d bytes", len(created.Description), len(created.Metadata))
	}
	resp, out := e.call(t, e.token, http.MethodPatch, "/event_subscriptions/"+created.ID, `{"description":"`+strings.Repeat("ü", 255)+`","metadata":"`+strings.Repeat("€", 4096)+`"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	resp, out = e.call(t, e.token, http.MethodPatch, "/event_subscriptions/"+created.ID, `{"description":"`+strings.Repeat("ü", 256)+`"}`)
	wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_333", "description")
	resp, out = e.call(t, e.token, http.MethodGet, "/event_subscriptions", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if n := len(apitest.DecodeAs[subscriptionList](t, out).Subscriptions); n != 1 {
		t.Fatalf("%d subscriptions stored, want only the valid one", n)
	}
}

func TestSources(t *testing.T) {
	e := newTestEnv(t)
	sub := e.createSubscription(t, `{"sources":[{"type":"`+keyKind+`"}]}`)
	sources := "/event_subscriptions/" + sub.ID + "/sources"
	httpURI := sub.URI + "/sources/" + httpKind

	resp, out := e.call(t, e.token, http.MethodPost, sources, `{"type":"`+httpKind+`","filter":"inCIDR(ev.conn.client_ip, '203.0.113.0/24')","fields":["conn"]}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	if got := apitest.DecodeAs[source](t, out); got.Type != httpKind || got.URI != httpURI || got.Filter == "" || !slices.Equal(got.Fields, []string{"conn"}) {
		t.Fatalf("added %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodPost, sources, `{"type":"`+httpKind+`"}`)
	wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_424", "")
	// Errors of a new source name its fields as its body does.
	for _, bad := range []struct{ body, field, msg string }{
		{`{}`, "type", "is required"},
		{`{"type":"http_request_completed.v0"}`, "type", `did you mean "http_request_complete.v0"`},
		{`{"type":"` + keyKind + `"}`, "", ""}, // a duplicate: 409 above
		{`{"type":"api_key_deleted.v0","filter":"true"}`, "filter", "audit"},
		{`{"type":"` + tcpKind + `","filter":"ev.conn.bytes_in > 0"}`, "filter", ""},
		{`{"type":"` + tcpKind + `","fields":["conn.bytes_in","nope"]}`, "fields[1]", ""},
	} {
		resp, out = e.call(t, e.token, http.MethodPost, sources, bad.body)
		if bad.field == "" {
			wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_424", "")
			continue
		}
		if msg := wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_333", bad.field); !strings.Contains(msg, bad.msg) {
			t.Fatalf("POST %s: message %q does not say %q", bad.body, msg, bad.msg)
		}
	}

	resp, out = e.call(t, e.token, http.MethodGet, sources, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	list := apitest.DecodeAs[struct {
		Sources []source `json:"sources"`
		URI     string   `json:"uri"`
	}](t, out)
	if len(list.Sources) != 2 || list.Sources[0].Type != keyKind || list.Sources[1].Type != httpKind || list.URI != sub.URI+"/sources" {
		t.Fatalf("list %s", out)
	}

	resp, out = e.call(t, e.token, http.MethodPatch, sources+"/"+httpKind, `{"filter":"ev.conn.server_port == 443"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[source](t, out); got.Filter != "ev.conn.server_port == 443" || !slices.Equal(got.Fields, []string{"conn"}) {
		t.Fatalf("patched %s: want the filter replaced, the fields kept", out)
	}
	resp, out = e.call(t, e.token, http.MethodPatch, sources+"/"+httpKind, `{"filter":"ev.conn.server_port == "}`)
	if msg := wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_333", "filter"); !strings.Contains(msg, httpKind) {
		t.Fatalf("message %q does not name the source", msg)
	}
	resp, out = e.call(t, e.token, http.MethodPatch, sources+"/"+keyKind, `{"fields":["id"]}`)
	wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_333", "fields")
	resp, out = e.call(t, e.token, http.MethodPatch, sources+"/"+httpKind, `{"type":"`+tcpKind+`"}`)
	wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_340", "type")
	resp, out = e.call(t, e.token, http.MethodPatch, sources+"/"+httpKind, `{"filter":"","fields":[]}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[source](t, out); got.Filter != "" || got.Fields != nil {
		t.Fatalf("cleared %s: want neither filter nor fields", out)
	}

	resp, out = e.call(t, e.token, http.MethodGet, sources+"/"+httpKind, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	resp, out = e.call(t, e.token, http.MethodDelete, sources+"/"+httpKind, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		resp, out = e.call(t, e.token, method, sources+"/"+httpKind, "")
		wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	}
	resp, out = e.call(t, e.token, http.MethodPatch, sources+"/"+httpKind, `{"filter":"true"}`)
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	resp, out = e.call(t, e.token, http.MethodGet, "/event_subscriptions/"+sub.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[subscription](t, out); len(got.Sources) != 1 || got.Sources[0].Type != keyKind {
		t.Fatalf("subscription after the source's delete: %s", out)
	}
	// The sources of a subscription that does not exist are not found.
	resp, out = e.call(t, e.token, http.MethodGet, "/event_subscriptions/esb_2ZVXCKvrcw0TxPDk1JLmC8b3eBQ/sources", "")
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
}

// TestEmptyFilterAndFieldsMeanNone sends sources with an empty filter and
// an empty list of fields, which mean none, audit kinds included: they are
// taken, and answered without either.
func TestEmptyFilterAndFieldsMeanNone(t *testing.T) {
	e := newTestEnv(t)
	sub := e.createSubscription(t, `{"sources":[{"type":"`+keyKind+`","filter":"","fields":[]},{"type":"`+httpKind+`","filter":"","fields":[]}]}`)
	for _, src := range sub.Sources {
		if src.Filter != "" || src.Fields != nil {
			t.Fatalf("created %+v", sub)
		}
	}
	resp, out := e.call(t, e.token, http.MethodPost, "/event_subscriptions/"+sub.ID+"/sources", `{"type":"api_key_deleted.v0","filter":"","fields":[]}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	if strings.Contains(string(out), "filter") || strings.Contains(string(out), "fields") {
		t.Fatalf("added %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodPatch, "/event_subscriptions/"+sub.ID+"/sources/"+keyKind, `{"filter":"","fields":[]}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
}
