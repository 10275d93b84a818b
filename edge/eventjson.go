package edge

import (
	"crypto/tls"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/sluicehq/sluice/schemas"
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
}

// appendRequestObject appends o as the JSON object of an
// http_request_complete.v0.
func appendRequestObject(b []byte, o *requestObject) []byte {
	b = append(b, `{"backend":{"connection_reused":`...)
	b = strconv.AppendBool(b, o.reused)
	b = append(b, `},"basic_auth":{"decision":"invalid"},"circuit_breaker":{"decision":"invalid"},"compression":{"algorithm":"none"},"conn":{"client_ip":`...)
	b = appendJSONString(b, o.clientIP)
	if o.serverIP != "" {
		b = append(b, `,"server_ip":`...)
		b = appendJSONString(b, o.serverIP)
	}
	b = append(b, `,"server_name":`...)
	b = appendJSONString(b, o.serverName)
	b = append(b, `,"server_port":`...)
	b = strconv.AppendInt(b, int64(o.serverPort), 10)
	b = append(b, `,"start_ts":"`...)
	b = o.connStart.UTC().AppendFormat(b, schemas.TimeLayout)
	b = append(b, `"},"http":{"request":{"body_length":`...)
	b = strconv.AppendInt(b, o.reqBytes, 10)
	b = append(b, `,"headers":`...)
	b = appendHeaders(b, o.reqHeaders)
	b = append(b, `,"method":`...)
	b = appendJSONString(b, lowerASCII(o.method))
	b = append(b, `,"url":{"host":`...)
	b = appendJSONString(b, o.host)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, o.path)
	b = append(b, `,"query":`...)
	b = appendJSONString(b, o.query)
	b = append(b, `,"raw":`...)
	b = appendJSONString(b, o.raw)
	b = append(b, `,"scheme":`...)
	b = appendJSONString(b, o.scheme)
	b = append(b, `},"user_agent":`...)
	b = appendJSONString(b, o.agent)
	b = append(b, `},"response":{"body_length":`...)
	b = strconv.AppendInt(b, o.respBytes, 10)
	b = append(b, `,"headers":`...)
	b = appendHeaders(b, o.respHeaders)
	b = append(b, `,"status_code":`...)
	b = strconv.AppendInt(b, int64(o.status), 10)
	b = append(b, `}},"ip_policy":{"decision":"invalid"},"oauth":{"decision":"invalid"}`...)
	if o.tls != nil {
		b = append(b, `,"tls":{"cipher_suite":`...)
		b = appendJSONString(b, tls.CipherSuiteName(o.tls.CipherSuite))
		b = append(b, `,"version":`...)
		b = appendJSONString(b, tlsVersion(o.tls.Version))
		b = append(b, '}')
	}
	return append(b, `,"traffic_policy":{"logs":[]},"webhook_verification":{"decision":"invalid"}}`...)
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
		b = appendJSONString(b, http.CanonicalHeaderKey(name))
		b = append(b, ':', '[')
		for i, v := range values {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, lowerASCII(v))
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// lowerASCII returns s with A to Z lower case, s itself when it has none;
// other letters are left as they are.
func lowerASCII(s string) string {
	for i := range len(s) {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
