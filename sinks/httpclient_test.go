package sinks_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/sinks"
)

// earlyClosedBody is a request body that the SDK closes before the
// transport has read all of it, as smithy-go does when the answer's
// headers arrive: reads after Close fail.
type earlyClosedBody struct {
	r      io.Reader
	closed bool
}

func (b *earlyClosedBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, errors.New("read after close")
	}
	return b.r.Read(p)
}

func (b *earlyClosedBody) Close() error { b.closed = true; return nil }

// transportFunc is an HTTP client made of a function.
type transportFunc func(*http.Request) (*http.Response, error)

func (f transportFunc) Do(req *http.Request) (*http.Response, error) { return f(req) }

func TestBodyCopyingHTTPClient(t *testing.T) {
	const payload = `{"Records":[{"Data":"eyJldmVudF9pZCI6ImV2XzEifQ=="}]}`
	original := &earlyClosedBody{r: strings.NewReader(payload)}
	var sent string
	client := sinks.BodyCopyingHTTPClient(transportFunc(func(req *http.Request) (*http.Response, error) {
		original.Close() // the SDK closes its body while the transport still reads
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		sent = string(body)
		again, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		if b, _ := io.ReadAll(again); string(b) != payload {
			t.Errorf("GetBody gave %q", b)
		}
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	}))
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/", original)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Do(req); err != nil {
		t.Fatalf("Do: %v", err)
	}
	if sent != payload {
		t.Fatalf("sent %q, want the whole body", sent)
	}
}

// TestBodyCopyingHTTPClientLength checks that a body of a known length is
// copied whole, and that one longer than its Content-Length fails the call
// unsent.
func TestBodyCopyingHTTPClientLength(t *testing.T) {
	const payload = `{"Records":[]}`
	for _, tt := range []struct {
		name   string
		length int64
		ok     bool
	}{
		{"exact", int64(len(payload)), true},
		{"unknown", -1, true},
		{"longer than said", int64(len(payload)) - 1, false},
		{"shorter than said", int64(len(payload)) + 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var sent string
			client := sinks.BodyCopyingHTTPClient(transportFunc(func(req *http.Request) (*http.Response, error) {
				body, err := io.ReadAll(req.Body)
				sent = string(body)
				return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, err
			}))
			req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/", io.NopCloser(strings.NewReader(payload)))
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = tt.length
			_, err = client.Do(req)
			switch {
			case tt.ok && (err != nil || sent != payload):
				t.Errorf("Do = %v, sent %q; want the whole body sent", err, sent)
			case !tt.ok && (err == nil || sent != ""):
				t.Errorf("Do = %v, sent %q; want an error and nothing sent", err, sent)
			}
		})
	}
}
