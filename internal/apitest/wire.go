package apitest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/sluicehq/sluice/schemas"
)

// WireEvent is an event as a producer sends it to POST /events: no
// account_id.
type WireEvent struct {
	ID        string          `json:"event_id,omitempty"`
	Type      string          `json:"event_type"`
	Timestamp string          `json:"event_timestamp,omitempty"`
	Principal json.RawMessage `json:"principal,omitempty"`
	Object    json.RawMessage `json:"object"`
}

// Samples returns n sampled events of mixed kinds, as producers send
// them.
func Samples(t testing.TB, seed uint64, n int) []WireEvent {
	t.Helper()
	s := schemas.NewSampler(seed)
	kinds := []string{"http_request_complete.v0", "tcp_connection_closed.v0", "certificate_authority_created.v0", "ssh_host_certificate_updated.v0"}
	out := make([]WireEvent, n)
	for i := range out {
		ev, err := s.Event(kinds[i%len(kinds)])
		if err != nil {
			t.Fatal(err)
		}
		out[i] = WireEvent{ID: ev.ID, Type: ev.Type, Timestamp: ev.Timestamp.UTC().Format(time.RFC3339Nano), Principal: ev.Principal, Object: ev.Object}
	}
	return out
}

// MustJSON returns v's JSON encoding, failing the test if it has none.
func MustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ErrorBody is the API's error shape.
type ErrorBody struct {
	ErrorCode  string `json:"error_code"`
	StatusCode int    `json:"status_code"`
	Msg        string `json:"msg"`
	// Details is a map of strings, as the official API clients decode
	// it: DecodeError fails on a value of another JSON type.
	Details map[string]string `json:"details"`
}

// DetailJSON returns the value of details.key of an error body, which is
// JSON text (a list, a number, an object), decoded.
func DetailJSON[T any](t *testing.T, body ErrorBody, key string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body.Details[key]), &v); err != nil {
		t.Fatalf("details.%s = %q, not the JSON text of a %T: %v", key, body.Details[key], v, err)
	}
	return v
}

// DecodeError decodes an error body, which must carry an operation id.
func DecodeError(t *testing.T, body []byte) ErrorBody {
	t.Helper()
	var e ErrorBody
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %v: %s", err, body)
	}
	if op := e.Details["operation_id"]; schemas.CheckID(schemas.PrefixOperation, op) != nil {
		t.Errorf("error body has no operation id: %s", body)
	}
	return e
}
