package ingest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestIngestStoresEveryEventOnce sends ingestOnceEvents (100,000; 20,000
// under the race detector) events over HTTP, twice, and reads
// the stream back: every event once, on its subject; the same batches sent
// again store nothing new.
func TestIngestStoresEveryEventOnce(t *testing.T) {
	t.Parallel()
	const total, batchSize = ingestOnceEvents, 1000
	if testing.Short() {
		t.Skip("sends many events")
	}
	e := newTestEnv(t)
	events := apitest.Samples(t, 1, total)
	var bodies [][]byte
	for i := 0; i < total; i += batchSize {
		bodies = append(bodies, apitest.MustJSON(t, events[i:i+batchSize]))
	}
	for round, wantStored := range []int{batchSize, 0} {
		for i, body := range bodies {
			resp, out := e.post(t, body, nil)
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("round %d batch %d: %d %s", round, i, resp.StatusCode, out)
			}
			var got struct {
				EventIDs   []string `json:"event_ids"`
				Stored     int      `json:"stored"`
				Duplicates int      `json:"duplicates"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if got.Stored != wantStored || got.Duplicates != batchSize-wantStored || len(got.EventIDs) != batchSize {
				t.Fatalf("round %d batch %d: stored %d duplicates %d ids %d", round, i, got.Stored, got.Duplicates, len(got.EventIDs))
			}
			if got.EventIDs[0] != events[i*batchSize].ID {
				t.Fatalf("event ids not in request order")
			}
		}
		if n := e.stored(t); n != total {
			t.Fatalf("after round %d the stream holds %d events, want %d", round, n, total)
		}
	}
	checkStream(t, e.js, e.account, events)
}

// checkStream reads every message of the stream and checks that it holds
// exactly the events, each once, on its subject.
func checkStream(t *testing.T, js jetstream.JetStream, account string, events []apitest.WireEvent) {
	t.Helper()
	ctx := t.Context()
	want := make(map[string]string, len(events))
	for _, ev := range events {
		want[ev.ID] = ev.Type
	}
	cons, err := js.OrderedConsumer(ctx, "SLUICE_EVENTS", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[string]bool, len(events))
	for len(seen) < len(events) {
		batch, err := cons.FetchNoWait(1000)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			var env struct {
				ID      string `json:"event_id"`
				Type    string `json:"event_type"`
				Account string `json:"account_id"`
			}
			if err := json.Unmarshal(msg.Data(), &env); err != nil {
				t.Fatal(err)
			}
			if seen[env.ID] {
				t.Fatalf("event %s stored twice", env.ID)
			}
			seen[env.ID] = true
			if want[env.ID] != env.Type || env.Account != account {
				t.Fatalf("unexpected event %s of type %s account %s", env.ID, env.Type, env.Account)
			}
			if msg.Subject() != schemas.EventSubject(account, env.Type) || msg.Headers().Get(jetstream.MsgIDHeader) != schemas.MsgID(account, env.ID) {
				t.Fatalf("event %s on subject %s with msg id %q", env.ID, msg.Subject(), msg.Headers().Get(jetstream.MsgIDHeader))
			}
		}
		if err := batch.Error(); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("stream ran out after %d of %d events", len(seen), len(events))
		}
	}
}

// TestIngestEventIDsAreUniquePerAccount posts an event of account A, then
// the same event with B's key, within the duplicate window: both are
// stored, each on its own account's subject, and B's answer does not say
// that A has the id; the same event from A again is a duplicate.
func TestIngestEventIDsAreUniquePerAccount(t *testing.T) {
	a := newTestEnv(t)
	acct, err := a.store.CreateAccount(t.Context(), "b")
	if err != nil {
		t.Fatal(err)
	}
	key, err := a.store.CreateAPIKey(t.Context(), acct.ID, store.APIKeyInput{Description: "b"}, "")
	if err != nil {
		t.Fatal(err)
	}
	b := *a
	b.token, b.account, b.keyID = key.Token, acct.ID, key.ID
	events := apitest.Samples(t, 11, 2)
	body := apitest.MustJSON(t, events)

	for _, step := range []struct {
		name               string
		env                *testEnv
		stored, duplicates int
	}{
		{"A", a, 2, 0},
		{"B, same ids", &b, 2, 0},
		{"A again", a, 0, 2},
		{"B again", &b, 0, 2},
	} {
		resp, out := step.env.post(t, body, nil)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("%s: %d %s", step.name, resp.StatusCode, out)
		}
		want := fmt.Sprintf(`{"event_ids":[%q,%q],"stored":%d,"duplicates":%d}`, events[0].ID, events[1].ID, step.stored, step.duplicates)
		if got := string(bytes.TrimSpace(out)); got != want {
			t.Fatalf("%s: answered %s, want %s", step.name, got, want)
		}
	}
	if n := a.stored(t); n != 4 {
		t.Fatalf("the stream holds %d events, want 4", n)
	}
	for _, env := range []*testEnv{a, &b} {
		for _, ev := range events {
			msg, err := env.stream.GetLastMsgForSubject(t.Context(), schemas.EventSubject(env.account, ev.Type))
			if err != nil {
				t.Fatalf("account %s: no %s: %v", env.account, ev.Type, err)
			}
			if !bytes.HasPrefix(msg.Data, []byte(`{"event_id":"`+ev.ID+`"`)) || !bytes.Contains(msg.Data, []byte(`"account_id":"`+env.account+`"`)) {
				t.Fatalf("account %s: stored %.200s", env.account, msg.Data)
			}
		}
	}
}

// TestIngestRefusesKindsOnlySluiceEmits posts an event of each kind sluice
// emits about its own resources, with a principal like sluice's own: each
// is refused with a message saying why, and nothing is stored. A change
// through the management API still stores its audit event.
func TestIngestRefusesKindsOnlySluiceEmits(t *testing.T) {
	e := newTestEnv(t)
	s := schemas.NewSampler(4)
	own := 0
	for _, k := range schemas.Default().Kinds() {
		if !k.EmittedBySluice {
			continue
		}
		own++
		ev, err := s.Event(k.Name)
		if err != nil {
			t.Fatal(err)
		}
		body := apitest.MustJSON(t, []apitest.WireEvent{{ID: ev.ID, Type: ev.Type, Principal: ev.Principal, Object: ev.Object}})
		resp, out := e.post(t, body, nil)
		got := apitest.DecodeAs[apitest.ErrorBody](t, out)
		want := k.Name + " is emitted by sluice itself about its own resources and cannot be published"
		if k.Family == "agent_session" {
			want = k.Name + " is emitted by sluice itself, by its edge when an agent session starts or stops, and cannot be published"
		}
		if resp.StatusCode != http.StatusBadRequest || got.ErrorCode != "ERR_SLUICE_301" || !strings.Contains(string(out), want) {
			t.Errorf("%s: %d %s, want 400 ERR_SLUICE_301 saying %q", k.Name, resp.StatusCode, out, want)
		}
	}
	if own == 0 {
		t.Fatal("the catalogue marks no kind as emitted by sluice")
	}
	if n := e.stored(t); n != 0 {
		t.Fatalf("the stream holds %d events, want none", n)
	}
	resp, out := e.call(t, e.token, http.MethodPost, "/api_keys", `{"description":"second"}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	// The audit event is stored before the answer.
	events := e.storedEvents(t, e.account)
	if len(events) != 1 || events[0].Type != "api_key_created.v0" {
		t.Fatalf("stored %v after creating a key, want its api_key_created.v0", events)
	}
}

// TestIngestRefusesWhatReadsTwoWays posts a batch with events that JSON
// readers read differently: a member name twice, a lone surrogate and a
// number beyond float64, in known and unknown fields. The batch is refused
// with 400 ERR_SLUICE_301, each event's error naming its path.
func TestIngestRefusesWhatReadsTwoWays(t *testing.T) {
	e := newTestEnv(t)
	body := `[{"event_type":"http_request_complete.v0","object":{"conn":{"server_name":"allowed.example.com","server_name":"internal.example.org"}}},
	{"event_type":"tcp_connection_closed.v0","object":{"conn":{"server_port":22},"edge":{"names":["ok","\ud800"]}}},
	{"event_type":"tcp_connection_closed.v0","object":{"edge":{"load":1e999}}},
	{"event_type":"tcp_connection_closed.v0","object":{"edge":{"pop":"fra1","po\u0070":"ams1"}}},
	{"event_type":"tcp_connection_closed.v0","object":{"edge":{"pop":"fra1"},"n":1e-400,"s":"\ud834\udd1e"}}]`
	resp, out := e.post(t, []byte(body), nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400: %s", resp.StatusCode, out)
	}
	got := apitest.DecodeError(t, out)
	errs := apitest.DetailJSON[[]any](t, got, "errors")
	want := []string{
		"object.conn.server_name: the name appears twice",
		`object.edge.names[1]: the string holds \ud800`,
		"object.edge.load: the number 1e999 is beyond the range of a float64",
		"object.edge.pop: the name appears twice",
	}
	if got.ErrorCode != "ERR_SLUICE_301" || len(errs) != len(want) {
		t.Fatalf("got %s with errors %v, want ERR_SLUICE_301 with %d", got.ErrorCode, errs, len(want))
	}
	for i, w := range want {
		entry, _ := errs[i].(map[string]any)
		if msg, _ := entry["error"].(string); entry["index"] != float64(i) || !strings.HasPrefix(msg, w) {
			t.Errorf("errors[%d] = %v, want index %d and an error starting %q", i, entry, i, w)
		}
	}
	if n := e.stored(t); n != 0 {
		t.Fatalf("%d events stored after a rejected request", n)
	}
}

func TestIngestRejectsBadInput(t *testing.T) {
	e := newTestEnv(t)
	good := apitest.MustJSON(t, apitest.Samples(t, 2, 3))
	oneEvent := `{"event_type":"ip_policy_created.v0","object":{}}`
	bigEvent := `{"event_type":"ip_policy_created.v0","object":{"description":"` + strings.Repeat("x", 1<<20) + `"}}`
	manyEvents := "[" + strings.Repeat(oneEvent+",", 10_000) + oneEvent + "]"
	hugeBody := "[" + strings.Repeat(`{"event_type":"ip_policy_created.v0","object":{"description":"`+strings.Repeat("y", 900_000)+`"}},`, 12) + oneEvent + "]"
	tests := []struct {
		name   string
		body   string
		edit   func(*http.Request)
		status int
		code   string
		msg    string // the message says this
	}{
		{name: "malformed JSON", body: `[{"event_type": "ip_policy_created.v0", "object": {]`, status: 400, code: "ERR_SLUICE_300", msg: "malformed JSON at byte"},
		{name: "truncated body", body: string(good[:len(good)/2]), status: 400, code: "ERR_SLUICE_300", msg: "malformed JSON"},
		{name: "not an array", body: oneEvent, status: 400, code: "ERR_SLUICE_300", msg: "wrap events in a JSON array"},
		{name: "empty array", body: `[]`, status: 400, code: "ERR_SLUICE_302", msg: "holds no events"},
		{name: "wrong field type", body: `[` + oneEvent + `,{"event_type":"http_request_complete.v0","object":{"conn":{"server_port":"443"}}}]`, status: 400, code: "ERR_SLUICE_301", msg: "1 of 2 events are invalid"},
		{name: "unknown kind", body: `[{"event_type":"http_request_begun.v0","object":{}}]`, status: 400, code: "ERR_SLUICE_301", msg: "none was stored"},
		{name: "oversize event", body: "[" + bigEvent + "]", status: 413, code: "ERR_SLUICE_312", msg: "the limit is 1048576 bytes per event"},
		{name: "too many events", body: manyEvents, status: 413, code: "ERR_SLUICE_311", msg: "more than 10000 events"},
		{name: "oversize request", body: hugeBody, status: 413, code: "ERR_SLUICE_310", msg: "10 MiB"},
		{name: "missing key", body: string(good), edit: func(r *http.Request) { r.Header.Del("Authorization") }, status: 401, code: "ERR_SLUICE_210", msg: "Authorization: Bearer"},
		{name: "bad key", body: string(good), edit: func(r *http.Request) { r.Header.Set("Authorization", "Bearer sk_nope") }, status: 401, code: "ERR_SLUICE_211", msg: "unknown or was deleted"},
		{name: "not bearer", body: string(good), edit: func(r *http.Request) { r.Header.Set("Authorization", "Basic "+e.token) }, status: 400, code: "ERR_SLUICE_212", msg: "Authorization: Bearer <API key>"},
		{name: "missing version", body: string(good), edit: func(r *http.Request) { r.Header.Del("Service-Version") }, status: 400, code: "ERR_SLUICE_200", msg: "send Service-Version: 2"},
		{name: "wrong version", body: string(good), edit: func(r *http.Request) { r.Header.Set("Service-Version", "1") }, status: 400, code: "ERR_SLUICE_201", msg: "send Service-Version: 2"},
		{name: "wrong content type", body: string(good), edit: func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, status: 415, code: "ERR_SLUICE_320", msg: "application/x-ndjson"},
		{name: "missing content type", body: string(good), edit: func(r *http.Request) { r.Header.Del("Content-Type") }, status: 415, code: "ERR_SLUICE_320", msg: "missing"},
		{name: "wrong method", body: "", edit: func(r *http.Request) { r.Method = http.MethodGet }, status: 405, code: "ERR_SLUICE_405", msg: "use POST"},
		{name: "wrong path", body: "", edit: func(r *http.Request) { r.URL.Path = "/event" }, status: 404, code: "ERR_SLUICE_404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := e.post(t, []byte(tt.body), tt.edit)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.status, out)
			}
			body := apitest.DecodeError(t, out)
			if body.ErrorCode != tt.code || body.StatusCode != tt.status || !strings.Contains(body.Msg, tt.msg) {
				t.Fatalf("got %s %d %q, want %s containing %q", body.ErrorCode, body.StatusCode, body.Msg, tt.code, tt.msg)
			}
			if n := e.stored(t); n != 0 {
				t.Fatalf("%d events stored after a rejected request", n)
			}
		})
	}
}

func TestIngestListsEveryInvalidEvent(t *testing.T) {
	e := newTestEnv(t)
	body := `[{"event_type":"ip_policy_created.v0","object":{}},
	{"event_type":"http_request_complete.v0","object":{"conn":{"server_port":"443"}}},
	{"event_type":"ip_policy_created.v0","object":{},"event_id":"ev_1"}]`
	resp, out := e.post(t, []byte(body), nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d: %s", resp.StatusCode, out)
	}
	errs := apitest.DetailJSON[[]any](t, apitest.DecodeError(t, out), "errors")
	if len(errs) != 2 {
		t.Fatalf("details.errors = %v, want 2 entries", errs)
	}
	first := errs[0].(map[string]any)
	if first["index"] != float64(1) || !strings.Contains(first["error"].(string), "object.conn.server_port: expected int32") {
		t.Fatalf("first error = %v", first)
	}
	if second := errs[1].(map[string]any); second["index"] != float64(2) || !strings.Contains(second["error"].(string), "event_id") {
		t.Fatalf("second error = %v", second)
	}
}

func TestIngestNDJSON(t *testing.T) {
	e := newTestEnv(t)
	var body bytes.Buffer
	events := apitest.Samples(t, 3, 10)
	for _, ev := range events {
		body.Write(apitest.MustJSON(t, ev))
		body.WriteString("\n")
	}
	resp, out := e.post(t, body.Bytes(), func(r *http.Request) { r.Header.Set("Content-Type", "application/x-ndjson") })
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d: %s", resp.StatusCode, out)
	}
	checkStream(t, e.js, e.account, events)
}

func TestIngestCountsUnknownFields(t *testing.T) {
	e := newTestEnv(t)
	body := `[{"event_type":"tcp_connection_closed.v0","object":{"conn":{"bytes_in":1,"zone":"b"},"edge_version":"9"}}]`
	if resp, out := e.post(t, []byte(body), nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d: %s", resp.StatusCode, out)
	}
	families, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "sluice_ingest_unknown_fields_total" {
			if got := f.GetMetric()[0].GetCounter().GetValue(); got != 2 {
				t.Fatalf("unknown fields counted %v, want 2", got)
			}
			return
		}
	}
	t.Fatal("sluice_ingest_unknown_fields_total not exported")
}

