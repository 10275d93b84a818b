package schemas

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateObject(t *testing.T) {
	http := mustKind(t, "http_request_complete.v0")
	sub := mustKind(t, "event_subscription_created.v0")
	ssh := mustKind(t, "ssh_user_certificate_created.v0")
	tests := []struct {
		name      string
		kind      *Kind
		object    string
		unknown   int
		fieldPath string // a *FieldError at this path
		syntax    bool   // a *SyntaxError
	}{
		{name: "empty object", kind: http, object: `{}`},
		{name: "typed fields", kind: http, object: `{"conn":{"client_ip":"203.0.113.7","server_port":443,"start_ts":"2026-11-22T10:04:05.123Z"},"backend":{"connection_reused":true},"compression":{"bytes_saved":-12}}`},
		{name: "nulls everywhere", kind: http, object: `{"conn":null,"http":{"request":{"headers":null,"method":null}},"traffic_policy":{"logs":null}}`},
		{name: "header maps and lists of maps", kind: http, object: `{"http":{"request":{"headers":{"Accept":["*/*"],"X-Id":[]}}},"traffic_policy":{"logs":[{"a":1,"b":{"c":[null]}}]}}`},
		{name: "unknown fields kept and counted", kind: http, object: `{"conn":{"client_ip":"::1","new_field":{"deep":[1,2]}},"brand_new":1}`, unknown: 2},
		{name: "escaped key finds its field", kind: http, object: `{"conn":{"server_\u0070ort":"x"}}`, fieldPath: "object.conn.server_port"},
		{name: "string for int32", kind: http, object: `{"conn":{"server_port":"443"}}`, fieldPath: "object.conn.server_port"},
		{name: "int32 overflow", kind: http, object: `{"conn":{"server_port":2147483648}}`, fieldPath: "object.conn.server_port"},
		{name: "int32 min", kind: http, object: `{"http":{"response":{"status_code":-2147483648}}}`},
		{name: "int32 below min", kind: http, object: `{"conn":{"server_port":-2147483649}}`, fieldPath: "object.conn.server_port"},
		{name: "int64 max", kind: http, object: `{"http":{"request":{"body_length":9223372036854775807}}}`},
		{name: "int64 overflow", kind: http, object: `{"http":{"request":{"body_length":9223372036854775808}}}`, fieldPath: "object.http.request.body_length"},
		{name: "fraction for int", kind: http, object: `{"http":{"response":{"status_code":200.5}}}`, fieldPath: "object.http.response.status_code"},
		{name: "exponent for int", kind: http, object: `{"http":{"response":{"status_code":2e2}}}`, fieldPath: "object.http.response.status_code"},
		{name: "bool as string", kind: http, object: `{"backend":{"connection_reused":"true"}}`, fieldPath: "object.backend.connection_reused"},
		{name: "bad timestamp", kind: http, object: `{"conn":{"start_ts":"yesterday"}}`, fieldPath: "object.conn.start_ts"},
		{name: "timestamp with offset", kind: http, object: `{"conn":{"start_ts":"2026-11-22T10:04:05+05:30"}}`},
		{name: "object for leaf", kind: http, object: `{"tls":{"version":{"major":1}}}`, fieldPath: "object.tls.version"},
		{name: "leaf for group", kind: http, object: `{"conn":"203.0.113.7"}`, fieldPath: "object.conn"},
		{name: "header values not lists", kind: http, object: `{"http":{"request":{"headers":{"Accept":"*/*"}}}}`, fieldPath: "object.http.request.headers.Accept"},
		{name: "header list of numbers", kind: http, object: `{"http":{"request":{"headers":{"Accept":[1]}}}}`, fieldPath: "object.http.request.headers.Accept[0]"},
		{name: "logs not objects", kind: http, object: `{"traffic_policy":{"logs":["x"]}}`, fieldPath: "object.traffic_policy.logs[0]"},
		{name: "list of objects", kind: sub, object: `{"sources":[{"type":"http_request_complete.v0","uri":"u"},{"type":"x","fields":["conn.client_ip"]}],"destinations":[]}`},
		{name: "list element wrong type", kind: sub, object: `{"sources":[{"type":7}]}`, fieldPath: "object.sources.type"},
		{name: "null list element", kind: sub, object: `{"sources":[null]}`, fieldPath: "object.sources[0]"},
		{name: "secret must be null", kind: mustKind(t, "api_key_created.v0"), object: `{"token":"sk_live"}`, fieldPath: "object.token"},
		{name: "secret null", kind: mustKind(t, "api_key_created.v0"), object: `{"token":null}`},
		{name: "aws secret must be null", kind: mustKind(t, "event_destination_created.v0"), object: `{"target":{"kinesis":{"auth":{"creds":{"aws_access_key_id":"AKIA","aws_secret_access_key":"shh"}}}}}`, fieldPath: "object.target.kinesis.auth.creds.aws_secret_access_key"},
		{name: "string map", kind: ssh, object: `{"extensions":{"permit-pty":""},"principals":["root"]}`},
		{name: "string map wrong value", kind: ssh, object: `{"critical_options":{"force-command":["ls"]}}`, fieldPath: "object.critical_options.force-command"},
		{name: "not an object", kind: http, object: `[1]`, fieldPath: "object"},
		{name: "type error then syntax error", kind: http, object: `{"conn":{"server_port":"x"},`, syntax: true},
		{name: "truncated", kind: http, object: `{"conn":{"client_ip":"1.2`, syntax: true},
		{name: "trailing comma", kind: http, object: `{"conn":{},}`, syntax: true},
		{name: "trailing garbage", kind: http, object: `{} x`, syntax: true},
		{name: "invalid UTF-8", kind: http, object: "{\"conn\":{\"client_ip\":\"\xff\"}}", syntax: true},
		{name: "control character", kind: http, object: "{\"a\":\"\x01\"}", syntax: true},
		{name: "too deep", kind: http, object: strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100), syntax: true},
		{name: "leading zero", kind: http, object: `{"conn":{"server_port":0443}}`, syntax: true},
		// The rules of values beyond their types (Field.Value).
		{name: "port 1", kind: http, object: `{"conn":{"server_port":1}}`},
		{name: "port 65535", kind: http, object: `{"conn":{"server_port":65535}}`},
		{name: "port 0", kind: http, object: `{"conn":{"server_port":0}}`, fieldPath: "object.conn.server_port"},
		{name: "port -1", kind: http, object: `{"conn":{"server_port":-1}}`, fieldPath: "object.conn.server_port"},
		{name: "port 65536", kind: http, object: `{"conn":{"server_port":65536}}`, fieldPath: "object.conn.server_port"},
		{name: "tcp port -1", kind: mustKind(t, "tcp_connection_closed.v0"), object: `{"conn":{"server_port":-1}}`, fieldPath: "object.conn.server_port"},
		{name: "IPv6 and mapped IPv4", kind: http, object: `{"conn":{"client_ip":"2001:db8::7","server_ip":"::ffff:203.0.113.7"}}`},
		{name: "IP 999.1.1.1", kind: http, object: `{"conn":{"client_ip":"999.1.1.1"}}`, fieldPath: "object.conn.client_ip"},
		{name: "IP a name", kind: http, object: `{"conn":{"server_ip":"localhost"}}`, fieldPath: "object.conn.server_ip"},
		{name: "IP empty", kind: http, object: `{"conn":{"client_ip":""}}`, fieldPath: "object.conn.client_ip"},
		{name: "IP with a zone", kind: http, object: `{"conn":{"client_ip":"fe80::1%eth0"}}`, fieldPath: "object.conn.client_ip"},
		{name: "IP escaped", kind: http, object: `{"conn":{"client_ip":"\u0031.2.3.4"}}`, fieldPath: "object.conn.client_ip"},
		{name: "agent IP", kind: mustKind(t, "agent_session_start.v0"), object: `{"agent_ip":"203.0.113.300"}`, fieldPath: "object.agent_ip"},
		{name: "timestamps unchecked without a window", kind: http, object: `{"conn":{"start_ts":"1970-01-01T00:00:00Z"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unknown, err := tt.kind.ValidateObject([]byte(tt.object))
			var fe *FieldError
			var se *SyntaxError
			switch {
			case tt.syntax:
				if !errors.As(err, &se) {
					t.Fatalf("got %v, want a syntax error", err)
				}
			case tt.fieldPath != "":
				if !errors.As(err, &fe) || fe.Path != tt.fieldPath {
					t.Fatalf("got %v, want a field error at %s", err, tt.fieldPath)
				}
			case err != nil:
				t.Fatalf("unexpected error: %v", err)
			case unknown != tt.unknown:
				t.Fatalf("unknown = %d, want %d", unknown, tt.unknown)
			}
		})
	}
}

func TestFieldErrorSaysWhatToSend(t *testing.T) {
	_, err := mustKind(t, "http_request_complete.v0").ValidateObject([]byte(`{"conn":{"server_port":"443"}}`))
	want := "object.conn.server_port: expected int32, got a string"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

func TestIsTimestamp(t *testing.T) {
	for ts, want := range map[string]bool{
		"2026-11-22T10:04:05Z":             true,
		"2026-11-22T10:04:05.123456789Z":   true,
		"2026-11-22t10:04:05z":             false, // Go's time package wants T and Z
		"2028-02-29T10:04:05Z":             true,
		"2026-02-29T10:04:05Z":             false,
		"2026-04-31T10:04:05Z":             false,
		"2026-11-22T10:04:60Z":             false,
		"2026-11-22T10:04:05-07:00":        true,
		"2026-11-22T10:04:05.5+14:00":      true,
		"2026-11-22 10:04:05Z":             false,
		"2026-13-22T10:04:05Z":             false,
		"2026-11-22T10:04:05":              false,
		"2026-11-22T10:04:05.Z":            false,
		"2026-11-22T10:04:05+0700":         false,
		"2026-11-22T24:04:05Z":             false,
		"2026-11-22T10:04:05Zjunk":         false,
		"2026-11-22T10:04:05.123+07:00:00": false,
	} {
		if got := isTimestamp([]byte(ts)); got != want {
			t.Errorf("isTimestamp(%q) = %v, want %v", ts, got, want)
		}
	}
}

func mustKind(t *testing.T, name string) *Kind {
	t.Helper()
	k, ok := Default().Kind(name)
	if !ok {
		t.Fatalf("kind %s missing", name)
	}
	return k
}
