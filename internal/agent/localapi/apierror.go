package localapi

import (
	"errors"
	"net/http"
)

// Error codes of the local API's answers (error_code): docs/agent-local-api.md
// lists them.
const (
	CodeBadBody          = 100 // the request's body is not what the route takes
	CodeBadQuery         = 101 // a query parameter is not valid
	CodeTunnelNotFound   = 102 // no tunnel of that name is running
	CodeRequestNotFound  = 103 // no capture of that id is held
	CodeTunnelExists     = 104 // a tunnel of that name is already running
	CodeEdgeRefused      = 105 // the edge refused the tunnel
	CodeNotReady         = 106 // the agent has no session with the edge yet
	CodeNotFound         = 107 // no such path
	CodeMethodNotAllowed = 108 // the path takes other methods
	CodeHostNotAllowed   = 109 // the Host is neither loopback nor allowed
	CodeCrossOrigin      = 110 // a cross-origin browser request that changes state
	CodeNotReplayable    = 111 // the capture's body was truncated
	CodeInternal         = 112 // the agent failed otherwise
)

// apiError is an answer of the local API that reports an error, in the
// shape the ngrok agent's clients read.
type apiError struct {
	ErrorCode  int          `json:"error_code"`
	StatusCode int          `json:"status_code"`
	Msg        string       `json:"msg"`
	Details    errorDetails `json:"details"`
}

type errorDetails struct {
	Err string `json:"err"`
}

// writeError writes the answer of an error.
func writeError(w http.ResponseWriter, status, code int, msg, detail string) {
	writeJSON(w, status, apiError{
		ErrorCode:  code,
		StatusCode: status,
		Msg:        msg,
		Details:    errorDetails{Err: detail},
	})
}

// writeBackendError writes the answer of an error a Backend returned.
func (s *Server) writeBackendError(w http.ResponseWriter, r *http.Request, err error) {
	var edge *EdgeError
	switch {
	case errors.Is(err, ErrNotReady):
		// ngrok's clients retry on exactly this answer.
		writeError(w, http.StatusBadGateway, CodeNotReady, ErrNotReady.Error(), ErrNotReady.Error())
	case errors.Is(err, ErrNoTunnel):
		writeError(w, http.StatusNotFound, CodeTunnelNotFound, "tunnel not found", err.Error())
	case errors.Is(err, ErrTunnelExists):
		writeError(w, http.StatusConflict, CodeTunnelExists, "tunnel already exists", err.Error())
	case errors.As(err, &edge):
		writeError(w, http.StatusBadRequest, CodeEdgeRefused, edge.Msg, edge.Msg)
	default:
		s.log.ErrorContext(r.Context(), "local API", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, CodeInternal, "internal error", err.Error())
	}
}
