package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// readsTwoWays are events of valid JSON that JSON readers read differently:
// ingest refuses each as an invalid event whose error names the path.
var readsTwoWays = []struct {
	name   string
	event  string
	path   string
	reason string // in the message
}{
	{"name twice in a known group", `{"event_type":"http_request_complete.v0","object":{"conn":{"server_name":"allowed.example.com","server_name":"internal.example.org"}}}`, "object.conn.server_name", "appears twice"},
	{"name twice, once escaped", `{"event_type":"http_request_complete.v0","object":{"conn":{"server_name":"a","server_nam\u0065":"b"}}}`, "object.conn.server_name", "appears twice"},
	{"name twice, object first", `{"object":{"conn":{"server_port":1,"server_port":2}},"event_type":"http_request_complete.v0"}`, "object.conn.server_port", "appears twice"},
	{"name twice in an unknown field", `{"event_type":"tcp_connection_closed.v0","object":{"edge":{"pops":[{"id":1},{"id":2,"id":3}]}}}`, "object.edge.pops[1].id", "appears twice"},
	{"name twice in a header map", `{"event_type":"http_request_complete.v0","object":{"http":{"request":{"headers":{"Accept":["a"],"Accept":["b"]}}}}}`, "object.http.request.headers.Accept", "appears twice"},
	{"name twice in a list of objects", `{"event_type":"http_request_complete.v0","object":{"traffic_policy":{"logs":[{"k":1,"k":1}]}}}`, "object.traffic_policy.logs[0].k", "appears twice"},
	{"name twice in the principal", `{"event_type":"ip_policy_created.v0","principal":{"id":"ak_1","credential":{"id":"a","id":"b"}},"object":{}}`, "principal.credential.id", "appears twice"},
	{"name twice among many", `{"event_type":"tcp_connection_closed.v0","object":{` + manyMembers(40) + `,"k17":0}}`, "object.k17", "appears twice"},
	{"name twice at the top of the object", `{"event_type":"tcp_connection_closed.v0","object":{"x":1,"y":2,"x":3}}`, "object.x", "appears twice"},
	{"lone high surrogate", `{"event_type":"http_request_complete.v0","object":{"conn":{"server_name":"\ud800"}}}`, "object.conn.server_name", `\ud800`},
	{"high surrogate and a letter", `{"event_type":"http_request_complete.v0","object":{"conn":{"server_name":"a\uD834\u0041"}}}`, "object.conn.server_name", `\ud834`},
	{"two high surrogates", `{"event_type":"tcp_connection_closed.v0","object":{"x":"\ud800\ud800"}}`, "object.x", `\ud800`},
	{"high surrogate at the end", `{"event_type":"tcp_connection_closed.v0","object":{"x":"ab\udbff"}}`, "object.x", `\udbff`},
	{"lone low surrogate", `{"event_type":"tcp_connection_closed.v0","object":{"x":"\udc00x"}}`, "object.x", `\udc00`},
	{"lone surrogate in a list", `{"event_type":"tcp_connection_closed.v0","object":{"x":["ok","\udfff"]}}`, "object.x[1]", `\udfff`},
	{"lone surrogate in a member name", `{"event_type":"tcp_connection_closed.v0","object":{"conn":{"\ud800":1}}}`, "object.conn", "member name"},
	{"lone surrogate in the principal", `{"event_type":"ip_policy_created.v0","principal":{"subject":"\ude00"},"object":{}}`, "principal.subject", `\ude00`},
	{"number too large", `{"event_type":"tcp_connection_closed.v0","object":{"n":1e999}}`, "object.n", "beyond the range of a float64"},
	{"number too small", `{"event_type":"tcp_connection_closed.v0","object":{"a":{"b":[1,2,-1e400]}}}`, "object.a.b[2]", "beyond the range of a float64"},
	{"number just over float64", `{"event_type":"tcp_connection_closed.v0","object":{"n":1.8e308}}`, "object.n", "beyond the range of a float64"},
	{"number written long", `{"event_type":"tcp_connection_closed.v0","object":{"n":0.00000000001e320}}`, "object.n", "beyond the range of a float64"},
	{"integer of 400 digits", `{"event_type":"tcp_connection_closed.v0","object":{"n":` + strings.Repeat("9", 400) + `}}`, "object.n", "beyond the range of a float64"},
	{"number too large in an int64 field", `{"event_type":"tcp_connection_closed.v0","object":{"conn":{"bytes_in":1e999}}}`, "object.conn.bytes_in", "beyond the range of a float64"},
	{"integer over int64 in an int64 field", `{"event_type":"tcp_connection_closed.v0","object":{"conn":{"bytes_in":9223372036854775808}}}`, "object.conn.bytes_in", "expected int64"},
	{"integer over int32 in an int32 field", `{"event_type":"tcp_connection_closed.v0","object":{"conn":{"server_port":2147483648}}}`, "object.conn.server_port", "expected int32"},
}

// readsOneWay are events near those above that every reader reads alike.
var readsOneWay = []string{
	`{"event_type":"tcp_connection_closed.v0","object":{"a":{"k":1},"b":{"k":1},"k":[{"k":1},{"k":2}]}}`,
	`{"event_type":"tcp_connection_closed.v0","object":{"x":"\ud83d\ude00 \uD834\uDD1E \u00e9 \u0000"}}`,
	`{"event_type":"tcp_connection_closed.v0","object":{"n":[1.7976931348623157e308,-1.7976931348623157e308,1e-400,0e999999999,0.0e-5,179769313486231570000000000e282]}}`,
	`{"event_type":"tcp_connection_closed.v0","object":{"conn":{"bytes_in":9223372036854775807,"bytes_out":-9223372036854775808}}}`,
	`{"event_type":"tcp_connection_closed.v0","object":{` + manyMembers(100) + `}}`,
}

// manyMembers returns n members "k0":0 ... of an object.
func manyMembers(n int) string {
	members := make([]string, n)
	for i := range members {
		members[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return strings.Join(members, ",")
}

// TestIngestRefusesWhatReadsTwoWays decodes each event as a JSON array
// batch and as NDJSON, and encodes it as the producer does: each is
// refused with a *FieldError naming its path and what is wrong.
func TestIngestRefusesWhatReadsTwoWays(t *testing.T) {
	c := Default()
	for _, tt := range readsTwoWays {
		t.Run(tt.name, func(t *testing.T) {
			check := func(how string, err error) {
				t.Helper()
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Path != tt.path || !strings.Contains(fe.Msg, tt.reason) {
					t.Errorf("%s: error %v, want one at %s saying %q", how, err, tt.path, tt.reason)
				}
			}
			for _, ndjson := range []bool{false, true} {
				body := tt.event
				if !ndjson {
					body = "[" + body + "]"
				}
				opts := decodeOpts()
				opts.NDJSON = ndjson
				b, err := c.DecodeBatch([]byte(body), opts)
				if err != nil || len(b.Events) != 0 || len(b.Errors) != 1 {
					t.Fatalf("ndjson %t: %v, %d events, errors %v; want the event refused", ndjson, err, len(b.Events), b.Errors)
				}
				check(fmt.Sprintf("DecodeBatch (ndjson %t)", ndjson), b.Errors[0].Err)
			}
			var wire struct {
				Type      string          `json:"event_type"`
				Principal json.RawMessage `json:"principal"`
				Object    json.RawMessage `json:"object"`
			}
			// The raw object and principal are what Encode is given.
			if err := json.Unmarshal([]byte(tt.event), &wire); err != nil {
				t.Fatal(err)
			}
			_, err := c.Encode(Event{Type: wire.Type, AccountID: testAccount, Principal: wire.Principal, Object: wire.Object})
			check("Encode", err)
		})
	}
	for i, event := range readsOneWay {
		b, err := c.DecodeBatch([]byte("["+event+"]"), decodeOpts())
		if err != nil || len(b.Errors) != 0 || len(b.Events) != 1 {
			t.Errorf("event %d refused: %v %v\n%s", i, err, b.Errors, event)
		}
	}
}

// TestValidateObjectNamesThePath checks the paths of ValidateObject, whose
// value is the object itself.
func TestValidateObjectNamesThePath(t *testing.T) {
	k := mustKind(t, "http_request_complete.v0")
	for object, path := range map[string]string{
		`{"conn":{"server_name":"a","server_name":"b"}}`: "object.conn.server_name",
		`{"a":1,"a":1}`:                     "object.a",
		`{"x":[{},{"y":"\ud800"}]}`:         "object.x[1].y",
		`{"http":{"request":{"n":-1e999}}}`: "object.http.request.n",
	} {
		_, err := k.ValidateObject([]byte(object))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Path != path {
			t.Errorf("%s: error %v, want one at %s", object, err, path)
		}
	}
}

func TestCheckJSON(t *testing.T) {
	tests := []struct {
		name, data string
		syntax     bool   // a *SyntaxError
		path       string // else the path of a *FieldError, or "" for none
	}{
		{"plain", `{"a":"é","b":[1,{"c":"\ud83d\ude00"}]}`, false, ""},
		{"invalid UTF-8", "{\"a\":\"x\xffy\"}", true, ""},
		{"lone surrogate", `{"a":[{"b":"x\ud800"}]}`, false, "a[0].b"},
		{"member twice", `{"a":1,"a":2}`, false, "a"},
		{"number out of range", `{"a":1e400}`, false, "a"},
		{"trailing data", `{} {}`, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckJSON([]byte(tt.data))
			var (
				syntax *SyntaxError
				field  *FieldError
			)
			switch {
			case tt.syntax:
				if !errors.As(err, &syntax) {
					t.Fatalf("CheckJSON(%q) = %v, want a *SyntaxError", tt.data, err)
				}
			case tt.path == "":
				if err != nil {
					t.Fatalf("CheckJSON(%q) = %v", tt.data, err)
				}
			case !errors.As(err, &field) || field.Path != tt.path:
				t.Fatalf("CheckJSON(%q) = %v, want a *FieldError at %s", tt.data, err, tt.path)
			}
		})
	}
}
