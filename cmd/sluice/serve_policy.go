package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/trafficpolicy"
)

// policyPollInterval is how often serve reads --traffic-policy to see
// whether it changed.
const policyPollInterval = 2 * time.Second

// policyFront applies the traffic policy of --traffic-policy to every
// request of the --http listener, before the API does any work (no body
// read, no API key looked up unless an expression or a bucket key of the
// policy reads api_key.id; a malformed Authorization is refused before
// it), and reloads it on SIGHUP and when the file
// changes. A reload swaps the policy atomically: requests in flight finish
// with the one they started with, none is dropped, and the counts of the
// rate-limit actions that did not change carry over. A document with a
// mistake is not loaded: the one before stays, and the log says why.
type policyFront struct {
	path    string
	log     *slog.Logger
	metrics *policyMetrics
	current atomic.Pointer[trafficpolicy.Policy]
	// apiKey tells the policy the id of a request's API key (api_key.id):
	// apiconv.KeyID in serve.
	apiKey func(*http.Request) (string, bool)
	// hup receives SIGHUP from newPolicyFront on, so that a SIGHUP sent
	// while serve is still starting waits for Run rather than ending the
	// process.
	hup chan os.Signal

	// seen is the read of the file last loaded or refused, and pending a
	// different read of the last poll, loaded if the next poll reads the
	// same. Only the loop touches them once it runs.
	seen    policyRead
	pending *policyRead
	// reloaded, when set (tests), is called after each reload attempt with
	// its error.
	reloaded func(error)
}

// newPolicyFront loads the policy of path; a document with a mistake is an
// error that stops serve. apiKey gives api_key.id (serve passes apiconv.KeyID,
// which reads the key the API's canonical Authorization names).
func newPolicyFront(path string, log *slog.Logger, apiKey func(*http.Request) (string, bool)) (*policyFront, error) {
	f := &policyFront{path: path, log: log, metrics: newPolicyMetrics(), apiKey: apiKey}
	doc, err := readPolicyFile(path)
	if err != nil {
		return nil, err
	}
	p, err := parsePolicy(path, doc, f.options(nil)...)
	if err != nil {
		return nil, err
	}
	f.hup = make(chan os.Signal, 1)
	signal.Notify(f.hup, syscall.SIGHUP)
	f.current.Store(p)
	f.seen = policyRead{doc: doc}
	onRequest, onResponse := p.Rules()
	log.Info("traffic policy loaded", "file", path, "on_http_request", onRequest, "on_http_response", onResponse)
	return f, nil
}

func (f *policyFront) options(prev *trafficpolicy.Policy) []trafficpolicy.Option {
	return []trafficpolicy.Option{
		trafficpolicy.WithLogger(f.log),
		trafficpolicy.WithObserver(f.metrics),
		trafficpolicy.WithCountsOf(prev),
		trafficpolicy.WithAPIKey(f.apiKey),
		// Its own answers take the API's error shape, which the API's
		// clients read.
		trafficpolicy.WithAnswers(apiconv.PolicyAnswer),
	}
}

// wrap returns next behind the current policy.
func (f *policyFront) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.current.Load().Serve(w, r, next)
	})
}

// Run reloads the policy on SIGHUP, and when the file's content changed,
// read every policyPollInterval: a change is loaded once two reads in a
// row see it. A SIGHUP that came after newPolicyFront and before Run is
// reloaded at once. Run returns when ctx ends, leaving SIGHUP ignored:
// serve is then draining its requests, which a SIGHUP's default action,
// the end of the process, would drop.
func (f *policyFront) Run(ctx context.Context) error {
	defer signal.Ignore(syscall.SIGHUP)
	poll := time.NewTicker(policyPollInterval)
	defer poll.Stop()
	f.run(ctx, f.hup, poll.C)
	return nil
}

// run is Run's loop: a reload on each hup, whatever the file holds, and a
// look at the file on each poll.
func (f *policyFront) run(ctx context.Context, hup <-chan os.Signal, poll <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			doc, err := readPolicyFile(f.path)
			f.pending = nil
			f.load(doc, err, "SIGHUP")
		case <-poll:
			f.poll()
		}
	}
}

// poll reads the file and loads what it holds once two polls in a row read
// the same, other than what was loaded (or refused) last: a file caught
// half written by an editor is not loaded.
func (f *policyFront) poll() {
	doc, err := readPolicyFile(f.path)
	read := policyRead{doc: doc, err: errText(err)}
	switch {
	case read.equal(f.seen):
		f.pending = nil
	case f.pending == nil || !read.equal(*f.pending):
		f.pending = &read
	default:
		f.pending = nil
		f.load(doc, err, "the file changed")
	}
}

// load loads doc, read with err, as the policy, unless either has a
// mistake; it logs the outcome either way.
func (f *policyFront) load(doc []byte, err error, why string) {
	f.seen = policyRead{doc: doc, err: errText(err)}
	var p *trafficpolicy.Policy
	if err == nil {
		p, err = parsePolicy(f.path, doc, f.options(f.current.Load())...)
	}
	if err != nil {
		f.metrics.reloads.WithLabelValues("refused").Inc()
		f.log.Error("traffic policy not reloaded: the policy loaded before stays in force", "file", f.path, "reason", why, "error", err)
	} else {
		f.current.Store(p)
		f.metrics.reloads.WithLabelValues("loaded").Inc()
		onRequest, onResponse := p.Rules()
		f.log.Info("traffic policy reloaded", "file", f.path, "reason", why, "on_http_request", onRequest, "on_http_response", onResponse)
	}
	if f.reloaded != nil {
		f.reloaded(err)
	}
}

// policyRead is what a read of the policy's file gave.
type policyRead struct {
	doc []byte
	err string // why it could not be read, empty when it could
}

func (r policyRead) equal(o policyRead) bool { return r.err == o.err && bytes.Equal(r.doc, o.doc) }

// errText returns err's message, empty for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// policyMetrics counts what the traffic policy does. Its labels are the
// names of the document's rules and actions, which the operator writes:
// never a bucket's key.
type policyMetrics struct {
	limited *prometheus.CounterVec // by rule and action
	reloads *prometheus.CounterVec // by result
}

func newPolicyMetrics() *policyMetrics {
	return &policyMetrics{
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_traffic_policy_limited_requests_total",
			Help: "Requests a rate-limit action of the traffic policy (--traffic-policy) answered 429, by the name of its rule (or its path, such as on_http_request[0], when unnamed) and the name of the action.",
		}, []string{"rule", "action"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_traffic_policy_reloads_total",
			Help: "Reloads of the traffic policy on SIGHUP or a change of its file, by result: loaded, or refused (a mistake in the document; the policy before stays, and the log says why).",
		}, []string{"result"}),
	}
}

// Limited counts a request a rate-limit answered 429.
func (m *policyMetrics) Limited(rule, action string) {
	m.limited.WithLabelValues(rule, action).Inc()
}

func (m *policyMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.limited, m.reloads}
}
