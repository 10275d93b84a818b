package schemas

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

const testAccount = "ac_2Yp2wNjWgm6aQh7FGfl9e3DfxL1"

func decodeOpts() DecodeOptions {
	return DecodeOptions{
		AccountID: testAccount,
		Now:       func() time.Time { return time.Date(2026, 11, 22, 10, 4, 5, 123456789, time.UTC) },
	}
}

// envelopeOf decodes an encoded event back, failing the test if it is not
// valid compact JSON in the envelope's field order.
func envelopeOf(t *testing.T, ev Encoded) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(ev.Data, &m); err != nil {
		t.Fatalf("encoded event is not JSON: %v\n%s", err, ev.Data)
	}
	if !strings.HasPrefix(string(ev.Data), `{"event_id":`) || strings.ContainsAny(string(ev.Data), "\n\t") {
		t.Fatalf("encoded event is not in envelope order or not compact: %s", ev.Data)
	}
	return m
}

func TestDecodeBatchEncodesEnvelope(t *testing.T) {
	body := `[
	  {"event_type": "http_request_complete.v0", "object": {"conn": {"client_ip": "203.0.113.7", "server_port": 443}}},
	  {"object": {"id": "ipp_1"}, "event_type": "ip_policy_created.v0",
	   "event_id": "ev_2Yq3A9cC0c7ZkU6e7d0a9oKf1xG", "event_timestamp": "2026-11-22T11:04:05.987654+01:00",
	   "account_id": "` + testAccount + `",
	   "principal": {"id": "ak_1", "subject": "ops", "source": "API", "credential": {"id": "ak_1", "uri": "/api_keys/ak_1"}}}
	]`
	b, err := Default().DecodeBatch([]byte(body), decodeOpts())
	if err != nil || len(b.Errors) != 0 {
		t.Fatalf("DecodeBatch: %v %v", err, b.Errors)
	}
	if len(b.Events) != 2 {
		t.Fatalf("got %d events, want 2", len(b.Events))
	}
	first := envelopeOf(t, b.Events[0])
	if err := CheckID(PrefixEvent, b.Events[0].ID); err != nil {
		t.Errorf("generated id: %v", err)
	}
	if got := string(first["event_timestamp"]); got != `"2026-11-22T10:04:05.123Z"` {
		t.Errorf("default timestamp = %s", got)
	}
	if got := string(first["object"]); got != `{"conn":{"client_ip":"203.0.113.7","server_port":443}}` {
		t.Errorf("object not compacted: %s", got)
	}
	if got := string(first["principal"]); got != "null" {
		t.Errorf("traffic principal = %s, want null", got)
	}
	second := envelopeOf(t, b.Events[1])
	if b.Events[1].ID != "ev_2Yq3A9cC0c7ZkU6e7d0a9oKf1xG" || b.Events[1].Subject() != "sluice.events."+testAccount+".ip_policy_created.v0" {
		t.Errorf("id/subject = %s %s", b.Events[1].ID, b.Events[1].Subject())
	}
	if got := string(second["event_timestamp"]); got != `"2026-11-22T10:04:05.987Z"` {
		t.Errorf("timestamp not normalized to UTC milliseconds: %s", got)
	}
	if got := string(second["principal"]); !strings.HasPrefix(got, `{"id":"ak_1","subject":"ops"`) {
		t.Errorf("principal = %s", got)
	}
}

