package api

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluicehq/sluice/internal/promreg"
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
	if err := promreg.Register(reg, "API", m.audited, m.auditFailed); err != nil {
		return nil, err
	}
	return m, nil
}
