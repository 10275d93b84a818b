package awstest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/sluicehq/sluice/sinks"
)

// Captured is a request as a Capture client saw it.
type Captured struct {
	Method, URL, ContentType, Target string
	// Headers are the names of the request's headers, sorted.
	Headers []string
	Body    []byte
}

// Capture is an aws.HTTPClient that keeps the last request it was given
// and answers each with Status and Answer, sending nothing: for
// comparing what two ways of making one call send.
type Capture struct {
	// Answer is the JSON body of every answer.
	Answer string
	// Status is the status of every answer; 0 is 200.
	Status int

	mu   sync.Mutex
	last Captured
}

// Do keeps req and answers it.
func (c *Capture) Do(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close() // as a transport does
		if err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	c.last = Captured{
		Method:      req.Method,
		URL:         req.URL.String(),
		Headers:     slices.Sorted(maps.Keys(req.Header)),
		ContentType: req.Header.Get("Content-Type"),
		Target:      req.Header.Get("X-Amz-Target"),
		Body:        body,
	}
	c.mu.Unlock()
	status := c.Status
	if status == 0 {
		status = http.StatusOK
	}
	return &http.Response{
		StatusCode:    status,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.1"}},
		Body:          io.NopCloser(strings.NewReader(c.Answer)),
		ContentLength: int64(len(c.Answer)),
		Request:       req,
	}, nil
}

// CaptureConfig returns the configuration of an SDK client sending
// through capture (through sinks.BodyCopyingHTTPClient, as the sinks'
// clients do), in eu-west-1, signing with static keys, with no retries
// (as the sinks' clients): none of the process's AWS environment.
func CaptureConfig(capture *Capture) aws.Config {
	return aws.Config{
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
		Region:      "eu-west-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIASTATICKEY0000000", "static-secret", ""),
		HTTPClient:  sinks.BodyCopyingHTTPClient(capture),
	}
}

// Last returns the last request, and forgets it.
func (c *Capture) Last() Captured {
	c.mu.Lock()
	defer c.mu.Unlock()
	last := c.last
	c.last = Captured{}
	return last
}

// CheckSameWrite makes the SDK's own call of a batch (call, with a client
// sending through c) and then the sink's Write of it (through c too), and
// checks that the two sent the same request (CheckSameRequest).
func (c *Capture) CheckSameWrite(t *testing.T, call func(context.Context) error, sink sinks.Sink, batch []sinks.Record) {
	t.Helper()
	if err := call(t.Context()); err != nil {
		t.Fatalf("the SDK's call: %v", err)
	}
	sdk := c.Last()
	if _, err := sink.Write(t.Context(), batch); err != nil {
		t.Fatalf("Write: %v", err)
	}
	CheckSameRequest(t, sdk, c.Last())
}

// CheckSameRequest checks that ours is the request sdk is: the same
// method, URL, Content-Type and X-Amz-Target, headers of the same names
// (their values are the signature's and the call's own), and bodies that
// decode to the same JSON value, ours valid UTF-8 (a JSON decoder reads
// each byte that is not as U+FFFD, which would hide it).
func CheckSameRequest(t *testing.T, sdk, ours Captured) {
	t.Helper()
	if sdk.Method != ours.Method || sdk.URL != ours.URL || sdk.ContentType != ours.ContentType || sdk.Target != ours.Target {
		t.Errorf("request %s %s (Content-Type %q, X-Amz-Target %q), the SDK's %s %s (%q, %q)",
			ours.Method, ours.URL, ours.ContentType, ours.Target, sdk.Method, sdk.URL, sdk.ContentType, sdk.Target)
	}
	if !slices.Equal(sdk.Headers, ours.Headers) {
		t.Errorf("request headers %q, the SDK's %q", ours.Headers, sdk.Headers)
	}
	if !utf8.Valid(ours.Body) {
		t.Errorf("the body %q is not UTF-8", ours.Body)
	}
	want, err := decode(sdk.Body)
	if err != nil {
		t.Fatalf("the SDK's body %q: %v", sdk.Body, err)
	}
	got, err := decode(ours.Body)
	if err != nil {
		t.Fatalf("the body %q: %v", ours.Body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the body decodes to\n%#v\nthe SDK's to\n%#v\n(bodies %q and %q)", got, want, ours.Body, sdk.Body)
	}
}

// decode returns the JSON value of body, numbers as written.
func decode(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, io.ErrUnexpectedEOF
	}
	return v, nil
}