func TestDecodeBatchNDJSON(t *testing.T) {
	body := "{\"event_type\":\"tcp_connection_closed.v0\",\"object\":{\"conn\":{\"bytes_in\":1}}}\r\n\n" +
		"not json\n" +
		"{\"event_type\":\"tcp_connection_closed.v0\",\"object\":{},\"extra\":1}\n" +
		"{\"event_type\":\"tcp_connection_closed.v0\",\"object\":{\"new\":true}}"
	opts := decodeOpts()
	opts.NDJSON = true
	b, err := Default().DecodeBatch([]byte(body), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Events) != 2 || len(b.Errors) != 2 {
		t.Fatalf("events %d errors %v", len(b.Events), b.Errors)
	}
	if b.Errors[0].Index != 1 || b.Errors[1].Index != 2 {
		t.Errorf("error indexes = %d, %d; want 1, 2 (blank lines do not count)", b.Errors[0].Index, b.Errors[1].Index)
	}
	if b.Events[1].UnknownFields != 1 {
		t.Errorf("unknown fields = %d, want 1", b.Events[1].UnknownFields)
	}
}

// TestDecodeBatchEventWindow takes events at the edges of the event
// window, counted from DecodeOptions.Now: from 2000-01-01 to 2 hours after
// the time of ingestion.
func TestDecodeBatchEventWindow(t *testing.T) {
	body := `[{"event_type":"ip_policy_created.v0","object":{},"event_timestamp":"2000-01-01T00:00:00Z"},
		{"event_type":"ip_policy_created.v0","object":{},"event_timestamp":"2026-11-22T12:04:05.123Z"},
		{"event_type":"tcp_connection_closed.v0","object":{"conn":{"start_ts":"2000-01-01T00:00:00Z","end_ts":"2026-11-22T12:04:05.123Z","server_port":65535,"client_ip":"2001:db8::7","server_ip":"203.0.113.7"}}}]`
	b, err := Default().DecodeBatch([]byte(body), decodeOpts())
	if err != nil || len(b.Errors) != 0 || len(b.Events) != 3 {
		t.Fatalf("DecodeBatch: %d events, errors %v, %v; want 3 events", len(b.Events), b.Errors, err)
	}
}

