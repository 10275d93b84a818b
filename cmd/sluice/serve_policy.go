package main

import (
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/trafficpolicy"
)

// policyFront applies the traffic policy of --traffic-policy to every
// request of the --http listener, before the API does any work (no API
// key looked up, no body read).
type policyFront struct {
	path    string
	log     *slog.Logger
	metrics *policyMetrics
	current atomic.Pointer[trafficpolicy.Policy]
}

// newPolicyFront loads the policy of path; a document with a mistake is an
// error that stops serve.
func newPolicyFront(path string, log *slog.Logger) (*policyFront, error) {
	f := &policyFront{path: path, log: log, metrics: newPolicyMetrics()}
	doc, err := readPolicyFile(path)
	if err != nil {
		return nil, err
	}
	p, err := parsePolicy(path, doc, f.options(nil)...)
	if err != nil {
		return nil, err
	}
	f.current.Store(p)
	onRequest, onResponse := p.Rules()
	log.Info("traffic policy loaded", "file", path, "on_http_request", onRequest, "on_http_response", onResponse)
	return f, nil
}

func (f *policyFront) options(prev *trafficpolicy.Policy) []trafficpolicy.Option {
	return []trafficpolicy.Option{
		trafficpolicy.WithLogger(f.log),
		trafficpolicy.WithObserver(f.metrics),
		trafficpolicy.WithCountsOf(prev),
	}
}

// wrap returns next behind the current policy.
func (f *policyFront) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.current.Load().Serve(w, r, next)
	})
}

// policyMetrics counts what the traffic policy does. Its labels are the
// names of the document's rules and actions, which the operator writes:
// never a bucket's key.
type policyMetrics struct {
	limited *prometheus.CounterVec // by rule and action
}

func newPolicyMetrics() *policyMetrics {
	return &policyMetrics{
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_traffic_policy_limited_requests_total",
			Help: "Requests a rate-limit action of the traffic policy (--traffic-policy) answered 429, by the name of its rule (or its path, such as on_http_request[0], when unnamed) and the name of the action.",
		}, []string{"rule", "action"}),
	}
}

// Limited counts a request a rate-limit answered 429.
func (m *policyMetrics) Limited(rule, action string) {
	m.limited.WithLabelValues(rule, action).Inc()
}

func (m *policyMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.limited}
}
