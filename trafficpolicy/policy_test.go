package trafficpolicy

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ nanos atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.nanos.Store(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) now() time.Time      { return time.Unix(0, c.nanos.Load()) }
func (c *fakeClock) add(d time.Duration) { c.nanos.Add(int64(d)) }
func (c *fakeClock) option() Option      { return withClock(c.now) }

// countingObserver counts Limited calls by rule and action.
type countingObserver struct{ limited map[string]int }

func (o *countingObserver) Limited(rule, action string) { o.limited[rule+"/"+action]++ }

func mustParse(t testing.TB, doc string, opts ...Option) *Policy {
	t.Helper()
	p, err := Parse([]byte(doc), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// upstream answers 200 "ok", or 401 without an Authorization header.
var upstream = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") == "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"msg":"no key"}`)
		return
	}
	_, _ = io.WriteString(w, "ok")
})

func send(h http.Handler, method, path string, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	r.RemoteAddr = "203.0.113.7:5555"
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

const perKeyPolicy = `
on_http_request:
  - name: ingest per key
    expressions: ["req.method == 'POST' && req.url.path == '/events'"]
    actions:
      - type: rate-limit
        config:
          name: per key
          algorithm: sliding_window
          capacity: 2
          rate: 60s
          bucket_key: ["getReqHeader('Authorization')", "conn.client_ip"]
on_http_response:
  - name: custom 429
    expressions: ["actions.service.rate_limit.limited"]
    actions:
      - type: custom-response
        config:
          status_code: 429
          headers: {content-type: application/json}
          body: '{"error_code":"rate_limited"}'
`

// TestRateLimitThroughHandler checks the 429 with retry-after, the result
// variables in on_http_response, the separate buckets, the rules'
// expressions and the observer.
func TestRateLimitThroughHandler(t *testing.T) {
	clock := newFakeClock()
	obs := &countingObserver{limited: map[string]int{}}
	h := mustParse(t, perKeyPolicy, clock.option(), WithObserver(obs)).Handler(upstream)
	alice := map[string]string{"Authorization": "Bearer alice"}
	for i := range 2 {
		if w := send(h, "POST", "/events", alice); w.Code != 200 {
			t.Fatalf("request %d: %d, want 200", i, w.Code)
		}
	}
	clock.add(5 * time.Second)
	w := send(h, "POST", "/events", alice)
	if w.Code != 429 || w.Header().Get("Retry-After") != "55" || w.Body.String() != `{"error_code":"rate_limited"}` || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("third request: %d retry-after %q %q %q", w.Code, w.Header().Get("Retry-After"), w.Header().Get("Content-Type"), w.Body)
	}
	if w := send(h, "POST", "/events", map[string]string{"Authorization": "Bearer bob"}); w.Code != 200 {
		t.Fatalf("another key: %d, want 200", w.Code)
	}
	if w := send(h, "GET", "/events", alice); w.Code != 200 {
		t.Fatalf("a GET, which the rule's expression leaves out: %d, want 200", w.Code)
	}
	if obs.limited["ingest per key/per key"] != 1 {
		t.Fatalf("observer: %v", obs.limited)
	}
	clock.add(55 * time.Second)
	if w := send(h, "POST", "/events", alice); w.Code != 200 {
		t.Fatalf("after retry-after: %d, want 200", w.Code)
	}
}

// TestRateLimitMissingHeader checks that a request lacking a header of the
// bucket key proceeds, not counted, with the error variables set.
func TestRateLimitMissingHeader(t *testing.T) {
	doc := `
on_http_request:
  - actions:
      - type: rate-limit
        config: {name: n, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: ["req.headers['x-api-key']"]}
    expressions: []
  - expressions: ["actions.service.rate_limit.error.code == 'ERR_RATE_LIMIT_MISSING_HEADER' && actions.service.rate_limit.error.message.contains('X-Api-Key') && !actions.service.rate_limit.limited && actions.service.rate_limit.bucket_key == ''"]
    actions:
      - type: deny
        config: {status_code: 400}
`
	h := mustParse(t, doc, newFakeClock().option()).Handler(upstream)
	for range 3 {
		if w := send(h, "GET", "/", nil); w.Code != 400 {
			t.Fatalf("without the header: %d, want the deny of the second rule, 400", w.Code)
		}
	}
	if w := send(h, "GET", "/", map[string]string{"X-Api-Key": "k", "Authorization": "a"}); w.Code != 200 || w.Body.String() != "ok" {
		t.Fatalf("with the header: %d %q", w.Code, w.Body)
	}
}

// TestResultVariablesAreTheLastExecution checks that a second rate-limit
// replaces the first's variables.
func TestResultVariablesAreTheLastExecution(t *testing.T) {
	doc := `
on_http_request:
  - actions:
      - type: rate-limit
        config: {name: a, algorithm: sliding_window, capacity: 5, rate: 60s, bucket_key: [req.host]}
      - type: rate-limit
        config: {name: b, algorithm: sliding_window, capacity: 5, rate: 60s, bucket_key: [conn.client_ip, "getReqHeader('X-Tenant')"]}
  - expressions: ["actions.service.rate_limit.bucket_key == '203.0.113.7, acme'"]
    actions: [{type: custom-response, config: {status_code: 200, body: matched}}]
`
	h := mustParse(t, doc, newFakeClock().option()).Handler(upstream)
	if w := send(h, "GET", "/", map[string]string{"X-Tenant": "acme"}); w.Body.String() != "matched" {
		t.Fatalf("got %q, want matched", w.Body)
	}
}

// TestResponsePhase checks on_http_response on the handler's answer: the
// status and headers it sees, a rate-limit of failed attempts, and that
// an untouched answer passes as it was.
func TestResponsePhase(t *testing.T) {
	doc := `
on_http_response:
  - name: failed keys
    expressions: ["res.status_code == 401", "res.headers['content-type'] == ['application/json']"]
    actions:
      - type: rate-limit
        config: {name: failures, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip]}
