package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/internal/retry"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/sinks"
)

// Defaults of DeliveryConfig.
const (
	DefaultLinger       = 200 * time.Millisecond
	DefaultPrefetch     = 1000
	DefaultRetryInitial = 100 * time.Millisecond
	DefaultRetryMax     = 5 * time.Second
	DefaultRetryBudget  = 30 * time.Second
	DefaultNakDelayMax  = 30 * time.Second
	DefaultConcurrency  = 4
	DefaultRepullAfter  = 10 * time.Second
	// DefaultReplayCheck is how often a replay's worker records the
	// events it replayed and asks whether its range is delivered.
	DefaultReplayCheck = time.Second
)

// DeliveryConfig tunes the delivery of every route.
type DeliveryConfig struct {
	// Linger is how long a batch that is not full waits for more events
	// before it is sent; default DefaultLinger.
	Linger time.Duration
	// Prefetch is the most events a route's worker keeps pulled ahead;
	// default DefaultPrefetch.
	Prefetch int
	// AccountPrefetch is the most events the routes of one account keep
	// pulled ahead in the process, divided between them (each keeps at
	// least 32 and at most Prefetch); default DefaultAccountPrefetch.
	AccountPrefetch int
	// RetryInitial and RetryMax bound the jittered exponential backoff
	// between attempts to send the records of a batch that failed;
	// defaults DefaultRetryInitial and DefaultRetryMax.
	RetryInitial, RetryMax time.Duration
	// RetryBudget is how long a worker keeps retrying a batch itself,
	// keeping its events in progress; after it, the events not delivered
	// are handed back to JetStream with a delay growing with their
	// deliveries, up to NakDelayMax. Defaults DefaultRetryBudget and
	// DefaultNakDelayMax.
	RetryBudget, NakDelayMax time.Duration
	// AckWait must be the AckWait of the route consumers
	// (ReconcilerConfig.AckWait): a batch being retried is kept in
	// progress well within it. Default DefaultAckWait.
	AckWait time.Duration
	// Concurrency is how many batches of a route a worker writes at
	// once; default DefaultConcurrency. While a call fails as a whole,
	// one batch at a time probes the destination.
	Concurrency int
	// DeliverySlots is how many batches the process delivers at once, all
	// routes together, divided between the accounts with batches to
	// deliver: while several have, each may have at most its share of the
	// slots in delivery. Default DefaultDeliverySlots.
	DeliverySlots int
	// WorkSlots is how many events the process filters and selects at
	// once, all routes together, divided between the accounts with events
	// to filter as DeliverySlots are; default the number of CPUs Go uses
	// (GOMAXPROCS).
	WorkSlots int
	// YieldLatency is the scheduling latency past which delivery gives
	// the CPU to the rest of the process, narrowing DeliverySlots while
	// the process's goroutines wait longer than it to run (see governor,
	// run by Deliverer.Govern); default DefaultYieldLatency, negative for
	// never.
	YieldLatency time.Duration
	// FilterCacheSize is how many compiled filters the process keeps;
	// default 4096.
	FilterCacheSize int
	// RepullAfter is how long a route's worker that receives nothing keeps
	// its pull requests before it makes new ones (see the worker's pull);
	// default DefaultRepullAfter, negative for never (for a test to show
	// why it is needed).
	RepullAfter time.Duration
	// Metrics, when not nil, count what the workers deliver, filter out,
	// retry and dead-letter (see NewMetrics).
	Metrics *Metrics
	// Status, when not nil, records the outcome of each write per
	// destination, for GET /event_destinations/{id}/status.
	Status *StatusRecorder
	// Replays, when not nil, is told how many events of its range a
	// replay's route has replayed, and when it has delivered the whole
	// range; without it, replays are delivered but never end.
	Replays ReplayRecorder
	// ReplayCheck is how often a replay's worker tells Replays what it
	// replayed since it last did, and asks its consumer whether the range
	// is delivered; default DefaultReplayCheck.
	ReplayCheck time.Duration
}

func (c *DeliveryConfig) setDefaults() {
	defaults.Positive(&c.Linger, DefaultLinger)
	defaults.Positive(&c.Prefetch, DefaultPrefetch)
	defaults.Positive(&c.RetryInitial, DefaultRetryInitial)
	defaults.Positive(&c.RetryMax, DefaultRetryMax)
	defaults.Positive(&c.RetryBudget, DefaultRetryBudget)
	defaults.Positive(&c.NakDelayMax, DefaultNakDelayMax)
	defaults.Positive(&c.AckWait, DefaultAckWait)
	defaults.Positive(&c.Concurrency, DefaultConcurrency)
	if c.RepullAfter == 0 {
		c.RepullAfter = DefaultRepullAfter
	}
	defaults.Positive(&c.DeliverySlots, DefaultDeliverySlots)
	defaults.Positive(&c.WorkSlots, runtime.GOMAXPROCS(0))
	if c.YieldLatency == 0 {
		c.YieldLatency = DefaultYieldLatency
	}
	defaults.Positive(&c.AccountPrefetch, DefaultAccountPrefetch)
	defaults.Positive(&c.FilterCacheSize, 4096)
	defaults.Positive(&c.ReplayCheck, DefaultReplayCheck)
}

