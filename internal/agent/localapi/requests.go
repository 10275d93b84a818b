package localapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Bounds of GET /api/requests/http's limit.
const (
	defaultListLimit = 50
	maxListLimit     = 1000
)

// keepAliveInterval is how often the stream of captures sends a comment
// when there is nothing new, so that proxies keep it open.
const keepAliveInterval = 20 * time.Second

type requestListJSON struct {
	Requests []*Capture `json:"requests"`
	URI      string     `json:"uri"`
}

// listRequests answers GET /api/requests/http?limit=&tunnel_name=.
func (s *Server) listRequests(w http.ResponseWriter, r *http.Request) {
	limit := defaultListLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, CodeBadQuery, "invalid limit",
				fmt.Sprintf("limit %q is not a whole number of at least 1", v))
			return
		}
		limit = min(n, maxListLimit)
	}
	list := requestListJSON{
		Requests: s.captures.List(limit, r.URL.Query().Get("tunnel_name")),
		URI:      "/api/requests/http",
	}
	writeJSON(w, http.StatusOK, list)
}

// getRequest answers GET /api/requests/http/{id}.
func (s *Server) getRequest(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c := s.captures.Get(id)
	if c == nil {
		writeError(w, http.StatusNotFound, CodeRequestNotFound, "request not found",
			fmt.Sprintf("no captured request has the id %q", id))
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// replayBody is the body of POST /api/requests/http: ngrok's clients
// send tunnel_name or tunnelName.
type replayBody struct {
	ID             string `json:"id"`
	TunnelName     string `json:"tunnel_name"`
	TunnelNameNode string `json:"tunnelName"`
}

// replayRequest answers POST /api/requests/http: it replays a capture
// through its tunnel, or the one the body names, and answers 204.
func (s *Server) replayRequest(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var in replayBody
	if !decodeJSON(w, body, &in) {
		return
	}
	if in.ID == "" {
		writeError(w, http.StatusBadRequest, CodeBadBody, "invalid request body", `"id" is missing`)
		return
	}
	c := s.captures.Get(in.ID)
	if c == nil {
		writeError(w, http.StatusNotFound, CodeRequestNotFound, "request not found",
			fmt.Sprintf("no captured request has the id %q", in.ID))
		return
	}
	tunnel := c.TunnelName
	if in.TunnelName != "" {
		tunnel = in.TunnelName
	} else if in.TunnelNameNode != "" {
		tunnel = in.TunnelNameNode
	}
	req, err := replayedRequest(c)
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeNotReplayable, "request cannot be replayed", err.Error())
		return
	}
	if err := s.backend.Replay(r.Context(), tunnel, req.WithContext(r.Context())); err != nil {
		s.writeBackendError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// replayedRequest rebuilds the request of c from its raw bytes.
func replayedRequest(c *Capture) (*http.Request, error) {
	if c.Request.Truncated {
		return nil, fmt.Errorf("the capture of %s holds only part of its body", c.ID)
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(c.Request.Raw)))
	if err != nil {
		return nil, fmt.Errorf("parsing the capture of %s: %w", c.ID, err)
	}
	req.RemoteAddr = c.RemoteAddr
	return req, nil
}

// clearRequests answers DELETE /api/requests/http: 204.
func (s *Server) clearRequests(w http.ResponseWriter, r *http.Request) {
	s.captures.Clear()
	w.WriteHeader(http.StatusNoContent)
}

// streamRequests answers GET /api/requests/http/stream with server-sent
// events until the request ends: "capture" with each new capture (no raw
// bytes), "clear" when the captures are cleared, and "resync" when
// events were dropped, to re-read the list.
func (s *Server) streamRequests(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	// The stream outlives any write timeout of the server.
	_ = rc.SetWriteDeadline(time.Time{})
	sub := s.captures.Subscribe()
	defer sub.Cancel()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, ": captures of sluice-agent\n\n"); err != nil {
		return
	}
	if err := rc.Flush(); err != nil {
		return
	}
	keepAlive := time.NewTicker(keepAliveInterval)
	defer keepAlive.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-keepAlive.C:
			_, err = fmt.Fprint(w, ": keep-alive\n\n")
		case ev := <-sub.C:
			err = writeEvent(w, ev)
			if err == nil && sub.Missed() {
				err = writeEvent(w, Event{Kind: "resync"})
			}
		}
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

// writeEvent writes ev as a server-sent event.
func writeEvent(w http.ResponseWriter, ev Event) error {
	data := []byte("{}")
	if ev.Capture != nil {
		var err error
		if data, err = json.Marshal(ev.Capture); err != nil {
			return fmt.Errorf("encoding the capture %s: %w", ev.Capture.ID, err)
		}
	}
	_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Kind, data)
	return err
}