`
	h := mustParse(t, doc, newFakeClock().option()).Handler(upstream)
	if w := send(h, "GET", "/", nil); w.Code != 401 || w.Body.String() != `{"msg":"no key"}` {
		t.Fatalf("first failure: %d %q", w.Code, w.Body)
	}
	w := send(h, "GET", "/", nil)
	if w.Code != 429 || w.Header().Get("Retry-After") != "60" || w.Header().Get("Content-Type") != "text/plain; charset=utf-8" || w.Body.String() != "429 Too Many Requests\n" {
		t.Fatalf("second failure: %d %q %q", w.Code, w.Header(), w.Body)
	}
	if w := send(h, "GET", "/", map[string]string{"Authorization": "x"}); w.Code != 200 || w.Body.String() != "ok" {
		t.Fatalf("a success: %d %q", w.Code, w.Body)
	}
}

// TestDenyAndLogAndMacros checks deny, log and the header macros.
func TestDenyAndLogAndMacros(t *testing.T) {
	doc := `
on_http_request:
  - name: audit
    expressions: ["hasReqHeader('x-debug')", "getReqHeader('X-DEBUG') == ['1']"]
    actions:
      - type: log
        config: {metadata: {reason: debug header, level: 3}}
      - type: deny
        config: {status_code: 451}
