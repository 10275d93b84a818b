package loadgen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/natsserver"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
)

// Bounds of the waits of the delivery benchmarks.
const (
	// routeReadyTimeout bounds the wait for a new route's consumer; sluice
	// promises 2 s.
	routeReadyTimeout = 10 * time.Second
	// drainPoll is how often a drained consumer is looked for once every
	// event has been handed out.
	drainPoll = 2 * time.Millisecond
)

// deliveryServer is a fresh embedded server set up as `sluice serve` sets
// up its own: the events and dead-letter streams, the store holding one
// account, and the filter environments.
type deliveryServer struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	stream  jetstream.Stream
	store   *store.Store
	filters *filters.Env
	account string
	closers []func()
	dir     string

	asyncErrs atomic.Int64          // errors the connection reported asynchronously
	lastAsync atomic.Pointer[error] // the last of them
}

// startMemoryRun starts a benchmark that measures the resident memory (the
// load and the pending benchmarks): it checks that the memory can be read
// (only Linux says), samples the events and starts the server, as
// startDeliveryServer does.
func startMemoryRun(ctx context.Context, dataDir, name string) (*backlog, *deliveryServer, error) {
	if _, _, err := readRSS(); err != nil {
		return nil, nil, err
	}
	b, err := newBacklog()
	if err != nil {
		return nil, nil, fmt.Errorf("sampling events: %w", err)
	}
	server, err := startDeliveryServer(ctx, dataDir, name)
	if err != nil {
		return nil, nil, err
	}
	return b, server, nil
}

// startDeliveryServer starts a server storing in a new temporary directory
// under dataDir. Close stops it and removes the directory.
func startDeliveryServer(ctx context.Context, dataDir, name string) (_ *deliveryServer, err error) {
	dir, err := os.MkdirTemp(dataDir, "sluice-bench-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	s := &deliveryServer{dir: dir}
	defer func() {
		if err != nil {
			_ = s.close()
		}
	}()
	srv, err := natsserver.Start(natsserver.Config{DataDir: dir})
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, srv.Shutdown)
	if s.nc, err = srv.Connect(nats.Name("sluice-bench-"+name), nats.ErrorHandler(s.recordAsync)); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, s.nc.Close)
	if err := s.setUp(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// setUp readies the server s.nc is connected to as `sluice serve` does:
// the streams, the filter environments, the store and its account.
func (s *deliveryServer) setUp(ctx context.Context) (err error) {
	if s.js, err = jetstream.New(s.nc); err != nil {
		return fmt.Errorf("creating JetStream context: %w", err)
	}
	if s.stream, err = pipeline.EnsureStream(ctx, s.js, pipeline.StreamConfig{}); err != nil {
		return err
	}
	if _, err = pipeline.EnsureDLQStream(ctx, s.js, 0, 0); err != nil {
		return err
	}
	if s.filters, err = filters.NewEnv(schemas.Default()); err != nil {
		return err
	}
	if s.store, err = store.Open(ctx, s.js, store.Config{}, store.WithFilters(s.filters)); err != nil {
		return err
	}
	account, err := s.store.CreateAccount(ctx, "bench")
	if err != nil {
		return err
	}
	s.account = account.ID
	return nil
}

// recordAsync records an error the connection reports asynchronously,
// such as a subscription dropping messages as a slow consumer.
func (s *deliveryServer) recordAsync(_ *nats.Conn, sub *nats.Subscription, err error) {
	if sub != nil {
		err = fmt.Errorf("subscription %s: %w", sub.Subject, err)
	}
	s.asyncErrs.Add(1)
	s.lastAsync.Store(&err)
}

// explain adds to err the asynchronous errors of the connection, if any:
// they often say why a pull stalled.
func (s *deliveryServer) explain(err error) error {
	last := s.lastAsync.Load()
	if err == nil || last == nil {
		return err
	}
	return fmt.Errorf("%w (the connection reported %d asynchronous errors, the last: %w)", err, s.asyncErrs.Load(), *last)
}

// close stops the server and removes its directory.
func (s *deliveryServer) close() error {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("removing data directory: %w", err)
	}
	return nil
}

// subject is the subject of the benchmark's events.
func (s *deliveryServer) subject() string {
	return schemas.EventSubject(s.account, "http_request_complete.v0")
}

// createRoute creates a Kinesis destination (never called: the benchmark's
// sink factory ignores the target) and a subscription of src to it,
// through the store, as the API does; it returns the name of the route's
// consumer.
func (s *deliveryServer) createRoute(ctx context.Context, src store.Source) (string, error) {
	return s.createRouteTo(ctx, src, store.Target{Kinesis: &store.KinesisTarget{
		Auth:      store.AWSAuth{Role: &store.AWSRole{RoleARN: "arn:aws:iam::123456789012:role/sluice-bench"}},
		StreamARN: "arn:aws:kinesis:us-east-1:123456789012:stream/sluice-bench",
	}})
}

