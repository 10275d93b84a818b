package awstest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
)

// Call is one request the Server received.
type Call struct {
	// Target is the X-Amz-Target header: "Firehose_20150804.PutRecordBatch".
	Target string
	Header http.Header
	Body   []byte
}

// Answer is a status and a JSON body.
type Answer struct {
	Status int
	Body   string
}

// Server answers AWS JSON 1.1 calls as its test scripts.
type Server struct {
	*httptest.Server

	mu      sync.Mutex
	answers map[string]func(Call) Answer
	calls   []Call
}

// Start starts a Server, closed when the test ends. A call of a target with
// no answer set is answered 501.
func Start(t *testing.T) *Server {
	t.Helper()
	s := &Server{answers: make(map[string]func(Call) Answer)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Answer sets how calls of target are answered.
func (s *Server) Answer(target string, answer func(Call) Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[target] = answer
}

// Always returns an answer, for Server.Answer, giving every call status
// and body.
func Always(status int, body string) func(Call) Answer {
	return func(Call) Answer { return Answer{Status: status, Body: body} }
}

// Calls returns the calls received so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	call := Call{Target: r.Header.Get("X-Amz-Target"), Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.calls = append(s.calls, call)
	answer := s.answers[call.Target]
	s.mu.Unlock()
	a := Answer{Status: http.StatusNotImplemented, Body: `{"__type":"UnknownOperationException"}`}
	if answer != nil {
		a = answer(call)
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(a.Status)
	io.WriteString(w, a.Body)
}

// DefaultChainKey is the access key id of the default credential chain
// that Isolate sets.
const DefaultChainKey = "AKIADEFAULTCHAIN0000"

// Isolate makes the SDK see only this test's AWS environment: no shared
// files, no instance metadata, default-chain keys DefaultChainKey, no
// endpoint variables, and an attempt count that would turn retries on if
// the sink let it.
func Isolate(t *testing.T) {
	t.Helper()
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE":                  none,
		"AWS_SHARED_CREDENTIALS_FILE":      none,
		"AWS_PROFILE":                      "",
		"AWS_EC2_METADATA_DISABLED":        "true",
		"AWS_ACCESS_KEY_ID":                DefaultChainKey,
		"AWS_SECRET_ACCESS_KEY":            "default-chain-secret",
		"AWS_SESSION_TOKEN":                "",
		"AWS_REGION":                       "",
		"AWS_DEFAULT_REGION":               "",
		"AWS_ENDPOINT_URL":                 "",
		"AWS_ENDPOINT_URL_KINESIS":         "",
		"AWS_ENDPOINT_URL_FIREHOSE":        "",
		"AWS_ENDPOINT_URL_CLOUDWATCH_LOGS": "",
		"AWS_ENDPOINT_URL_STS":             "",
		"AWS_MAX_ATTEMPTS":                 "5",
		"AWS_RETRY_MODE":                   "standard",
	} {
		t.Setenv(k, v)
	}
}
