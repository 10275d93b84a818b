package openapitest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/schemas"
)

const documentPath = "../../docs/openapi.yaml"

// Ids of the shape the document asks for.
const (
	operationID   = "op_2Yq1ZcK0Qk3lOXQ1uZkbqk2YeFm"
	eventID       = "ev_2Yq1ZcK0Qk3lOXQ1uZkbqk2YeFm"
	destinationID = "ed_2Yq1ZcK0Qk3lOXQ1uZkbqk2YeFm"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

// Fatalf records, then ends the goroutine as testing.T does: call code
// that may use it through record.
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.FailNow()
}

func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

func (r *recorder) Fail() { r.Errorf("Fail called") }

func (r *recorder) FailNow() { runtime.Goexit() }

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.failures) > 0
}

// all returns the failures recorded so far, joined.
func (r *recorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.failures, "\n")
}

// record runs f with a recorder in a goroutine of its own, so that a
// Fatalf ends f only, and returns the recorder.
func record(t *testing.T, f func(tb testing.TB)) *recorder {
	t.Helper()
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(rec)
	}()
	<-done
	return rec
}

func TestDocumentLoads(t *testing.T) {
	v := Load(t, documentPath)
	if v.doc.Paths.Find("/events") == nil {
		t.Fatal("the document has no /events")
	}
}

func TestLoadRefusesInvalidDocuments(t *testing.T) {
	valid, err := os.ReadFile(documentPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"unknown type", "type: integer\n          minimum: 0\n", "type: int\n          minimum: 0\n", "int"},
		{"dangling $ref", `"#/components/schemas/IngestResult"`, `"#/components/schemas/Missing"`, "Missing"},
		{"OpenAPI 3.0", "openapi: 3.1.0", "openapi: 3.0.3", "want 3.1"},
		{"bad pattern", `pattern: "^op_[0-9A-Za-z]{27}$"`, `pattern: "^op_[0-9A-Za-z{27}$"`, "regexp"},
		{"undefined security scheme", "  - bearer: []", "  - basic: []", "basic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(string(valid), tc.old) {
				t.Fatalf("the document no longer holds %q; update the test", tc.old)
			}
			path := filepath.Join(t.TempDir(), "openapi.yaml")
			broken := strings.Replace(string(valid), tc.old, tc.new, 1)
			if err := os.WriteFile(path, []byte(broken), 0o600); err != nil {
				t.Fatal(err)
			}
			rec := record(t, func(tb testing.TB) { Load(tb, path) })
			if got := rec.all(); !strings.Contains(got, tc.want) {
				t.Errorf("Load reported %q; want a failure mentioning %q", got, tc.want)
			}
		})
	}
}

// TestEventKindsMatchCatalogue keeps the kinds of the document those
// sluice knows.
func TestEventKindsMatchCatalogue(t *testing.T) {
	v := Load(t, documentPath)
	enum := func(name string) []string {
		ref := v.doc.Components.Schemas[name]
		if ref == nil {
			t.Fatalf("no components.schemas.%s", name)
		}
		var kinds []string
		for _, e := range ref.Value.Enum {
			kinds = append(kinds, e.(string))
		}
		slices.Sort(kinds)
		return kinds
	}
	var traffic, audit []string
	for _, k := range schemas.Default().Kinds() {
		switch k.Class {
		case schemas.ClassTraffic:
			traffic = append(traffic, k.Name)
		case schemas.ClassAudit:
			audit = append(audit, k.Name)
		}
	}
	if got := enum("TrafficEventKind"); !slices.Equal(got, traffic) {
		t.Errorf("TrafficEventKind is %v; the catalogue has %v", got, traffic)
	}
	if got := enum("AuditEventKind"); !slices.Equal(got, audit) {
		t.Errorf("AuditEventKind is %v; the catalogue has %v", got, audit)
	}
}

// answer is what the fake server sends back.
type answer struct {
	status int
	header map[string]string // "" deletes
	body   string
}