// TestIngestChecksValuesAgainstTheCatalogue sends values of the right
// JSON type that the catalogue's rules refuse: a port out of range, an IP
// address that is none, times outside the event window. Each is named by
// its event's index and its field, and nothing is stored.
func TestIngestChecksValuesAgainstTheCatalogue(t *testing.T) {
	e := newTestEnv(t)
	before := len(e.storedEvents(t, e.account))
	body := `[{"event_type":"http_request_complete.v0","object":{"conn":{"server_port":-1}}},
	{"event_type":"http_request_complete.v0","object":{"conn":{"client_ip":"999.1.1.1"}}},
	{"event_type":"ip_policy_created.v0","object":{},"event_timestamp":"1970-01-01T00:00:00Z"},
	{"event_type":"ip_policy_created.v0","object":{},"event_timestamp":"9999-12-31T23:59:59Z"},
	{"event_type":"tcp_connection_closed.v0","object":{"conn":{"end_ts":"9999-12-31T23:59:59Z"}}}]`
	resp, out := e.post(t, []byte(body), nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d: %s", resp.StatusCode, out)
	}
	errs := apitest.DetailJSON[[]any](t, apitest.DecodeError(t, out), "errors")
	want := []string{"object.conn.server_port: expected a port", "object.conn.client_ip: expected an IPv4 or IPv6 address",
		"event_timestamp: is 1970-01-01T00:00:00.000Z, before 2000-01-01", "event_timestamp: is 9999-12-31T23:59:59.000Z, more than 2h0m0s after",
		"object.conn.end_ts: is 9999-12-31T23:59:59.000Z"}
	if len(errs) != len(want) {
		t.Fatalf("details.errors = %v, want %d entries", errs, len(want))
	}
	for i, w := range want {
		got := errs[i].(map[string]any)
		if got["index"] != float64(i) || !strings.Contains(got["error"].(string), w) {
			t.Errorf("error %d = %v, want index %d saying %q", i, got, i, w)
		}
	}
	if after := len(e.storedEvents(t, e.account)); after != before {
		t.Errorf("stored %d events of a refused batch", after-before)
	}
}