`
	var logs bytes.Buffer
	h := mustParse(t, doc, WithLogger(slog.New(slog.NewJSONHandler(&logs, nil)))).Handler(upstream)
	if w := send(h, "GET", "/", map[string]string{"Authorization": "k"}); w.Code != 200 {
		t.Fatalf("without the header: %d", w.Code)
	}
	if w := send(h, "HEAD", "/x", map[string]string{"X-Debug": "1"}); w.Code != 451 || w.Body.Len() != 0 {
		t.Fatalf("with the header: %d %q", w.Code, w.Body)
	}
	line := logs.String()
	for _, want := range []string{`"msg":"traffic policy log"`, `"rule":"audit"`, `"phase":"on_http_request"`, `"path":"/x"`, `"metadata":{"reason":"debug header","level":3}`} {
		if !strings.Contains(line, want) {
			t.Errorf("log %s lacks %s", line, want)
		}
	}
	// A path the client made long is cut in the log line.
	logs.Reset()
	long := "/" + strings.Repeat("p", 100_000)
	if w := send(h, "GET", long, map[string]string{"X-Debug": "1"}); w.Code != 451 {
		t.Fatalf("a long path with the header: %d", w.Code)
	}
	if line := logs.String(); len(line) > 2048 || !strings.Contains(line, `"path":"/`+strings.Repeat("p", 1023)+`..."`) {
		t.Errorf("the log line of a 100,000-byte path is %d bytes, want the path cut to 1024 bytes and ...", len(line))
	}
}

// TestWithCountsOfKeepsBuckets checks that a reload keeps the counts of an
// unchanged rate-limit and starts a changed one afresh.
func TestWithCountsOfKeepsBuckets(t *testing.T) {
	clock := newFakeClock()
	old := mustParse(t, perKeyPolicy, clock.option())
	key := map[string]string{"Authorization": "k"}
	for range 3 {
		send(old.Handler(upstream), "POST", "/events", key)
	}
	same := mustParse(t, perKeyPolicy, clock.option(), WithCountsOf(old))
	if w := send(same.Handler(upstream), "POST", "/events", key); w.Code != 429 {
		t.Fatalf("reloaded unchanged: %d, want 429", w.Code)
	}
	changed := mustParse(t, strings.Replace(perKeyPolicy, "capacity: 2", "capacity: 3", 1), clock.option(), WithCountsOf(same))
	if w := send(changed.Handler(upstream), "POST", "/events", key); w.Code != 200 {
		t.Fatalf("reloaded with another capacity: %d, want 200", w.Code)
	}
}

// TestLoadAtTenTimesCapacity sends an hour of requests at ten times the
// capacity of one bucket through the handler, on a fake clock, and checks
// that each window of the rate admitted capacity.
func TestLoadAtTenTimesCapacity(t *testing.T) {
	const capacity, windows = 100, 60
	const rate = time.Minute
	clock := newFakeClock()
	h := mustParse(t, strings.NewReplacer("capacity: 2", "capacity: 100", "  - name: custom 429", "  - name: unused").Replace(perKeyPolicy), clock.option()).Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("POST", "/events", nil)
	r.Header.Set("Authorization", "Bearer flood")
	gap := rate / (10 * capacity)
	var admitted [windows]int
	sent := 0
	for i := range 10 * capacity * windows {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		sent++
		if w.Code == 200 {
			admitted[time.Duration(i)*gap/rate]++
		}
		clock.add(gap)
	}
	total := 0
	for i, n := range admitted {
		total += n
		if n < capacity*99/100 || n > capacity*101/100 {
			t.Errorf("window %d admitted %d, want %d within 1%%", i, n, capacity)
		}
	}
	t.Logf("sent %d at 10x capacity (%d per %v) over %d windows: admitted %d, %.4f of capacity per window", sent, capacity, rate, windows, total, float64(total)/float64(capacity*windows))
}

// TestPanicLeavesTheAnswerToNetHTTP checks that a handler's panic is not
// followed by an answer of on_http_response.
func TestPanicLeavesTheAnswerToNetHTTP(t *testing.T) {
	doc := "on_http_response:\n  - actions: [{type: custom-response, config: {status_code: 200, body: replaced}}]\n"
	h := mustParse(t, doc).Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	w := httptest.NewRecorder()
	func() {
		defer func() {
			if r := recover(); r != http.ErrAbortHandler {
				t.Errorf("recovered %v, want the handler's panic", r)
			}
		}()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	}()
	if w.Body.Len() != 0 {
		t.Fatalf("answered %q after the handler panicked", w.Body)
	}
}

// TestLoopCostIsBounded checks that an expression with loops stops at
// MaxExprCost and counts as false, and runs when under it.
func TestLoopCostIsBounded(t *testing.T) {
	doc := "on_http_request:\n  - expressions: [\"getReqHeader('X').all(a, getReqHeader('X').all(b, a == b || a != b))\"]\n    actions: [{type: deny}]\n"
	h := mustParse(t, doc).Handler(upstream)
	few := httptest.NewRequest("GET", "/", nil)
	few.Header["X"] = []string{"1", "2", "3"}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, few)
	if w.Code != http.StatusForbidden {
		t.Fatalf("3 values: %d, want 403", w.Code)
	}
	many := httptest.NewRequest("GET", "/", nil)
	many.Header.Set("Authorization", "k")
	for i := range 1000 {
		many.Header.Add("X", strconv.Itoa(i))
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, many)
	if w.Code != http.StatusOK {
		t.Fatalf("1,000 values, a million iterations: %d, want the expression false and 200", w.Code)
	}
}

// TestHeaderMaps checks req.headers and res.headers as expressions see
// them: names in lower case, each a list of values.
func TestHeaderMaps(t *testing.T) {
	doc := `
on_http_request:
  - expressions:
      - "size(req.headers) == 2"
      - "req.headers.exists(k, k == 'x-a')"
      - "req.headers['x-a'] == ['1', '2']"
      - "'x-a' in req.headers && !('x-b' in req.headers)"
      - "req.headers == {'x-a': ['1', '2'], 'authorization': ['k']}"
      - "getReqHeader('X-A') == ['1', '2'] && getReqHeader('x-b') == [] && hasReqHeader('AUTHORIZATION')"
    actions: [{type: log}]
on_http_response:
  - expressions: ["res.headers['x-up'] == ['1']", "size(res.headers) == 1", "res.status_code == 201"]
    actions: [{type: deny, config: {status_code: 418}}]
