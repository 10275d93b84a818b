package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
)

// Names of the modes of the delivery benchmark, in the order each run
// measures them.
const (
	// ModeRawDrain is the baseline of the delivery benchmark: a minimal
	// nats.go pull loop acknowledging every event of the backlog, with no
	// sluice logic.
	ModeRawDrain = "raw"
	// ModeNullSink is sluice's reconciler and deliverer draining the
	// backlog through a filtered route into a sink that accepts every
	// record at once.
	ModeNullSink = "null-sink"
)

// Errors of RunDeliver.
var (
	// ErrDeliveredCount means the sink did not accept exactly the events the
	// route's filter passes: events were lost, or delivered twice.
	ErrDeliveredCount = errors.New("sink did not accept the events selected")
)

// drainTimeout bounds one drain of the backlog.
const drainTimeout = 10 * time.Minute

// drainMode is one way of draining the backlog. prepare readies it on a
// fresh server, untimed, making the consumer the backlog is published to;
// it returns the consumer and the part that is timed, which returns when
// the consumer is drained.
type drainMode struct {
	name    string
	prepare func(ctx context.Context, env *drainEnv) (consumer jetstream.Consumer, timed func(context.Context) error, err error)
}

// drainEnv is the fresh server one mode runs against.
type drainEnv struct {
	cfg     DeliverConfig
	server  *deliveryServer
	log     *slog.Logger
	onClose []func()
	// pullStalls counts the pulls of the raw loop that waited
	// DefaultLinger for nothing.
	pullStalls int
}

// RunDeliver measures the rate at which each mode drains a backlog of
// cfg.Events events, cfg.Runs times, writing a line to progress after each
// measurement (progress may be io.Discard). Each measurement starts a fresh
// embedded NATS server with file storage in a temporary directory under
// cfg.DataDir, makes the mode's consumer, publishes the backlog (untimed),
// then times the drain: from the first pull to the consumer having no event
// pending and none unacknowledged.
//
// It returns an error if cfg is not valid, if a server or a route cannot be
// set up, if an event is not stored (wrapping ErrNotStored), if the null
// sink does not accept exactly the events the filter passes (wrapping
// ErrDeliveredCount), or ctx's error if ctx ends first.
func RunDeliver(ctx context.Context, cfg DeliverConfig, progress io.Writer) (DeliverReport, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return DeliverReport{}, fmt.Errorf("delivery benchmark config: %w", err)
	}
	b, err := newBacklog()
	if err != nil {
		return DeliverReport{}, fmt.Errorf("sampling events: %w", err)
	}
	// Delivery warnings (a worker restarted, a write failed) say why a run
	// failed or was slow.
	log := slog.New(slog.NewTextHandler(progress, &slog.HandlerOptions{Level: slog.LevelWarn}))
	modes := []drainMode{
		{ModeRawDrain, prepareRawDrain},
		{ModeNullSink, prepareNullSink},
	}
	fmt.Fprintf(progress, "warming up: every mode once, not reported\n")
	for _, m := range modes {
		if _, err := measureDrain(ctx, cfg, b, log, m, 0); err != nil {
			return DeliverReport{}, fmt.Errorf("warming up, mode %s: %w", m.name, err)
		}
	}
	report := newDeliverReport(cfg)
	for run := 1; run <= cfg.Runs; run++ {
		// Each run starts with another mode, so that none always goes first.
		for j := range modes {
			i := (j + run - 1) % len(modes)
			m := modes[i]
			result, err := measureDrain(ctx, cfg, b, log, m, run)
			if err != nil {
				return DeliverReport{}, fmt.Errorf("run %d, mode %s: %w", run, m.name, err)
			}
			report.Modes[i].Runs = append(report.Modes[i].Runs, result)
			fmt.Fprintf(progress, "run %d/%d  %-9s  %d events in %.3fs  %6.0f events/s  %5.1f µs CPU, %5.1f allocs, %6.0f B per event\n",
				run, cfg.Runs, m.name, result.Events, result.Seconds, result.EventsPerSec,
				result.CPUMicrosPerEvent, result.AllocsPerEvent, result.AllocBytesPerEvent)
			if result.PullStalls > 0 {
				fmt.Fprintf(progress, "            %d pulls of the raw loop waited %s for nothing\n", result.PullStalls, pipeline.DefaultLinger)
			}
		}
	}
	report.summarise()
	return report, nil
}

