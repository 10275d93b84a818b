package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/internal/retry"
	"github.com/sluicehq/sluice/internal/store"
)

// Defaults of ReconcilerConfig.
const (
	DefaultMaxAckPending = 20_000
	DefaultAckWait       = 30 * time.Second
	// reconcileRetry is how soon a reconciliation that failed (JetStream
	// unreachable) is tried again, and how soon a watch that ended is
	// started again.
	reconcileRetry = time.Second
	// resyncInterval is how often the consumers of every route are checked
	// again, so that one deleted by hand or by a process with an older view
	// of the store comes back.
	resyncInterval = 30 * time.Second
)

// ReconcilerConfig sets the consumers of routes.
type ReconcilerConfig struct {
	// MaxAckPending bounds the events a route has handed out and not yet
	// acknowledged, across every process delivering it; default
	// DefaultMaxAckPending.
	MaxAckPending int
	// AckWait is how long an event handed out and neither acknowledged nor
	// kept in progress waits before JetStream hands it out again (a process
	// died); default DefaultAckWait.
	AckWait time.Duration
}

func (c *ReconcilerConfig) setDefaults() {
	defaults.Positive(&c.MaxAckPending, DefaultMaxAckPending)
	defaults.Positive(&c.AckWait, DefaultAckWait)
}

// ConfigWatcher streams the destinations and subscriptions of every
// account. *store.Store implements it.
type ConfigWatcher interface {
	WatchConfig(ctx context.Context) (<-chan store.ConfigChange, error)
}

// Reconciler keeps a durable consumer on the events stream for every route
// of the store, and tells its caller which routes to deliver. Every sluice
// process runs one; they agree because they watch the same bucket, and the
// consumers they create are the same (creating one that exists with the
// same configuration changes nothing).
type Reconciler struct {
	stream jetstream.Stream
	config ConfigWatcher
	cfg    ReconcilerConfig
	log    *slog.Logger
	// apply is told the routes to deliver after each reconciliation: every
	// route whose consumer exists, by name.
	apply func(ctx context.Context, routes map[string]Route)

	// applied are the filter subjects of the consumers this process made
	// or checked, by consumer name.
	applied map[string][]string
	// ready is whether the last reconciliation, after the store's initial
	// sync, succeeded.
	ready atomic.Bool
}

// NewReconciler returns a reconciler of the routes of config on stream,
// calling apply with the routes to deliver; Run runs it.
func NewReconciler(stream jetstream.Stream, config ConfigWatcher, cfg ReconcilerConfig, log *slog.Logger, apply func(ctx context.Context, routes map[string]Route)) *Reconciler {
	cfg.setDefaults()
	return &Reconciler{stream: stream, config: config, cfg: cfg, log: log, apply: apply, applied: make(map[string][]string)}
}

// Ready reports whether the routes are reconciled: the store's routes were
// read in full and the last reconciliation made or checked every route's
// consumer. It is false until the first reconciliation succeeds, and while
// reconciliations fail.
func (r *Reconciler) Ready() bool { return r.ready.Load() }

// Run watches the store and reconciles until ctx ends; then it returns
// nil. At the start (and whenever the watch starts over) it converges from
// whatever consumers it finds: it creates the missing, updates the
// changed and deletes the route consumers no route needs.
func (r *Reconciler) Run(ctx context.Context) error {
	for {
		if err := r.watch(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("watching the configuration failed; watching again", "error", err)
		}
		if retry.Sleep(ctx, reconcileRetry) != nil {
			return nil
		}
	}
}

// watch runs one watch of the store to its end.
func (r *Reconciler) watch(ctx context.Context) error {
	changes, err := r.config.WatchConfig(ctx)
	if err != nil {
		return err
	}
	state := newConfigState()
	// At the start of a watch, the consumers are checked against the store
	// from scratch: another process may have changed them meanwhile.
	clear(r.applied)
	synced, prune := false, true
	timer := time.NewTimer(resyncInterval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			for range changes { // the watch closes the channel once ctx ends
			}
			return nil
		case <-timer.C:
			// A retry after a failure, or the periodic check that every
			// consumer still exists (one deleted by hand is made again).
			clear(r.applied)
		case ch, ok := <-changes:
			if !ok {
				return errors.New("the watch ended")
			}
			r.record(state, ch, &synced)
			// Take every change already waiting before reconciling once.
			if !r.drain(changes, state, &synced) {
				return errors.New("the watch ended")
			}
		}
		if !synced {
			continue
		}
		next := resyncInterval
		if err := r.reconcile(ctx, state.routes(), prune); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			r.log.Warn("reconciling route consumers failed; retrying", "error", err)
			r.ready.Store(false)
			next = reconcileRetry
		} else {
			prune = false
			r.ready.Store(true)
		}
		timer.Reset(next)
	}
}

// record applies a change to the state.
func (r *Reconciler) record(state *configState, ch store.ConfigChange, synced *bool) {
	if ch.Synced {
		*synced = true
	}
	if ch.Err != nil {
		r.log.Error("a stored resource cannot be read; it routes nothing until fixed", "kind", ch.Kind, "account_id", ch.AccountID, "id", ch.ID, "error", ch.Err)
	}
	state.apply(ch)
}

