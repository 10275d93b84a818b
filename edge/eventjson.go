package edge

import (
	"crypto/tls"
	"net/http"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/edge/circuitbreaker"
	"github.com/sluicehq/sluice/internal/jsonstring"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/trafficpolicy"
)

// The edge writes the object of its busiest event, http_request_complete.v0,
// straight into a buffer: built as nested maps and encoded by reflection,
// it cost more CPU than proxying the request (bench tunnel's profile).
// The catalogue still validates what is written (Edge.publishObject).

// requestObject is what an http_request_complete.v0 reports of one
// exchange.
type requestObject struct {
	reused                                        bool
	clientIP, serverIP, serverName                string
	serverPort                                    int
	connStart                                     time.Time
	method, host, path, query, scheme, raw, agent string
	reqBytes, respBytes                           int64
	reqHeaders, respHeaders                       http.Header
	status                                        int
	tls                                           *tls.ConnectionState
	policy                                        *policyRecord // nil: no policy ran
	breaker                                       circuitbreaker.Decision
}

// appendRequestObject appends o as the JSON object of an
// http_request_complete.v0.
func appendRequestObject(b []byte, o *requestObject) []byte {
	b = append(b, `{"backend":{"connection_reused":`...)
	b = strconv.AppendBool(b, o.reused)
	b = append(b, `},"basic_auth":{"decision":`...)
	if o.policy != nil && o.policy.basicAuth != "" {
		b = jsonstring.Append(b, o.policy.basicAuth)
		b = append(b, `,"username":`...)
		b = jsonstring.Append(b, o.policy.username)
	} else {
		b = append(b, `"invalid"`...)
	}
	b = append(b, `},"circuit_breaker":{"decision":"`...)
	b = append(b, o.breaker.String()...)
	b = append(b, `"},"compression":{"algorithm":`...)
	if o.policy != nil && o.policy.compression != "" {
		b = jsonstring.Append(b, o.policy.compression)
		b = append(b, `,"bytes_saved":`...)
		b = strconv.AppendInt(b, o.policy.saved, 10)
	} else {
		b = append(b, `"none"`...)
	}
	b = append(b, `},"conn":{"client_ip":`...)
	b = jsonstring.Append(b, o.clientIP)
	if o.serverIP != "" {
		b = append(b, `,"server_ip":`...)
		b = jsonstring.Append(b, o.serverIP)
	}
	b = append(b, `,"server_name":`...)
	b = jsonstring.Append(b, o.serverName)
	b = append(b, `,"server_port":`...)
	b = strconv.AppendInt(b, int64(o.serverPort), 10)
	b = append(b, `,"start_ts":"`...)
	b = o.connStart.UTC().AppendFormat(b, schemas.TimeLayout)
	b = append(b, `"},"http":{"request":{"body_length":`...)
	b = strconv.AppendInt(b, o.reqBytes, 10)
	b = append(b, `,"headers":`...)
	b = appendHeaders(b, o.reqHeaders)
	b = append(b, `,"method":`...)
	b = appendLowerString(b, o.method)
	b = append(b, `,"url":{"host":`...)
	b = jsonstring.Append(b, o.host)
	b = append(b, `,"path":`...)
	b = jsonstring.Append(b, o.path)
	b = append(b, `,"query":`...)
	b = jsonstring.Append(b, o.query)
	b = append(b, `,"raw":`...)
	b = jsonstring.Append(b, o.raw)
	b = append(b, `,"scheme":`...)
	b = jsonstring.Append(b, o.scheme)
	b = append(b, `},"user_agent":`...)
	b = jsonstring.Append(b, o.agent)
	b = append(b, `},"response":{"body_length":`...)
	b = strconv.AppendInt(b, o.respBytes, 10)
	b = append(b, `,"headers":`...)
	b = appendHeaders(b, o.respHeaders)
	b = append(b, `,"status_code":`...)
	b = strconv.AppendInt(b, int64(o.status), 10)
	b = append(b, `}},"ip_policy":{"decision":`...)
	if o.policy != nil && o.policy.ipPolicy != "" {
		b = jsonstring.Append(b, o.policy.ipPolicy)
	} else {
		b = append(b, `"invalid"`...)
	}
	b = append(b, `},"oauth":`...)
	b = appendOAuth(b, o.policy)
	if o.tls != nil {
		b = append(b, `,"tls":{"cipher_suite":`...)
		b = jsonstring.Append(b, tls.CipherSuiteName(o.tls.CipherSuite))
		b = append(b, `,"version":`...)
		b = jsonstring.Append(b, tlsVersion(o.tls.Version))
		b = append(b, '}')
	}
	b = append(b, `,"traffic_policy":{"logs":[`...)
	var logs []trafficpolicy.LogEntry
	if o.policy != nil {
		logs = o.policy.logs
	}
	for i, l := range logs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"metadata":`...)
		b = append(b, l.Metadata...)
		b = append(b, `,"phase":`...)
		b = jsonstring.Append(b, l.Phase)
		b = append(b, `,"rule":`...)
		b = jsonstring.Append(b, l.Rule)
		b = append(b, '}')
	}
	return append(b, `]},"webhook_verification":{"decision":"invalid"}}`...)
}

// appendHeaders appends headers as the events carry them: names in
// canonical form, values lower case. Go's server and client give names
// canonical already; a name that is not is canonicalized.
func appendHeaders(b []byte, h http.Header) []byte {
	for name := range h {
		if http.CanonicalHeaderKey(name) != name {
			// Two names may become one: merged, as the events have it.
			h = normalizeHeaders(h)
			break
		}
	}
	b = append(b, '{')
	first := true
	for name, values := range h {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = jsonstring.Append(b, http.CanonicalHeaderKey(name))
		b = append(b, ':', '[')
		for i, v := range values {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendLowerString(b, v)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendLowerString appends s as a JSON string with A to Z lower case;
// other letters are left as they are. It lowers the bytes it appended in
// place: the escapes of jsonstring.Append are of lower-case letters
// and digits only, so only the string's own letters change.
func appendLowerString(b []byte, s string) []byte {
	start := len(b)
	b = jsonstring.Append(b, s)
	for i := start; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

// appendOAuth appends the oauth object of a request's event: the decision
// of its openid-connect, with the user and client when one ran.
func appendOAuth(b []byte, policy *policyRecord) []byte {
	if policy == nil || policy.oauth == "" {
		return append(b, `{"decision":"invalid"}`...)
	}
	b = append(b, `{"app_client_id":`...)
	b = jsonstring.Append(b, policy.oauthClientID)
	b = append(b, `,"decision":`...)
	b = jsonstring.Append(b, policy.oauth)
	b = append(b, `,"user":{"id":`...)
	b = jsonstring.Append(b, policy.oauthUserID)
	b = append(b, `,"name":`...)
	b = jsonstring.Append(b, policy.oauthUserName)
	return append(b, `}}`...)
}
