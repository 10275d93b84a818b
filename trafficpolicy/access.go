package trafficpolicy

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The access actions.
const (
	// ActionRestrictIPs answers 403 to a client whose address is in
	// its deny list, or not in its allow list when it has one.
	ActionRestrictIPs = "restrict-ips"
	// ActionBasicAuth answers 401 to a request without one of its
	// credentials.
	ActionBasicAuth = "basic-auth"
)

// Bounds of the access actions' configs: a policy is a document a
// stranger may write (an agent's bind), and each request runs it.
const (
	// MaxCIDRs bounds the allow and deny lists of a restrict-ips.
	MaxCIDRs = 1024
	// MaxCredentials bounds the credentials of a basic-auth.
	MaxCredentials = 64
	// maxUsername bounds the username a basic-auth reports.
	maxUsername = 255
)

// Decision is what an access action decided of one request, as the
// request's event reports it (WithDecisions).
type Decision struct {
	// Module is the event's field: "ip_policy" (restrict-ips),
	// "basic_auth" (basic-auth), "oauth" (openid-connect) or
	// "compression" (compress-response).
	Module string
	// Allowed is the decision: allow, or block.
	Allowed bool
	// Username is the user a basic-auth request named, or the name of
	// the user an openid-connect let through, clipped to 255 bytes (""
	// for none).
	Username string
	// UserID and ClientID are an openid-connect's: the id the provider
	// reports of the user it let through ("" when it did not), and its
	// client_id.
	UserID, ClientID string
	// Algorithm and BytesSaved are a compress-response's ("compression"):
	// gzip, deflate or none, and the answer's size less its compressed
	// size.
	Algorithm  string
	BytesSaved int64
}

// WithDecisions sets a function that each access action tells what it
// decided, with the request: an edge puts it in the request's event. It
// is called on the request's goroutine and must be quick.
func WithDecisions(decided func(r *http.Request, d Decision)) Option {
	return func(p *Policy) { p.decisions = decided }
}

// restrictIPs lets through the clients of its allow list (any, when it
// is empty) that are not in its deny list.
type restrictIPs struct {
	p           *Policy
	allow, deny []netip.Prefix
	enforce     bool
}

func buildRestrictIPs(c *checker, cfg node, _ phase) action {
	fields := c.mapping(cfg, "allow", "deny", "enforce")
	a := &restrictIPs{p: c.policy, enforce: true}
	a.allow = c.prefixes(fields["allow"])
	a.deny = c.prefixes(fields["deny"])
	if len(a.allow) == 0 && len(a.deny) == 0 {
		c.missing(cfg, "allow", "a list of addresses or CIDR ranges (allow, deny, or both)")
	}
	if n, ok := fields["enforce"]; ok {
		a.enforce = c.boolean(n)
	}
	return a
}

// prefixes returns the CIDR ranges of a list; an address alone is a
// range of one.
func (c *checker) prefixes(n node) []netip.Prefix {
	if n.n == nil {
		return nil
	}
	elems := c.list(n)
	if len(elems) > MaxCIDRs {
		c.report(n, "has "+strconv.Itoa(len(elems))+" ranges, over "+strconv.Itoa(MaxCIDRs))
		return nil
	}
	out := make([]netip.Prefix, 0, len(elems))
	for _, e := range elems {
		s := c.string(e)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		if addr, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen()))
			continue
		}
		c.report(e, "not an IP address or CIDR range, such as 203.0.113.0/24 or 2001:db8::/32")
	}
	return out
}

// boolean returns the value of a boolean.
func (c *checker) boolean(n node) bool {
	if n.n == nil || n.n.Kind != yaml.ScalarNode || n.n.Tag != "!!bool" {
		c.report(n, "must be true or false, not "+describe(n))
		return false
	}
	return n.n.Value == "true"
}

func (a *restrictIPs) allowed(r *http.Request) bool {
	addr, err := netip.ParseAddr(clientIP(r))
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, p := range a.deny {
		if p.Contains(addr) {
			return false
		}
	}
	if len(a.allow) == 0 {
		return true
	}
	for _, p := range a.allow {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

func (a *restrictIPs) run(x *exchange, w http.ResponseWriter, r *rule) bool {
	ok := a.allowed(x.req)
	if a.p.decisions != nil {
		a.p.decisions(x.req, Decision{Module: "ip_policy", Allowed: ok})
	}
	if ok || !a.enforce {
		return false
	}
	return answerStatus(x, w, a.p, r, http.StatusForbidden, ActionRestrictIPs)
}

// basicAuth lets through the requests with one of its credentials.
type basicAuth struct {
	p *Policy
	// digests are the SHA-256 of each "user:password": compared in
	// constant time, and the passwords not kept.
	digests   [][sha256.Size]byte
	challenge string // WWW-Authenticate
	enforce   bool
}

func buildBasicAuth(c *checker, cfg node, _ phase) action {
	fields := c.mapping(cfg, "credentials", "realm", "enforce")
	a := &basicAuth{p: c.policy, enforce: true, challenge: `Basic realm="sluice", charset="UTF-8"`}
	n, ok := fields["credentials"]
	if !ok {
		c.missing(cfg, "credentials", `a list of "user:password"`)
	}
	elems := c.list(n)
	if len(elems) > MaxCredentials {
		c.report(n, "has "+strconv.Itoa(len(elems))+" credentials, over "+strconv.Itoa(MaxCredentials))
		elems = nil
	}
	for _, e := range elems {
		s := c.string(e)
		user, pass, found := strings.Cut(s, ":")
		if !found || user == "" || len(pass) < 8 || len(pass) > 128 {
			c.report(e, `must be "user:password", with a password of 8 to 128 characters`)
			continue
		}
		a.digests = append(a.digests, sha256.Sum256([]byte(s)))
	}
	if rn, ok := fields["realm"]; ok {
		realm := c.string(rn)
		if len(realm) > 128 || strings.ContainsAny(realm, "\"\\\r\n") {
			c.report(rn, "must be at most 128 characters, without quotes, backslashes or line breaks")
		}
		a.challenge = `Basic realm="` + realm + `", charset="UTF-8"`
	}
	if en, ok := fields["enforce"]; ok {
		a.enforce = c.boolean(en)
	}
	return a
}

func (a *basicAuth) run(x *exchange, w http.ResponseWriter, r *rule) bool {
	user, pass, given := x.req.BasicAuth()
	ok := false
	if given {
		d := sha256.Sum256([]byte(user + ":" + pass))
		match := 0
		for i := range a.digests {
			match |= subtle.ConstantTimeCompare(d[:], a.digests[i][:])
		}
		ok = match == 1
	}
	if a.p.decisions != nil {
		a.p.decisions(x.req, Decision{Module: "basic_auth", Allowed: ok, Username: clipUTF8(user, maxUsername)})
	}
	if ok || !a.enforce {
		return false
	}
	w.Header().Set("WWW-Authenticate", a.challenge)
	return answerStatus(x, w, a.p, r, http.StatusUnauthorized, ActionBasicAuth)
}

// answerStatus answers with status and its text, or in the shape of
// WithAnswers.
func answerStatus(x *exchange, w http.ResponseWriter, p *Policy, r *rule, status int, action string) bool {
	h := startAnswer(x, w)
	if p.answer != nil {
		writeOwnAnswer(x, w, p, Answer{Status: status, Action: action, Rule: r.name})
		return true
	}
	body := strconv.Itoa(status) + " " + http.StatusText(status) + "\n"
	h.Set("Content-Type", "text/plain; charset=utf-8")
	writeAnswer(x, w, status, strconv.Itoa(len(body)), body)
	return true
}

// clipUTF8 returns s cut to at most n bytes of valid UTF-8.
func clipUTF8(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "")
}
