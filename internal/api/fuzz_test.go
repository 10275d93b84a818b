package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/apiwire"
)

// requestBodies are the types management request bodies decode into, as
// fuzz inputs choose them.
var requestBodies = []func() any{
	func() any { return new(destinationInput) },
	func() any { return new(apiwire.SubscriptionInput) },
	func() any { return new(apiwire.SourceInput) },
	func() any { return new(apiwire.SourceUpdate) },
	func() any { return new(apiwire.APIKeyInput) },
}

// FuzzDecodeObject feeds arbitrary bodies to the decoder of management
// requests: it must never panic, must refuse with a documented 400 or 413
// code, and must accept only a JSON object every member of which is a field
// of the body's type, named exactly, holding the value decoded.
func FuzzDecodeObject(f *testing.F) {
	for _, seed := range []struct {
		body  string
		which uint8
	}{
		{`{"description":"d","metadata":"m","format":"JSON","target":{"kinesis":{"auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/r"}},"stream_arn":"arn:aws:kinesis:us-east-1:123456789012:stream/s"}}}`, 0},
		{`{"target":{"firehose":{"auth":{"creds":{"aws_access_key_id":"AKIA","aws_secret_access_key":"s"}},"delivery_stream_arn":"x"}}}`, 0},
		{`{"description":"é","sources":[{"type":"http_request_complete.v0","filter":"ev.conn.server_port == 443","fields":["conn"]}],"destination_ids":["ed_1"]}`, 1},
		{`{"sources":null,"destination_ids":[]}`, 1},
		{`{"type":"tcp_connection_closed.v0","fields":null}`, 2},
		{`{"filter":"","fields":[]}`, 3},
		{`{"description":"ci","metadata":"{}"}`, 4},
		{` {"Description":"x"}`, 4},
		{`{"description":"a","description":"b"}`, 4},
		{`{"sources":[{"type":"x","TYPE":"y"}]}`, 1},
		{`{"target":{"kinesis":{"auth":{"role":{"role_arn":1}}}}}`, 0},
		{`{} {}`, 3},
		{`null`, 2},
		{`{"sources":[{"type":"x"},{"type":7}],"destination_ids":["ed_1",[]]}`, 1},
		{`{"target":{"kinesis":{"auth":{"creds":{"aws_access_key_id":true}}}}}`, 0},
		{`{"fields":["conn",{"a":1}]}`, 3},
	} {
		f.Add([]byte(seed.body), seed.which)
	}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		v := requestBodies[int(which)%len(requestBodies)]()
		if e := decodeObject(body, v); e != nil {
			if _, documented := codes[e.Code]; !documented || e.Msg == "" {
				t.Fatalf("error %v is not documented or has no message", e)
			}
			if status := e.Code.Status(); status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
				t.Fatalf("error %v has status %d", e, status)
			}
			if e.Code == CodeUnknownField || e.Code == CodeWrongType {
				// The member at fault is named by its JSON path, which the
				// message quotes.
				field, ok := e.Details["field"]
				if !ok || !strings.Contains(e.Msg, field) && !strings.Contains(e.Msg, strconv.Quote(field)) {
					t.Fatalf("error %v of %q does not name its field in details.field (%v)", e, body, e.Details)
				}
			}
			return
		}
		var sent map[string]any
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Fatalf("accepted %q, which is not a JSON object: %v", body, err)
		}
		canonical, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var decoded map[string]any
		if err := json.Unmarshal(canonical, &decoded); err != nil {
			t.Fatal(err)
		}
		if path, ok := within(sent, decoded, ""); !ok {
			t.Fatalf("accepted %q, but %s is not decoded as sent: %s", body, path, canonical)
		}
	})
}

// within reports whether every member of the object sent is in decoded,
// under the same name and with the same value, a member absent from
// decoded (omitempty) being a zero value; it returns the path of the
// first that is not.
func within(sent, decoded any, path string) (string, bool) {
	switch s := sent.(type) {
	case map[string]any:
		d, ok := decoded.(map[string]any)
		if !ok {
			return path, s == nil && decoded == nil
		}
		for k, sv := range s {
			dv, present := d[k]
			if !present {
				if !isZero(sv) {
					return path + "." + k, false
				}
				continue
			}
			if p, ok := within(sv, dv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		d, ok := decoded.([]any)
		if !ok {
			return path, len(s) == 0 && decoded == nil
		}
		if len(s) != len(d) {
			return path, false
		}
		for i := range s {
			if p, ok := within(s[i], d[i], path+"[]"); !ok {
				return p, false
			}
		}
		return "", true
	case nil:
		return path, decoded == nil || isZero(decoded)
	}
	return path, reflect.DeepEqual(sent, decoded)
}

func isZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	case bool:
		return !v
	case float64:
		return v == 0
	}
	return false
}
