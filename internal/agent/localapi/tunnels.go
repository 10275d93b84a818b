package localapi

import (
	"net/http"
	"net/url"
)

// tunnelJSON is a tunnel as /api/tunnels shows it.
type tunnelJSON struct {
	Name string `json:"name"`
	ID   string `json:"ID,omitempty"`
	URI  string `json:"uri"`
	// PublicURL is "" for a labeled tunnel: the routes that reach it
	// have their URLs, it has none of its own.
	PublicURL string `json:"public_url"`
	// Proto is "http", "tcp", or "labeled".
	Proto string `json:"proto"`
	// Labels are a labeled tunnel's, name to value.
	Labels  map[string]string `json:"labels,omitempty"`
	Config  tunnelConfigJSON  `json:"config"`
	Metrics MeterSnapshot     `json:"metrics"`
}

type tunnelConfigJSON struct {
	Addr    string `json:"addr"`
	Inspect bool   `json:"inspect"`
}

type tunnelListJSON struct {
	Tunnels []tunnelJSON `json:"tunnels"`
	URI     string       `json:"uri"`
}

func newTunnelJSON(t Tunnel) tunnelJSON {
	return tunnelJSON{
		Name:      t.Name,
		ID:        t.ID,
		URI:       "/api/tunnels/" + url.PathEscape(t.Name),
		PublicURL: t.PublicURL,
		Proto:     t.Proto,
		Labels:    t.Config.Labels,
		Config:    tunnelConfigJSON{Addr: t.Config.Addr, Inspect: t.Config.Inspect},
		Metrics:   t.Meter.Snapshot(),
	}
}

// listTunnels answers GET /api/tunnels.
func (s *Server) listTunnels(w http.ResponseWriter, r *http.Request) {
	list := tunnelListJSON{Tunnels: []tunnelJSON{}, URI: "/api/tunnels"}
	for _, t := range s.backend.Tunnels() {
		list.Tunnels = append(list.Tunnels, newTunnelJSON(t))
	}
	writeJSON(w, http.StatusOK, list)
}

// startTunnel answers POST /api/tunnels: 201 and the tunnel started.
func (s *Server) startTunnel(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	if s.decodeTunnel == nil {
		writeError(w, http.StatusNotImplemented, CodeInternal, "starting tunnels is not supported",
			"this agent has no tunnel decoder")
		return
	}
	cfg, err := s.decodeTunnel(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeBadBody, "invalid tunnel configuration", err.Error())
		return
	}
	t, err := s.backend.StartTunnel(r.Context(), cfg)
	if err != nil {
		s.writeBackendError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, newTunnelJSON(t))
}

// getTunnel answers GET /api/tunnels/{name}.
func (s *Server) getTunnel(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	for _, t := range s.backend.Tunnels() {
		if t.Name == name {
			writeJSON(w, http.StatusOK, newTunnelJSON(t))
			return
		}
	}
	s.writeBackendError(w, r, ErrNoTunnel)
}

// stopTunnel answers DELETE /api/tunnels/{name}: 204.
func (s *Server) stopTunnel(w http.ResponseWriter, r *http.Request) {
	if err := s.backend.StopTunnel(r.Context(), r.PathValue("name")); err != nil {
		s.writeBackendError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// statusJSON is the agent's session as /api/status shows it.
type statusJSON struct {
	State        string  `json:"state"`
	AgentVersion string  `json:"agent_version"`
	Edge         string  `json:"edge"`
	LatencyMS    float64 `json:"latency_ms"`
	SessionID    string  `json:"session_id"`
	// ConnectedAt is RFC 3339, or null when there is no session.
	ConnectedAt *string `json:"connected_at"`
	LastError   string  `json:"last_error"`
}

// status answers GET /api/status.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	st := s.backend.Status()
	out := statusJSON{
		State:        st.State,
		AgentVersion: st.AgentVersion,
		Edge:         st.Edge,
		LatencyMS:    float64(st.Latency.Microseconds()) / 1000,
		SessionID:    st.SessionID,
		LastError:    st.LastError,
	}
	if out.AgentVersion == "" {
		out.AgentVersion = s.version
	}
	if !st.ConnectedAt.IsZero() {
		at := st.ConnectedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")
		out.ConnectedAt = &at
	}
	writeJSON(w, http.StatusOK, out)
}
