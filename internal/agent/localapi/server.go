package localapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/internal/agent/agentconfig"
)

// maxBodyBytes bounds the body of a request to the local API.
const maxBodyBytes = 1 << 20

// Config configures a Server.
type Config struct {
	// Backend is the running agent (required).
	Backend Backend
	// Captures are the captured requests, the ones the forwarding's
	// Capturing adds to (an empty store of the default bound when nil).
	Captures *Captures
	// DecodeTunnel decodes the body of POST /api/tunnels
	// (agentconfig.DecodeTunnelJSON); its error is the answer's
	// details.err. When nil, POST /api/tunnels answers 501.
	DecodeTunnel func([]byte) (agentconfig.Tunnel, error)
	// AllowHosts are the host names, besides loopback names and
	// addresses, a request's Host may have (web_allow_hosts): the
	// public domain of a tunnel that exposes the local API, for one.
	// They match exactly, case aside; a port is ignored.
	AllowHosts []string
	// Version is the agent's version, shown by /api/status when the
	// Backend's Status has none.
	Version string
	// Logger logs what fails (slog.Default() when nil).
	Logger *slog.Logger
}

// Server is the local API and the inspector.
type Server struct {
	backend      Backend
	captures     *Captures
	decodeTunnel func([]byte) (agentconfig.Tunnel, error)
	allowHosts   map[string]bool
	version      string
	log          *slog.Logger
}

// New returns the Server of cfg.
func New(cfg Config) *Server {
	s := &Server{
		backend:      cfg.Backend,
		captures:     cfg.Captures,
		decodeTunnel: cfg.DecodeTunnel,
		allowHosts:   make(map[string]bool),
		version:      cfg.Version,
		log:          cfg.Logger,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.captures == nil {
		s.captures = NewCaptures(CapturesConfig{})
	}
	for _, h := range cfg.AllowHosts {
		s.allowHosts[strings.ToLower(hostOnly(h))] = true
	}
	return s
}

// Handler returns the local API's handler: the routes of
// docs/agent-local-api.md behind the Host check and the cross-origin
// check.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.inspectorPage)
	mux.HandleFunc("GET /inspect/http", s.inspectorPage)
	mux.HandleFunc("GET /static/{file}", s.inspectorAsset)
	mux.HandleFunc("GET /api/tunnels", s.listTunnels)
	mux.HandleFunc("POST /api/tunnels", s.startTunnel)
	mux.HandleFunc("GET /api/tunnels/{name}", s.getTunnel)
	mux.HandleFunc("DELETE /api/tunnels/{name}", s.stopTunnel)
	mux.HandleFunc("GET /api/requests/http", s.listRequests)
	mux.HandleFunc("POST /api/requests/http", s.replayRequest)
	mux.HandleFunc("DELETE /api/requests/http", s.clearRequests)
	mux.HandleFunc("GET /api/requests/http/stream", s.streamRequests)
	mux.HandleFunc("GET /api/requests/http/{id}", s.getRequest)
	mux.HandleFunc("GET /api/status", s.status)

	origins := http.NewCrossOriginProtection()
	origins.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusForbidden, CodeCrossOrigin, "cross-origin request refused",
			"a browser request from another origin may not change the agent's state")
	}))
	return s.checkHost(origins.Handler(jsonMisses(mux)))
}

// checkHost refuses requests whose Host is neither a loopback name or
// address nor one of the allowed hosts: a page whose name an attacker
// rebinds to 127.0.0.1 sends its own name as Host.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			writeError(w, http.StatusForbidden, CodeHostNotAllowed, "host not allowed",
				fmt.Sprintf("the Host %q is neither a loopback name or address nor one of web_allow_hosts", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) hostAllowed(hostport string) bool {
	host := strings.ToLower(hostOnly(hostport))
	if host == "" {
		return false
	}
	if host == "localhost" || s.allowHosts[host] {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// jsonMisses answers the requests no route of mux takes in JSON: 404
// for an unknown path, 405 (with Allow) for a method the path does not
// take.
func jsonMisses(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		probe := &statusProbe{header: make(http.Header)}
		h.ServeHTTP(probe, r)
		switch probe.status {
		case http.StatusNotFound:
			writeError(w, http.StatusNotFound, CodeNotFound, "not found", "no route for "+r.URL.Path)
		case http.StatusMethodNotAllowed:
			allow := probe.header.Get("Allow")
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, CodeMethodNotAllowed, "method not allowed",
				fmt.Sprintf("%s takes %s, not %s", r.URL.Path, allow, r.Method))
		default:
			// A redirect to the cleaned path, say.
			h.ServeHTTP(w, r)
		}
	})
}

// statusProbe is a ResponseWriter that keeps only the status and headers
// of the mux's answer to a request no route takes.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header { return p.header }

func (p *statusProbe) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}

func (p *statusProbe) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return len(b), nil
}

// hostOnly returns the host of host[:port], without the brackets of an
// IPv6 address.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// writeJSON writes v as the answer's JSON body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error_code":112,"status_code":500,"msg":"internal error","details":{"err":"encoding the answer"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// readBody reads the request's body, at most maxBodyBytes of it; when it
// cannot, it answers and returns false.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeBadBody, "invalid request body",
			fmt.Sprintf("reading the body: %v", err))
		return nil, false
	}
	return body, true
}

// decodeJSON decodes body into v; when it cannot, it answers, saying
// what is wrong, and returns false.
func decodeJSON(w http.ResponseWriter, body []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = fmt.Errorf("data after the JSON value")
	}
	if err == io.EOF {
		err = fmt.Errorf("the body is empty, a JSON object was expected")
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeBadBody, "invalid request body",
			fmt.Sprintf("decoding the JSON body: %v", err))
		return false
	}
	return true
}