// measureDrain runs one mode once on a fresh server: it publishes the
// backlog to the mode's consumer, then times its drain. Run 0 is the
// warm-up.
func measureDrain(ctx context.Context, cfg DeliverConfig, b *backlog, log *slog.Logger, m drainMode, run int) (result RunResult, err error) {
	server, err := startDeliveryServer(ctx, cfg.DataDir, m.name)
	if err != nil {
		return RunResult{}, err
	}
	defer func() {
		if closeErr := server.close(); closeErr != nil && err == nil {
			err = closeErr
		}
	}()
	env := &drainEnv{cfg: cfg, server: server, log: log}
	defer func() {
		for i := len(env.onClose) - 1; i >= 0; i-- {
			env.onClose[i]()
		}
	}()
	consumer, timed, err := m.prepare(ctx, env)
	if err != nil {
		return RunResult{}, err
	}
	if err := b.publish(ctx, server.nc, server.account, cfg.Events); err != nil {
		return RunResult{}, err
	}
	if err := waitPending(ctx, consumer, uint64(cfg.Events)); err != nil {
		return RunResult{}, err
	}

	stopProfile, err := startCPUProfile(cfg.CPUProfileDir, m.name, run)
	if err != nil {
		return RunResult{}, err
	}
	drainCtx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	// Leave no garbage of the set-up for the timed part to collect.
	runtime.GC()
	before := readUsage()
	start := time.Now()
	err = timed(drainCtx)
	elapsed := time.Since(start)
	after := readUsage()
	if profErr := stopProfile(); err == nil {
		err = profErr
	}
	if err != nil {
		return RunResult{}, server.explain(err)
	}
	stored, err := storedEvents(ctx, server.stream)
	if err != nil {
		return RunResult{}, err
	}
	if stored != uint64(cfg.Events) {
		return RunResult{}, fmt.Errorf("%w: %d events published, %d in stream %s", ErrStreamCount, cfg.Events, stored, pipeline.EventsStream)
	}
	result = RunResult{
		Events:       cfg.Events,
		Stored:       stored,
		Seconds:      elapsed.Seconds(),
		EventsPerSec: float64(cfg.Events) / elapsed.Seconds(),
		PullStalls:   env.pullStalls,
	}
	result.setUsage(before, after)
	return result, nil
}

// prepareRawDrain readies the baseline: a durable pull consumer of the
// events' subject, as a route's but made directly, and a timed loop that
// pulls as many events ahead as a route's worker does and acknowledges
// each, with no sluice logic.
func prepareRawDrain(ctx context.Context, env *drainEnv) (jetstream.Consumer, func(context.Context) error, error) {
	consumer, err := env.server.stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:        "bench_raw",
		FilterSubjects: []string{env.server.subject()},
		DeliverPolicy:  jetstream.DeliverNewPolicy,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        pipeline.DefaultAckWait,
		MaxAckPending:  pipeline.DefaultMaxAckPending,
		MaxDeliver:     -1,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("creating the consumer: %w", err)
	}
	events := env.cfg.Events
	return consumer, func(ctx context.Context) error {
		it, err := consumer.Messages(jetstream.PullMaxMessages(pipeline.DefaultPrefetch))
		if err != nil {
			return fmt.Errorf("pulling: %w", err)
		}
		defer it.Stop()
		stopOnCancel := context.AfterFunc(ctx, it.Stop)
		defer stopOnCancel()
		for i := 0; i < events; {
			// A bounded wait, as the worker's while a batch is open: on a
			// busy machine nats.go's iterator can fail to send its next
			// pull, and only a Next that returns and is called again sends
			// it (see docs/performance.md).
			msg, err := it.Next(jetstream.NextMaxWait(pipeline.DefaultLinger))
			switch {
			case err == nil:
			case errors.Is(err, nats.ErrTimeout), errors.Is(err, jetstream.ErrNoHeartbeat):
				env.pullStalls++
				continue
			default:
				return fmt.Errorf("pulling event %d: %w", i, err)
			}
			if err := msg.Ack(); err != nil {
				return fmt.Errorf("acknowledging event %d: %w", i, err)
			}
			i++
		}
		return waitDrained(ctx, consumer)
	}, nil
}

// prepareNullSink readies sluice: a destination and a subscription with
// the filter, made through the store; the reconciler running until it has
// made the route's consumer; and a timed part that hands the route to the
// deliverer and waits until its consumer is drained. The sink accepts every
// record at once.
func prepareNullSink(ctx context.Context, env *drainEnv) (jetstream.Consumer, func(context.Context) error, error) {
	sink := newNullSink(int64(passing(env.cfg.Events)))
	d := startDelivery(ctx, env.server, sink.factory, env.log)
	env.onClose = append(env.onClose, d.stop)
	name, err := env.server.createRoute(ctx, deliverSource())
	if err != nil {
		return nil, nil, err
	}
	if err := d.waitRoute(ctx); err != nil {
		return nil, nil, err
	}
	consumer, err := env.server.stream.Consumer(ctx, name)
	if err != nil {
		return nil, nil, fmt.Errorf("consumer %s: %w", name, err)
	}
	return consumer, func(ctx context.Context) error {
		d.start()
		if err := sink.wait(ctx); err != nil {
			return err
		}
		if err := waitDrained(ctx, consumer); err != nil {
			return err
		}
		if got, want := sink.accepted.Load(), sink.want; got != want {
			return fmt.Errorf("%w: %d records accepted, %d events passed the filter", ErrDeliveredCount, got, want)
		}
		return nil
	}, nil
}

// deliverSource is the source of the benchmark's route: 1 KB HTTP requests,
// filtered to HTTPS, every field delivered.
func deliverSource() store.Source {
	return store.Source{Type: "http_request_complete.v0", Filter: deliverFilter}
}
