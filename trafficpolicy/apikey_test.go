package trafficpolicy

import (
	"net/http"
	"strings"
	"testing"
)

// TestRateLimitByAPIKey checks the bucket key api_key.id: requests whose
// WithAPIKey answers the same id share a bucket whatever their headers,
// the id is looked up once per request, a request without a key is
// neither counted nor limited (error code ERR_RATE_LIMIT_MISSING_API_KEY),
// expressions see api_key.id, and without WithAPIKey no request has a key.
func TestRateLimitByAPIKey(t *testing.T) {
	const doc = `
on_http_request:
  - name: per key
    actions:
      - type: rate-limit
        config: {name: per key, algorithm: sliding_window, capacity: 2, rate: 60s, bucket_key: [api_key.id]}
  - name: no key
    expressions: ["api_key.id == '' && actions.service.rate_limit.error.code == 'ERR_RATE_LIMIT_MISSING_API_KEY' && actions.service.rate_limit.error.message.contains('api_key.id')"]
    actions:
      - type: deny
        config: {status_code: 401}
  - name: shown
    expressions: ["api_key.id == 'ak_alice' && actions.service.rate_limit.bucket_key == 'ak_alice'"]
    actions:
      - type: custom-response
        config: {status_code: 200, body: alice}
`
	lookups := 0
	keyOf := func(r *http.Request) (string, bool) {
		lookups++
		// Any spelling of Alice's key is Alice's: the caller decides.
		if strings.Contains(strings.ToLower(r.Header.Get("Authorization")), "alice") {
			return "ak_alice", true
		}
		return "", false
	}
	h := mustParse(t, doc, newFakeClock().option(), WithAPIKey(keyOf)).Handler(upstream)
	for i, header := range []string{"Bearer alice", "bearer ALICE", "Bearer  alice"} {
		w := send(h, "GET", "/", map[string]string{"Authorization": header})
		want, body := 200, "alice"
		if i == 2 {
			want, body = 429, "429 Too Many Requests\n"
		}
		if w.Code != want || w.Body.String() != body {
			t.Fatalf("request %d (%q): %d %q, want %d %q", i, header, w.Code, w.Body, want, body)
		}
	}
	if lookups != 3 {
		t.Fatalf("%d lookups for 3 requests, want one each", lookups)
	}
	for range 3 {
		if w := send(h, "GET", "/", map[string]string{"Authorization": "Bearer bob"}); w.Code != 401 {
			t.Fatalf("a request without a known key: %d, want the deny of the second rule, 401", w.Code)
		}
	}
	without := mustParse(t, doc, newFakeClock().option()).Handler(upstream)
	if w := send(without, "GET", "/", map[string]string{"Authorization": "Bearer alice"}); w.Code != 401 {
		t.Fatalf("without WithAPIKey: %d, want 401 (no request has a key)", w.Code)
	}
}
