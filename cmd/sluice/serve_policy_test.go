package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/sluicehq/sluice/internal/check"
)

// frontPolicy limits each API key on POST /events to capacity requests a
// minute.
func frontPolicy(capacity string) string {
	return `on_http_request:
  - name: ingest per key
    expressions: ["req.method == 'POST' && req.url.path == '/events'"]
    actions:
      - type: rate-limit
        config: {name: per key, algorithm: sliding_window, capacity: ` + capacity + `, rate: 60s, bucket_key: ["getReqHeader('Authorization')"]}
`
}

// writePolicy writes doc to the file of the policy.
func writePolicy(t *testing.T, path, doc string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestServeRefusesBadTrafficPolicy checks that serve stops at start, before
// NATS, on a policy with a mistake, saying where it is.
func TestServeRefusesBadTrafficPolicy(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	writePolicy(t, path, "on_http_request:\n  - actions: [{type: rate-limit, config: {name: x, algorithm: sliding_window, capacity: 5, rate: 65s, bucket_key: [req.host]}}]\n")
	root := newRootCommand()
	root.SetArgs([]string{"serve", "--data-dir", filepath.Join(dir, "data"), "--http", "127.0.0.1:0", "--metrics-http", "", "--traffic-policy", path})
	root.SetOut(new(bytes.Buffer))
	root.SetErr(new(bytes.Buffer))
	err := root.ExecuteContext(t.Context())
	check.ErrorContains(t, err, path+":2:")
	check.ErrorContains(t, err, `on_http_request[0].actions[0].config.rate: "65s" is not a multiple of ten seconds`)
}

// TestPolicyCheck checks `sluice policy check`: a summary and exit 0 for a
// right document, every mistake with its line for a wrong one.
func TestPolicyCheck(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.json")
	writePolicy(t, good, frontPolicy("100"))
	const badDoc = `{"on_http_request": [{"actions": [{"type": "rate-limit", "config": {"name": "n", "algorithm": "fixed", "capacity": 1, "rate": "1m", "bucket_key": ["req.path"]}}]}], "on_connect": []}`
	writePolicy(t, bad, badDoc)
	run := func(args ...string) (string, error) {
		root := newRootCommand()
		var out bytes.Buffer
		root.SetArgs(args)
		root.SetOut(&out)
		root.SetErr(&out)
		err := root.Execute()
		return out.String(), err
	}
	out, err := run("policy", "check", good)
	if err != nil || out != good+": a valid traffic policy: 1 rule in on_http_request, 0 in on_http_response\n" {
		t.Fatalf("good: %q, %v", out, err)
	}
	_, err = run("policy", "check", bad)
	for _, want := range []string{
		bad + " is not a valid traffic policy (3 mistakes):",
		bad + ":1:" + strconv.Itoa(strings.Index(badDoc, `"on_connect"`)+1) + `: on_connect: unknown phase "on_connect": use on_http_request, on_http_response, on_tcp_connect`,
		`on_http_request[0].actions[0].config.algorithm: unknown algorithm "fixed": the only algorithm is sliding_window`,
		`on_http_request[0].actions[0].config.bucket_key[0]: "req.path" is not a bucket key`,
	} {
		check.ErrorContains(t, err, want)
	}
	tcp := filepath.Join(dir, "tcp.yaml")
	writePolicy(t, tcp, "on_tcp_connect:\n  - actions: [{type: deny}]\n")
	_, err = run("policy", "check", tcp)
	check.ErrorContains(t, err, "on_tcp_connect runs on TCP endpoints of the edge, and sluice's API is HTTP")
	_, err = run("policy", "check", filepath.Join(dir, "none.yaml"))
	check.ErrorContains(t, err, "no such file")
}

// TestServeTrafficPolicy runs serve with SLUICE_TRAFFIC_POLICY limiting
// each API key on POST /events, and checks that the policy answers before
// authentication (a flood of a wrong key gets 429, not 401), that the
// metric counts the refusals, and the reloads of the process: on a change
// of the file, and on SIGHUP, refusing a document with a mistake.
func TestServeTrafficPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildSluice(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	writePolicy(t, path, frontPolicy("2"))
	const token = "sk_test_bootstrap_token_0123456789"
	events := `[{"event_type":"http_request_complete.v0","event_id":"ev_2Yq3A9cC0c7ZkU6e7d0a9oKf1xG","object":{"conn":{"server_port":443}}}]`
	p := startServe(t, bin, filepath.Join(dir, "data"), "SLUICE_BOOTSTRAP_API_KEY="+token, "SLUICE_TRAFFIC_POLICY="+path)
	waitReady(t, p.url)
	for i, want := range []int{202, 202, 429} {
		if code, body := request(t, "POST", p.url+"/events", token, events); code != want {
			t.Fatalf("request %d with the key: %d %s, want %d", i, code, body, want)
		}
	}
	for i, want := range []int{401, 401} {
		if code, body := request(t, "POST", p.url+"/events", "sk_wrong", events); code != want {
			t.Fatalf("request %d with a wrong key: %d %s, want %d", i, code, body, want)
		}
	}
	// The policy's answer is an error of the API: its JSON shape, and an
	// operation id, as every answer of the API.
	req, err := http.NewRequest("POST", p.url+"/events", strings.NewReader(events))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk_wrong")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		ErrorCode  string            `json:"error_code"`
		StatusCode int               `json:"status_code"`
		Msg        string            `json:"msg"`
		Details    map[string]string `json:"details"`
	}
	err = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	op := resp.Header.Get("Service-Operation-Id")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.HasPrefix(op, "op_") || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("third request with a wrong key: %d, headers %v; want 429 with Retry-After, Service-Operation-Id and a JSON body", resp.StatusCode, resp.Header)
	}
	if err != nil || answer.ErrorCode != "ERR_SLUICE_134" || answer.StatusCode != 429 || answer.Details["operation_id"] != op ||
		answer.Details["rule"] != "ingest per key" || answer.Details["retry_after"] != resp.Header.Get("Retry-After") || !strings.Contains(answer.Msg, "ingest per key") {
		t.Fatalf("third request with a wrong key: body %+v (%v), want the API's error ERR_SLUICE_134 naming the rule", answer, err)
	}
	if code, _ := request(t, "GET", p.url+"/event_destinations", token, ""); code != 200 {
		t.Fatalf("management API, which the rule leaves out: %d", code)
	}
	if code, body := request(t, "GET", p.metricsURL+"/metrics", "", ""); code != 200 || !strings.Contains(body, `sluice_traffic_policy_limited_requests_total{action="per key",rule="ingest per key"} 2`) {
		t.Fatalf("metrics: %d %s", code, body)
	}

	// A change of the file is loaded: a new capacity, counted afresh.
	writePolicy(t, path, frontPolicy("3"))
	p.waitLog(t, "traffic policy reloaded")
	if code, body := request(t, "POST", p.url+"/events", token, events); code != 202 {
		t.Fatalf("after the file changed: %d %s, want 202", code, body)
	}
	// SIGHUP with a mistake in the file: refused, the policy before stays.
	writePolicy(t, path, frontPolicy("0"))
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, "traffic policy not reloaded: the policy loaded before stays in force")
	for i, want := range []int{202, 202, 429} {
		if code, body := request(t, "POST", p.url+"/events", token, events); code != want {
			t.Fatalf("request %d after a refused reload: %d %s, want %d", i, code, body, want)
		}
	}
	p.stop(t)
}

