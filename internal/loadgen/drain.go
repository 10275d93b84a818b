package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/destinations"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
)

// Names of the sluice modes of the drain benchmark; its baseline is
// ModeRawDrain.
const (
	// ModePassThrough is a route of every http_request_complete.v0 event,
	// whole, to a Kinesis destination at the benchmark's endpoint.
	ModePassThrough = "pass-through"
	// ModeFilter is a route whose filter passes half of the events, with
	// three fields selected, to the same kind of destination.
	ModeFilter = "filter"
)

// drainFields are the fields the filter mode selects.
var drainFields = []string{"conn.client_ip", "http.request.method", "http.response.status_code"}

// Errors of RunDrain.
var (
	// ErrEndpointCount means the endpoint did not count exactly the
	// records the route delivers, or was called for something else.
	ErrEndpointCount = errors.New("endpoint did not receive the records delivered")
)

// drainBench is the state of one RunDrain: the NATS server and the
// Kinesis endpoint in helper processes, and the bench process's
// connection to the server.
type drainBench struct {
	cfg      DrainConfig
	backlog  *backlog
	server   *deliveryServer
	endpoint *helperProcess
	client   *http.Client // reads the endpoint's stats
	log      *slog.Logger
}

// drainPlan is one mode made ready to drain a backlog: the consumer the
// backlog is published to, the timed drain, and an untimed check after
// it, which returns how many records the endpoint received (0 for raw).
type drainPlan struct {
	consumer jetstream.Consumer
	timed    func(context.Context) error
	verify   func(context.Context) (int64, error)
}

// drainBenchMode is one way of draining the backlog.
type drainBenchMode struct {
	name    string
	prepare func(ctx context.Context, env *drainEnv) (drainPlan, error)
}

// RunDrain measures the rate at which each mode drains a backlog of
// cfg.Events events out of a file-backed JetStream server in another
// process, and the CPU time the bench process spends on it: raw (a nats.go
// pull-and-ack loop), pass-through (a route of every event, whole, into
// the Kinesis sink sluice serve builds, writing to a minimal Kinesis
// endpoint in a third process) and filter (the same with a filter passing
// half and three fields selected). It starts both helper processes with
// cfg.Helper and stops them before it returns, on every path. After a
// warm-up round, each of cfg.Rounds rounds measures every mode, starting
// with another mode each round. Before each drain the stream is purged,
// the mode's consumer made and the backlog published (untimed); the clock
// runs from the first pull to the consumer having no event pending and
// none unacknowledged. A line goes to progress after each drain.
//
// It returns an error if cfg is not valid, if a helper, the server or a
// route cannot be set up, if an event is not stored (wrapping
// ErrNotStored or ErrStreamCount), if the endpoint did not receive exactly
// the records a route passes (wrapping ErrEndpointCount), or ctx's error
// if ctx ends first.
func RunDrain(ctx context.Context, cfg DrainConfig, progress io.Writer) (_ DrainReport, err error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return DrainReport{}, fmt.Errorf("drain benchmark config: %w", err)
	}
	b, err := newPaddedBacklog(cfg.EventBytes)
	if err != nil {
		return DrainReport{}, fmt.Errorf("sampling events: %w", err)
	}
	log := slog.New(slog.NewTextHandler(progress, &slog.HandlerOptions{Level: slog.LevelWarn}))
	bench, err := startDrainBench(ctx, cfg, b, log)
	if err != nil {
		return DrainReport{}, err
	}
	defer func() {
		if closeErr := bench.close(); closeErr != nil && err == nil {
			err = closeErr
		}
	}()
	fmt.Fprintf(progress, "NATS server at %s, Kinesis endpoint at %s\n", bench.server.nc.ConnectedUrl(), bench.endpoint.url)
	modes := []drainBenchMode{
		{ModeRawDrain, bench.prepareRaw},
		{ModePassThrough, bench.prepareRoute(store.Source{Type: "http_request_complete.v0"})},
		{ModeFilter, bench.prepareRoute(store.Source{Type: "http_request_complete.v0", Filter: deliverFilter, Fields: filters.Normalize(drainFields)})},
	}
	report := newDrainReport(cfg, b)
	fmt.Fprintf(progress, "warming up: every mode once, not reported\n")
	for _, m := range modes {
		if _, err := bench.measure(ctx, m, 0); err != nil {
			return DrainReport{}, fmt.Errorf("warming up, mode %s: %w", m.name, err)
		}
	}
	for round := 1; round <= cfg.Rounds; round++ {
		for j := range modes {
			i := (j + round - 1) % len(modes)
			m := modes[i]
			result, err := bench.measure(ctx, m, round)
			if err != nil {
				return DrainReport{}, fmt.Errorf("round %d, mode %s: %w", round, m.name, err)
			}
			report.Modes[i].Runs = append(report.Modes[i].Runs, result)
			fmt.Fprintf(progress, "round %d/%d  %-12s  %d events in %.3fs  %6.0f events/s  %5.2f ms CPU per 1,000  load %.2f\n",
				round, cfg.Rounds, m.name, result.Events, result.Seconds, result.EventsPerSec, result.CPUMsPer1000, result.LoadAverage)
		}
	}
	report.summarise()
	return report, nil
}

