package api

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics of the management API; the front door's are apiconv.FrontDoor's, and
// those of POST /events package ingest's. Labels are bounded: event types
// come from the catalogue.
type metrics struct {
	// audited and auditFailed count the audit events of management calls,
	// stored or not, by event_type.
	audited, auditFailed *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		audited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_audit_events_total",
			Help: "Audit events of changes made through the management API published to SLUICE_EVENTS when the change was made, by event type.",
		}, []string{"event_type"}),
		auditFailed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_audit_events_failed_total",
			Help: "Audit events of changes made through the management API that could not be published to SLUICE_EVENTS within the audit timeout when the change was made; each was stored with its change and waits in the store's outbox for the audit relay (sluice_audit_outbox_pending), by event type.",
		}, []string{"event_type"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.audited, m.auditFailed} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering API metrics: %w", err)
		}
	}
	return m, nil
}
