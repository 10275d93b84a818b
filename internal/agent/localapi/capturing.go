package localapi

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/segmentio/ksuid"
)

// Capturing returns next, capturing each exchange into s as the tunnel
// tunnelName's: the request as next reads its body, the response as next
// writes it, each body up to its bound. The capture is added when next
// returns. A connection next hijacks (a 101 upgrade) keeps working: what
// follows the hijack is not captured, and the capture shows the status
// 101 for an upgrade request. The forwarding of a tunnel whose inspect is
// false does not wrap its handler.
func (s *Captures) Capturing(tunnelName string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.now()
		body := &bodyTee{bound: s.bodyCap, source: r.Body, budget: &s.inFlight}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = body
		}
		cw := &captureWriter{ResponseWriter: w, bound: s.bodyCap, budget: &s.inFlight}
		defer func() {
			// The store's bound counts the capture from here on.
			defer s.inFlight.give(body.taken() + cw.taken)
			c := &Capture{
				ID:         "req_" + ksuid.New().String(),
				TunnelName: tunnelName,
				RemoteAddr: r.RemoteAddr,
				Start:      start,
				Duration:   s.now().Sub(start),
				Request:    capturedRequest(r, body),
				Response:   cw.captured(r),
			}
			c.URI = "/api/requests/http/" + c.ID
			s.add(c)
		}()
		next.ServeHTTP(cw, r)
	})
}

// capturedRequest returns r as captured, with what body saw of its body.
func capturedRequest(r *http.Request, body *bodyTee) CapturedRequest {
	header := r.Header.Clone()
	kept, size, truncated, eof := body.seen()
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
	case !eof && r.ContentLength != size:
		// The upstream did not read it all: what it did not read is
		// not known.
		truncated = true
	}
	if !truncated && header.Get("Content-Length") == "" && size > 0 {
		// A chunked body, captured whole: so that the raw request
		// parses, it says its length.
		header.Set("Content-Length", strconv.FormatInt(size, 10))
	}
	if r.Host != "" {
		// The server takes Host out of the headers; the capture shows
		// it among them, as it came.
		header.Set("Host", r.Host)
	}
	var raw bytes.Buffer
	fmt.Fprintf(&raw, "%s %s %s\r\n", r.Method, r.RequestURI, r.Proto)
	_ = header.Write(&raw)
	raw.WriteString("\r\n")
	raw.Write(kept)
	return CapturedRequest{
		Method:    r.Method,
		Proto:     r.Proto,
		Headers:   header,
		URI:       r.RequestURI,
		Raw:       raw.Bytes(),
		BodySize:  size,
		Truncated: truncated,
	}
}

// bodyTee is a request body that keeps the first bound bytes read. A
// transport may still read it after the handler returned (a response
// that came before the whole body was sent): its figures are guarded.
type bodyTee struct {
	source io.ReadCloser
	bound  int64
	budget *budget

	// reserved is what the bytes kept took of the budget.
	reserved int64

	mu      sync.Mutex
	kept    bytes.Buffer
	size    int64
	dropped bool
	eof     bool
}

func (b *bodyTee) Read(p []byte) (int, error) {
	n, err := b.source.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.size += int64(n)
	if room := min(int64(n), b.bound-int64(b.kept.Len())); room > 0 {
		got := b.budget.take(room)
		b.reserved += got
		b.kept.Write(p[:got])
	}
	if int64(b.kept.Len()) < b.size {
		b.dropped = true
	}
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// seen returns what was read by now: the bytes kept, the size read,
// whether bytes were not kept, and whether the body was read to its end.
func (b *bodyTee) seen() (kept []byte, size int64, dropped, eof bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.kept.Bytes()), b.size, b.dropped, b.eof
}

func (b *bodyTee) Close() error { return b.source.Close() }

// taken returns what the bytes kept took of the budget.
func (b *bodyTee) taken() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reserved
}

// budget bounds the bytes that the captures of exchanges still in
// flight keep, together: past it, their bodies are captured truncated.
// Without it, many slow exchanges would each hold a body's bound before
// the store's bound (inspect_db_size) could count them.
type budget struct {
	limit int64
	used  atomic.Int64
}

// take reserves up to n bytes and returns how many it got.
func (b *budget) take(n int64) int64 {
	for {
		used := b.used.Load()
		got := min(n, b.limit-used)
		if got <= 0 {
			return 0
		}
		if b.used.CompareAndSwap(used, used+got) {
			return got
		}
	}
}

// give returns n reserved bytes.
func (b *budget) give(n int64) { b.used.Add(-n) }

// captureWriter is a ResponseWriter that keeps the status, headers and
// the first bound bytes of the body it passes on.
type captureWriter struct {
	http.ResponseWriter
	bound    int64
	budget   *budget
	taken    int64 // what the bytes kept took of the budget
	status   int
	header   http.Header
	kept     bytes.Buffer
	size     int64
	hijacked bool
}

func (w *captureWriter) WriteHeader(code int) {
	if w.status == 0 && !w.hijacked && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
		w.header = w.ResponseWriter.Header().Clone()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *captureWriter) Write(p []byte) (int, error) {
	if w.status == 0 && !w.hijacked {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(p)
	if !w.hijacked {
		w.size += int64(n)
		if room := min(int64(n), w.bound-int64(w.kept.Len())); room > 0 {
			got := w.budget.take(room)
			w.taken += got
			w.kept.Write(p[:got])
		}
	}
	return n, err
}

// Flush flushes the underlying writer, when it can.
func (w *captureWriter) Flush() {
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack hands over the connection; nothing after it is captured.
func (w *captureWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return conn, rw, err
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (w *captureWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// captured returns the response to r as captured.
func (w *captureWriter) captured(r *http.Request) CapturedResponse {
	code, header := w.status, w.header
	if header == nil {
		// Hijacked before a status, or nothing written: the headers
		// are those set by then.
		header = w.ResponseWriter.Header().Clone()
	}
	switch {
	case code != 0:
	case w.hijacked && r.Header.Get("Upgrade") != "":
		code = http.StatusSwitchingProtocols
	case !w.hijacked:
		// The server answers a handler that wrote nothing with 200.
		code = http.StatusOK
	}
	status := strconv.Itoa(code)
	if text := http.StatusText(code); text != "" {
		status += " " + text
	}
	var raw bytes.Buffer
	fmt.Fprintf(&raw, "%s %s\r\n", r.Proto, status)
	_ = header.Write(&raw)
	raw.WriteString("\r\n")
	raw.Write(w.kept.Bytes())
	return CapturedResponse{
		Status:     status,
		StatusCode: code,
		Proto:      r.Proto,
		Headers:    header,
		Raw:        raw.Bytes(),
		BodySize:   w.size,
		Truncated:  w.size > int64(w.kept.Len()),
	}
}