// createRouteTo creates a destination of the target and a subscription of
// the source to it, and returns the name of the route's consumer.
func (s *deliveryServer) createRouteTo(ctx context.Context, src store.Source, target store.Target) (string, error) {
	dest, err := s.store.CreateDestination(ctx, s.account, store.Destination{Target: target})
	if err != nil {
		return "", fmt.Errorf("creating the destination: %w", err)
	}
	sub, err := s.store.CreateSubscription(ctx, s.account, store.Subscription{Sources: []store.Source{src}, DestinationIDs: []string{dest.ID}})
	if err != nil {
		return "", fmt.Errorf("creating the subscription: %w", err)
	}
	return pipeline.ConsumerName(sub.ID, dest.ID), nil
}

// delivery is a reconciler and a deliverer running as `sluice serve` runs
// them, except that the routes reach the deliverer only once start is
// called: the route's consumer exists (and a backlog can build up) before
// any worker pulls from it.
type delivery struct {
	deliverer *pipeline.Deliverer
	ready     chan struct{} // closed when the reconciler first applies a route
	readyOnce sync.Once
	cancel    context.CancelFunc
	done      chan struct{}

	mu      sync.Mutex
	started bool
	ctx     context.Context // the reconciler's, which the workers run under
	routes  map[string]pipeline.Route
}

// startDelivery starts the reconciler of the store's routes; the
// deliverer's sinks are newSink's.
func startDelivery(ctx context.Context, s *deliveryServer, newSink pipeline.SinkFactory, log *slog.Logger) *delivery {
	d := &delivery{
		deliverer: pipeline.NewDeliverer(s.js, s.stream, s.filters, newSink, pipeline.DeliveryConfig{}, log),
		ready:     make(chan struct{}),
		done:      make(chan struct{}),
	}
	rec := pipeline.NewReconciler(s.stream, s.store, pipeline.ReconcilerConfig{}, log, d.apply)
	runCtx, cancel := context.WithCancel(ctx)
	d.cancel = cancel
	governed := make(chan struct{})
	go func() {
		defer close(governed)
		d.deliverer.Govern(runCtx) // as serve's delivery role does
	}()
	go func() {
		defer close(d.done)
		_ = rec.Run(runCtx)
		<-governed
	}()
	return d
}

// apply is the reconciler's: it keeps the routes, and hands them to the
// deliverer once started.
func (d *delivery) apply(ctx context.Context, routes map[string]pipeline.Route) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ctx, d.routes = ctx, routes
	if d.started {
		d.deliverer.Apply(ctx, routes)
	}
	if len(routes) > 0 {
		d.readyOnce.Do(func() { close(d.ready) })
	}
}

// waitRoute waits until the reconciler has made the consumer of a route.
func (d *delivery) waitRoute(ctx context.Context) error {
	t := time.NewTimer(routeReadyTimeout)
	defer t.Stop()
	select {
	case <-d.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("the route's consumer was not made within %s", routeReadyTimeout)
	}
}

// start hands the routes to the deliverer, which starts a worker per route.
func (d *delivery) start() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.started = true
	d.deliverer.Apply(d.ctx, d.routes)
}

// stop stops the reconciler and every worker, and waits for them.
func (d *delivery) stop() {
	d.cancel()
	<-d.done
	d.deliverer.Stop()
}

// pendingTimeout bounds the wait for a consumer to count every event of a
// backlog just published.
const pendingTimeout = 30 * time.Second

// waitPending waits until the consumer counts n events pending. The server
// tells its consumers of new events after it has acknowledged them to the
// publisher, so a busy server's count can lag the publisher's a moment. It
// returns an error wrapping ErrStreamCount if the count is not n within
// pendingTimeout.
func waitPending(ctx context.Context, consumer jetstream.Consumer, n uint64) error {
	ctx, cancel := context.WithTimeout(ctx, pendingTimeout)
	defer cancel()
	t := time.NewTicker(drainPoll)
	defer t.Stop()
	for {
		info, err := consumer.Info(ctx)
		if err != nil {
			return fmt.Errorf("reading consumer %s: %w", consumer.CachedInfo().Name, err)
		}
		if info.NumPending == n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %d events published, %d pending for the consumer after %s", ErrStreamCount, n, info.NumPending, pendingTimeout)
		case <-t.C:
		}
	}
}

// errNotDrained is returned by waitDrained when ctx ends first.
var errNotDrained = errors.New("consumer not drained")

// waitDrained waits until the consumer has no event left to hand out and
// none handed out and not acknowledged, polling its state.
func waitDrained(ctx context.Context, consumer jetstream.Consumer) error {
	t := time.NewTicker(drainPoll)
	defer t.Stop()
	for {
		info, err := consumer.Info(ctx)
		if err != nil {
			return fmt.Errorf("reading consumer %s: %w", consumer.CachedInfo().Name, err)
		}
		if info.NumPending == 0 && info.NumAckPending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %d events pending, %d unacknowledged: %w", errNotDrained, info.NumPending, info.NumAckPending, ctx.Err())
		case <-t.C:
		}
	}
}