// SinkFactory returns the sink writing to a destination. It must not do
// network I/O: a destination that cannot be reached fails its writes, not
// its construction.
type SinkFactory func(ctx context.Context, d store.Destination) (sinks.Sink, error)

// Deliverer runs one worker per route, delivering the route's events to
// its destination. Its Apply is the Reconciler's apply: it starts the
// workers of new routes, replaces those whose sources or destination
// changed, and stops those of removed routes.
type Deliverer struct {
	js      jetstream.JetStream
	stream  jetstream.Stream
	newSink SinkFactory
	env     *filters.Env
	filters *filters.Cache
	// memo is shared by the routes of every subscription, so that they
	// filter each event once, not once per destination.
	memo *filterMemo
	// shares divide the batches in delivery between accounts; governor,
	// when not nil, narrows them while the CPUs are short.
	shares   *fairShares
	governor *governor
	// work divides the filtering and selecting of events between
	// accounts, and prefetch the events pulled ahead.
	work     *fairShares
	prefetch *prefetchBudget
	// index says which events have a letter held, for every worker.
	index *letterIndex
	cfg   DeliveryConfig
	log   *slog.Logger

	mu      sync.Mutex                // guards workers; held while Apply waits for workers to stop
	workers map[string]*runningWorker // by route name
	wg      sync.WaitGroup

	sinksMu sync.Mutex            // guards sinks; workers take it
	sinks   map[string]cachedSink // by destination id

	// delivering are the routes with a worker, by name, as the last Apply
	// left them, for PendingCollector.
	delivering atomic.Pointer[map[string]Route]
}

type runningWorker struct {
	version string
	plan    *atomic.Pointer[plan]
	cancel  context.CancelFunc
	done    chan struct{}
	// gone is set when the route is removed: its consumer is about to be
	// deleted, with every event it holds, so the worker stops without
	// handing events back.
	gone *atomic.Bool
}

// plan is what a route's worker delivers with: the route, a selector per
// source and the destination's sink. A change of the route swaps the plan
// under the running worker, which keeps its place in the consumer and the
// events it has pulled.
type plan struct {
	routePlan
	route   Route
	metrics *routeMetrics      // nil without DeliveryConfig.Metrics
	status  *destinationStatus // nil without DeliveryConfig.Status
}

type cachedSink struct {
	version string // Route.Destination's version
	sink    sinks.Sink
}

// NewDeliverer returns a deliverer of the routes of stream, publishing
// dead letters through js.
func NewDeliverer(js jetstream.JetStream, stream jetstream.Stream, env *filters.Env, newSink SinkFactory, cfg DeliveryConfig, log *slog.Logger) *Deliverer {
	cfg.setDefaults()
	d := &Deliverer{
		js: js, stream: stream, newSink: newSink, env: env, cfg: cfg, log: log,
		filters:  filters.NewCache(env, cfg.FilterCacheSize),
		memo:     newFilterMemo(filterMemoSlots),
		shares:   newFairShares(cfg.DeliverySlots),
		work:     newFairShares(cfg.WorkSlots),
		prefetch: newPrefetchBudget(cfg.AccountPrefetch, cfg.Prefetch),
		workers:  make(map[string]*runningWorker),
		sinks:    make(map[string]cachedSink),
		index:    newLetterIndex(js),
	}
	if cfg.YieldLatency > 0 {
		d.governor = newGovernor(d.shares, cfg.DeliverySlots, cfg.YieldLatency)
		d.governor.set = cfg.Metrics.setSlots
	}
	cfg.Metrics.setSlots(cfg.DeliverySlots)
	return d
}

// Govern narrows the delivery slots while the process's goroutines wait
// long to run (DeliveryConfig.YieldLatency; see governor), until ctx
// ends. Without YieldLatency, it returns at once.
func (d *Deliverer) Govern(ctx context.Context) {
	if d.governor != nil {
		d.governor.run(ctx)
	}
}

