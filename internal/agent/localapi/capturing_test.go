package localapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestCapturesInFlightShareTheBound: the bodies of exchanges still in
// flight count against the store's bound together, so that many slow
// exchanges cannot each hold a body's worth: past it, bodies are
// captured truncated.
func TestCapturesInFlightShareTheBound(t *testing.T) {
	s := NewCaptures(CapturesConfig{MaxBytes: 3000}) // a body's bound: 1000
	const n = 4
	var wrote sync.WaitGroup
	wrote.Add(n)
	release := make(chan struct{})
	h := s.Capturing("slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte("x"), 1000))
		wrote.Done()
		<-release
	}))
	var done sync.WaitGroup
	for range n {
		done.Go(func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/slow", nil)) })
	}
	wrote.Wait()
	// Four bodies of 1000 bytes in flight, and the bound is 3000: one
	// is kept truncated (empty).
	if used := s.inFlight.used.Load(); used != 3000 {
		t.Fatalf("%d bytes kept in flight, want the bound, 3000", used)
	}
	close(release)
	done.Wait()
	if used := s.inFlight.used.Load(); used != 0 {
		t.Fatalf("%d bytes still reserved after every exchange ended", used)
	}
}
