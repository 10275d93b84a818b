package localapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
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

// TestCaptureSizeIsItsMemory: what a capture counts against
// inspect_db_size is at least what it holds on the heap, so that the
// bound bounds the memory (the GC's headroom aside).
func TestCaptureSizeIsItsMemory(t *testing.T) {
	const n = 2000
	s := NewCaptures(CapturesConfig{MaxBytes: 1 << 30})
	h := s.Capturing("web", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Request-Id", "a1b2c3d4e5f6")
		_, _ = w.Write([]byte("ok"))
	}))
	request := func() *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/api/items?page=2", nil)
		r.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0")
		r.Header.Set("Accept", "text/html,application/xhtml+xml")
		r.Header.Set("Accept-Language", "en-GB,en;q=0.9")
		r.Header.Set("Cookie", "session=0123456789abcdef")
		return r
	}
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = request()
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, r := range reqs {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heldPer := float64(after.HeapAlloc-before.HeapAlloc) / n
	countedPer := float64(s.bytes) / n
	t.Logf("a capture holds %.0f bytes of heap, and counts %.0f", heldPer, countedPer)
	if countedPer < heldPer {
		t.Fatalf("a capture counts %.0f bytes against the bound and holds %.0f", countedPer, heldPer)
	}
	runtime.KeepAlive(reqs)
}
