package edge

import (
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// moduleNotRun is the decision of a module that did not run.
const moduleNotRun = "invalid"

// publish encodes an event of the account and hands it to the publisher.
// An event the catalogue refuses (a bug of the edge's) is counted and
// logged, and the traffic goes on.
func (e *Edge) publish(account, kind string, at time.Time, principal json.RawMessage, object map[string]any) {
	obj, err := json.Marshal(object)
	if err != nil {
		e.Metrics.eventsInvalid.Add(1)
		e.cfg.Log.Error("encoding an edge event", "kind", kind, "error", err)
		return
	}
	e.publishObject(account, kind, at, principal, obj)
}

// publishObject validates an event whose object is obj, JSON, and hands
// it to the publisher; obj is not kept.
func (e *Edge) publishObject(account, kind string, at time.Time, principal json.RawMessage, obj []byte) {
	ev := schemas.Event{Type: kind, Timestamp: at, AccountID: account, Principal: principal, Object: obj}
	encode := e.catalog.Encode
	if k, ok := e.catalog.Kind(kind); ok && k.EmittedBySluice {
		// The agent session kinds are the edge's own: no one else may
		// publish them.
		encode = e.catalog.EncodeBySluice
	}
	enc, err := encode(ev)
	if err != nil {
		e.Metrics.eventsInvalid.Add(1)
		e.cfg.Log.Error("an edge event the catalogue refuses", "kind", kind, "error", err)
		return
	}
	e.cfg.Events.Publish(enc)
}

// publishSession reports an agent session's start (errText "" when it
// started, why not when it was refused) or stop (errText why).
func (e *Edge) publishSession(kind string, record store.TunnelSession, cred store.Credential, ingressHost, errText string, at time.Time) {
	obj := map[string]any{
		"agent_ip":         record.IP,
		"arch":             record.Arch,
		"credential":       map[string]any{"id": cred.ID, "uri": "/credentials/" + cred.ID},
		"error":            errText,
		"ingress_hostname": clip(ingressHost, schemas.MaxHostnameBytes),
		"metadata":         record.Metadata,
		"os":               record.OS,
		"region":           record.Region,
		"transport":        record.Transport,
		"user_agent":       record.UserAgent,
	}
	if record.ID != "" {
		obj["session"] = map[string]any{"id": record.ID, "uri": "/tunnel_sessions/" + record.ID}
	}
	if !record.StartedAt.IsZero() {
		obj["started_at"] = record.StartedAt.UTC().Format(schemas.TimeLayout)
	}
	if kind == "agent_session_stop.v0" {
		obj["stopped_at"] = at.UTC().Format(schemas.TimeLayout)
	}
	principal, _ := json.Marshal(schemas.Principal{
		ID: cred.ID, Subject: cred.OwnerID, Source: "agent",
		Credential: schemas.Ref{ID: cred.ID, URI: "/credentials/" + cred.ID},
	})
	e.publish(cred.AccountID, kind, at, principal, obj)
}

// publish reports the exchange as an http_request_complete.v0 event,
// its object written straight into a reused buffer (eventjson.go).
func (x *exchange) publish(w http.ResponseWriter) {
	e := x.edge
	r := x.req
	if x.status == 0 {
		x.status = http.StatusBadGateway
	}
	e.Metrics.requests.With(statusClass(x.status)).Add(1)
	e.Metrics.proxyLatency.observe(e.now().Sub(x.start) - x.held)
	o := requestObject{
		reused: x.reused, clientIP: hostOf(addrString(r.RemoteAddr)), serverName: x.serverName,
		serverPort: e.publicPort(x.scheme), connStart: x.connStart,
		method: r.Method, host: r.Host, path: r.URL.Path, query: r.URL.RawQuery, scheme: x.scheme, agent: r.UserAgent(),
		reqBytes: x.reqBytes, respBytes: x.respBytes, reqHeaders: withoutLoginCookies(r.Header), respHeaders: x.responseHeaders(w),
		status: x.status, tls: r.TLS, policy: x.policy, breaker: x.breaker,
	}
	if x.local != nil {
		if ap, err := netip.ParseAddrPort(x.local.String()); err == nil {
			o.serverIP, o.serverPort = ap.Addr().Unmap().String(), int(ap.Port())
		}
	}
	if o.path == "" {
		o.path = "/"
	}
	o.raw = x.scheme + "://" + r.Host + r.URL.RequestURI()
	bp := e.objects.Get().(*[]byte)
	*bp = appendRequestObject((*bp)[:0], &o)
	e.publishObject(x.account, "http_request_complete.v0", e.now(), nil, *bp)
	e.objects.Put(bp)
}

// responseHeaders are the headers the client got: the agent's, or the
// edge's own answer's.
func (x *exchange) responseHeaders(w http.ResponseWriter) http.Header {
	if x.respHeaders != nil {
		return x.respHeaders
	}
	return w.Header()
}

// publishTCP reports a closed TCP connection.
func (e *Edge) publishTCP(ep *endpoint, c net.Conn, start, end time.Time, in, out int64, policy *policyRecord) {
	conn := map[string]any{
		"bytes_in":    in,
		"bytes_out":   out,
		"client_ip":   hostOf(c.RemoteAddr()),
		"server_name": ep.host,
		"server_port": ep.port,
		"start_ts":    start.UTC().Format(schemas.TimeLayout),
		"end_ts":      end.UTC().Format(schemas.TimeLayout),
	}
	if ip := hostOf(c.LocalAddr()); net.ParseIP(ip) != nil {
		conn["server_ip"] = ip
	}
	decision, logs := moduleNotRun, []any{}
	if policy != nil {
		if policy.ipPolicy != "" {
			decision = policy.ipPolicy
		}
		for _, l := range policy.logs {
			logs = append(logs, map[string]any{"metadata": l.Metadata, "phase": l.Phase, "rule": l.Rule})
		}
	}
	e.publish(ep.record.AccountID, "tcp_connection_closed.v0", end, nil, map[string]any{
		"conn":           conn,
		"ip_policy":      map[string]any{"decision": decision},
		"traffic_policy": map[string]any{"logs": logs},
	})
}

// normalizeHeaders returns headers as the events carry them: names in
// canonical form (Content-Type), values lower case.
func normalizeHeaders(h http.Header) map[string][]string {
	out := make(map[string][]string, len(h))
	for name, values := range h {
		lowered := make([]string, len(values))
		for i, v := range values {
			lowered[i] = strings.ToLower(v)
		}
		key := http.CanonicalHeaderKey(name)
		out[key] = append(out[key], lowered...)
	}
	return out
}

// tlsVersion names a TLS version as the events do: "TLSv1.3".
func tlsVersion(v uint16) string {
	return strings.Replace(tls.VersionName(v), "TLS ", "TLSv", 1)
}

// statusClass is "2xx" and the like.
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status/100) + "xx"
}
