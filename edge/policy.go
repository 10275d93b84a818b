package edge

import (
	"bufio"
	"net"
	"net/http"

	"github.com/sluicehq/sluice/trafficpolicy"
)

// maxPolicyLogs bounds the log entries of one request's event: a policy
// of many log actions cannot make events of any size.
const maxPolicyLogs = 16

// policyRecordKey is the request context's key of its *policyRecord.
type policyRecordKey struct{}

// policyRecord collects what an endpoint's traffic policy did to one
// request, for its http_request_complete.v0: what its log actions
// logged, and the decisions of its access actions ("" where none ran).
type policyRecord struct {
	logs      []trafficpolicy.LogEntry
	ipPolicy  string
	basicAuth string
	username  string
	// compression is the algorithm of a compress-response ("" when none
	// ran), saved the bytes it saved.
	compression string
	saved       int64
	// oauth is the decision of an openid-connect ("" when none ran),
	// with the user it let through and its client.
	oauth, oauthUserID, oauthUserName, oauthClientID string
	// login is where the request's logins happen.
	login *loginTarget
}

// parseEndpointPolicy checks and loads the traffic policy of an endpoint
// of protocol proto ("http" or "tcp"): only the phases that run on it
// may have rules.
func (e *Edge) parseEndpointPolicy(doc, proto string) (*trafficpolicy.Policy, error) {
	policy, err := trafficpolicy.Parse([]byte(doc), e.policyOptions()...)
	if err != nil {
		return nil, refuseBind(codeBindPolicy, "the endpoint's traffic policy: %v", err)
	}
	req, resp := policy.Rules()
	switch {
	case proto == "tcp" && req+resp > 0:
		return nil, refuseBind(codeBindPolicy, "the policy of a TCP endpoint runs on_tcp_connect only: move or remove its on_http_request and on_http_response rules")
	case proto != "tcp" && policy.ConnectRules() > 0:
		return nil, refuseBind(codeBindPolicy, "the policy of an HTTP endpoint runs on_http_request and on_http_response: on_tcp_connect is for TCP endpoints")
	}
	return policy, nil
}

// policyOptions returns the options of every endpoint's policy: with
// the edge's logins when it keeps application sessions.
func (e *Edge) policyOptions() []trafficpolicy.Option {
	opts := []trafficpolicy.Option{trafficpolicy.WithLogs(collectPolicyLog), trafficpolicy.WithDecisions(collectPolicyDecision)}
	if e.logins != nil {
		opts = append(opts, trafficpolicy.WithOpenIDConnect(e.logins))
	}
	return opts
}

// collectPolicyLog is the policies' WithLogs: it keeps e in the request's
// record, up to maxPolicyLogs.
func collectPolicyLog(r *http.Request, e trafficpolicy.LogEntry) {
	if l, ok := r.Context().Value(policyRecordKey{}).(*policyRecord); ok && len(l.logs) < maxPolicyLogs {
		l.logs = append(l.logs, e)
	}
}

// collectPolicyDecision is the policies' WithDecisions: the last
// decision of each kind is the request's.
func collectPolicyDecision(r *http.Request, d trafficpolicy.Decision) {
	l, ok := r.Context().Value(policyRecordKey{}).(*policyRecord)
	if !ok {
		return
	}
	decision := "block"
	if d.Allowed {
		decision = "allow"
	}
	switch d.Module {
	case "ip_policy":
		l.ipPolicy = decision
	case "basic_auth":
		l.basicAuth, l.username = decision, d.Username
	case "compression":
		l.compression, l.saved = d.Algorithm, d.BytesSaved
	case "oauth":
		l.oauth, l.oauthUserID, l.oauthUserName, l.oauthClientID = decision, d.UserID, d.Username, d.ClientID
	}
}

// policyWriter is the public client's ResponseWriter while a traffic
// policy runs: it notes the status and bytes the client got, which may be
// the policy's own answer.
type policyWriter struct {
	http.ResponseWriter
	status  int
	written int64
}

func (w *policyWriter) WriteHeader(status int) {
	if w.status == 0 && (status >= 200 || status == http.StatusSwitchingProtocols) {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *policyWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

// Flush passes on a flush, for streamed answers.
func (w *policyWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Hijack passes on a hijack, for upgrades.
func (w *policyWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap returns the client's writer, for http.ResponseController.
func (w *policyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
