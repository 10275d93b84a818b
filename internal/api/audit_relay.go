package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/internal/promreg"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// Outbox holds the audit events stored with their changes and not yet
// published to SLUICE_EVENTS. store.Outbox implements it.
type Outbox interface {
	// PendingAudits returns the events waiting, oldest first.
	PendingAudits(ctx context.Context) ([]store.PendingAudit, error)
	// AuditPublished takes the event with the id out, once it is in
	// SLUICE_EVENTS; an event no longer there is no error.
	AuditPublished(ctx context.Context, eventID string) error
	// AuditPending reports whether the event with the id waits in the
	// outbox: stored with its change and not yet published.
	AuditPending(ctx context.Context, eventID string) (bool, error)
}

// Defaults of AuditRelayConfig.
const (
	DefaultAuditRelayInterval = 2 * time.Second
	DefaultAuditRelayGrace    = DefaultAuditTimeout + time.Second // past the request's own try
)

// AuditRelayConfig tunes an AuditRelay. The zero value gets the defaults.
type AuditRelayConfig struct {
	// Interval is how often the relay looks for pending events; default
	// DefaultAuditRelayInterval.
	Interval time.Duration
	// Grace is how old a pending event must be before the relay publishes
	// it, so that the process making the change, which publishes it at
	// once, is not raced by every relay; default DefaultAuditRelayGrace.
	Grace time.Duration
	// Metrics is where the relay registers its metrics; nil: nowhere.
	Metrics prometheus.Registerer
	// Catalogue checks the events before they are published again;
	// default schemas.Default().
	Catalogue *schemas.Catalogue
}

func (c *AuditRelayConfig) setDefaults() {
	defaults.Positive(&c.Interval, DefaultAuditRelayInterval)
	defaults.Positive(&c.Grace, DefaultAuditRelayGrace)
	if c.Catalogue == nil {
		c.Catalogue = schemas.Default()
	}
}

// AuditRelay publishes the audit events that wait in the outbox: those
// of changes whose process could not publish them when it made them (the
// events stream refused them, the process died right after answering).
// Every process serving the management API runs one; two relays
// publishing the same event store it once, as its id is its message id
// (within the stream's 2-minute duplicate window; past it, a consumer can
// remove the copy by event_id).
type AuditRelay struct {
	outbox    Outbox
	publisher Publisher
	cfg       AuditRelayConfig
	log       *slog.Logger
	pending   prometheus.Gauge
	relayed   prometheus.Counter
}

// NewAuditRelay returns a relay from outbox to publisher; Run runs it.
// It returns an error if its metrics cannot be registered.
func NewAuditRelay(outbox Outbox, publisher Publisher, cfg AuditRelayConfig, log *slog.Logger) (*AuditRelay, error) {
	cfg.setDefaults()
	r := &AuditRelay{
		outbox:    outbox,
		publisher: publisher,
		cfg:       cfg,
		log:       log,
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_audit_outbox_pending",
			Help: "Audit events stored with their changes and not yet published to SLUICE_EVENTS, as the audit relay last counted them.",
		}),
		relayed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sluice_audit_events_relayed_total",
			Help: "Audit events the audit relay published to SLUICE_EVENTS, for changes whose process had not.",
		}),
	}
	if err := promreg.Register(cfg.Metrics, "audit relay", r.pending, r.relayed); err != nil {
		return nil, err
	}
	return r, nil
}

// Run relays pending events every Interval until ctx ends, and returns
// nil then. A pass that fails is logged and tried again at the next.
func (r *AuditRelay) Run(ctx context.Context) error {
	timer := time.NewTimer(r.cfg.Interval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		if err := r.Relay(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("relaying audit events", "error", err)
		}
		timer.Reset(r.cfg.Interval)
	}
}

// Relay publishes every pending event older than Grace and takes it out
// of the outbox. It returns the first error. A publish that fails ends the
// pass: the events stream refuses writes, and waiting on each of the
// others in turn would only hold the pass (every change of every account
// waits in the outbox then); the next pass tries again.
func (r *AuditRelay) Relay(ctx context.Context) error {
	pending, listErr := r.outbox.PendingAudits(ctx)
	r.pending.Set(float64(len(pending)))
	var firstErr error
	for _, p := range pending {
		if time.Since(p.Stored) < r.cfg.Grace {
			continue
		}
		// The outbox holds only what sluice wrote, so the event is taken
		// back as sluice's own: its kind is one clients may not publish.
		ev, err := r.cfg.Catalogue.RestoreBySluice(p.Event.Data)
		var res producer.Result
		if err == nil {
			res = r.publisher.PublishEncoded(ctx, []schemas.Encoded{ev})[0]
			if res.Err != nil {
				return errors.Join(fmt.Errorf("audit event %s: %w", p.Event.ID, res.Err), firstErr, listErr)
			}
		}
		if err == nil {
			err = r.outbox.AuditPublished(ctx, p.Event.ID)
		}
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("audit event %s: %w", p.Event.ID, err)
			}
			continue
		}
		r.relayed.Inc()
		r.log.Info("relayed an audit event", "event_id", p.Event.ID, "event_type", p.Event.Type, "account_id", p.Event.AccountID, "duplicate", res.Duplicate)
	}
	if listErr != nil {
		return listErr
	}
	return firstErr
}
