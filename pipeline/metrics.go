package pipeline

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/promreg"
	"github.com/sluicehq/sluice/sinks"
)

// Labels of the delivery metrics. The ids are those of routes that exist:
// the series of a route are deleted when its route goes, so their number
// is bounded by the routes of the store.
var routeLabels = []string{"account_id", "subscription_id", "destination_id"}

// Outcomes of a sink write, the outcome label of
// sluice_delivery_write_duration_seconds.
const (
	writeOK      = "ok"      // every record accepted
	writePartial = "partial" // some records refused
	writeFailed  = "failed"  // the call failed as a whole
)

// Metrics are the delivery metrics of a process. A nil *Metrics records
// nothing.
type Metrics struct {
	filtered     *prometheus.CounterVec   // by route
	delivered    *prometheus.CounterVec   // by route
	failed       *prometheus.CounterVec   // by route, class
	retried      *prometheus.CounterVec   // by route
	deadLettered *prometheus.CounterVec   // by route, class
	latency      *prometheus.HistogramVec // by route
	records      *prometheus.HistogramVec // by destination_type
	bytes        *prometheus.HistogramVec // by destination_type
	duration     *prometheus.HistogramVec // by destination_type, outcome
	failing      *prometheus.GaugeVec     // by account_id, destination_id
	settleErrors *prometheus.CounterVec   // by operation
	foreign      prometheus.Counter
	slots        prometheus.Gauge
}

// NewMetrics returns the delivery metrics, registered on reg. Give them to
// the Deliverer in DeliveryConfig.Metrics. It returns the error of
// registering them (prometheus.AlreadyRegisteredError for a second set on
// the same registry).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	const bounded = " Labelled with the ids of routes that exist; a removed route's series go with it."
	m := &Metrics{
		filtered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_delivery_filtered_events_total",
			Help: "Events of a route's sources its subscription's filter left out; they are acknowledged and not delivered." + bounded,
		}, routeLabels),
		delivered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_delivery_delivered_events_total",
			Help: "Events the route's destination accepted." + bounded,
		}, routeLabels),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_delivery_failed_records_total",
			Help: "Records a destination did not accept, at each attempt, by class: retryable or permanent for a record the destination refused in a batch it took, or the class of a call that failed as a whole (throttled, unavailable, access_denied, bad_credentials, not_found, invalid)." + bounded,
		}, append(routeLabels[:3:3], "class")),
		retried: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_delivery_retried_records_total",
			Help: "Records written again after an attempt that did not deliver them." + bounded,
		}, routeLabels),
		deadLettered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_delivery_dead_lettered_events_total",
			Help: "Events stored in SLUICE_DLQ instead of being delivered, by class: permanent (refused for good), too_large (over the destination's record size), filter (the filter failed on the event) or malformed (not an event envelope)." + bounded,
		}, append(routeLabels[:3:3], "class")),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_delivery_latency_seconds",
			Help:    "Time from an event's event_timestamp to its acceptance by the route's destination." + bounded,
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600},
		}, routeLabels),
		records: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_delivery_write_records",
			Help:    "Records per write to a destination (one PutRecords or PutRecordBatch call; PutLogEvents calls, one per 24 hours of events), by destination type.",
			Buckets: []float64{1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000},
		}, []string{"destination_type"}),
		bytes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_delivery_write_bytes",
			Help:    "Bytes per write to a destination, as the service counts them against its limits, by destination type.",
			Buckets: prometheus.ExponentialBuckets(1024, 4, 8), // 1 KiB to 16 MiB
		}, []string{"destination_type"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_delivery_write_duration_seconds",
			Help:    "Duration of a write to a destination, by destination type and outcome: ok (every record accepted), partial (some refused) or failed (the call failed as a whole).",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"destination_type", "outcome"}),
		failing: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_destination_failing",
			Help: "1 while this process's calls to a destination have failed as a whole for longer than --failing-after, 0 once it recovers; only destinations that failed have a series.",
		}, []string{"account_id", "destination_id"}),
		settleErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_delivery_ack_errors_total",
			Help: "Acknowledgements of events to JetStream that failed, by operation: ack, nak, term or in_progress. JetStream hands such an event out again after the consumer's AckWait: a duplicate for an ack or term, a delay for a nak.",
		}, []string{"operation"}),
		foreign: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sluice_delivery_foreign_messages_total",
			Help: "Messages on an event subject without a Nats-Msg-Id, which no publisher of events stores (a JetStream acknowledgement a NATS client sent there as its reply subject): acknowledged, neither delivered nor dead-lettered. Counted by each route that pulls one.",
		}),
		slots: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_delivery_slots",
			Help: "Batches the process may have in delivery at once, all routes together: 256, fewer while its goroutines wait over 10 ms to run (the CPUs are short, and delivery yields them to the API, ingest and the edge).",
		}),
	}
	if err := promreg.Register(reg, "delivery", m.foreign, m.slots, m.filtered, m.delivered, m.failed, m.retried, m.deadLettered, m.latency, m.records, m.bytes, m.duration, m.failing, m.settleErrors); err != nil {
		return nil, err
	}
	return m, nil
}

