package sinks

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
)

// doerFunc is an HTTP client made of a function.
type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(req *http.Request) (*http.Response, error) { return f(req) }

// send has client send body, of a known length, and fails the test on an
// error.
func send(t *testing.T, client bodyCopyingClient, body []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Body = io.NopCloser(req.Body) // as the SDK's: not a type net/http knows
	if _, err := client.Do(req); err != nil {
		t.Fatalf("Do: %v", err)
	}
}

// TestBodyCopyHeldUntilClosed checks that the copy of a body the transport
// still reads after Do returned is not given to another request until
// the transport closed it, even while that other request is sent, and
// that it is released then: reads after Close fail, and so does GetBody.
func TestBodyCopyHeldUntilClosed(t *testing.T) {
	first := bytes.Repeat([]byte("first body "), 10_000)
	second := bytes.Repeat([]byte("SECOND BODY "), 10_000)
	var late io.ReadCloser // the first request's body, read after Do
	var getBody func() (io.ReadCloser, error)
	client := bodyCopyingClient{copies: &copyPool{maxKept: maxKeptCopy}}
	client.client = doerFunc(func(req *http.Request) (*http.Response, error) {
		if late == nil {
			late, getBody = req.Body, req.GetBody
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
		}
		defer req.Body.Close()
		if got, err := io.ReadAll(req.Body); err != nil || !bytes.Equal(got, second) {
			t.Errorf("the second request sent %d bytes (%v), want %d", len(got), err, len(second))
		}
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	})
	send(t, client, first)

	// The transport reads the first body while the second request is sent
	// through the same pool (the race detector watches the buffer).
	read := make(chan []byte)
	go func() {
		got, _ := io.ReadAll(late)
		read <- got
	}()
	for range 3 {
		send(t, client, second)
	}
	if got := <-read; !bytes.Equal(got, first) {
		t.Fatalf("the first body read after Do returned %d bytes, not the first body's %d", len(got), len(first))
	}
	again, err := getBody()
	if err != nil {
		t.Fatalf("GetBody while a body is open: %v", err)
	}
	again.Close()
	if err := late.Close(); err != nil {
		t.Fatal(err)
	}
	if err := late.Close(); err != nil { // a second Close releases nothing more
		t.Fatal(err)
	}
	if _, err := late.Read(make([]byte, 1)); !errors.Is(err, errCopyClosed) {
		t.Errorf("Read after Close = %v, want errCopyClosed", err)
	}
	if _, err := getBody(); !errors.Is(err, errCopyReleased) {
		t.Errorf("GetBody after Do returned and every body closed = %v, want errCopyReleased", err)
	}
}

// TestBodyCopyPoolCap checks that a copy larger than the pool's cap is
// not kept, and a smaller one is.
func TestBodyCopyPoolCap(t *testing.T) {
	pool := &copyPool{maxKept: 1024}
	big, small := make([]byte, 2048), make([]byte, 512)
	if pool.put(&big) {
		t.Error("a buffer of 2,048 bytes was kept, over the cap of 1,024")
	}
	if !pool.put(&small) {
		t.Error("a buffer of 512 bytes was not kept")
	}

	// Through Do: the big copy, released, is not in the pool.
	pool = &copyPool{maxKept: 1024}
	client := bodyCopyingClient{copies: pool, client: doerFunc(func(req *http.Request) (*http.Response, error) {
		defer req.Body.Close()
		_, err := io.Copy(io.Discard, req.Body)
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, err
	})}
	send(t, client, big)
	if buf := pool.pool.Get(); buf != nil {
		t.Errorf("the pool holds a buffer of %d bytes, over its cap", cap(*buf.(*[]byte)))
	}
}
