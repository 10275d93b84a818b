package trafficpolicy

import (
	"compress/flate"
	"compress/gzip"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ActionCompressResponse compresses the answer with the first of its
// algorithms the client accepts.
const ActionCompressResponse = "compress-response"

// compressAlgorithms returns the algorithms of compress-response, in
// its default order of preference.
func compressAlgorithms() []string { return []string{"gzip", "deflate"} }

// compressResponse marks the exchange for compression; Serve wraps the
// answer's writer.
type compressResponse struct {
	algorithms []string
}

func buildCompressResponse(c *checker, cfg node, _ phase) action {
	fields := c.mapping(cfg, "algorithms")
	a := &compressResponse{algorithms: compressAlgorithms()}
	if n, ok := fields["algorithms"]; ok {
		a.algorithms = nil
		for _, e := range c.list(n) {
			s := c.string(e)
			switch {
			case !slices.Contains(compressAlgorithms(), s):
				c.report(e, "not an algorithm: use gzip or deflate")
			case slices.Contains(a.algorithms, s):
				c.report(e, "given twice")
			default:
				a.algorithms = append(a.algorithms, s)
			}
		}
		if len(a.algorithms) == 0 {
			c.report(n, "must list gzip, deflate or both")
		}
	}
	return a
}

func (a *compressResponse) run(x *exchange, _ http.ResponseWriter, _ *rule) bool {
	accepted := x.req.Header.Values("Accept-Encoding")
	for _, alg := range a.algorithms {
		if acceptsEncoding(accepted, alg) {
			x.compress = alg
			return false
		}
	}
	x.compress = "none"
	return false
}

// acceptsEncoding reports whether Accept-Encoding values accept alg
// (named, or *, with a q other than 0).
func acceptsEncoding(values []string, alg string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			name = strings.TrimSpace(name)
			if !strings.EqualFold(name, alg) && name != "*" {
				continue
			}
			q := 1.0
			if qs, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
				if f, err := strconv.ParseFloat(qs, 64); err == nil {
					q = f
				}
			}
			if q > 0 {
				return true
			}
		}
	}
	return false
}

// compressors pools the compressors of a policy: each holds a window of
// hundreds of KiB, too much to make per answer.
type compressors struct {
	gzip, flate sync.Pool
}

func (c *compressors) get(alg string, w io.Writer) flushWriteCloser {
	if alg == "gzip" {
		z, _ := c.gzip.Get().(*gzip.Writer)
		if z == nil {
			z, _ = gzip.NewWriterLevel(w, gzip.DefaultCompression)
		}
		z.Reset(w)
		return z
	}
	z, _ := c.flate.Get().(*flate.Writer)
	if z == nil {
		z, _ = flate.NewWriter(w, flate.DefaultCompression)
	}
	z.Reset(w)
	return z
}

func (c *compressors) put(z flushWriteCloser) {
	switch z := z.(type) {
	case *gzip.Writer:
		z.Reset(io.Discard)
		c.gzip.Put(z)
	case *flate.Writer:
		z.Reset(io.Discard)
		c.flate.Put(z)
	}
}

// flushWriteCloser is a compressor.
type flushWriteCloser interface {
	io.WriteCloser
	Flush() error
}

// compressWriter compresses an answer on its way to w, when the answer
// can be: not already encoded, not empty by its status, not an upgrade.
type compressWriter struct {
	w       http.ResponseWriter
	pool    *compressors
	alg     string
	started bool
	active  bool
	zw      flushWriteCloser
	out     countingWriter
	raw     int64
}

// countingWriter counts the bytes it passes on.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// compressibleType reports whether an answer of the Content-Type may be
// compressed: not one compressed already.
func compressibleType(ct string) bool {
	ct = strings.ToLower(ct)
	for _, prefix := range []string{"image/", "video/", "audio/", "application/zip", "application/gzip", "application/x-gzip", "application/zstd", "font/woff"} {
		if strings.HasPrefix(ct, prefix) && ct != "image/svg+xml" {
			return false
		}
	}
	return true
}

func (cw *compressWriter) Header() http.Header { return cw.w.Header() }

func (cw *compressWriter) WriteHeader(status int) {
	if cw.started {
		cw.w.WriteHeader(status)
		return
	}
	if status < 200 && status != http.StatusSwitchingProtocols {
		cw.w.WriteHeader(status)
		return
	}
	cw.started = true
	h := cw.w.Header()
	if status != http.StatusNoContent && status != http.StatusNotModified && status != http.StatusSwitchingProtocols &&
		h.Get("Content-Encoding") == "" && compressibleType(h.Get("Content-Type")) {
		cw.active = true
		h.Del("Content-Length")
		h.Set("Content-Encoding", cw.alg)
		h.Add("Vary", "Accept-Encoding")
		cw.out.w = cw.w
		cw.zw = cw.pool.get(cw.alg, &cw.out)
	}
	cw.w.WriteHeader(status)
}

func (cw *compressWriter) Write(b []byte) (int, error) {
	if !cw.started {
		cw.WriteHeader(http.StatusOK)
	}
	if !cw.active {
		return cw.w.Write(b)
	}
	cw.raw += int64(len(b))
	return cw.zw.Write(b)
}

// Flush flushes what was compressed so far, then the writer below.
func (cw *compressWriter) Flush() {
	if !cw.started {
		cw.WriteHeader(http.StatusOK)
	}
	if cw.active {
		_ = cw.zw.Flush()
	}
	_ = http.NewResponseController(cw.w).Flush()
}

// Unwrap returns the writer below, for http.ResponseController (a
// hijack of an upgrade goes through).
func (cw *compressWriter) Unwrap() http.ResponseWriter { return cw.w }

// finish ends the compressed stream and returns the bytes it saved, and
// the algorithm ("none" when the answer was not compressed).
func (cw *compressWriter) finish() (alg string, saved int64) {
	if !cw.active {
		return "none", 0
	}
	_ = cw.zw.Close()
	cw.pool.put(cw.zw)
	cw.zw = nil
	return cw.alg, cw.raw - cw.out.n
}