// drain records the changes waiting on the channel without blocking. It
// returns false if the channel was closed.
func (r *Reconciler) drain(changes <-chan store.ConfigChange, state *configState, synced *bool) bool {
	for {
		select {
		case ch, ok := <-changes:
			if !ok {
				return false
			}
			r.record(state, ch, synced)
		default:
			return true
		}
	}
}

// reconcile makes the consumers match routes, applies the routes whose
// consumers are ready, then deletes the consumers of removed routes, and
// with prune also the route consumers of the stream that no route needs
// (those left by routes removed while no sluice ran).
func (r *Reconciler) reconcile(ctx context.Context, routes map[string]Route, prune bool) error {
	var errs []error
	ready := make(map[string]Route, len(routes))
	for name, route := range routes {
		subjects := route.Subjects()
		if slices.Equal(r.applied[name], subjects) {
			ready[name] = route
			continue
		}
		cfg, err := r.consumerConfig(ctx, route, subjects)
		if err == nil {
			_, err = r.stream.CreateOrUpdateConsumer(ctx, cfg)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("consumer %s: %w", name, err))
			continue
		}
		r.log.Debug("route consumer ready", "route", name, "account_id", route.Subscription.AccountID, "subjects", strings.Join(subjects, " "))
		r.applied[name] = subjects
		ready[name] = route
	}
	// The workers of removed routes stop before their consumers go, so
	// that they hand back what they hold instead of failing on a consumer
	// that vanished.
	r.apply(ctx, ready)
	var removed []string
	for name := range r.applied {
		if _, ok := routes[name]; !ok {
			removed = append(removed, name)
		}
	}
	deleted, err := r.deleteConsumers(ctx, removed)
	for _, name := range deleted {
		delete(r.applied, name)
	}
	if err != nil {
		errs = append(errs, err)
	}
	if prune {
		if err := r.prune(ctx, routes); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// consumerDeletes is how many consumers the reconciler deletes at once. A
// subscription naming 50 destinations leaves 50 consumers to delete, each
// a call to JetStream that takes tens of milliseconds when the process is
// busy: one at a time, they would hold up the next change (another
// subscription deleted) for seconds, its routes delivering meanwhile.
const consumerDeletes = 16

// deleteConsumers deletes the consumers of removed routes, consumerDeletes
// at a time, and returns those it deleted and the errors of the others.
func (r *Reconciler) deleteConsumers(ctx context.Context, names []string) ([]string, error) {
	var (
		mu      sync.Mutex
		deleted []string
		errs    []error
		g       errgroup.Group
	)
	g.SetLimit(consumerDeletes)
	for _, name := range names {
		g.Go(func() error {
			err := r.deleteConsumer(ctx, name)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else {
				deleted = append(deleted, name)
			}
			return nil
		})
	}
	_ = g.Wait() // the errors are in errs
	return deleted, errors.Join(errs...)
}

// prune deletes the route consumers of the stream that no route needs.
func (r *Reconciler) prune(ctx context.Context, routes map[string]Route) error {
	names := r.stream.ConsumerNames(ctx)
	var stray []string
	for name := range names.Name() {
		if _, ok := routes[name]; (isRouteConsumer(name) || isReplayConsumer(name)) && !ok {
			stray = append(stray, name)
		}
	}
	if err := names.Err(); err != nil {
		return fmt.Errorf("listing consumers: %w", err)
	}
	_, err := r.deleteConsumers(ctx, stray)
	return err
}

// deleteConsumer deletes the consumer of a removed route; one already gone
// (another process deleted it) is fine.
func (r *Reconciler) deleteConsumer(ctx context.Context, name string) error {
	err := r.stream.DeleteConsumer(ctx, name)
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("deleting consumer %s: %w", name, err)
	}
	r.log.Debug("route consumer deleted", "route", name)
	return nil
}

// consumerConfig is the durable consumer of a route. A consumer that
// exists keeps where it started; a new one starts at the route's Since,
// the last write of its subscription, so that the events stored since the
// change are delivered even when the consumer is made later (this process
// was down or busy meanwhile); with no Since, at the events stored from
// now on.
func (r *Reconciler) consumerConfig(ctx context.Context, route Route, subjects []string) (jetstream.ConsumerConfig, error) {
	description := "sluice route: subscription " + route.Subscription.ID + " to destination " + route.Destination.ID
	if route.Replay != nil {
		description = "sluice replay " + route.Replay.ID + ": subscription " + route.Subscription.ID + " to destination " + route.Destination.ID
	}
	cfg := jetstream.ConsumerConfig{
		Durable:        route.Name(),
		Description:    description,
		FilterSubjects: subjects,
		DeliverPolicy:  jetstream.DeliverNewPolicy,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        r.cfg.AckWait,
		MaxAckPending:  r.cfg.MaxAckPending,
		MaxDeliver:     -1,
	}
	existing, err := r.stream.Consumer(ctx, cfg.Durable)
	switch {
	case err == nil:
		info := existing.CachedInfo()
		cfg.DeliverPolicy, cfg.OptStartTime, cfg.OptStartSeq = info.Config.DeliverPolicy, info.Config.OptStartTime, info.Config.OptStartSeq
	case !errors.Is(err, jetstream.ErrConsumerNotFound):
		return cfg, err
	case !route.Since.IsZero():
		since := route.Since
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	}
	return cfg, nil
}