// TestOperationsPolicy loads the ready policy of docs/operations.md and
// checks what it says of it: a key's 1,201st POST /events in a minute gets
// sluice's JSON 429 with Retry-After, an address's 6,001st whatever its
// keys, an address's 31st without a known key (none, or one sluice does
// not know), and probes are never limited.
func TestOperationsPolicy(t *testing.T) {
	doc := docPolicy(t, "docs/operations.md", "### A ready policy")
	path := filepath.Join(t.TempDir(), "policy.yaml")
	writePolicy(t, path, doc)
	// Keys sk_<name> are known, as ak_<name>; apiconv.KeyID reads them so.
	keyID := func(r *http.Request) (string, bool) {
		name, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer sk_")
		if !ok || strings.HasPrefix(name, "unknown") {
			return "", false
		}
		return "ak_" + name, true
	}
	front, err := newPolicyFront(path, slog.New(slog.NewTextHandler(io.Discard, nil)), keyID)
	if err != nil {
		t.Fatal(err)
	}
	h := front.wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	for i := range 1200 {
		if code := postEvents(h, "sk_one"); code != http.StatusAccepted {
			t.Fatalf("request %d: %d", i, code)
		}
	}
	r := httptest.NewRequest("POST", "/events", nil)
	r.Header.Set("Authorization", "Bearer sk_one")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 429 || w.Header().Get("Retry-After") == "" || w.Header().Get("Content-Type") != "application/json" || !strings.Contains(w.Body.String(), `"status_code":429`) {
		t.Fatalf("the 1,201st: %d %v %s", w.Code, w.Header(), w.Body)
	}
	// Other keys from the same address, each within its limit: the
	// per-address rule answers 429 past 6,000 (the 1,201st above counted).
	for i := 1202; i <= 6000; i++ {
		if code := postEvents(h, "sk_k"+strconv.Itoa(i%4)); code != http.StatusAccepted {
			t.Fatalf("request %d from one address: %d, want the per-address limit of 6,000 not reached", i, code)
		}
	}
	if code := postEvents(h, "sk_fresh"); code != http.StatusTooManyRequests {
		t.Fatalf("the 6,001st from one address: %d, want 429", code)
	}
	// From another address, requests without a known key: 30 a minute.
	for i := range 31 {
		key := ""
		if i%2 == 0 {
			key = "sk_unknown_" + strconv.Itoa(i)
		}
		want := http.StatusAccepted
		if i == 30 {
			want = http.StatusTooManyRequests
		}
		if code := postEventsFrom(h, key, "198.51.100.9:4000"); code != want {
			t.Fatalf("request %d without a known key: %d, want %d", i, code, want)
		}
	}
	if code := postEventsFrom(h, "sk_two", "198.51.100.9:4000"); code != http.StatusAccepted {
		t.Fatalf("a known key from that address: %d", code)
	}
	for range 700 {
		r := httptest.NewRequest("GET", "/readyz", nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusAccepted {
			t.Fatalf("a probe: %d", w.Code)
		}
	}
}

func postEvents(h http.Handler, key string) int { return postEventsFrom(h, key, "") }

// postEventsFrom sends POST /events with the key ("" for no
// Authorization) from the address addr ("" for httptest's).
func postEventsFrom(h http.Handler, key, addr string) int {
	r := httptest.NewRequest("POST", "/events", nil)
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	if addr != "" {
		r.RemoteAddr = addr
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// startPolicyFront loads the policy of a new file holding doc and runs its
// reload loop on channels the test drives; reloads receives each reload's
// error.
func startPolicyFront(t *testing.T, doc string, logs *syncBuffer) (front *policyFront, path string, hup chan os.Signal, poll chan time.Time, reloads chan error) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "policy.yaml")
	writePolicy(t, path, doc)
	front, err := newPolicyFront(path, slog.New(slog.NewTextHandler(logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	reloads = make(chan error, 1)
	front.reloaded = func(err error) { reloads <- err }
	hup, poll = make(chan os.Signal), make(chan time.Time)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); front.run(ctx, hup, poll) }()
	t.Cleanup(func() { cancel(); <-done })
	return front, path, hup, poll, reloads
}

// TestPolicyFrontReloads checks the reloads of --traffic-policy: on a
// change of the file, with the counts of an unchanged limit kept; a
// document with a mistake refused, the policy before kept and the reason
// logged; on SIGHUP even when the file did not change; and the metrics.
func TestPolicyFrontReloads(t *testing.T) {
	var logs syncBuffer
	front, path, hup, poll, reloads := startPolicyFront(t, frontPolicy("2"), &logs)
	h := front.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for i, want := range []int{200, 200, 429} {
		if got := postEvents(h, "alice"); got != want {
			t.Fatalf("request %d: %d, want %d", i, got, want)
		}
	}
	if got := testutil.ToFloat64(front.metrics.limited.WithLabelValues("ingest per key", "per key")); got != 1 {
		t.Fatalf("limited requests counted: %v, want 1", got)
	}

	// Unchanged file: polls do nothing (no reload reported).
	poll <- time.Now()
	poll <- time.Now()
	// A change that keeps the limit as it was, a rule added: counts kept.
	// It is loaded once two polls in a row read it.
	writePolicy(t, path, frontPolicy("2")+"  - name: other\n    expressions: ['false']\n    actions: [{type: deny}]\n")
	poll <- time.Now()
	poll <- time.Now()
	if err := <-reloads; err != nil {
		t.Fatal(err)
	}
	if got := postEvents(h, "alice"); got != 429 {
		t.Fatalf("after a reload keeping the limit: %d, want 429", got)
	}

	// A mistake: refused, the policy before stays.
	writePolicy(t, path, frontPolicy("0"))
	poll <- time.Now()
	poll <- time.Now()
	err := <-reloads
	check.ErrorContains(t, err, path+":6:")
	if got := postEvents(h, "alice"); got != 429 {
		t.Fatalf("after a refused reload: %d, want 429 as before", got)
	}
	if !strings.Contains(logs.String(), "traffic policy not reloaded") || !strings.Contains(logs.String(), "must be the most requests of a bucket admitted within rate: an integer from 1 to 2000000000, not 0") {
		t.Fatalf("the log does not say why: %s", logs.String())
	}

	// A new limit: its counts start afresh. SIGHUP reloads it as well.
	writePolicy(t, path, frontPolicy("5"))
	hup <- os.Interrupt
	if err := <-reloads; err != nil {
		t.Fatal(err)
	}
	if got := postEvents(h, "alice"); got != 200 {
		t.Fatalf("after a reload with another capacity: %d, want 200", got)
	}
	hup <- os.Interrupt // the same file: reloaded all the same
	if err := <-reloads; err != nil {
		t.Fatal(err)
	}
	if loaded, refused := testutil.ToFloat64(front.metrics.reloads.WithLabelValues("loaded")), testutil.ToFloat64(front.metrics.reloads.WithLabelValues("refused")); loaded != 3 || refused != 1 {
		t.Fatalf("reloads counted: %v loaded, %v refused; want 3, 1", loaded, refused)
	}
}

// TestPolicyFrontReloadDropsNoRequest sends requests from several
// goroutines while the policy is reloaded, and checks that each is
// answered by one policy or the other.
func TestPolicyFrontReloadDropsNoRequest(t *testing.T) {
	var logs syncBuffer
	front, path, hup, _, reloads := startPolicyFront(t, frontPolicy("1000000"), &logs)
	h := front.wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var bad sync.Map
	for g := range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if code := postEvents(h, "k"+string(rune('a'+g))); code != http.StatusAccepted {
					bad.Store(code, true)
				}
			}
		})
	}
	for i := range 20 {
		writePolicy(t, path, frontPolicy(strings.Repeat("9", 1+i%5)+"0000"))
		hup <- os.Interrupt
		if err := <-reloads; err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	bad.Range(func(code, _ any) bool { t.Errorf("a request was answered %v during reloads", code); return true })
}

