package ingest

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluicehq/sluice/internal/promreg"
)

// metrics of ingest. Labels are bounded: event types come from the
// catalogue (only known kinds are stored), reasons and codes from fixed
// sets. The front door's (refusals, requests and bytes in flight) are
// apiconv.FrontDoor's.
type metrics struct {
	events     *prometheus.CounterVec // stored, by event_type
	duplicates prometheus.Counter
	rejected   *prometheus.CounterVec // by reason
	unknown    *prometheus.CounterVec // unknown object fields, by event_type
	requests   *prometheus.CounterVec // responses of POST /events, by HTTP status code
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_ingest_events_total",
			Help: "Events stored through the HTTP ingest API, by event type.",
		}, []string{"event_type"}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sluice_ingest_duplicate_events_total",
			Help: "Events sent again with an id already stored; they were not stored twice.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_ingest_rejected_events_total",
			Help: "Events not stored, by reason: invalid (failed validation, or in a batch with an invalid event), too_large (over the NATS server's max_payload) or unavailable (JetStream did not acknowledge them).",
		}, []string{"reason"}),
		unknown: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_ingest_unknown_fields_total",
			Help: "Object fields the catalogue does not declare in stored events (duplicates not counted), kept and delivered as they are, by event type.",
		}, []string{"event_type"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_ingest_requests_total",
			Help: "Responses to POST /events, by HTTP status code, including requests refused before their body was read (version, API key, too many in flight) and failures.",
		}, []string{"code"}),
	}
	if err := promreg.Register(reg, "ingest", m.events, m.duplicates, m.rejected, m.unknown, m.requests); err != nil {
		return nil, err
	}
	return m, nil
}