// startDrainBench starts the helpers and connects to the server, readied
// as sluice serve readies its own. close undoes it.
func startDrainBench(ctx context.Context, cfg DrainConfig, b *backlog, log *slog.Logger) (_ *drainBench, err error) {
	server := &deliveryServer{} // the helper owns its data directory
	bench := &drainBench{cfg: cfg, backlog: b, server: server, client: &http.Client{Timeout: 10 * time.Second}, log: log}
	defer func() {
		if err != nil {
			_ = bench.close()
		}
	}()
	natsHelper, err := startHelper(ctx, cfg.Helper, HelperNATS, dataDirFlag, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	server.closers = append(server.closers, func() {
		if err := natsHelper.stop(); err != nil {
			log.Warn("stopping the NATS helper", "error", err)
		}
	})
	if bench.endpoint, err = startHelper(ctx, cfg.Helper, HelperKinesis); err != nil {
		return nil, err
	}
	// The NATS helper says its URL and the seed file of sluice's identity.
	url, seedFile, _ := strings.Cut(natsHelper.url, " ")
	seed, err := nats.NkeyOptionFromSeed(seedFile)
	if err != nil {
		return nil, fmt.Errorf("reading the seed of the NATS helper: %w", err)
	}
	if server.nc, err = nats.Connect(url, seed, nats.Name("sluice-bench-drain"), nats.ErrorHandler(server.recordAsync)); err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", url, err)
	}
	server.closers = append(server.closers, server.nc.Close)
	if err := server.setUp(ctx); err != nil {
		return nil, err
	}
	return bench, nil
}

// close stops the endpoint, closes the connection and stops the server,
// which removes its directory.
func (d *drainBench) close() error {
	var errs []error
	if d.endpoint != nil {
		errs = append(errs, d.endpoint.stop())
	}
	errs = append(errs, d.server.close())
	return errors.Join(errs...)
}

// measure runs one mode once: it purges the stream, readies the mode,
// publishes the backlog to its consumer, then times its drain. Round 0 is
// the warm-up.
func (d *drainBench) measure(ctx context.Context, m drainBenchMode, round int) (DrainRun, error) {
	events := d.cfg.Events
	if err := d.server.stream.Purge(ctx); err != nil {
		return DrainRun{}, fmt.Errorf("purging the stream: %w", err)
	}
	env := &drainEnv{cfg: DeliverConfig{Events: events}, server: d.server, log: d.log}
	defer func() {
		for i := len(env.onClose) - 1; i >= 0; i-- {
			env.onClose[i]()
		}
	}()
	plan, err := m.prepare(ctx, env)
	if err != nil {
		return DrainRun{}, err
	}
	if err := d.backlog.publish(ctx, d.server.nc, d.server.account, events); err != nil {
		return DrainRun{}, err
	}
	if err := waitPending(ctx, plan.consumer, uint64(events)); err != nil {
		return DrainRun{}, err
	}
	stopProfile, err := startCPUProfile(d.cfg.CPUProfileDir, m.name, round)
	if err != nil {
		return DrainRun{}, err
	}
	drainCtx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	// Leave no garbage of the set-up for the timed part to collect.
	runtime.GC()
	cpuBefore := processCPU()
	start := time.Now()
	err = plan.timed(drainCtx)
	elapsed := time.Since(start)
	cpu := processCPU() - cpuBefore
	if profErr := stopProfile(); err == nil {
		err = profErr
	}
	if err != nil {
		return DrainRun{}, d.server.explain(err)
	}
	result := DrainRun{
		Events:       events,
		Seconds:      elapsed.Seconds(),
		EventsPerSec: float64(events) / elapsed.Seconds(),
		CPUSeconds:   cpu.Seconds(),
		CPUMsPer1000: cpu.Seconds() * 1e6 / float64(events),
		PullStalls:   env.pullStalls,
	}
	if result.LoadAverage, err = readLoadAverage(); err != nil {
		result.LoadAverage = -1 // unknown here
	}
	if plan.verify != nil {
		if result.Delivered, err = plan.verify(ctx); err != nil {
			return DrainRun{}, err
		}
	}
	return result, nil
}

// prepareRaw readies the baseline of bench deliver, prepareRawDrain, on
// the helper's server, and deletes its consumer afterwards.
func (d *drainBench) prepareRaw(ctx context.Context, env *drainEnv) (drainPlan, error) {
	consumer, timed, err := prepareRawDrain(ctx, env)
	if err != nil {
		return drainPlan{}, err
	}
	env.onClose = append(env.onClose, func() {
		d.deleteConsumer(ctx, consumer.CachedInfo().Name)
	})
	return drainPlan{consumer: consumer, timed: timed}, nil
}

