package main

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
	if err != nil || out != good+": a valid traffic policy: 1 rules in on_http_request, 0 in on_http_response\n" {
		t.Fatalf("good: %q, %v", out, err)
	}
	_, err = run("policy", "check", bad)
	for _, want := range []string{
		bad + " is not a valid traffic policy (3 mistakes):",
		bad + ":1:" + strconv.Itoa(strings.Index(badDoc, `"on_connect"`)+1) + `: on_connect: unknown phase "on_connect": use on_http_request, on_http_response`,
		`on_http_request[0].actions[0].config.algorithm: unknown algorithm "fixed": the only algorithm is sliding_window`,
		`on_http_request[0].actions[0].config.bucket_key[0]: "req.path" is not a bucket key`,
	} {
		check.ErrorContains(t, err, want)
	}
	_, err = run("policy", "check", filepath.Join(dir, "none.yaml"))
	check.ErrorContains(t, err, "no such file")
}

// TestServeTrafficPolicy runs serve with SLUICE_TRAFFIC_POLICY limiting
// each API key on POST /events, and checks that the policy answers before
// authentication (a flood of a wrong key gets 429, not 401) and that the
// metric counts the refusals.
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
	for i, want := range []int{401, 401, 429} {
		if code, body := request(t, "POST", p.url+"/events", "sk_wrong", events); code != want {
			t.Fatalf("request %d with a wrong key: %d %s, want %d", i, code, body, want)
		}
	}
	if code, _ := request(t, "GET", p.url+"/event_destinations", token, ""); code != 200 {
		t.Fatalf("management API, which the rule leaves out: %d", code)
	}
	if code, body := request(t, "GET", p.metricsURL+"/metrics", "", ""); code != 200 || !strings.Contains(body, `sluice_traffic_policy_limited_requests_total{action="per key",rule="ingest per key"} 2`) {
		t.Fatalf("metrics: %d %s", code, body)
	}
	p.stop(t)
}

// TestOperationsPolicy loads the ready policy of docs/operations.md and
// checks what it says of it: a key's 1,201st POST /events in a minute gets
// sluice's JSON 429 with Retry-After, probes are never limited.
func TestOperationsPolicy(t *testing.T) {
	text, err := docSection("docs/operations.md", "### A ready policy")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(text, "```yaml\n")
	end := strings.Index(text[start+8:], "```")
	if start < 0 || end < 0 {
		t.Fatal("no yaml block in docs/operations.md's ready policy")
	}
	doc := text[start+8 : start+8+end]
	path := filepath.Join(t.TempDir(), "policy.yaml")
	writePolicy(t, path, doc)
	front, err := newPolicyFront(path, slog.New(slog.NewTextHandler(io.Discard, nil)))
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
	for range 700 {
		r := httptest.NewRequest("GET", "/readyz", nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusAccepted {
			t.Fatalf("a probe: %d", w.Code)
		}
	}
}

func postEvents(h http.Handler, key string) int {
	r := httptest.NewRequest("POST", "/events", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}
