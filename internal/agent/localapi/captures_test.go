package localapi

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"
)

// captureServer serves handler behind s.Capturing as the tunnel "web".
func captureServer(t *testing.T, s *Captures, handler http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(s.Capturing("web", handler))
	t.Cleanup(srv.Close)
	return srv
}

// nextCapture waits for the next capture sub gets.
func nextCapture(t *testing.T, s *Captures, sub *Subscription) *Capture {
	t.Helper()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	for {
		select {
		case ev := <-sub.C:
			if ev.Kind == EventCapture {
				return s.Get(ev.Capture.ID)
			}
		case <-timer.C:
			t.Fatal("no capture within 5s")
			return nil
		}
	}
}

func do(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

func TestCapturing(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Echo", r.Header.Get("X-Test"))
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "got %s", body)
	})

	t.Run("request and response", func(t *testing.T) {
		clock := newFakeClock()
		s := NewCaptures(CapturesConfig{Now: clock.Now})
		sub := s.Subscribe()
		defer sub.Cancel()
		srv := captureServer(t, s, echo)
		req, _ := http.NewRequest("POST", srv.URL+"/things?a=1", strings.NewReader("hello"))
		req.Header.Set("X-Test", "42")
		res, body := do(t, req)
		if res.StatusCode != 201 || string(body) != "got hello" {
			t.Fatalf("answer %d %q", res.StatusCode, body)
		}
		c := nextCapture(t, s, sub)
		if !strings.HasPrefix(c.ID, "req_") || c.URI != "/api/requests/http/"+c.ID || c.TunnelName != "web" {
			t.Errorf("capture ids: %+v", c)
		}
		if c.Request.Method != "POST" || c.Request.URI != "/things?a=1" || c.Request.Headers.Get("X-Test") != "42" {
			t.Errorf("request: %+v", c.Request)
		}
		raw := string(c.Request.Raw)
		if !strings.HasPrefix(raw, "POST /things?a=1 HTTP/1.1\r\n") || !strings.Contains(raw, "\r\nHost: 127.0.0.1:") || !strings.HasSuffix(raw, "\r\n\r\nhello") {
			t.Errorf("raw request %q", raw)
		}
		if c.Response.Status != "201 Created" || c.Response.StatusCode != 201 || c.Response.Headers.Get("X-Echo") != "42" {
			t.Errorf("response: %+v", c.Response)
		}
		if raw := string(c.Response.Raw); !strings.HasPrefix(raw, "HTTP/1.1 201 Created\r\n") || !strings.HasSuffix(raw, "\r\n\r\ngot hello") {
			t.Errorf("raw response %q", raw)
		}
		if c.Request.Truncated || c.Response.Truncated || c.Request.BodySize != 5 || c.Response.BodySize != 9 {
			t.Errorf("sizes: %+v %+v", c.Request, c.Response)
		}
	})

	t.Run("bodies truncated at the bound", func(t *testing.T) {
		s := NewCaptures(CapturesConfig{MaxBytes: 30000})
		sub := s.Subscribe()
		defer sub.Cancel()
		srv := captureServer(t, s, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, _ := io.Copy(io.Discard, r.Body)
			_, _ = w.Write(bytes.Repeat([]byte("r"), int(n)))
		}))
		big := bytes.Repeat([]byte("q"), 25000)
		res, body := do(t, mustRequest(t, "PUT", srv.URL+"/big", bytes.NewReader(big)))
		if res.StatusCode != 200 || len(body) != len(big) {
			t.Fatalf("answer %d, %d bytes", res.StatusCode, len(body))
		}
		c := nextCapture(t, s, sub)
		if !c.Request.Truncated || c.Request.BodySize != 25000 || !bytes.HasSuffix(c.Request.Raw, []byte("\r\n\r\n"+strings.Repeat("q", 10000))) {
			t.Errorf("request: truncated %v, size %d, raw %d bytes", c.Request.Truncated, c.Request.BodySize, len(c.Request.Raw))
		}
		if !c.Response.Truncated || c.Response.BodySize != 25000 || !bytes.HasSuffix(c.Response.Raw, []byte("\r\n\r\n"+strings.Repeat("r", 10000))) {
			t.Errorf("response: truncated %v, size %d, raw %d bytes", c.Response.Truncated, c.Response.BodySize, len(c.Response.Raw))
		}
		if c.size() > 30000 {
			t.Errorf("capture of %d bytes in a store of 30000", c.size())
		}
	})

	t.Run("unread body", func(t *testing.T) {
		s := NewCaptures(CapturesConfig{})
		sub := s.Subscribe()
		defer sub.Cancel()
		srv := captureServer(t, s, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		do(t, mustRequest(t, "POST", srv.URL+"/", strings.NewReader("never read")))
		c := nextCapture(t, s, sub)
		if !c.Request.Truncated || c.Response.StatusCode != 200 || c.Response.Status != "200 OK" {
			t.Errorf("request %+v, response %+v", c.Request, c.Response)
		}
	})

	t.Run("chunked body says its length", func(t *testing.T) {
		s := NewCaptures(CapturesConfig{})
		sub := s.Subscribe()
		defer sub.Cancel()
		srv := captureServer(t, s, echo)
		req := mustRequest(t, "POST", srv.URL+"/chunked", io.MultiReader(strings.NewReader("ab"), strings.NewReader("cd")))
		req.ContentLength = -1
		do(t, req)
		c := nextCapture(t, s, sub)
		parsed, err := replayedRequest(c)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(parsed.Body)
		if string(body) != "abcd" || parsed.ContentLength != 4 {
			t.Fatalf("replayed body %q, length %d", body, parsed.ContentLength)
		}
	})

	t.Run("flush streams", func(t *testing.T) {
		s := NewCaptures(CapturesConfig{})
		release := make(chan struct{})
		srv := captureServer(t, s, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "first\n")
			w.(http.Flusher).Flush()
			<-release
			fmt.Fprint(w, "second\n")
		}))
		res, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		line, err := bufio.NewReader(res.Body).ReadString('\n')
		close(release)
		if err != nil || line != "first\n" {
			t.Fatalf("first line %q, %v", line, err)
		}
	})

	t.Run("upgrade passes through", func(t *testing.T) {
		upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			fmt.Fprint(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
			rw.Flush()
			line, _ := rw.ReadString('\n')
			fmt.Fprint(rw, "echo "+line)
			rw.Flush()
		}))
		t.Cleanup(upstream.Close)
		target, _ := url.Parse(upstream.URL)
		s := NewCaptures(CapturesConfig{})
		sub := s.Subscribe()
		defer sub.Cancel()
		srv := captureServer(t, s, httputil.NewSingleHostReverseProxy(target))

		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprint(conn, "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		br := bufio.NewReader(conn)
		res, err := http.ReadResponse(br, nil)
		if err != nil || res.StatusCode != 101 {
			t.Fatalf("upgrade answer %v, %v", res, err)
		}
		fmt.Fprint(conn, "ping\n")
		line, err := br.ReadString('\n')
		if err != nil || line != "echo ping\n" {
			t.Fatalf("after the upgrade: %q, %v", line, err)
		}
		conn.Close()
		c := nextCapture(t, s, sub)
		if c.Response.StatusCode != 101 || c.Response.Status != "101 Switching Protocols" {
			t.Errorf("response %+v", c.Response)
		}
	})
}

