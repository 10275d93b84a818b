package trafficpolicy

import (
	"encoding/binary"
	"net"
	"net/http"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"
)

// exchange is what the policy knows of one request while it runs: the
// request, the response once there is one, and the results of the
// actions that ran. It is the activation of the expressions. Exchanges
// are pooled by their Policy.
type exchange struct {
	req        *http.Request
	reqHeaders headerMap
	status     int // the response's, 0 before on_http_response
	resHeaders headerMap

	rateLimit rateLimitResult
	writer    responseWriter
	// compress is the algorithm a compress-response chose ("none" when
	// the client accepts none of its; "" when none ran), and
	// compressor the writer that compresses with it.
	compress   string
	compressor compressWriter
	// oidcUser is the user the last openid-connect that ran let through.
	oidcUser User

	// apiKey is the Policy's (WithAPIKey); keyID and hasKey hold its
	// answer once keyLooked.
	apiKey    func(*http.Request) (string, bool)
	keyID     string
	hasKey    bool
	keyLooked bool
}

// rateLimitResult is the result of the last rate-limit action that ran,
// the variables actions.service.rate_limit.*.
type rateLimitResult struct {
	key      []byte // the bucket key's values, each preceded by its length as a uvarint
	limited  bool
	errCode  string
	errMsg   string
	keyShown string // key as the variable shows it, made when an expression asks
	shown    bool
}

var _ interpreter.Activation = (*exchange)(nil)

// reset readies a pooled exchange for r.
func (x *exchange) reset(r *http.Request) {
	x.req = r
	x.reqHeaders, x.resHeaders = headerMap{}, headerMap{}
	if r != nil {
		x.reqHeaders.h = r.Header
	}
	x.status = 0
	x.rateLimit = rateLimitResult{key: x.rateLimit.key[:0]}
	x.apiKey, x.keyID, x.hasKey, x.keyLooked = nil, "", false, false
	x.compress, x.compressor = "", compressWriter{}
	x.oidcUser = User{}
}

// apiKeyID returns the id of the request's API key, asking the Policy's
// WithAPIKey function once per request; false without one.
func (x *exchange) apiKeyID() (string, bool) {
	if !x.keyLooked {
		if x.apiKey != nil {
			x.keyID, x.hasKey = x.apiKey(x.req)
		}
		x.keyLooked = true
	}
	return x.keyID, x.hasKey
}

// ResolveName returns the value of a variable of the expressions.
func (x *exchange) ResolveName(name string) (any, bool) {
	switch name {
	case varMethod:
		return types.String(x.req.Method), true
	case varHost:
		return types.String(x.req.Host), true
	case varPath:
		return types.String(x.req.URL.Path), true
	case varQuery:
		return types.String(x.req.URL.RawQuery), true
	case varReqHeaders:
		return &x.reqHeaders, true
	case varClientIP:
		return types.String(clientIP(x.req)), true
	case varAPIKeyID:
		id, _ := x.apiKeyID()
		return types.String(id), true
	case varStatus:
		return types.Int(x.status), true
	case varResHeaders:
		return &x.resHeaders, true
	case varBucketKey:
		return types.String(x.rateLimit.shownKey()), true
	case varLimited:
		return types.Bool(x.rateLimit.limited), true
	case varErrCode:
		return types.String(x.rateLimit.errCode), true
	case varErrMessage:
		return types.String(x.rateLimit.errMsg), true
	case varOIDCUserID:
		return types.String(x.oidcUser.ID), true
	case varOIDCUserName:
		return types.String(x.oidcUser.Name), true
	case varOIDCUserEmail:
		return types.String(x.oidcUser.Email), true
	}
	return nil, false
}

// Parent returns nil: an exchange holds every variable.
func (x *exchange) Parent() interpreter.Activation { return nil }

// clientIP returns the address of the request's client, without its port:
// the host of RemoteAddr.
func clientIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// shownKey returns the bucket key as actions.service.rate_limit.bucket_key
// shows it: its values in the order of bucket_key, separated by ", ".
func (r *rateLimitResult) shownKey() string {
	if r.shown {
		return r.keyShown
	}
	var b strings.Builder
	for i, rest := 0, r.key; len(rest) > 0; i++ {
		n, size := binary.Uvarint(rest)
		if size <= 0 || uint64(len(rest)-size) < n {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.Write(rest[size : size+int(n)])
		rest = rest[size+int(n):]
	}
	r.keyShown, r.shown = b.String(), true
	return r.keyShown
}
