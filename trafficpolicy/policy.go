package trafficpolicy

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
)

// phase is when a rule runs.
type phase int

const (
	phaseRequest  phase = iota // on_http_request: before the handler
	phaseResponse              // on_http_response: on the answer, the handler's or an action's
	phaseConnect               // on_tcp_connect: as a TCP connection comes
)

// Names of the phases in a document.
const (
	// PhaseOnHTTPRequest runs before the handler.
	PhaseOnHTTPRequest = "on_http_request"
	// PhaseOnHTTPResponse runs on the answer, the handler's or an
	// action's, before its body is written.
	PhaseOnHTTPResponse = "on_http_response"
	// PhaseOnTCPConnect runs as a TCP connection comes, before any of
	// its bytes pass (Connect).
	PhaseOnTCPConnect = "on_tcp_connect"
)

func (ph phase) String() string {
	switch ph {
	case phaseResponse:
		return PhaseOnHTTPResponse
	case phaseConnect:
		return PhaseOnTCPConnect
	}
	return PhaseOnHTTPRequest
}

// Policy is a loaded traffic policy, ready to run on any number of
// requests at once. Get one from Parse; run it with Serve or Handler.
type Policy struct {
	request, response []rule
	connect           []rule             // on_tcp_connect
	windows           map[string]*window // of its rate-limit actions, by windowIdentity
	carried           map[string]*window // the windows of WithCountsOf's policy, while parsing
	now               func() time.Time   // time.Now; a fake clock in tests
	log               *slog.Logger
	observer          Observer
	apiKey            func(*http.Request) (string, bool)           // WithAPIKey's; nil: no request has a key
	answer            func(*http.Request, Answer) (string, []byte) // WithAnswers'; nil: text/plain
	logs              func(*http.Request, LogEntry)                // WithLogs'; nil: the logger only
	decisions         func(*http.Request, Decision)                // WithDecisions'; nil: none
	exchanges         sync.Pool
	compressors       compressors      // of its compress-response actions
	logins            Logins           // WithOpenIDConnect's; nil: openid-connect is refused
	oidcs             []*OpenIDConnect // the configs of its openid-connect actions
}

// rule is a rule of a phase: its actions run in order when every one of
// its expressions holds.
type rule struct {
	name    string // as written, or its path such as on_http_request[2] when unnamed
	phase   phase
	exprs   []cel.Program
	actions []action
}

// action is one action of a rule. run runs it on the exchange x; when it
// answers the request itself (deny, custom-response, a limited
// rate-limit), it writes the answer on w and returns true, and the rules
// after it do not run.
type action interface {
	run(x *exchange, w http.ResponseWriter, r *rule) (answered bool)
}

// Observer is told what a policy's actions did, to count it. Its methods
// are called on the request's goroutine and must be quick.
type Observer interface {
	// Limited is called each time the rate-limit action named action, of
	// the rule named rule, answers 429.
	Limited(rule, action string)
}

// Option is an optional setting of Parse.
type Option func(*Policy)

// WithLogger sets the logger the log action writes to (default: none).
func WithLogger(log *slog.Logger) Option { return func(p *Policy) { p.log = log } }

// LogEntry is what a log action logged of one request: its rule, its
// phase and its metadata.
type LogEntry struct {
	Phase string
	Rule  string
	// Metadata is the action's metadata as a JSON object, the same for
	// every request: it must not be changed.
	Metadata json.RawMessage
}

// WithLogs sets a function that each log action also tells what it
// logged, with the request: an edge puts it in the request's event. It
// is called on the request's goroutine and must be quick.
func WithLogs(logged func(r *http.Request, e LogEntry)) Option {
	return func(p *Policy) { p.logs = logged }
}

// WithObserver sets the observer of the policy's actions.
func WithObserver(o Observer) Option { return func(p *Policy) { p.observer = o } }

// WithAPIKey sets how the policy learns the API key of a request: id
// returns the key's id and true, or false when the request names no key
// the caller knows. It is the value of api_key.id in expressions ("" on
// false) and of the bucket key api_key.id. It is called at most once per
// request, when an expression or a rate-limit first needs it, on the
// request's goroutine. Name the key by an id, never by its secret: the id
// shows in actions.service.rate_limit.bucket_key. Without it, no request
// has a key.
func WithAPIKey(id func(r *http.Request) (string, bool)) Option {
	return func(p *Policy) { p.apiKey = id }
}

// Answer is an answer a policy gives itself, rather than a
// custom-response's: a deny's, or a rate-limit's 429.
type Answer struct {
	// Status is the HTTP status: a deny's status_code (403 by default),
	// or 429.
	Status int
	// Action is ActionDeny or ActionRateLimit.
	Action string
	// Rule is the name of the rule, or its path such as
	// on_http_request[0] when it has none.
	Rule string
	// RetryAfter is a rate-limit's Retry-After, in seconds (0 for a
	// deny); the policy sets the header itself.
	RetryAfter int64
}

// WithAnswers sets how the policy writes the answers it gives itself
// (Answer): body returns their Content-Type and body, for a server whose
// other errors have a shape of their own, such as sluice's API. It is
// called on the request's goroutine. Without it, they are text/plain:
// "403 Forbidden\n".
func WithAnswers(body func(r *http.Request, a Answer) (contentType string, body []byte)) Option {
	return func(p *Policy) { p.answer = body }
}