func mustRequest(t *testing.T, method, url string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// testCapture returns a capture of raw bytes of about size.
func testCapture(id, tunnel string, size int) *Capture {
	return &Capture{
		ID:         id,
		URI:        "/api/requests/http/" + id,
		TunnelName: tunnel,
		Start:      time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Request: CapturedRequest{
			Method: "GET", Proto: "HTTP/1.1", URI: "/" + id, Headers: http.Header{},
			Raw: []byte("GET /" + id + " HTTP/1.1\r\nHost: x\r\n\r\n" + strings.Repeat("b", max(0, size-40))),
		},
		Response: CapturedResponse{Status: "200 OK", StatusCode: 200, Proto: "HTTP/1.1", Headers: http.Header{},
			Raw: []byte("HTTP/1.1 200 OK\r\n\r\n")},
	}
}

func TestCapturesStore(t *testing.T) {
	t.Run("evicts the oldest by bytes", func(t *testing.T) {
		s := NewCaptures(CapturesConfig{MaxBytes: 5000})
		for i := range 10 {
			s.add(testCapture(fmt.Sprintf("req_%d", i), "web", 1000))
		}
		size := testCapture("req_0", "web", 1000).size()
		keep := int(5000 / size)
		got := s.List(100, "")
		if len(got) != keep {
			t.Fatalf("holds %d, want %d", len(got), keep)
		}
		for i, c := range got {
			if want := fmt.Sprintf("req_%d", 9-i); c.ID != want {
				t.Errorf("list[%d] = %s, want %s (newest first)", i, c.ID, want)
			}
		}
		if s.Get("req_0") != nil || s.Get("req_9") == nil {
			t.Error("the oldest is still held, or the newest is not")
		}
		if s.bytes > 5000 || s.bytes != int64(keep)*size {
			t.Errorf("counts %d bytes", s.bytes)
		}
	})

	t.Run("drops a capture larger than the bound", func(t *testing.T) {
		s := NewCaptures(CapturesConfig{MaxBytes: 2000})
		s.add(testCapture("req_small", "web", 100))
		s.add(testCapture("req_huge", "web", 5000))
		if s.Get("req_huge") != nil || s.Get("req_small") == nil {
			t.Fatal("the huge capture evicted the small one, or was kept")
		}
	})

	t.Run("list limit and tunnel", func(t *testing.T) {
		s := NewCaptures(CapturesConfig{})
		for i := range 6 {
			s.add(testCapture(fmt.Sprintf("req_%d", i), []string{"a", "b"}[i%2], 10))
		}
		if got := s.List(2, ""); len(got) != 2 || got[0].ID != "req_5" {
			t.Errorf("limit 2: %v", got)
		}
		got := s.List(10, "a")
		if len(got) != 3 {
			t.Fatalf("tunnel a: %d", len(got))
		}
		for _, c := range got {
			if c.TunnelName != "a" {
				t.Errorf("tunnel a listed %s of %s", c.ID, c.TunnelName)
			}
		}
	})

	t.Run("clear", func(t *testing.T) {
		s := NewCaptures(CapturesConfig{})
		sub := s.Subscribe()
		defer sub.Cancel()
		s.add(testCapture("req_1", "web", 10))
		s.Clear()
		if len(s.List(10, "")) != 0 || s.bytes != 0 || s.Get("req_1") != nil {
			t.Fatal("not cleared")
		}
		if ev := <-sub.C; ev.Kind != EventCapture || ev.Capture.Request.Raw != nil {
			t.Errorf("first event %+v, want a capture without raw bytes", ev)
		}
		if ev := <-sub.C; ev.Kind != EventClear {
			t.Errorf("second event %+v, want clear", ev)
		}
	})

	t.Run("a slow subscriber misses events, never blocks", func(t *testing.T) {
		s := NewCaptures(CapturesConfig{})
		sub := s.Subscribe()
		for i := range subscriptionBuffer + 10 {
			s.add(testCapture(fmt.Sprintf("req_%d", i), "web", 10))
		}
		<-sub.C
		if !sub.Missed() {
			t.Fatal("no missed events reported")
		}
		<-sub.C
		if sub.Missed() {
			t.Fatal("missed events reported twice")
		}
		sub.Cancel()
		for len(sub.C) > 0 {
			<-sub.C
		}
		s.add(testCapture("req_after", "web", 10))
		select {
		case ev := <-sub.C:
			t.Fatalf("event %+v after Cancel", ev)
		default:
		}
	})
}
