package edge

import (
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
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

// publish reports the exchange as an http_request_complete.v0 event.
func (x *exchange) publish(w http.ResponseWriter) {
	e := x.edge
	r := x.req
	if x.status == 0 {
		x.status = http.StatusBadGateway
	}
	e.Metrics.requests.With(statusClass(x.status)).Add(1)
	e.Metrics.proxyLatency.observe(e.now().Sub(x.start))
	serverPort := e.publicPort(x.scheme)
	serverIP := ""
	if x.local != nil {
		host, port, err := net.SplitHostPort(x.local.String())
		if err == nil {
			serverIP = host
			if p, err := strconv.Atoi(port); err == nil {
				serverPort = p
			}
		}
	}
	path := r.URL.Path
	if path == "" {
		path = "/"
	}
	raw := x.scheme + "://" + r.Host + r.URL.RequestURI()
	conn := map[string]any{
		"client_ip":   hostOf(addrString(r.RemoteAddr)),
		"server_name": x.ep.host,
		"server_port": serverPort,
		"start_ts":    x.connStart.UTC().Format(schemas.TimeLayout),
	}
	if net.ParseIP(serverIP) != nil {
		conn["server_ip"] = serverIP
	}
	obj := map[string]any{
		"backend":              map[string]any{"connection_reused": x.reused},
		"conn":                 conn,
		"basic_auth":           map[string]any{"decision": moduleNotRun},
		"circuit_breaker":      map[string]any{"decision": moduleNotRun},
		"compression":          map[string]any{"algorithm": "none"},
		"ip_policy":            map[string]any{"decision": moduleNotRun},
		"oauth":                map[string]any{"decision": moduleNotRun},
		"webhook_verification": map[string]any{"decision": moduleNotRun},
		"traffic_policy":       map[string]any{"logs": []any{}},
		"http": map[string]any{
			"request": map[string]any{
				"body_length": x.reqBytes,
				"headers":     normalizeHeaders(r.Header),
				"method":      strings.ToLower(r.Method),
				"url": map[string]any{
					"host": r.Host, "path": path, "query": r.URL.RawQuery, "scheme": x.scheme, "raw": raw,
				},
				"user_agent": r.UserAgent(),
			},
			"response": map[string]any{
				"body_length": x.respBytes,
				"headers":     normalizeHeaders(x.responseHeaders(w)),
				"status_code": x.status,
			},
		},
	}
	if r.TLS != nil {
		obj["tls"] = map[string]any{"version": tlsVersion(r.TLS.Version), "cipher_suite": tls.CipherSuiteName(r.TLS.CipherSuite)}
	}
	e.publish(x.ep.record.AccountID, "http_request_complete.v0", e.now(), nil, obj)
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
func (e *Edge) publishTCP(ep *endpoint, c net.Conn, start, end time.Time, in, out int64) {
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
	e.publish(ep.record.AccountID, "tcp_connection_closed.v0", end, nil, map[string]any{
		"conn":           conn,
		"ip_policy":      map[string]any{"decision": moduleNotRun},
		"traffic_policy": map[string]any{"logs": []any{}},
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