// fakeServer answers every request with a, adding a Service-Operation-Id
// and a JSON Content-Type when a has a body.
func fakeServer(t *testing.T, a answer) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Service-Operation-Id", operationID)
		if a.body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		for k, v := range a.header {
			if v == "" {
				w.Header().Del(k)
			} else {
				w.Header().Set(k, v)
			}
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func errorBody(code string, status int, details string) string {
	return fmt.Sprintf(`{"error_code":%q,"status_code":%d,"msg":"what is wrong","details":{"operation_id":%q%s}}`, code, status, operationID, details)
}

const (
	validBatch   = `[{"event_type":"http_request_complete.v0","object":{"conn":{"client_ip":"10.0.0.1"}}}]`
	ingested     = `{"event_ids":["` + eventID + `"],"stored":1,"duplicates":0}`
	kinesisRole  = `"kinesis":{"auth":{"role":{"role_arn":"arn:aws:iam::000000000000:role/sluice"}},"stream_arn":"arn:aws:kinesis:us-east-1:000000000000:stream/events"}`
	kinesisCreds = `"kinesis":{"auth":{"creds":{"aws_access_key_id":"AKIA","aws_secret_access_key":"secret"}},"stream_arn":"arn:aws:kinesis:us-east-1:000000000000:stream/events"}`
	firehoseRole = `"firehose":{"auth":{"role":{"role_arn":"arn:aws:iam::000000000000:role/sluice"}},"delivery_stream_arn":"arn:aws:firehose:us-east-1:000000000000:deliverystream/events"}`
)

// destination returns a destination whose target has the members given.
func destination(targets ...string) string {
	return `{"id":"` + destinationID + `","uri":"http://127.0.0.1:8080/event_destinations/` + destinationID +
		`","created_at":"2026-11-22T10:04:05.000Z","description":"","metadata":"","format":"json","target":{` +
		strings.Join(targets, ",") + `}}`
}

func TestCheck(t *testing.T) {
	v := Load(t, documentPath)
	for _, tc := range []struct {
		name        string
		method      string
		path        string
		contentType string
		body        string
		answer      answer
		want        string // in the failure; "" for none
	}{
		{name: "202", method: "POST", path: "/events", body: validBatch,
			answer: answer{status: 202, body: ingested}},
		{name: "202 NDJSON", method: "POST", path: "/events", contentType: "application/x-ndjson", body: validBatch[1:len(validBatch)-1] + "\n",
			answer: answer{status: 202, body: ingested}},
		{name: "202 without event_ids", method: "POST", path: "/events", body: validBatch,
			answer: answer{status: 202, body: `{"stored":1,"duplicates":0}`}, want: "event_ids"},
		{name: "202 with a malformed event id", method: "POST", path: "/events", body: validBatch,
			answer: answer{status: 202, body: `{"event_ids":["ev_1"],"stored":1,"duplicates":0}`}, want: "event_ids/0"},
		{name: "202 without Service-Operation-Id", method: "POST", path: "/events", body: validBatch,
			answer: answer{status: 202, header: map[string]string{"Service-Operation-Id": ""}, body: ingested}, want: "Service-Operation-Id"},
		{name: "202 to a request the document refuses", method: "POST", path: "/events", body: `[{"event_type":"http_request_complete.v0","object":{},"extra":1}]`,
			answer: answer{status: 202, body: ingested}, want: "the document refuses it"},
		{name: "202 without a key", method: "POST", path: "/events", body: validBatch,
			answer: answer{status: 202, body: ingested}, want: "Bearer"},
		{name: "400", method: "POST", path: "/events", body: validBatch,
			answer: answer{status: 400, body: errorBody("ERR_SLUICE_301", 400, `,"errors":"[{\"index\":0,\"error\":\"object: wrong\"}]"`)}},
		{name: "400 with details not a string", method: "POST", path: "/events", body: validBatch,
			answer: answer{status: 400, body: errorBody("ERR_SLUICE_301", 400, `,"errors":[{"index":0,"error":"object: wrong"}]`)}, want: "got array, want string"},
		{name: "400 without error_code", method: "POST", path: "/events", body: validBatch,
			answer: answer{status: 400, body: `{"status_code":400,"msg":"m","details":{"operation_id":"` + operationID + `"}}`}, want: "error_code"},
		{name: "400 with status_code 401", method: "POST", path: "/events", body: validBatch,
			answer: answer{status: 400, body: errorBody("ERR_SLUICE_301", 401, "")}, want: "status_code"},
		{name: "undocumented status", method: "POST", path: "/events", body: validBatch,
			answer: answer{status: http.StatusTeapot, body: errorBody("ERR_SLUICE_999", 418, "")}, want: "does not list (it lists 202, 400, 401, 408, 413, 415, 429, 500, 503)"},
		{name: "503 without Retry-After", method: "POST", path: "/events", body: validBatch,
			answer: answer{status: 503, body: errorBody("ERR_SLUICE_101", 503, `,"event_ids":"[\"`+eventID+`\"]"`)}, want: "Retry-After"},
		{name: "text error", method: "POST", path: "/events", body: validBatch,
			answer: answer{status: 413, header: map[string]string{"Content-Type": "text/plain"}, body: "too large"}, want: "text/plain"},
		{name: "unknown path answered 404", method: "GET", path: "/nowhere",
			answer: answer{status: 404, body: errorBody("ERR_SLUICE_404", 404, "")}},
		{name: "unknown path answered 200", method: "GET", path: "/nowhere",
			answer: answer{status: 200, body: `{}`}, want: "NotFound"},
		{name: "405 with Allow", method: "PUT", path: "/events",
			answer: answer{status: 405, header: map[string]string{"Allow": "POST"}, body: errorBody("ERR_SLUICE_405", 405, "")}},
		{name: "405 without Allow", method: "PUT", path: "/events",
			answer: answer{status: 405, body: errorBody("ERR_SLUICE_405", 405, "")}, want: "Allow"},
		{name: "destination", method: "GET", path: "/event_destinations/" + destinationID,
			answer: answer{status: 200, body: destination(kinesisRole)}},
		{name: "destination with a relative uri", method: "GET", path: "/event_destinations/" + destinationID,
			answer: answer{status: 200, body: strings.Replace(destination(kinesisRole), "http://127.0.0.1:8080", "", 1)}, want: "/uri"},
		{name: "destination leaking its secret", method: "GET", path: "/event_destinations/" + destinationID,
			answer: answer{status: 200, body: destination(kinesisCreds)}, want: "aws_secret_access_key"},
		{name: "destination with two targets", method: "GET", path: "/event_destinations/" + destinationID,
			answer: answer{status: 200, body: destination(kinesisRole, firehoseRole)}, want: "maxProperties"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeServer(t, tc.answer)
			rec := record(t, func(tb testing.TB) {
				client := &http.Client{Transport: v.Transport(tb, srv.Client().Transport)}
				var body io.Reader
				if tc.body != "" {
					body = strings.NewReader(tc.body)
				}
				req, err := http.NewRequest(tc.method, srv.URL+tc.path, body)
				if err != nil {
					t.Error(err)
					return
				}
				if tc.name != "202 without a key" {
					req.Header.Set("Authorization", "Bearer sk_test")
				}
				req.Header.Set("Service-Version", "2")
				if tc.body != "" {
					ct := tc.contentType
					if ct == "" {
						ct = "application/json"
					}
					req.Header.Set("Content-Type", ct)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				got, err := io.ReadAll(resp.Body)
				if err != nil || string(got) != tc.answer.body {
					t.Errorf("the caller read %q, %v through the transport; want %q", got, err, tc.answer.body)
				}
			})
			got := rec.all()
			switch {
			case tc.want == "" && got != "":
				t.Errorf("Check reported a correct exchange:\n%s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("Check reported %q; want a failure mentioning %q", got, tc.want)
			}
		})
	}
}

// TestCheckWithoutTransport checks an exchange recorded by the caller, with
// a server-side request as a handler sees it.
func TestCheckWithoutTransport(t *testing.T) {
	v := Load(t, documentPath)
	req := httptest.NewRequest("GET", "/healthz", nil)
	resp := &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Service-Operation-Id": {operationID}},
	}
	if rec := record(t, func(tb testing.TB) { v.Check(tb, req, nil, resp, []byte("ok\n")) }); rec.Failed() {
		t.Errorf("Check reported a correct /healthz:\n%s", rec.all())
	}
	resp.Header.Del("Service-Operation-Id")
	if rec := record(t, func(tb testing.TB) { v.Check(tb, req, nil, resp, []byte("ok\n")) }); !strings.Contains(rec.all(), "Service-Operation-Id") {
		t.Errorf("Check reported %q for a /healthz without Service-Operation-Id", rec.all())
	}

	// net/http sends no body with a 204, so this one is made up.
	req = httptest.NewRequest("DELETE", "/event_destinations/"+destinationID, nil)
	req.Header.Set("Authorization", "Bearer sk_test")
	req.Header.Set("Service-Version", "2")
	resp = &http.Response{StatusCode: 204, Header: http.Header{"Service-Operation-Id": {operationID}}}
	if rec := record(t, func(tb testing.TB) { v.Check(tb, req, nil, resp, nil) }); rec.Failed() {
		t.Errorf("Check reported a correct 204:\n%s", rec.all())
	}
	if rec := record(t, func(tb testing.TB) { v.Check(tb, req, nil, resp, []byte("{}")) }); !strings.Contains(rec.all(), "no body") {
		t.Errorf("Check reported %q for a 204 with a body", rec.all())
	}
}

// TestCheckConcurrently shares one Validator between goroutines, as
// parallel tests do; run with -race.
func TestCheckConcurrently(t *testing.T) {
	v := Load(t, documentPath)
	srv := fakeServer(t, answer{status: 202, body: ingested})
	rec := &recorder{TB: t}
	client := &http.Client{Transport: v.Transport(rec, srv.Client().Transport)}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			req, err := http.NewRequest("POST", srv.URL+"/events", strings.NewReader(validBatch))
			if err != nil {
				t.Error(err)
				return
			}
			req.Header.Set("Authorization", "Bearer sk_test")
			req.Header.Set("Service-Version", "2")
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_ = resp.Body.Close()
		})
	}
	wg.Wait()
	if rec.Failed() {
		t.Errorf("Check reported correct exchanges:\n%s", rec.all())
	}
}
