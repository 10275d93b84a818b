package trafficpolicy

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Action types a document may use.
const (
	// ActionRateLimit admits at most capacity requests of a bucket within
	// rate, and answers the others 429 with Retry-After.
	ActionRateLimit = "rate-limit"
	// ActionCustomResponse answers with its status_code (200 to 599),
	// headers and body.
	ActionCustomResponse = "custom-response"
	// ActionDeny answers with its status_code, 403 by default.
	ActionDeny = "deny"
	// ActionLog writes its metadata to the policy's logger.
	ActionLog = "log"
)

// actionKind is what Parse knows of an action type: the phases it runs in
// and how to build one from its config.
type actionKind struct {
	phases []phase
	build  func(c *checker, cfg node, ph phase) action
}

// actionKinds are the action types, by name.
var actionKinds = map[string]actionKind{
	ActionRateLimit:        {phases: []phase{phaseRequest, phaseResponse}, build: buildRateLimit},
	ActionCustomResponse:   {phases: []phase{phaseRequest, phaseResponse}, build: buildCustomResponse},
	ActionDeny:             {phases: []phase{phaseRequest, phaseResponse, phaseConnect}, build: buildDeny},
	ActionLog:              {phases: []phase{phaseRequest, phaseResponse, phaseConnect}, build: buildLog},
	ActionRestrictIPs:      {phases: []phase{phaseRequest, phaseConnect}, build: buildRestrictIPs},
	ActionBasicAuth:        {phases: []phase{phaseRequest}, build: buildBasicAuth},
	ActionCompressResponse: {phases: []phase{phaseRequest}, build: buildCompressResponse},
	ActionOpenIDConnect:    {phases: []phase{phaseRequest}, build: buildOpenIDConnect},
}

