package edge

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/schemas"
)

// referenceObject builds the object of an http_request_complete.v0 as
// nested maps encoded by encoding/json: what appendRequestObject must
// equal.
func referenceObject(o *requestObject) map[string]any {
	conn := map[string]any{"client_ip": o.clientIP, "server_name": o.serverName, "server_port": o.serverPort,
		"start_ts": o.connStart.UTC().Format(schemas.TimeLayout)}
	if o.serverIP != "" {
		conn["server_ip"] = o.serverIP
	}
	obj := map[string]any{
		"backend": map[string]any{"connection_reused": o.reused}, "conn": conn,
		"basic_auth": map[string]any{"decision": "invalid"}, "circuit_breaker": map[string]any{"decision": "invalid"},
		"compression": map[string]any{"algorithm": "none"}, "ip_policy": map[string]any{"decision": "invalid"},
		"oauth": map[string]any{"decision": "invalid"}, "webhook_verification": map[string]any{"decision": "invalid"},
		"traffic_policy": map[string]any{"logs": []any{}},
		"http": map[string]any{
			"request": map[string]any{"body_length": o.reqBytes, "headers": normalizeHeaders(o.reqHeaders),
				"method": strings.ToLower(o.method), "user_agent": o.agent,
				"url": map[string]any{"host": o.host, "path": o.path, "query": o.query, "scheme": o.scheme, "raw": o.raw}},
			"response": map[string]any{"body_length": o.respBytes, "headers": normalizeHeaders(o.respHeaders), "status_code": o.status},
		},
	}
	if o.tls != nil {
		obj["tls"] = map[string]any{"version": tlsVersion(o.tls.Version), "cipher_suite": tls.CipherSuiteName(o.tls.CipherSuite)}
	}
	b, _ := json.Marshal(obj)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

func sampleObject() requestObject {
	return requestObject{
		reused: true, clientIP: "203.0.113.7", serverIP: "127.0.0.1", serverName: "demo.apps.example.test", serverPort: 8000,
		connStart: time.Date(2026, 11, 29, 0, 1, 2, 345e6, time.UTC),
		method:    "POST", host: "demo.apps.example.test:8000", path: "/orders/é\"\\", query: "id=7&x=<y>",
		scheme: "https", raw: "https://demo.apps.example.test:8000/orders?id=7", agent: "curl/8.5.0\t\x01",
		reqBytes: 12, respBytes: 345, status: 201,
		reqHeaders:  http.Header{"Content-Type": {"Application/JSON"}, "X-Bad": {"a\xffb"}, "x-lower": {"Mixed"}, "X-Escaped": {"Q\"\\\x1fZ\tÉ"}},
		respHeaders: http.Header{"Set-Cookie": {"A=B", "C=D"}},
		tls:         &tls.ConnectionState{Version: tls.VersionTLS13, CipherSuite: tls.TLS_AES_128_GCM_SHA256},
	}
}

// TestRequestObjectMatchesTheMaps: the object written straight equals
// the one encoding/json makes of the maps, quotes, control characters,
// invalid UTF-8, header names that are not canonical and TLS included,
// and the catalogue takes it.
func TestRequestObjectMatchesTheMaps(t *testing.T) {
	for _, o := range []requestObject{sampleObject(), {clientIP: "::1", serverName: "x.example", serverPort: 80, connStart: time.Now().Add(-time.Minute), method: "GET",
		path: "/", scheme: "http", status: 502, reqHeaders: http.Header{}, respHeaders: http.Header{}}} {
		got := appendRequestObject(nil, &o)
		var decoded map[string]any
		if err := json.Unmarshal(got, &decoded); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, got)
		}
		if want := referenceObject(&o); !reflect.DeepEqual(decoded, want) {
			t.Fatalf("written:\n%s\nwant (as maps):\n%v", got, want)
		}
		if _, err := schemas.Default().Encode(schemas.Event{Type: "http_request_complete.v0", AccountID: schemas.NewID(schemas.PrefixAccount), Object: got}); err != nil {
			t.Fatalf("the catalogue refuses it: %v\n%s", err, got)
		}
	}
}

func BenchmarkRequestObject(b *testing.B) {
	o := sampleObject()
	o.reqHeaders = http.Header{"Accept": {"*/*"}, "User-Agent": {"curl/8.5.0"}, "Content-Type": {"application/json"}}
	buf := make([]byte, 0, 4096)
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf = appendRequestObject(buf[:0], &o)
		}
	})
	b.Run("maps", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = referenceObject(&o)
		}
	})
}
