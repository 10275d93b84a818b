package trafficpolicy

import (
	"compress/flate"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCompressResponse: the answer is compressed with the first of the
// action's algorithms the client accepts, unless it is encoded already
// or has no body; the decision tells the algorithm and the bytes saved.
func TestCompressResponse(t *testing.T) {
	body := strings.Repeat("a compressible line of text\n", 200)
	for _, c := range []struct {
		name, config, accept, contentType, encoding string
		status                                      int
		want                                        string
	}{
		{"gzip", "{}", "gzip, deflate", "text/plain", "", 200, "gzip"},
		{"deflate preferred", "{algorithms: [deflate, gzip]}", "gzip, deflate", "text/plain", "", 200, "deflate"},
		{"client accepts neither", "{}", "br", "text/plain", "", 200, "none"},
		{"q=0", "{algorithms: [gzip]}", "gzip;q=0, deflate", "text/plain", "", 200, "none"},
		{"already encoded", "{}", "gzip", "text/plain", "br", 200, "none"},
		{"an image", "{}", "gzip", "image/png", "", 200, "none"},
		{"no content", "{}", "gzip", "text/plain", "", 204, "none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []Decision
			p, err := Parse([]byte("on_http_request:\n  - actions:\n      - type: compress-response\n        config: "+c.config+"\n"),
				WithDecisions(func(_ *http.Request, d Decision) { got = append(got, d) }))
			if err != nil {
				t.Fatal(err)
			}
			h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", c.contentType)
				if c.encoding != "" {
					w.Header().Set("Content-Encoding", c.encoding)
				}
				w.WriteHeader(c.status)
				if c.status != http.StatusNoContent {
					_, _ = io.WriteString(w, body)
				}
			}))
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("Accept-Encoding", c.accept)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if len(got) != 1 || got[0].Module != "compression" || got[0].Algorithm != c.want {
				t.Fatalf("decisions %+v, want compression %s", got, c.want)
			}
			sent := int64(w.Body.Len())
			var rd io.Reader = w.Body
			switch c.want {
			case "gzip":
				zr, err := gzip.NewReader(w.Body)
				if err != nil {
					t.Fatal(err)
				}
				rd = zr
			case "deflate":
				rd = flate.NewReader(w.Body)
			}
			if c.want != "none" {
				if w.Header().Get("Content-Encoding") != c.want || got[0].BytesSaved <= 0 || int64(len(body))-got[0].BytesSaved != sent {
					t.Fatalf("Content-Encoding %q, saved %d of %d, sent %d", w.Header().Get("Content-Encoding"), got[0].BytesSaved, len(body), sent)
				}
			}
			plain, err := io.ReadAll(rd)
			if c.status != http.StatusNoContent && (err != nil || string(plain) != body) {
				t.Fatalf("the body read back: %d bytes, %v", len(plain), err)
			}
		})
	}
}

// BenchmarkCompressResponse is the cost of compressing a 5.6 KB answer.
func BenchmarkCompressResponse(b *testing.B) {
	p, err := Parse([]byte("on_http_request:\n  - actions: [{type: compress-response}]\n"))
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(strings.Repeat("a compressible line of text\n", 200))
	h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Accept-Encoding", "gzip")
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(discard{h: http.Header{}}, r)
	}
}

type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(p []byte) (int, error) { return len(p), nil }
func (d discard) WriteHeader(int)             {}