func TestDecodeBatchReportsEveryBadEvent(t *testing.T) {
	tests := []struct {
		name  string
		event string
		want  string // in the error message
	}{
		{"unknown kind", `{"event_type":"http_request_started.v0","object":{}}`, `unknown event kind "http_request_started.v0"`},
		{"missing kind", `{"object":{}}`, "event_type: missing"},
		{"missing object", `{"event_type":"ip_policy_created.v0"}`, "object: missing"},
		{"null object", `{"event_type":"ip_policy_created.v0","object":null}`, "object: expected a JSON object, got null"},
		{"object not an object", `{"event_type":"ip_policy_created.v0","object":[]}`, "object: expected a JSON object, got an array"},
		{"kind not a string", `{"event_type":3,"object":{}}`, "event_type: expected a string, got a number"},
		{"field type", `{"event_type":"http_request_complete.v0","object":{"conn":{"server_port":"443"}}}`, "object.conn.server_port: expected int32"},
		{"field type, object first", `{"object":{"conn":{"server_port":true}},"event_type":"http_request_complete.v0"}`, "object.conn.server_port: expected int32"},
		{"bad id", `{"event_type":"ip_policy_created.v0","object":{},"event_id":"123"}`, "event_id: expected \"ev_\""},
		{"bad timestamp", `{"event_type":"ip_policy_created.v0","object":{},"event_timestamp":"22/11/2026"}`, "event_timestamp: expected an RFC 3339 timestamp"},
		{"other account", `{"event_type":"ip_policy_created.v0","object":{},"account_id":"ac_other"}`, "not the API key's account"},
		{"traffic principal", `{"event_type":"http_request_complete.v0","object":{},"principal":{"id":"x"}}`, "principal: must be null for traffic events"},
		{"principal type", `{"event_type":"ip_policy_created.v0","object":{},"principal":{"id":1}}`, "principal.id: expected string"},
		{"unknown envelope field", `{"event_type":"ip_policy_created.v0","object":{},"payload":{}}`, "payload: unknown envelope field"},
		{"not an object", `"hello"`, "each event must be a JSON object"},
		{"kind given twice", `{"event_type":"ip_policy_created.v0","object":{"conn":{"server_port":"x"}},"event_type":"http_request_complete.v0"}`, "event_type: given twice"},
		{"id not base62", `{"event_type":"ip_policy_created.v0","object":{},"event_id":"ev_0000000000000000000000000.>"}`, "event_id: expected"},
		{"timestamp in 1970", `{"event_type":"ip_policy_created.v0","object":{},"event_timestamp":"1970-01-01T00:00:00Z"}`, "event_timestamp: is 1970-01-01T00:00:00.000Z, before 2000-01-01T00:00:00.000Z"},
		{"timestamp in 9999", `{"event_type":"ip_policy_created.v0","object":{},"event_timestamp":"9999-12-31T23:59:59Z"}`, "event_timestamp: is 9999-12-31T23:59:59.000Z, more than 2h0m0s after"},
		{"timestamp over 2 hours ahead", `{"event_type":"ip_policy_created.v0","object":{},"event_timestamp":"2026-11-22T12:04:05.124Z"}`, "event_timestamp: is 2026-11-22T12:04:05.124Z, more than 2h0m0s after"},
		{"connection start in 9999", `{"event_type":"http_request_complete.v0","object":{"conn":{"start_ts":"9999-01-01T00:00:00Z"}}}`, "object.conn.start_ts: is 9999-01-01T00:00:00.000Z, more than 2h0m0s after"},
		{"connection end in 1970", `{"event_type":"tcp_connection_closed.v0","object":{"conn":{"end_ts":"1970-01-01T00:00:00.000Z"}}}`, "object.conn.end_ts: is 1970-01-01T00:00:00.000Z, before"},
		{"port -1", `{"event_type":"http_request_complete.v0","object":{"conn":{"server_port":-1}}}`, "object.conn.server_port: expected a port, an integer from 1 to 65535, got -1"},
		{"IP 999.1.1.1", `{"event_type":"http_request_complete.v0","object":{"conn":{"client_ip":"999.1.1.1"}}}`, `object.conn.client_ip: expected an IPv4 or IPv6 address without a zone, such as 203.0.113.7 or 2001:db8::7, got "999.1.1.1"`},
		{"id repeated in the batch", `{"event_type":"ip_policy_created.v0","object":{},"event_id":"ev_2Yq3A9cC0c7ZkU6e7d0a9oKf1xG"}`, "repeats the id of event"},
	}
	var events []string
	for _, tt := range tests {
		events = append(events, tt.event)
	}
	// The valid event goes first, so that the repeated id above repeats it.
	events = append([]string{`{"event_type":"ip_policy_created.v0","object":{},"event_id":"ev_2Yq3A9cC0c7ZkU6e7d0a9oKf1xG"}`}, events...)
	b, err := Default().DecodeBatch([]byte("["+strings.Join(events, ",")+"]"), decodeOpts())
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Events) != 1 || len(b.Errors) != len(tests) {
		t.Fatalf("got %d events and %d errors, want 1 and %d: %v", len(b.Events), len(b.Errors), len(tests), b.Errors)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := b.Errors[i]
			if e.Index != i+1 || !strings.Contains(e.Err.Error(), tt.want) {
				t.Fatalf("error %d = %v, want index %d containing %q", i, e, i+1, tt.want)
			}
		})
	}
}