// actionNames returns the action types, sorted, for messages.
func actionNames() []string {
	names := make([]string, 0, len(actionKinds))
	for name := range actionKinds {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// startAnswer readies w for an answer of an action. In on_http_response
// the answer replaces the handler's: the headers that describe its body
// go (Content-*, ETag, Last-Modified, Transfer-Encoding), the others stay,
// such as rate-limit's Retry-After under a custom-response.
func startAnswer(x *exchange, w http.ResponseWriter) http.Header {
	h := w.Header()
	if x.status != 0 {
		for name := range h {
			if strings.HasPrefix(name, "Content-") || name == "Etag" || name == "Last-Modified" || name == "Transfer-Encoding" {
				delete(h, name)
			}
		}
	}
	return h
}

// writeAnswer writes the answer of an action on w, its headers set: its
// Content-Length (length, that of body), its status, and its body but to
// a HEAD.
func writeAnswer(x *exchange, w http.ResponseWriter, status int, length, body string) {
	w.Header().Set("Content-Length", length)
	w.WriteHeader(status)
	if body != "" && x.req.Method != http.MethodHead {
		_, _ = io.WriteString(w, body)
	}
}

// customResponse answers with a status, headers and a body.
type customResponse struct {
	status  int
	headers [][2]string // canonical name, value
	body    string
	length  string // of body, for Content-Length
}

func buildCustomResponse(c *checker, cfg node, _ phase) action {
	fields := c.mapping(cfg, "status_code", "headers", "body")
	a := &customResponse{status: http.StatusOK}
	if n, ok := fields["status_code"]; ok {
		// Not 1xx: net/http sends 100 as an interim answer and then 200
		// with the body, and 101 switches to no protocol.
		a.status = c.intIn(n, 200, 599, "the HTTP status code of a final answer")
	} else {
		c.missing(cfg, "status_code", "an HTTP status code from 200 to 599, such as 429")
	}
	if n, ok := fields["headers"]; ok {
		for _, f := range c.stringMap(n) {
			if !validHeaderName(f.key) {
				c.report(f.value, "not a header name: use letters, digits and !#$%&'*+-.^_`|~")
				continue
			}
			a.headers = append(a.headers, [2]string{http.CanonicalHeaderKey(f.key), f.value.str()})
		}
	}
	if n, ok := fields["body"]; ok {
		a.body = c.string(n)
	}
	a.length = strconv.Itoa(len(a.body))
	return a
}

func (a *customResponse) run(x *exchange, w http.ResponseWriter, _ *rule) bool {
	h := startAnswer(x, w)
	for _, kv := range a.headers {
		h.Set(kv[0], kv[1])
	}
	if h.Get("Content-Type") == "" && a.body != "" {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	writeAnswer(x, w, a.status, a.length, a.body)
	return true
}

// deny answers with a status and its text.
type deny struct {
	p      *Policy
	status int
	body   string
	length string // of body, for Content-Length
}

func buildDeny(c *checker, cfg node, _ phase) action {
	fields := c.mapping(cfg, "status_code")
	a := &deny{p: c.policy, status: http.StatusForbidden}
	if n, ok := fields["status_code"]; ok {
		a.status = c.intIn(n, 400, 599, "an HTTP error status")
	}
	a.body = strconv.Itoa(a.status) + " " + http.StatusText(a.status) + "\n"
	a.length = strconv.Itoa(len(a.body))
	return a
}

func (a *deny) run(x *exchange, w http.ResponseWriter, r *rule) bool {
	h := startAnswer(x, w)
	if a.p.answer != nil {
		writeOwnAnswer(x, w, a.p, Answer{Status: a.status, Action: ActionDeny, Rule: r.name})
		return true
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	writeAnswer(x, w, a.status, a.length, a.body)
	return true
}

// writeOwnAnswer writes an answer of the policy's own in the shape of
// WithAnswers, its headers but Content-Type and Content-Length set.
func writeOwnAnswer(x *exchange, w http.ResponseWriter, p *Policy, a Answer) {
	contentType, body := p.answer(x.req, a)
	w.Header().Set("Content-Type", contentType)
	writeAnswer(x, w, a.Status, strconv.Itoa(len(body)), string(body))
}

// logAction writes a line to the policy's log with its metadata, the rule,
// the phase, and the request's method, path and client address.
type logAction struct {
	p        *Policy
	metadata slog.Attr
	// metadataJSON is the metadata as a JSON object, for WithLogs.
	metadataJSON json.RawMessage
}

func buildLog(c *checker, cfg node, _ phase) action {
	fields := c.mapping(cfg, "metadata")
	a := &logAction{p: c.policy}
	var attrs []any
	if n, ok := fields["metadata"]; ok {
		for _, f := range c.entries(n) {
			var v any
			if err := f.value.n.Decode(&v); err != nil {
				c.report(f.value, "cannot be read: "+err.Error())
				continue
			}
			attrs = append(attrs, slog.Any(f.key, v))
		}
	}
	a.metadata = slog.Group("metadata", attrs...)
	object := map[string]any{}
	for _, attr := range attrs {
		if at, ok := attr.(slog.Attr); ok {
			object[at.Key] = at.Value.Any()
		}
	}
	a.metadataJSON, _ = json.Marshal(object)
	return a
}

// maxLoggedPath is how much of a request's path a log line holds: the
// client chooses the path, up to the server's header limit (1 MiB by
// default), and must not choose how long sluice's log lines are.
const maxLoggedPath = 1024

// loggedPath returns path cut to maxLoggedPath bytes of valid UTF-8 and
// "...", or path if it is no longer.
func loggedPath(path string) string {
	if len(path) <= maxLoggedPath {
		return path
	}
	return strings.ToValidUTF8(path[:maxLoggedPath], "") + "..."
}

func (a *logAction) run(x *exchange, _ http.ResponseWriter, r *rule) bool {
	attrs := []slog.Attr{
		slog.String("phase", r.phase.String()),
		slog.String("rule", r.name),
		slog.String("method", x.req.Method),
		slog.String("path", loggedPath(x.req.URL.Path)),
		slog.String("client_ip", clientIP(x.req)),
	}
	if x.status != 0 {
		attrs = append(attrs, slog.Int("status_code", x.status))
	}
	attrs = append(attrs, a.metadata)
	a.p.logAttrs(x.req.Context(), attrs...)
	if a.p.logs != nil {
		a.p.logs(x.req, LogEntry{Phase: r.phase.String(), Rule: r.name, Metadata: a.metadataJSON})
	}
	return false
}