// WithCountsOf makes the new policy keep the counts of prev's rate-limit
// actions that are unchanged: same name, algorithm, capacity, rate and
// bucket_key. A reload then lets no bucket start afresh. prev may be nil,
// and may go on serving requests: both then count in the same buckets.
func WithCountsOf(prev *Policy) Option {
	return func(p *Policy) {
		if prev != nil {
			p.carried = prev.windows
		}
	}
}

type discardObserver struct{}

func (discardObserver) Limited(string, string) {}

// Handler returns next with the policy applied: the rules of
// on_http_request before it, those of on_http_response on its answer.
func (p *Policy) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.Serve(w, r, next) })
}

// Serve runs the policy on one request: the rules of on_http_request,
// then, unless an action answered, next; the rules of on_http_response
// then run on the answer, whichever wrote it, before its body is written,
// and may replace it.
func (p *Policy) Serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if len(p.request) == 0 && len(p.response) == 0 {
		next.ServeHTTP(w, r)
		return
	}
	x := p.exchanges.Get().(*exchange)
	defer p.release(x)
	x.reset(r)
	x.apiKey = p.apiKey
	out := w
	if len(p.response) > 0 {
		x.writer = responseWriter{w: w, x: x, p: p}
		out = &x.writer
	}
	if p.run(p.request, x, out) {
		// With rules of on_http_response, writing the answer ran them.
		return
	}
	compressing := x.compress != "" && x.compress != "none"
	if compressing {
		// Below the rules of on_http_response: what they answer is
		// compressed too.
		x.compressor = compressWriter{w: w, pool: &p.compressors, alg: x.compress}
		if len(p.response) > 0 {
			x.writer.w = &x.compressor
		} else {
			out = &x.compressor
		}
	}
	next.ServeHTTP(out, r)
	if len(p.response) > 0 {
		// Not deferred: after a panic of next, net/http answers, not this.
		x.writer.finish()
	}
	if x.compress != "" && p.decisions != nil {
		d := Decision{Module: "compression", Allowed: true, Algorithm: "none"}
		if compressing {
			d.Algorithm, d.BytesSaved = x.compressor.finish()
		}
		p.decisions(r, d)
	} else if compressing {
		x.compressor.finish()
	}
}

// release returns x to the pool, holding nothing of its request.
func (p *Policy) release(x *exchange) {
	x.reset(nil)
	x.writer = responseWriter{}
	p.exchanges.Put(x)
}

// run runs the rules of a phase on x and reports whether an action
// answered, on w.
func (p *Policy) run(rules []rule, x *exchange, w http.ResponseWriter) bool {
	for i := range rules {
		r := &rules[i]
		if !r.matches(x) {
			continue
		}
		for _, a := range r.actions {
			if a.run(x, w, r) {
				return true
			}
		}
	}
	return false
}

// matches reports whether every expression of the rule holds. An
// expression that fails to evaluate (an index out of range, its cost past
// MaxExprCost) does not hold.
func (r *rule) matches(x *exchange) bool {
	for _, prg := range r.exprs {
		out, _, err := prg.Eval(x)
		if err != nil || out != types.True {
			return false
		}
	}
	return true
}

// logAttrs writes a log line of the log action.
func (p *Policy) logAttrs(ctx context.Context, attrs ...slog.Attr) {
	p.log.LogAttrs(ctx, slog.LevelInfo, "traffic policy log", attrs...)
}

// newPolicy returns an empty policy with the options applied.
func newPolicy(opts []Option) *Policy {
	p := &Policy{
		now:      time.Now,
		log:      slog.New(slog.DiscardHandler),
		observer: discardObserver{},
	}
	for _, o := range opts {
		o(p)
	}
	p.windows = make(map[string]*window)
	p.exchanges.New = func() any { return new(exchange) }
	return p
}

// Rules returns how many rules each phase has.
func (p *Policy) Rules() (onHTTPRequest, onHTTPResponse int) {
	return len(p.request), len(p.response)
}

// ConnectRules returns how many rules on_tcp_connect has.
func (p *Policy) ConnectRules() int { return len(p.connect) }

// Connect runs the rules of on_tcp_connect on a TCP connection from
// clientAddr (host:port) and reports whether it may go on: false when an
// action refused it (deny, restrict-ips). ctx is what WithLogs and
// WithDecisions see as the request's context.
func (p *Policy) Connect(ctx context.Context, clientAddr string) bool {
	if len(p.connect) == 0 {
		return true
	}
	r := (&http.Request{RemoteAddr: clientAddr, Header: http.Header{}, URL: &url.URL{}}).WithContext(ctx)
	x := p.exchanges.Get().(*exchange)
	defer p.release(x)
	x.reset(r)
	return !p.run(p.connect, x, &connectWriter{h: http.Header{}})
}

// connectWriter takes the answer an action would give a TCP connection:
// there is none to give, the connection closes.
type connectWriter struct{ h http.Header }

func (w *connectWriter) Header() http.Header         { return w.h }
func (w *connectWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *connectWriter) WriteHeader(int)             {}