func TestDecodeBatchWholeBodyErrors(t *testing.T) {
	small := DecodeOptions{AccountID: testAccount, MaxEvents: 2, MaxEventBytes: 100}
	ev := `{"event_type":"ip_policy_created.v0","object":{}}`
	big := `{"event_type":"ip_policy_created.v0","object":{"description":"` + strings.Repeat("x", 100) + `"}}`
	tests := []struct {
		name   string
		body   string
		ndjson bool
		check  func(error) bool
	}{
		{"malformed", `[` + ev + `,{"event_type":}]`, false, isSyntax},
		{"truncated", `[` + ev + `,` + ev[:20], false, isSyntax},
		{"single object", ev, false, isSyntax},
		{"empty array", `[]`, false, func(err error) bool { return errors.Is(err, ErrEmptyBatch) }},
		{"empty ndjson", "\n\n", true, func(err error) bool { return errors.Is(err, ErrEmptyBatch) }},
		{"too many events", "[" + ev + "," + ev + "," + ev + "]", false, isLimit},
		{"too many lines", ev + "\n" + ev + "\n" + ev, true, isLimit},
		{"event too large", "[" + big + "]", false, isLimit},
		{"line too large", big, true, isLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := small
			opts.NDJSON = tt.ndjson
			_, err := Default().DecodeBatch([]byte(tt.body), opts)
			if !tt.check(err) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func isSyntax(err error) bool { var se *SyntaxError; return errors.As(err, &se) }
func isLimit(err error) bool  { var le *LimitError; return errors.As(err, &le) }

func TestEncode(t *testing.T) {
	c := Default()
	ev := Event{
		Type:      "http_request_complete.v0",
		AccountID: testAccount,
		Object:    json.RawMessage("{\n  \"conn\": {\"server_port\": 8080},\n  \"later\": 1\n}"),
	}
	enc, err := c.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	m := envelopeOf(t, enc)
	if string(m["object"]) != `{"conn":{"server_port":8080},"later":1}` || enc.UnknownFields != 1 {
		t.Errorf("object = %s, unknown = %d", m["object"], enc.UnknownFields)
	}
	bad := []Event{
		{Type: "nope.v0", AccountID: testAccount, Object: json.RawMessage(`{}`)},
		{Type: "http_request_complete.v0", AccountID: "acct", Object: json.RawMessage(`{}`)},
		{Type: "http_request_complete.v0", AccountID: testAccount, ID: "ev_x", Object: json.RawMessage(`{}`)},
		{Type: "http_request_complete.v0", AccountID: testAccount, Object: json.RawMessage(`{"conn":{"server_port":"x"}}`)},
		{Type: "http_request_complete.v0", AccountID: testAccount, Object: json.RawMessage(`{"conn":`)},
		{Type: "http_request_complete.v0", AccountID: testAccount, Object: json.RawMessage(`{}`), Principal: json.RawMessage(`{"id":"x"}`)},
		{Type: "ip_policy_created.v0", AccountID: testAccount, Object: nil},
		{Type: "ip_policy_created.v0", AccountID: "ac_0000000000000000000000000.>", Object: json.RawMessage(`{}`)},
	}
	for i, ev := range bad {
		if _, err := c.Encode(ev); err == nil {
			t.Errorf("bad event %d accepted", i)
		}
	}
	if _, err := c.Encode(bad[0]); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown kind error = %v, want ErrUnknownKind", err)
	}
}

// TestStoredEnvelopeIngestsUnchanged sends stored envelopes back through the
// decoder: each must be accepted and encode to the very same bytes.
func TestStoredEnvelopeIngestsUnchanged(t *testing.T) {
	s := NewSampler(7)
	var encoded []Encoded
	for _, k := range Default().Kinds() {
		if k.EmittedBySluice {
			continue // ingest refuses them: TestKindsOnlySluiceEmits
		}
		ev, err := s.Event(k.Name)
		if err != nil {
			t.Fatal(err)
		}
		ev.AccountID = testAccount
		enc, err := Default().Encode(ev)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		encoded = append(encoded, enc)
	}
	var body []byte
	for _, enc := range encoded {
		body = append(append(body, enc.Data...), '\n')
	}
	opts := decodeOpts()
	opts.NDJSON = true
	b, err := Default().DecodeBatch(body, opts)
	if err != nil || len(b.Errors) > 0 {
		t.Fatalf("stored envelopes refused: %v %v", err, b.Errors)
	}
	for i, enc := range b.Events {
		if string(enc.Data) != string(encoded[i].Data) {
			t.Errorf("%s changed on the way back:\n%s\n%s", enc.Type, encoded[i].Data, enc.Data)
		}
	}
}