// Apply makes the workers match routes. The workers run until ctx ends,
// Apply stops them, or Stop is called. A route whose plan cannot be built
// (a sink that cannot be made) is logged and left out until the next Apply.
func (d *Deliverer) Apply(ctx context.Context, routes map[string]Route) {
	d.mu.Lock()
	defer d.mu.Unlock()
	// The workers of removed routes are stopped all at once, then waited
	// for: their consumers are deleted next, so what they hold is dropped
	// (gone), not handed back one event at a time.
	var removed []*runningWorker
	for name, w := range d.workers {
		if _, ok := routes[name]; !ok {
			w.gone.Store(true)
			w.cancel()
			removed = append(removed, w)
			delete(d.workers, name)
		}
	}
	for _, w := range removed {
		<-w.done
		if route := w.plan.Load().route; route.Replay == nil {
			// A replay shares the series of its live route.
			d.cfg.Metrics.forget(route)
		}
	}
	for name, route := range routes {
		w := d.workers[name]
		version := route.Version()
		if w != nil && w.version == version {
			continue
		}
		p, err := d.plan(ctx, route)
		if err != nil {
			d.log.Error("cannot deliver a route; trying again at the next change or check", "route", name, "error", err)
			continue
		}
		if w != nil {
			w.plan.Store(p)
			w.version = version
			d.log.Info("route changed", "route", name)
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		w = &runningWorker{version: version, plan: new(atomic.Pointer[plan]), cancel: cancel, done: make(chan struct{}), gone: new(atomic.Bool)}
		w.plan.Store(p)
		d.workers[name] = w
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer close(w.done)
			d.supervise(wctx, name, w.plan, w.gone)
		}()
		d.log.Info("route delivering", "route", name, "account_id", route.Subscription.AccountID, "destination_id", route.Destination.ID)
	}
	delivering := make(map[string]Route, len(d.workers))
	for name, w := range d.workers {
		delivering[name] = w.plan.Load().route
	}
	d.delivering.Store(&delivering)
	// Forget the sinks and status of destinations no route uses any more.
	used := make(map[string]bool, len(routes))
	delivered := make(map[string]bool, len(routes))
	for _, r := range routes {
		used[r.Destination.ID] = true
		delivered[r.Destination.AccountID+"."+r.Destination.ID] = true
	}
	d.cfg.Status.retain(delivered)
	d.sinksMu.Lock()
	for id := range d.sinks {
		if !used[id] {
			delete(d.sinks, id)
		}
	}
	d.sinksMu.Unlock()
}

// Stop stops every worker and waits for them.
func (d *Deliverer) Stop() {
	d.mu.Lock()
	for name, w := range d.workers {
		w.cancel()
		delete(d.workers, name)
	}
	d.delivering.Store(nil)
	d.mu.Unlock()
	d.wg.Wait()
}

// supervise runs the worker of a route until ctx ends, starting it again
// after a failure (its consumer gone a moment) with a growing delay.
func (d *Deliverer) supervise(ctx context.Context, name string, p *atomic.Pointer[plan], gone *atomic.Bool) {
	log := d.log.With("route", name)
	restart := retry.Policy{Initial: d.cfg.RetryInitial, Max: d.cfg.RetryMax}
	delay := restart.Initial
	for ctx.Err() == nil {
		err := d.runWorker(ctx, name, p, gone, log)
		if ctx.Err() != nil {
			return
		}
		log.Warn("route worker stopped; starting it again", "error", err, "in", delay)
		if retry.Sleep(ctx, delay) != nil {
			return
		}
		delay = restart.Next(delay)
	}
}

// runWorker runs the worker of a route on its consumer.
func (d *Deliverer) runWorker(ctx context.Context, name string, p *atomic.Pointer[plan], gone *atomic.Bool, log *slog.Logger) error {
	consumer, err := d.stream.Consumer(ctx, name)
	if err != nil {
		return fmt.Errorf("consumer %s: %w", name, err)
	}
	w := newWorker(p, consumer, d.js, d.cfg, log)
	w.shares, w.work, w.index = d.shares, d.work, d.index
	routes, leave := d.prefetch.join(w.account)
	defer leave()
	w.routes, w.budget = routes, d.prefetch
	w.gone = gone
	return w.run(ctx)
}

// plan builds the plan of a route.
func (d *Deliverer) plan(ctx context.Context, route Route) (*plan, error) {
	sink, err := d.sink(ctx, route.Destination)
	if err != nil {
		return nil, fmt.Errorf("building the sink of destination %s: %w", route.Destination.ID, err)
	}
	rp, err := newRoutePlan(d.env, d.filters, d.memo, route.Subscription, sink)
	if err != nil {
		return nil, err
	}
	return &plan{routePlan: rp, route: route, metrics: d.cfg.Metrics.forRoute(route),
		status: d.cfg.Status.forDestination(route.Destination.AccountID, route.Destination.ID)}, nil
}

// sink returns the sink of the destination, built once per version of the
// destination and shared by its routes.
func (d *Deliverer) sink(ctx context.Context, dest store.Destination) (sinks.Sink, error) {
	version := Route{Destination: dest}.Version()
	d.sinksMu.Lock()
	cached, ok := d.sinks[dest.ID]
	d.sinksMu.Unlock()
	if ok && cached.version == version {
		return cached.sink, nil
	}
	sink, err := d.newSink(ctx, dest)
	if err != nil {
		return nil, err
	}
	d.sinksMu.Lock()
	d.sinks[dest.ID] = cachedSink{version: version, sink: sink}
	d.sinksMu.Unlock()
	return sink, nil
}