`
	var logs bytes.Buffer
	h := mustParse(t, doc, WithLogger(slog.New(slog.NewJSONHandler(&logs, nil)))).Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Up", "1")
		w.WriteHeader(http.StatusCreated)
	}))
	r := httptest.NewRequest("GET", "/", nil)
	r.Header["X-A"] = []string{"1", "2"}
	r.Header.Set("Authorization", "k")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if !strings.Contains(logs.String(), "traffic policy log") {
		t.Fatal("the request rule did not hold")
	}
	if w.Code != 418 {
		t.Fatalf("the response rule did not hold: %d", w.Code)
	}
}

// TestSameRateLimitSharesCounts checks that two rate-limits of a document
// with the same name, capacity, rate and bucket_key count in the same
// buckets, and that another name counts apart.
func TestSameRateLimitSharesCounts(t *testing.T) {
	doc := `
on_http_request:
  - expressions: ["req.url.path == '/a'"]
    actions: [{type: rate-limit, config: {name: shared, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip]}}]
  - expressions: ["req.url.path == '/b'"]
    actions: [{type: rate-limit, config: {name: shared, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip]}}]
  - expressions: ["req.url.path == '/c'"]
    actions: [{type: rate-limit, config: {name: apart, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip]}}]
`
	h := mustParse(t, doc, newFakeClock().option()).Handler(upstream)
	key := map[string]string{"Authorization": "k"}
	for _, tt := range []struct {
		path string
		want int
	}{{"/a", 200}, {"/b", 429}, {"/c", 200}} {
		if w := send(h, "GET", tt.path, key); w.Code != tt.want {
			t.Errorf("GET %s: %d, want %d", tt.path, w.Code, tt.want)
		}
	}
}

// TestWithAnswers checks that the policy's own answers, a deny's and a
// rate-limit's 429 in either phase, take the shape WithAnswers gives,
// Retry-After kept, while a custom-response keeps its own.
func TestWithAnswers(t *testing.T) {
	doc := `
on_http_request:
  - name: no-debug
    expressions: ["hasReqHeader('x-debug')"]
    actions: [{type: deny, config: {status_code: 451}}]
  - expressions: ["req.url.path == '/teapot'"]
    actions: [{type: custom-response, config: {status_code: 418, body: short and stout}}]
  - name: per-client
    actions:
      - type: rate-limit
        config: {name: requests, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip]}
on_http_response:
  - expressions: ["res.status_code == 401"]
    actions: [{type: deny}]
`
	var got []Answer
	answers := WithAnswers(func(r *http.Request, a Answer) (string, []byte) {
		got = append(got, a)
		return "application/json", []byte(`{"status":` + strconv.Itoa(a.Status) + `,"action":"` + a.Action + `"}`)
	})
	h := mustParse(t, doc, newFakeClock().option(), answers).Handler(upstream)

	w := send(h, "GET", "/", map[string]string{"X-Debug": "1"})
	if w.Code != 451 || w.Header().Get("Content-Type") != "application/json" || w.Body.String() != `{"status":451,"action":"deny"}` {
		t.Errorf("deny: %d %q %q", w.Code, w.Header(), w.Body)
	}
	if w := send(h, "HEAD", "/", map[string]string{"X-Debug": "1"}); w.Code != 451 || w.Body.Len() != 0 || w.Header().Get("Content-Length") != strconv.Itoa(len(`{"status":451,"action":"deny"}`)) {
		t.Errorf("deny of a HEAD: %d %q %q", w.Code, w.Header(), w.Body)
	}
	if w := send(h, "GET", "/teapot", nil); w.Code != 418 || w.Header().Get("Content-Type") != "text/plain; charset=utf-8" || w.Body.String() != "short and stout" {
		t.Errorf("custom-response: %d %q %q", w.Code, w.Header(), w.Body)
	}
	// The first request of the client passes the rate-limit and gets the
	// handler's 401, which the response phase denies.
	if w := send(h, "GET", "/", nil); w.Code != 403 || w.Header().Get("Content-Type") != "application/json" || w.Body.String() != `{"status":403,"action":"deny"}` {
		t.Errorf("deny of a response: %d %q %q", w.Code, w.Header(), w.Body)
	}
	w = send(h, "GET", "/", nil)
	if w.Code != 429 || w.Header().Get("Retry-After") != "60" || w.Header().Get("Content-Type") != "application/json" || w.Body.String() != `{"status":429,"action":"rate-limit"}` {
		t.Errorf("rate-limit: %d %q %q", w.Code, w.Header(), w.Body)
	}
	want := []Answer{
		{Status: 451, Action: ActionDeny, Rule: "no-debug"},
		{Status: 451, Action: ActionDeny, Rule: "no-debug"},
		{Status: 403, Action: ActionDeny, Rule: "on_http_response[0]"},
		{Status: 429, Action: ActionRateLimit, Rule: "per-client", RetryAfter: 60},
	}
	if !slices.Equal(got, want) {
		t.Errorf("answers asked for:\n%+v\nwant\n%+v", got, want)
	}
}
