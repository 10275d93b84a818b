package edge

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the edge's Prometheus metrics; Register puts them on a
// registry. None is labelled by account.
type Metrics struct {
	sessions             prometheus.Gauge
	endpoints            prometheus.Gauge
	agentHandshakeFailed prometheus.Counter
	agentRefused         prometheus.Counter
	requests             requestCounter
	proxyLatency         latency
	connLimited          prometheus.Counter
	rateLimited          prometheus.Counter
	upstreamFailed       prometheus.Counter
	tcpBytesIn           prometheus.Counter
	tcpBytesOut          prometheus.Counter
	eventsInvalid        prometheus.Counter
	forwardedOut         prometheus.Counter
	forwardedIn          prometheus.Counter
	forwardFailed        prometheus.Counter
	forwardRefused       prometheus.Counter
	forwardedHeld        prometheus.Counter
}

func newMetrics() *Metrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sluice", Subsystem: "edge", Name: name, Help: help})
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "sluice", Subsystem: "edge", Name: name, Help: help})
	}
	return &Metrics{
		sessions:             gauge("agent_sessions", "Agent sessions connected to this edge."),
		endpoints:            gauge("endpoints", "Endpoints bound at this edge."),
		agentHandshakeFailed: counter("agent_handshakes_failed_total", "Agent connections that failed their TLS handshake."),
		agentRefused:         counter("agent_sessions_refused_total", "Agent sessions refused at authentication."),
		requests: requestCounter{prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "sluice", Subsystem: "edge", Name: "http_requests_total",
			Help: "Public HTTP requests, by the class of their status (2xx, 4xx, ...)."}, []string{"status_class"})},
		proxyLatency: latency{prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "sluice", Subsystem: "edge", Name: "http_request_duration_seconds",
			Help:    "Time from a public request's arrival to the end of its response.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)})},
		connLimited:    counter("connections_limited_total", "Public connections refused as their account had its limit open."),
		rateLimited:    counter("requests_rate_limited_total", "Public requests answered 429 as their account sent more a second than the edge takes."),
		upstreamFailed: counter("agent_streams_failed_total", "Public connections and requests the agent's stream failed."),
		tcpBytesIn:     counter("tcp_bytes_in_total", "Bytes public TCP clients sent through endpoints."),
		tcpBytesOut:    counter("tcp_bytes_out_total", "Bytes endpoints sent to public TCP clients."),
		eventsInvalid:  counter("events_invalid_total", "Events the edge made that the catalogue refused (a bug)."),
		forwardedOut:   counter("requests_forwarded_total", "Public requests this edge took for an endpoint another edge serves, and forwarded there."),
		forwardedIn:    counter("requests_forwarded_in_total", "Public requests another edge forwarded to this one, whose agent serves their endpoint."),
		forwardFailed:  counter("requests_forward_failed_total", "Public requests the edge serving their endpoint could not be reached for (answered 502)."),
		forwardRefused: counter("peer_requests_refused_total", "Requests to the peer listener without a good signature of an edge (answered 403)."),
		forwardedHeld:  counter("requests_forwarded_held_total", "Forwarded requests the serving edge refused for their account's rate, held here before their 429."),
	}
}

// Register puts the metrics on reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.sessions, m.endpoints, m.agentHandshakeFailed, m.agentRefused,
		m.requests.CounterVec, m.proxyLatency.Histogram, m.connLimited, m.rateLimited, m.upstreamFailed, m.tcpBytesIn, m.tcpBytesOut, m.eventsInvalid,
		m.forwardedOut, m.forwardedIn, m.forwardFailed, m.forwardRefused, m.forwardedHeld} {
		errs = append(errs, reg.Register(c))
	}
	return errors.Join(errs...)
}

type requestCounter struct{ *prometheus.CounterVec }

func (c requestCounter) With(class string) prometheus.Counter { return c.WithLabelValues(class) }

type latency struct{ prometheus.Histogram }

func (l latency) observe(d time.Duration) { l.Observe(d.Seconds()) }