// forRoute resolves the labelled series of a route once, so that the
// worker's hot path only adds to counters. It returns nil for nil m.
func (m *Metrics) forRoute(r Route) *routeMetrics {
	if m == nil {
		return nil
	}
	labels := prometheus.Labels{
		"account_id":      r.Subscription.AccountID,
		"subscription_id": r.Subscription.ID,
		"destination_id":  r.Destination.ID,
	}
	values := []string{r.Subscription.AccountID, r.Subscription.ID, r.Destination.ID}
	kind := r.Destination.Target.Type()
	duration := m.duration.MustCurryWith(prometheus.Labels{"destination_type": kind})
	return &routeMetrics{
		foreign:         m.foreign,
		filtered:        m.filtered.WithLabelValues(values...),
		delivered:       m.delivered.WithLabelValues(values...),
		retried:         m.retried.WithLabelValues(values...),
		retryable:       m.failed.WithLabelValues(append(values, sinks.Retryable.String())...),
		permanent:       m.failed.WithLabelValues(append(values, sinks.Permanent.String())...),
		failedByClass:   m.failed.MustCurryWith(labels),
		deadLettered:    m.deadLettered.MustCurryWith(labels),
		latency:         m.latency.WithLabelValues(values...),
		records:         m.records.WithLabelValues(kind),
		bytes:           m.bytes.WithLabelValues(kind),
		durationOK:      duration.WithLabelValues(writeOK),
		durationPartial: duration.WithLabelValues(writePartial),
		durationFailed:  duration.WithLabelValues(writeFailed),
	}
}

// forget deletes the series of a route that was removed.
func (m *Metrics) forget(r Route) {
	if m == nil {
		return
	}
	labels := prometheus.Labels{"subscription_id": r.Subscription.ID, "destination_id": r.Destination.ID}
	for _, v := range []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{m.filtered, m.delivered, m.failed, m.retried, m.deadLettered, m.latency} {
		v.DeletePartialMatch(labels)
	}
}

// setFailing sets sluice_destination_failing of a destination.
// setSlots records the delivery slots in use.
func (m *Metrics) setSlots(n int) {
	if m != nil {
		m.slots.Set(float64(n))
	}
}

func (m *Metrics) setFailing(accountID, destinationID string, failing bool) {
	if m == nil {
		return
	}
	v := 0.0
	if failing {
		v = 1
	}
	m.failing.WithLabelValues(accountID, destinationID).Set(v)
}

// Operations of sluice_delivery_ack_errors_total.
const (
	opAck        = "ack"
	opNak        = "nak"
	opTerm       = "term"
	opInProgress = "in_progress"
)

// ackFailed counts an acknowledgement of operation op that failed.
func (m *Metrics) ackFailed(op string) {
	if m != nil {
		m.settleErrors.WithLabelValues(op).Inc()
	}
}

// forgetDestination deletes the failing series of a destination no route
// delivers to any more.
func (m *Metrics) forgetDestination(accountID, destinationID string) {
	if m != nil {
		m.failing.DeleteLabelValues(accountID, destinationID)
	}
}

// routeMetrics are the series of one route. Its methods do nothing on a
// nil *routeMetrics (no metrics).
type routeMetrics struct {
	foreign                      prometheus.Counter
	filtered, delivered, retried prometheus.Counter
	retryable, permanent         prometheus.Counter
	failedByClass, deadLettered  *prometheus.CounterVec
	latency                      prometheus.Observer
	records, bytes               prometheus.Observer
	durationOK, durationPartial  prometheus.Observer
	durationFailed               prometheus.Observer
}

func (m *routeMetrics) foreignMessage() {
	if m != nil {
		m.foreign.Inc()
	}
}

func (m *routeMetrics) filteredOut() {
	if m != nil {
		m.filtered.Inc()
	}
}

func (m *routeMetrics) deadLetter(class string) {
	if m != nil {
		m.deadLettered.WithLabelValues(class).Inc()
	}
}

func (m *routeMetrics) retry(records int) {
	if m != nil {
		m.retried.Add(float64(records))
	}
}

// wrote records the size, duration and outcome of a write.
func (m *routeMetrics) wrote(records, bytes int, took time.Duration, outcome string) {
	if m == nil {
		return
	}
	m.records.Observe(float64(records))
	m.bytes.Observe(float64(bytes))
	switch outcome {
	case writeOK:
		m.durationOK.Observe(took.Seconds())
	case writePartial:
		m.durationPartial.Observe(took.Seconds())
	default:
		m.durationFailed.Observe(took.Seconds())
	}
}

// callFailed counts the records of a write that failed as a whole.
func (m *routeMetrics) callFailed(class sinks.Class, records int) {
	if m != nil {
		m.failedByClass.WithLabelValues(string(class)).Add(float64(records))
	}
}

// accepted records the latency of an event the destination accepted at
// now.
func (m *routeMetrics) accepted(now, eventTime time.Time) {
	if m != nil && !eventTime.IsZero() {
		m.latency.Observe(now.Sub(eventTime).Seconds())
	}
}

// settled counts the outcome of the records of a write the destination
// answered.
func (m *routeMetrics) settled(accepted, retryable, permanent int) {
	if m == nil {
		return
	}
	if accepted > 0 {
		m.delivered.Add(float64(accepted))
	}
	if retryable > 0 {
		m.retryable.Add(float64(retryable))
	}
	if permanent > 0 {
		m.permanent.Add(float64(permanent))
	}
}
