package trafficpolicy

import "net/http"

// responseWriter runs the rules of on_http_response on the answer to a
// request when its status is written, before its body: they see the
// status and headers, and an action may answer instead (deny,
// custom-response, a limited rate-limit), in which case what the handler
// writes after is dropped.
type responseWriter struct {
	w        http.ResponseWriter
	x        *exchange
	p        *Policy
	decided  bool // the rules of on_http_response ran
	replaced bool // and an action answered instead
}

// Header returns the header of the answer.
func (rw *responseWriter) Header() http.Header { return rw.w.Header() }

// WriteHeader runs the rules of on_http_response on the answer with this
// status, then writes it unless an action answered instead. Informational
// statuses (1xx but 101) pass through.
func (rw *responseWriter) WriteHeader(status int) {
	if rw.decided {
		if !rw.replaced {
			rw.w.WriteHeader(status)
		}
		return
	}
	if status < 200 && status != http.StatusSwitchingProtocols {
		rw.w.WriteHeader(status)
		return
	}
	rw.decided = true
	rw.x.status, rw.x.resHeaders = status, headerMap{h: rw.w.Header()}
	if rw.p.run(rw.p.response, rw.x, rw.w) {
		rw.replaced = true
		return
	}
	rw.w.WriteHeader(status)
}

// Write writes body bytes of the answer, or drops them when an action
// answered instead.
func (rw *responseWriter) Write(b []byte) (int, error) {
	if !rw.decided {
		rw.WriteHeader(http.StatusOK)
	}
	if rw.replaced {
		return len(b), nil
	}
	return rw.w.Write(b)
}

// Flush writes the status, if not yet, and flushes what was written.
func (rw *responseWriter) Flush() {
	if !rw.decided {
		rw.WriteHeader(http.StatusOK)
	}
	if f, ok := rw.w.(http.Flusher); ok && !rw.replaced {
		f.Flush()
	}
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (rw *responseWriter) Unwrap() http.ResponseWriter { return rw.w }

// finish runs the rules of on_http_response on an answer the handler
// left empty: net/http would send 200 with no body.
func (rw *responseWriter) finish() {
	if !rw.decided {
		rw.WriteHeader(http.StatusOK)
	}
}