// TestPolicyFrontRunLeavesSIGHUPIgnored checks that once Run returns, as
// serve shuts down and drains its requests, a SIGHUP no longer ends the
// process.
func TestPolicyFrontRunLeavesSIGHUPIgnored(t *testing.T) {
	front := newSIGHUPFront(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := front.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !signal.Ignored(syscall.SIGHUP) {
		t.Fatal("SIGHUP would end the process after Run")
	}
}

// newSIGHUPFront returns the policy front of a policy file for a test of
// its SIGHUP, whose handling is reset once the test ends.
func newSIGHUPFront(t *testing.T) *policyFront {
	t.Helper()
	t.Cleanup(func() { signal.Reset(syscall.SIGHUP) })
	path := filepath.Join(t.TempDir(), "policy.yaml")
	writePolicy(t, path, frontPolicy("2"))
	front, err := newPolicyFront(path, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	return front
}

// TestPolicyFrontKeepsEarlySIGHUP checks that a SIGHUP sent once the
// policy is loaded but before Run (serve still starting) does not end the
// process, and that Run then reloads the policy.
func TestPolicyFrontKeepsEarlySIGHUP(t *testing.T) {
	front := newSIGHUPFront(t)
	reloads := make(chan error, 1)
	front.reloaded = func(err error) { reloads <- err }
	// Without newPolicyFront's handler this ends the test binary.
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- front.Run(ctx) }()
	if err := <-reloads; err != nil {
		t.Fatalf("the early SIGHUP's reload: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestREADMEPolicy checks that the policy of the README's section loads.
func TestREADMEPolicy(t *testing.T) {
	doc := docPolicy(t, "README.md", "## Traffic policy")
	if _, err := parsePolicy("README.md", []byte(doc)); err != nil {
		t.Fatal(err)
	}
}

// docPolicy returns the first yaml block of the section of file under
// heading: a policy the documentation shows.
func docPolicy(t *testing.T, file, heading string) string {
	t.Helper()
	text, err := docSection(file, heading)
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(text, "```yaml\n")
	doc, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatalf("no yaml block in %s's section %s", file, heading)
	}
	return doc
}
