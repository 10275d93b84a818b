package ingest

import (
	"net/http"
	"strconv"
)

// countRequests counts every response of next in sluice_ingest_requests_total
// by its status code: those of the middleware (version, key) as well as
// those of the handler. A panic counts as the 500 the api.Server answers,
// unless a status had been sent already.
func (h *Handler) countRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		returned := false
		defer func() {
			status := rec.status
			switch {
			case status == 0 && !returned:
				status = http.StatusInternalServerError
			case status == 0:
				// A handler that writes nothing sends 200.
				status = http.StatusOK
			}
			h.metrics.requests.WithLabelValues(strconv.Itoa(status)).Inc()
		}()
		next.ServeHTTP(rec, r)
		returned = true
	})
}

// statusRecorder is a ResponseWriter that remembers the status it sent.
type statusRecorder struct {
	http.ResponseWriter
	status int // 0 until the status is sent
}

// WriteHeader sends the status and remembers it.
func (rec *statusRecorder) WriteHeader(code int) {
	if rec.status == 0 && code >= 200 {
		rec.status = code
	}
	rec.ResponseWriter.WriteHeader(code)
}

// Write sends b, after a 200 status if none was sent.
func (rec *statusRecorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.ResponseWriter.Write(b)
}

// Unwrap returns the wrapped ResponseWriter, for http.ResponseController.
func (rec *statusRecorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }
