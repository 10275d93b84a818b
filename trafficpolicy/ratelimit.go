package trafficpolicy

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits of the config of rate-limit (specification section 8).
const (
	// MaxRateLimitName is the longest name, in characters: fewer than 1024.
	MaxRateLimitName = 1023
	// MinCapacity and MaxCapacity bound capacity, the most requests of a
	// bucket admitted within rate.
	MinCapacity = 1
	MaxCapacity = 2_000_000_000
	// MinRate and MaxRate bound rate, which is also a multiple of
	// SlotDuration.
	MinRate = 60 * time.Second
	MaxRate = 24 * time.Hour
	// MaxBucketKeys is the most entries of bucket_key.
	MaxBucketKeys = 10
	// AlgorithmSlidingWindow is the only algorithm.
	AlgorithmSlidingWindow = "sliding_window"
)

// CodeMissingHeader is actions.service.rate_limit.error.code when a header
// of the bucket key is missing from the request. The request is then
// neither counted nor limited: it goes on to the next action.
const CodeMissingHeader = "ERR_RATE_LIMIT_MISSING_HEADER"

// CodeMissingAPIKey is actions.service.rate_limit.error.code when the
// bucket key has api_key.id and the request has no API key (WithAPIKey).
// As with a missing header, it is neither counted nor limited.
const CodeMissingAPIKey = "ERR_RATE_LIMIT_MISSING_API_KEY"

// missingAPIKey is error.message of CodeMissingAPIKey.
const missingAPIKey = "the request has no known API key, a part of the bucket key (api_key.id)"

// rateLimit admits at most capacity requests of a bucket within rate.
type rateLimit struct {
	p      *Policy
	name   string
	keys   []keyPart
	window *window
}

// keyPart is one entry of a bucket_key: the request's host, its client's
// address, its API key's id, or a header (the values of several lines
// joined by commas).
type keyPart struct {
	header  string // canonical name; empty for host, client address and API key
	host    bool
	apiKey  bool
	missing string // error.message when the header is missing
}

// bucketKeyHeader matches req.headers['name'] and getReqHeader('Name'),
// with either quotes.
var bucketKeyHeader = regexp.MustCompile(`^(?:req\.headers\[\s*(?:'([^']*)'|"([^"]*)")\s*\]|getReqHeader\(\s*(?:'([^']*)'|"([^"]*)")\s*\))$`)

func buildRateLimit(c *checker, cfg node, _ phase) action {
	fields := c.mapping(cfg, "name", "algorithm", "capacity", "rate", "bucket_key")
	a := &rateLimit{p: c.policy}
	before := len(c.problems)
	if n, ok := fields["name"]; !ok {
		c.missing(cfg, "name", "a name for the limit, fewer than 1024 characters")
	} else if a.name = c.string(n); n.n != nil && n.n.Tag == "!!str" {
		if a.name == "" {
			c.report(n, "must not be empty: name the limit, such as per-api-key")
		} else if count := utf8.RuneCountInString(a.name); count > MaxRateLimitName {
			c.report(n, fmt.Sprintf("must be fewer than 1024 characters, this one has %d", count))
		}
	}
	if n, ok := fields["algorithm"]; !ok {
		c.missing(cfg, "algorithm", "sliding_window, the only algorithm")
	} else if alg := c.string(n); n.n != nil && n.n.Tag == "!!str" && alg != AlgorithmSlidingWindow {
		c.report(n, fmt.Sprintf("unknown algorithm %q: the only algorithm is sliding_window", alg))
	}
	var capacity int
	if n, ok := fields["capacity"]; !ok {
		c.missing(cfg, "capacity", "the most requests of a bucket admitted within rate, from 1 to 2000000000")
	} else {
		capacity = c.intIn(n, MinCapacity, MaxCapacity, "the most requests of a bucket admitted within rate")
	}
	var rate time.Duration
	if n, ok := fields["rate"]; !ok {
		c.missing(cfg, "rate", "a duration, a multiple of 10s from 60s to 24h, such as 60s, 5m or 1h")
	} else {
		rate = c.rate(n)
	}
	if n, ok := fields["bucket_key"]; !ok {
		c.missing(cfg, "bucket_key", "a list of 1 to 10 of req.host, conn.client_ip, api_key.id, req.headers['<name>'] and getReqHeader('<Name>')")
	} else {
		a.keys = c.bucketKey(n)
	}
	if len(c.problems) > before {
		return nil
	}
	id := windowIdentity(a.name, capacity, rate, a.keys)
	a.window = c.policy.carried[id]
	if a.window == nil {
		a.window = c.policy.windows[id]
	}
	if a.window == nil {
		a.window = newWindow(uint32(capacity), rate, MaxBuckets)
	}
	c.policy.windows[id] = a.window
	return a
}

// rate returns the value of rate: a duration, a multiple of ten seconds
// from MinRate to MaxRate.
func (c *checker) rate(n node) time.Duration {
	s := c.string(n)
	if n.n == nil || n.n.Tag != "!!str" {
		return 0
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		c.report(n, fmt.Sprintf("%q is not a duration: write a number and a unit, a multiple of 10s from 60s to 24h, such as 60s, 5m or 1h", s))
	case d < MinRate || d > MaxRate:
		c.report(n, fmt.Sprintf("%q is out of range: a rate is from 60s to 24h", s))
	case d%SlotDuration != 0:
		c.report(n, fmt.Sprintf("%q is not a multiple of ten seconds: use 60s, 70s, 5m, ...", s))
	default:
		return d
	}
	return 0
}

// bucketKey returns the parts of a bucket_key.
func (c *checker) bucketKey(n node) []keyPart {
	list := c.list(n)
	if n.n != nil && n.n.Kind == yaml.SequenceNode && (len(list) == 0 || len(list) > MaxBucketKeys) {
		c.report(n, fmt.Sprintf("must have 1 to %d entries, not %d", MaxBucketKeys, len(list)))
	}
	var parts []keyPart
	for _, e := range list {
		s := strings.TrimSpace(c.string(e))
		if e.n == nil || e.n.Tag != "!!str" {
			continue
		}
		switch s {
		case varHost:
			parts = append(parts, keyPart{host: true})
			continue
		case varClientIP:
			parts = append(parts, keyPart{})
			continue
		case varAPIKeyID:
			parts = append(parts, keyPart{apiKey: true, missing: missingAPIKey})
			continue
		}
		m := bucketKeyHeader.FindStringSubmatch(s)
		if m == nil {
			c.report(e, fmt.Sprintf("%q is not a bucket key: use req.host, conn.client_ip, api_key.id, req.headers['<name>'] or getReqHeader('<Name>')", s))
			continue
		}
		name := m[1] + m[2] + m[3] + m[4]
		if !validHeaderName(name) {
			c.report(e, fmt.Sprintf("%q is not a header name: use letters, digits and !#$%%&'*+-.^_`|~", name))
			continue
		}
		canonical := http.CanonicalHeaderKey(name)
		parts = append(parts, keyPart{header: canonical, missing: "the request has no header " + canonical + ", a part of the bucket key"})
	}
	return parts
}

// windowIdentity names a rate-limit's counts: a reloaded policy keeps the
// window of an action with the same identity (WithCountsOf).
func windowIdentity(name string, capacity int, rate time.Duration, keys []keyPart) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %d %s", name, capacity, rate)
	for _, k := range keys {
		switch {
		case k.host:
			b.WriteString(" host")
		case k.apiKey:
			b.WriteString(" api_key")
		case k.header == "":
			b.WriteString(" client_ip")
		default:
			b.WriteString(" header:" + k.header)
		}
	}
	return b.String()
}

func (a *rateLimit) run(x *exchange, w http.ResponseWriter, r *rule) bool {
	res := &x.rateLimit
	*res = rateLimitResult{key: res.key[:0]}
	key := res.key
	for i := range a.keys {
		var ok bool
		if key, ok = a.keys[i].append(key, x); !ok {
			res.key = key[:0] // bucket_key is empty: the request has no bucket
			res.errCode, res.errMsg = CodeMissingHeader, a.keys[i].missing
			if a.keys[i].apiKey {
				res.errCode = CodeMissingAPIKey
			}
			return false
		}
	}
	res.key = key
	admitted, retryAfter := a.window.take(key, a.p.now().UnixNano())
	if admitted {
		return false
	}
	res.limited = true
	a.p.observer.Limited(r.name, a.name)
	h := startAnswer(x, w)
	h.Set("Retry-After", strconv.FormatInt(retryAfter, 10))
	if a.p.answer != nil {
		writeOwnAnswer(x, w, a.p, Answer{Status: http.StatusTooManyRequests, Action: ActionRateLimit, Rule: r.name, RetryAfter: retryAfter})
		return true
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	const body = "429 Too Many Requests\n"
	writeAnswer(x, w, http.StatusTooManyRequests, strconv.Itoa(len(body)), body)
	return true
}

// append appends the part's value to key, preceded by its length, and
// reports false when it is a header the request lacks, or its API key
// when it has none.
func (k *keyPart) append(key []byte, x *exchange) ([]byte, bool) {
	r := x.req
	switch {
	case k.host:
		return appendValue(key, r.Host), true
	case k.apiKey:
		id, ok := x.apiKeyID()
		if !ok {
			return key, false
		}
		return appendValue(key, id), true
	case k.header == "":
		return appendValue(key, clientIP(r)), true
	}
	values, ok := r.Header[k.header]
	if !ok {
		return key, false
	}
	if len(values) == 1 {
		return appendValue(key, values[0]), true
	}
	n := max(0, len(values)-1)
	for _, v := range values {
		n += len(v)
	}
	key = binary.AppendUvarint(key, uint64(n))
	for i, v := range values {
		if i > 0 {
			key = append(key, ',')
		}
		key = append(key, v...)
	}
	return key, true
}

func appendValue(key []byte, v string) []byte {
	key = binary.AppendUvarint(key, uint64(len(v)))
	return append(key, v...)
}
