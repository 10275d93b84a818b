package filters_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/schemas"
)

// TestReadingFilter: a reading filter is a subscription's filter, ev the
// object, with the envelope's fields beside it.
func TestReadingFilter(t *testing.T) {
	env, err := filters.NewEnv(schemas.Default())
	if err != nil {
		t.Fatal(err)
	}
	http := []byte(`{"event_id":"ev_1","event_type":"http_request_complete.v0","event_timestamp":"2026-11-22T10:04:05.123Z",` +
		`"account_id":"ac_1","principal":null,"object":{"conn":{"client_ip":"203.0.113.7","server_port":443},"http":{"request":{"method":"get"}}}}`)
	audit := []byte(`{"event_id":"ev_2","event_type":"api_key_created.v0","event_timestamp":"2026-11-22T10:04:05.123Z",` +
		`"account_id":"ac_1","principal":{"source":"api"},"object":{"id":"ak_1"}}`)
	for _, tc := range []struct {
		kind, expr string
		event      []byte
		want       bool
	}{
		{"http_request_complete.v0", `ev.conn.server_port == 443`, http, true},
		{"http_request_complete.v0", `ev.conn.server_port > 1000`, http, false},
		{"http_request_complete.v0", `inCIDR(ev.conn.client_ip, "203.0.113.0/24")`, http, true},
		{"http_request_complete.v0", `envelope.event_type == "http_request_complete.v0" && ev.conn.server_port == 443`, http, true},
		{"http_request_complete.v0", `envelope.event_id == "ev_1" && envelope.account_id == "ac_1"`, http, true},
		{"http_request_complete.v0", `envelope.event_timestamp > timestamp("2026-11-22T10:00:00Z")`, http, true},
		{"http_request_complete.v0", `ev.conn.server_name == ""`, http, true}, // lacking: its zero value
		{"api_key_created.v0", `envelope.event_type.startsWith("api_key_")`, audit, true},
		{"api_key_created.v0", `envelope.event_type == "api_key_deleted.v0"`, audit, false},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			f, err := env.CompileReading(tc.kind, tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Match(t.Context(), tc.event)
			if err != nil || got != tc.want {
				t.Fatalf("Match = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestReadingFilterRefused: what a subscription would refuse, a reading
// filter refuses when it is compiled, never by matching nothing.
func TestReadingFilterRefused(t *testing.T) {
	env, err := filters.NewEnv(schemas.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind, expr, want string
		sentinel         error
	}{
		{"http_request_complete.v0", `ev.conn.server_port == "443"`, "no matching overload", filters.ErrInvalidFilter},
		{"http_request_complete.v0", `ev.object.conn.server_port == 443`, "has no field object", filters.ErrInvalidFilter},
		{"http_request_complete.v0", `ev.event_type == "x"`, "has no field event_type", filters.ErrInvalidFilter},
		{"http_request_complete.v0", `envelope.nope == "x"`, "undeclared reference", filters.ErrInvalidFilter},
		{"http_request_complete.v0", `ev.x ==`, "Syntax error", filters.ErrInvalidFilter},
		{"http_request_complete.v0", `envelope.event_type`, "boolean", filters.ErrNotBoolean},
		{"api_key_created.v0", `ev.id == "ak_1"`, "not one a filter may use", filters.ErrInvalidFilter},
		{"nope.v0", `true`, "unknown event kind", filters.ErrUnknownKind},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := env.CompileReading(tc.kind, tc.expr)
			if !errors.Is(err, tc.sentinel) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CompileReading(%s, %q) = %v, want %v saying %q", tc.kind, tc.expr, err, tc.sentinel, tc.want)
			}
		})
	}
}

// TestReadingFilterWrongValue: an event whose field does not have the
// catalogue's type is an error, not a silent false.
func TestReadingFilterWrongValue(t *testing.T) {
	env, err := filters.NewEnv(schemas.Default())
	if err != nil {
		t.Fatal(err)
	}
	f, err := env.CompileReading("http_request_complete.v0", `ev.conn.server_port == 443`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Match(t.Context(), []byte(`{"event_type":"http_request_complete.v0","object":{"conn":{"server_port":"443"}}}`))
	if !errors.Is(err, filters.ErrFieldType) {
		t.Fatalf("Match = %v, want ErrFieldType", err)
	}
}

// TestReadingFilterRefusesLongEnvelopeStrings checks that an envelope
// string longer than the cost estimate took it to be is not evaluated: the
// filter could cost more than its estimate on it.
func TestReadingFilterRefusesLongEnvelopeStrings(t *testing.T) {
	env, err := filters.NewEnv(schemas.Default())
	if err != nil {
		t.Fatal(err)
	}
	f, err := env.CompileReading("http_request_complete.v0", `envelope.event_id.startsWith('ev_')`)
	if err != nil {
		t.Fatal(err)
	}
	long := `{"event_type":"http_request_complete.v0","event_id":"ev_` + strings.Repeat("x", 200) + `"}`
	if _, err := f.Match(t.Context(), []byte(long)); err == nil || !strings.Contains(err.Error(), "event_id is 203 bytes, over the 128") {
		t.Fatalf("Match of a 203-byte event_id: %v, want an error saying it is too long", err)
	}
	ok, err := f.Match(t.Context(), []byte(`{"event_type":"http_request_complete.v0","event_id":"ev_1"}`))
	if err != nil || !ok {
		t.Fatalf("Match of a short event_id: %v, %v; want true", ok, err)
	}
}
