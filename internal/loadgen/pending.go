package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/sinks"
)

// rssSample is how often the resident memory is read during the hold.
const rssSample = 100 * time.Millisecond

// ErrOverLimit is wrapped by the error PendingReport.CheckLimit returns.
var ErrOverLimit = errors.New("over its limit")

// RunPending measures the memory sluice uses while events pile up for a
// destination that takes none. On a fresh embedded server it runs the
// reconciler and the deliverer as `sluice serve` does, makes a route of
// every http_request_complete.v0 event to a destination whose sink refuses
// (or never answers) every write, publishes cfg.Events ~1 KB events to it
// while delivery runs, then lets delivery run cfg.Hold longer, reading the
// resident memory of the process (server included) every 100 ms. It writes
// progress to progress (which may be io.Discard).
//
// It returns an error if cfg is not valid, if the server or the route
// cannot be set up, if an event is not stored (wrapping ErrNotStored), if
// the route's consumer does not count every event as pending at the end
// (wrapping ErrStreamCount), if the resident memory cannot be read (only
// Linux says), or ctx's error if ctx ends first.
func RunPending(ctx context.Context, cfg PendingConfig, progress io.Writer) (report PendingReport, err error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return PendingReport{}, fmt.Errorf("pending benchmark config: %w", err)
	}
	b, server, err := startMemoryRun(ctx, cfg.DataDir, "pending")
	if err != nil {
		return PendingReport{}, err
	}
	defer func() {
		if closeErr := server.close(); closeErr != nil && err == nil {
			err = closeErr
		}
	}()
	sink := &downSink{refusing: cfg.Sink == PendingSinkRefusing}
	// The worker logs every failed write; the report counts them instead.
	d := startDelivery(ctx, server, sink.factory, slog.New(slog.DiscardHandler))
	defer d.stop()
	name, err := server.createRoute(ctx, store.Source{Type: "http_request_complete.v0"})
	if err != nil {
		return PendingReport{}, err
	}
	if err := d.waitRoute(ctx); err != nil {
		return PendingReport{}, err
	}
	d.start()

	report = PendingReport{Config: cfg, Limit: PendingRSSLimit}
	fmt.Fprintf(progress, "publishing %d events of about 1 KB to a route whose destination is down (%s)\n", cfg.Events, cfg.Sink)
	start := time.Now()
	if err := b.publish(ctx, server.nc, server.account, cfg.Events); err != nil {
		return PendingReport{}, err
	}
	report.PublishSeconds = time.Since(start).Seconds()
	if report.PublishedRSS, _, err = readRSS(); err != nil {
		return PendingReport{}, err
	}
	fmt.Fprintf(progress, "published in %.1fs; resident %d MiB; delivery runs %s more\n", report.PublishSeconds, report.PublishedRSS>>20, cfg.Hold)

	if err := report.hold(ctx, cfg.Hold); err != nil {
		return PendingReport{}, err
	}
	consumer, err := server.stream.Consumer(ctx, name)
	if err != nil {
		return PendingReport{}, fmt.Errorf("consumer %s: %w", name, err)
	}
	info, err := consumer.Info(ctx)
	if err != nil {
		return PendingReport{}, fmt.Errorf("reading consumer %s: %w", name, err)
	}
	streamInfo, err := server.stream.Info(ctx)
	if err != nil {
		return PendingReport{}, fmt.Errorf("reading stream: %w", err)
	}
	report.DuplicateWindow = streamInfo.Config.Duplicates
	report.Pending = info.NumPending + uint64(info.NumAckPending)
	report.Unacknowledged = info.NumAckPending
	report.SinkWrites = sink.writes.Load()
	if report.Pending != uint64(cfg.Events) {
		return PendingReport{}, fmt.Errorf("%w: %d events published, %d pending for the route", ErrStreamCount, cfg.Events, report.Pending)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	report.GoHeapInuse, report.GoSys = ms.HeapInuse, ms.Sys
	if cfg.HeapProfile != "" {
		if err := writeHeapProfile(cfg.HeapProfile); err != nil {
			return PendingReport{}, err
		}
	}
	return report, nil
}

// hold waits d, reading the resident memory every rssSample, and records
// the highest and the last reading, and the peak of the whole process.
func (r *PendingReport) hold(ctx context.Context, d time.Duration) error {
	end := time.NewTimer(d)
	defer end.Stop()
	tick := time.NewTicker(rssSample)
	defer tick.Stop()
	for {
		rss, peak, err := readRSS()
		if err != nil {
			return err
		}
		r.HoldPeakRSS = max(r.HoldPeakRSS, rss)
		r.EndRSS, r.PeakRSS = rss, peak
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-end.C:
			return nil
		case <-tick.C:
		}
	}
}

// writeHeapProfile writes a heap profile, as of a garbage collection now,
// to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating heap profile: %w", err)
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("writing heap profile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing heap profile: %w", err)
	}
	return nil
}

// downSink takes no record: it stands for a destination that is down.
// Refusing, it fails every write as an unavailable service does; otherwise
// a write waits, unanswered, until delivery stops.
type downSink struct {
	refusing bool
	writes   atomic.Int64
}

func (s *downSink) factory(context.Context, store.Destination) (sinks.Sink, error) { return s, nil }

func (s *downSink) Limits() sinks.Limits { return kinesisLimits }

func (s *downSink) Write(ctx context.Context, _ []sinks.Record) ([]sinks.Result, error) {
	s.writes.Add(1)
	if s.refusing {
		return nil, &sinks.DestinationError{Class: sinks.ClassUnavailable, Code: "ServiceUnavailable", Message: "the benchmark's destination is down"}
	}
	<-ctx.Done()
	return nil, ctx.Err()
}
