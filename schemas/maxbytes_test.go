package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestFilterableStringFieldsHaveMaxBytes checks the limits the CEL cost
// estimate of filters assumes: every filterable string field has one, a
// host name 253 bytes and an IP address 45.
func TestFilterableStringFieldsHaveMaxBytes(t *testing.T) {
	want := map[string]int{
		"conn.client_ip":   MaxIPBytes,
		"conn.server_ip":   MaxIPBytes,
		"conn.server_name": MaxHostnameBytes,
	}
	if MaxHostnameBytes != 253 || MaxIPBytes != 45 {
		t.Errorf("MaxHostnameBytes = %d, MaxIPBytes = %d; want 253 and 45", MaxHostnameBytes, MaxIPBytes)
	}
	for _, k := range Default().Kinds() {
		for _, f := range k.Fields {
			switch {
			case f.Filterable && f.Type == TypeString && f.MaxBytes <= 0:
				t.Errorf("%s %s: filterable string field without MaxBytes", k.Name, f.Path)
			case f.Filterable && f.Type == TypeString && f.MaxBytes != want[f.Path]:
				t.Errorf("%s %s: MaxBytes %d, want %d", k.Name, f.Path, f.MaxBytes, want[f.Path])
			case !f.Filterable && f.MaxBytes != 0:
				t.Errorf("%s %s: MaxBytes %d on a field that is not filterable", k.Name, f.Path, f.MaxBytes)
			}
		}
	}
}

// TestValidateObjectRefusesOverLongFields checks that a value over its
// field's MaxBytes is refused, counted in bytes once JSON escapes are
// decoded, with an error naming the field and the limit.
func TestValidateObjectRefusesOverLongFields(t *testing.T) {
	tests := []struct {
		name  string
		field string // under conn
		value string // JSON string contents, between the quotes
		ok    bool
	}{
		{"host name at the limit", "server_name", strings.Repeat("a", 253), true},
		{"host name one over", "server_name", strings.Repeat("a", 254), false},
		{"a million bytes", "server_name", strings.Repeat("a", 1_000_000), false},
		{"escapes count as what they decode to", "server_name", strings.Repeat(`\u0061`, 253), true},
		{"escapes one over", "server_name", strings.Repeat(`\u0061`, 254), false},
		{"two-byte characters count twice", "server_name", strings.Repeat("é", 127), false},
		{"two-byte characters within", "server_name", strings.Repeat("é", 126), true},
		{"surrogate pair is four bytes", "server_name", strings.Repeat(`\ud83d\ude00`, 63) + "a", true},
		{"surrogate pairs over", "server_name", strings.Repeat(`\ud83d\ude00`, 64), false},
		{"escaped backslashes", "server_name", strings.Repeat(`\\`, 253), true},
		{"longest IPv6 text", "client_ip", "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", true},
		{"IP one over", "server_ip", "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.2555", false},
	}
	for _, kind := range []string{"http_request_complete.v0", "tcp_connection_closed.v0"} {
		k := mustKind(t, kind)
		for _, tt := range tests {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				object := fmt.Sprintf(`{"conn":{%q:"%s"}}`, tt.field, tt.value)
				_, err := k.ValidateObject([]byte(object))
				if tt.ok {
					if err != nil {
						t.Fatalf("ValidateObject: %v", err)
					}
					return
				}
				var fe *FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("ValidateObject error = %v, want a *FieldError", err)
				}
				limit := MaxHostnameBytes
				if tt.field != "server_name" {
					limit = MaxIPBytes
				}
				if fe.Path != "object.conn."+tt.field || !strings.Contains(fe.Msg, fmt.Sprintf("limit of %d bytes", limit)) {
					t.Errorf("error = %v, want one naming object.conn.%s and its limit of %d bytes", err, tt.field, limit)
				}
			})
		}
	}
}

// TestDecodedLen checks the length of escaped strings against
// encoding/json's decoding.
func TestDecodedLen(t *testing.T) {
	for _, raw := range []string{
		``, `abc`, `\"\\\/\b\f\n\r\t`, `\u00e9`, `\u20ac`, `\ud83d\ude00`, `\ud800`, `\udc00`,
		`\ud800\u0041`, `\ud800\ud800\udc00`, `é€😀`, `a\u0000b`,
	} {
		var s string
		if err := json.Unmarshal([]byte(`"`+raw+`"`), &s); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got := decodedLen([]byte(raw), strings.Contains(raw, `\`)); got != len(s) {
			t.Errorf("decodedLen(%s) = %d, want %d", raw, got, len(s))
		}
	}
}

// TestIngestRefusesOverLongFields checks both ways in: a batch as POST
// /events sends it, where the event is listed with its error, and Encode,
// which the producer package uses.
func TestIngestRefusesOverLongFields(t *testing.T) {
	c := Default()
	long := strings.Repeat("a", 1_000_000)
	body := `[{"event_type":"http_request_complete.v0","object":{"conn":{"server_name":"` + long + `"}}},` +
		`{"event_type":"http_request_complete.v0","object":{"conn":{"server_name":"api.example.com"}}}]`
	batch, err := c.DecodeBatch([]byte(body), decodeOpts())
	if err != nil {
		t.Fatalf("DecodeBatch: %v", err)
	}
	if len(batch.Events) != 1 || len(batch.Errors) != 1 || batch.Errors[0].Index != 0 {
		t.Fatalf("DecodeBatch = %d events, errors %v; want the second event and an error for the first", len(batch.Events), batch.Errors)
	}
	if msg := batch.Errors[0].Error(); !strings.Contains(msg, "object.conn.server_name") || !strings.Contains(msg, "253") {
		t.Errorf("error %q does not name the field and its limit", msg)
	}
	_, err = c.Encode(Event{
		Type:      "tcp_connection_closed.v0",
		AccountID: testAccount,
		Object:    json.RawMessage(`{"conn":{"server_name":"` + long + `"}}`),
	})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "object.conn.server_name" {
		t.Errorf("Encode error = %v, want a *FieldError at object.conn.server_name", err)
	}
}

// TestJSONSchemaCarriesMaxLength checks that the JSON Schemas say what
// validation enforces.
func TestJSONSchemaCarriesMaxLength(t *testing.T) {
	c := Default()
	schema := compileSchema(t, c, "http_request_complete.v0")
	sampler := NewSampler(3)
	for _, tt := range []struct {
		value string
		ok    bool
	}{{strings.Repeat("a", 253), true}, {strings.Repeat("a", 254), false}} {
		ev, err := sampler.Event("http_request_complete.v0")
		if err != nil {
			t.Fatal(err)
		}
		var envelope map[string]any
		doc, _ := ev.MarshalJSON()
		if err := json.Unmarshal(doc, &envelope); err != nil {
			t.Fatal(err)
		}
		setPath(envelope["object"].(map[string]any), "conn.server_name", tt.value)
		doc, _ = json.Marshal(envelope)
		if err := validateJSON(t, schema, doc); (err == nil) != tt.ok {
			t.Errorf("server_name of %d bytes: JSON Schema error %v, want ok=%t", len(tt.value), err, tt.ok)
		}
	}
}
