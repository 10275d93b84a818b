package trafficpolicy

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
)

// twoKeyPolicy is one rule of one rate-limit of two bucket keys, which
// admits every request of the benchmark.
const twoKeyPolicy = `
on_http_request:
  - name: per key and address
    actions:
      - type: rate-limit
        config:
          name: per key
          algorithm: sliding_window
          capacity: 2000000000
          rate: 60s
          bucket_key: [conn.client_ip, "getReqHeader('Authorization')"]
`

// discardWriter is a ResponseWriter that keeps nothing, so that only the
// policy's cost is measured.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

var nothing = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

// BenchmarkRateLimitTwoKeys is the cost the policy adds to a request: one
// rule, one rate-limit, two bucket keys, an existing bucket.
func BenchmarkRateLimitTwoKeys(b *testing.B) {
	p := mustParse(b, twoKeyPolicy, newFakeClock().option())
	r := httptest.NewRequest("POST", "/events", nil)
	r.RemoteAddr = "203.0.113.7:5555"
	r.Header.Set("Authorization", "Bearer sk_2Yq3WcV7yW0k1b8m4nXc9pZr5tL")
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		p.Serve(w, r, nothing)
	}
}

// BenchmarkRateLimitTwoKeysParallel is the same from every core, on 1,000
// buckets.
func BenchmarkRateLimitTwoKeysParallel(b *testing.B) {
	p := mustParse(b, twoKeyPolicy, newFakeClock().option())
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var reqs []*http.Request
		for i := range 1000 {
			r := httptest.NewRequest("POST", "/events", nil)
			r.RemoteAddr = "203.0.113.7:5555"
			r.Header.Set("Authorization", "Bearer sk_"+strconv.Itoa(i))
			reqs = append(reqs, r)
		}
		w := &discardWriter{h: http.Header{}}
		for i := 0; pb.Next(); i++ {
			p.Serve(w, reqs[i%len(reqs)], nothing)
		}
	})
}

// BenchmarkMillionBuckets measures the memory of 1,000,000 distinct
// buckets of the two-key rate-limit (an IPv4 address and a 36-byte
// Authorization header): run it with -benchtime 1x.
func BenchmarkMillionBuckets(b *testing.B) {
	const buckets = 1_000_000
	for b.Loop() {
		clock := newFakeClock()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		p := mustParse(b, twoKeyPolicy, clock.option())
		r := httptest.NewRequest("POST", "/events", nil)
		w := &discardWriter{h: http.Header{}}
		for i := range buckets {
			r.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:443", i>>16&255, i>>8&255, i&255)
			r.Header["Authorization"] = []string{fmt.Sprintf("Bearer sk_%026d", i)}
			p.Serve(w, r, nothing)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held := 0
		for _, win := range p.windows {
			held += win.len()
		}
		if held != buckets {
			b.Fatalf("%d buckets held, want %d", held, buckets)
		}
		heap := float64(after.HeapAlloc - before.HeapAlloc)
		b.ReportMetric(heap/(1<<20), "MiB/1M-buckets")
		b.ReportMetric(heap/buckets, "B/bucket")
		runtime.KeepAlive(p)
	}
}

// BenchmarkRateLimitWithExpressions is the per-key rule of the ready
// policy of docs/operations.md as it was before it counted by api_key.id:
// two expressions, then a rate-limit of one key.
func BenchmarkRateLimitWithExpressions(b *testing.B) {
	p := mustParse(b, `
on_http_request:
  - name: ingest per API key
    expressions:
      - "req.method == 'POST' && req.url.path == '/events'"
      - "hasReqHeader('Authorization')"
    actions:
      - type: rate-limit
        config: {name: events per key, algorithm: sliding_window, capacity: 2000000000, rate: 60s, bucket_key: ["getReqHeader('Authorization')"]}
`, newFakeClock().option())
	r := httptest.NewRequest("POST", "/events", nil)
	r.Header.Set("Authorization", "Bearer sk_2Yq3WcV7yW0k1b8m4nXc9pZr5tL")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Service-Version", "2")
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		p.Serve(w, r, nothing)
	}
}