// prepareRoute returns the preparation of a route of src to a Kinesis
// destination at the endpoint: a destination with static credentials and
// a subscription made through the store, the reconciler running until it
// has made the route's consumer, and a timed part that hands the route to
// the deliverer and waits until the sink has accepted every record the
// route passes and the consumer is drained. The sink is the one sluice
// serve builds (destinations.Factory), with the endpoint as its AWS
// endpoint; a wrapper counts what it accepted. Afterwards the delivery is
// stopped and the route deleted.
func (d *drainBench) prepareRoute(src store.Source) func(context.Context, *drainEnv) (drainPlan, error) {
	return func(ctx context.Context, env *drainEnv) (drainPlan, error) {
		want := int64(env.cfg.Events)
		if src.Filter != "" {
			want = int64(passing(env.cfg.Events))
		}
		before, err := endpointStats(ctx, d.client, d.endpoint.url)
		if err != nil {
			return drainPlan{}, err
		}
		counted := newCountingSinks(destinations.Factory{Endpoint: d.endpoint.url}.New, want)
		delivery := startDelivery(ctx, env.server, counted.factory, env.log)
		var route drainRoute
		env.onClose = append(env.onClose, func() {
			delivery.stop()
			d.deleteRoute(ctx, route)
		})
		if route, err = d.createRoute(ctx, src); err != nil {
			return drainPlan{}, err
		}
		if err := delivery.waitRoute(ctx); err != nil {
			return drainPlan{}, err
		}
		consumer, err := env.server.stream.Consumer(ctx, route.consumer)
		if err != nil {
			return drainPlan{}, fmt.Errorf("consumer %s: %w", route.consumer, err)
		}
		timed := func(ctx context.Context) error {
			delivery.start()
			if err := counted.wait(ctx); err != nil {
				return fmt.Errorf("%d of %d records accepted: %w", counted.accepted.Load(), want, err)
			}
			return waitDrained(ctx, consumer)
		}
		verify := func(ctx context.Context) (int64, error) {
			after, err := endpointStats(ctx, d.client, d.endpoint.url)
			if err != nil {
				return 0, err
			}
			got, refused := after.Records-before.Records, after.Refused-before.Refused
			if got != want || refused != 0 || counted.accepted.Load() != want {
				return 0, fmt.Errorf("%w: %d events passed the route, the sink accepted %d, the endpoint counted %d records and refused %d requests",
					ErrEndpointCount, want, counted.accepted.Load(), got, refused)
			}
			return got, nil
		}
		return drainPlan{consumer: consumer, timed: timed, verify: verify}, nil
	}
}

// drainRoute is a route the benchmark made: its destination, its
// subscription and its consumer.
type drainRoute struct {
	destination, subscription, consumer string
}

// createRoute creates a Kinesis destination with static credentials and a
// subscription of src to it, through the store, as the API does.
func (d *drainBench) createRoute(ctx context.Context, src store.Source) (drainRoute, error) {
	s := d.server
	dest, err := s.store.CreateDestination(ctx, s.account, store.Destination{Target: store.Target{Kinesis: &store.KinesisTarget{
		Auth:      store.AWSAuth{Creds: &store.AWSCreds{AccessKeyID: "AKIASLUICEBENCH00000", SecretAccessKey: "sluice-bench"}},
		StreamARN: "arn:aws:kinesis:us-east-1:123456789012:stream/sluice-bench",
	}}})
	if err != nil {
		return drainRoute{}, fmt.Errorf("creating the destination: %w", err)
	}
	route := drainRoute{destination: dest.ID}
	sub, err := s.store.CreateSubscription(ctx, s.account, store.Subscription{Sources: []store.Source{src}, DestinationIDs: []string{dest.ID}})
	if err != nil {
		d.deleteRoute(ctx, route)
		return drainRoute{}, fmt.Errorf("creating the subscription: %w", err)
	}
	route.subscription, route.consumer = sub.ID, pipeline.ConsumerName(sub.ID, dest.ID)
	return route, nil
}

// deleteRoute deletes what createRoute made, so that the next mode's
// reconciler makes no route of it. A failure is logged: the next mode's
// count of records would then fail.
func (d *drainBench) deleteRoute(ctx context.Context, route drainRoute) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	s := d.server
	if route.subscription != "" {
		if _, err := s.store.DeleteSubscription(ctx, s.account, route.subscription); err != nil {
			d.log.Warn("deleting the benchmark's subscription", "error", err)
		}
	}
	if route.destination != "" {
		if _, err := s.store.DeleteDestination(ctx, s.account, route.destination); err != nil {
			d.log.Warn("deleting the benchmark's destination", "error", err)
		}
	}
	if route.consumer != "" {
		d.deleteConsumer(ctx, route.consumer)
	}
}

// deleteConsumer deletes a consumer of the events stream; one already
// gone is fine.
func (d *drainBench) deleteConsumer(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := d.server.stream.DeleteConsumer(ctx, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		d.log.Warn("deleting the benchmark's consumer", "consumer", name, "error", err)
	}
}
