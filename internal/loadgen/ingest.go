package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/natsserver"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
)

// Names of the modes of the ingest benchmark, in the order each run
// measures them.
const (
	// ModeRaw is the baseline: a minimal nats.go asynchronous-publish loop
	// of events already encoded, with no sluice logic.
	ModeRaw = "raw"
	// ModeProducer publishes schemas.Event values through package producer,
	// which validates and encodes each.
	ModeProducer = "producer"
	// ModeHTTP posts JSON array batches to the ingest API over loopback.
	ModeHTTP = "http"
)

// Errors of RunIngest.
var (
	// ErrStreamCount means the stream did not hold exactly the events
	// published after a mode: events were lost or stored twice.
	ErrStreamCount = errors.New("stream does not hold the events published")
	// ErrNotStored means JetStream, the producer or the API reported an
	// event as not stored, or as a duplicate.
	ErrNotStored = errors.New("event not stored")
)

// mode is one way in. prepare readies it on a fresh server, untimed, and
// returns the part that is timed.
type mode struct {
	name    string
	prepare func(ctx context.Context, env *environment) (timed func(context.Context) error, err error)
}

// environment is the fresh server one mode runs against.
type environment struct {
	cfg      IngestConfig
	workload *workload
	nc       *nats.Conn
	js       jetstream.JetStream
	cleanups []func()
}

// onClose registers f to run when the mode is over, before the server stops.
func (e *environment) onClose(f func()) { e.cleanups = append(e.cleanups, f) }

// workload is what every mode of every run publishes.
type workload struct {
	events []schemas.Event
}

// RunIngest measures the ingest rate of each mode cfg.Runs times, writing a
// line to progress after each measurement (progress may be io.Discard). Each
// measurement starts a fresh embedded NATS server with file storage in a
// temporary directory under cfg.DataDir and removes it afterwards.
//
// It returns an error if cfg is not valid, if a server or the API cannot be
// set up, if an event is not stored (wrapping ErrNotStored), if the stream
// does not hold exactly cfg.Events events after a mode (wrapping
// ErrStreamCount), or ctx's error if ctx ends first.
func RunIngest(ctx context.Context, cfg IngestConfig, progress io.Writer) (IngestReport, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return IngestReport{}, fmt.Errorf("ingest benchmark config: %w", err)
	}
	fmt.Fprintf(progress, "sampling %d events of about 1 KB\n", cfg.Events)
	w := &workload{events: sampleEvents(cfg.Events)}

	modes := []mode{
		{ModeRaw, prepareRaw},
		{ModeProducer, prepareProducer},
		{ModeHTTP, prepareHTTP},
	}
	// The first full-size measurement of a process pays for growing the
	// heap into fresh memory (raw took about 30% more CPU per event than in
	// later runs, even after a quarter-size round): a full round that is
	// not reported takes that cost.
	fmt.Fprintf(progress, "warming up: every mode once, not reported\n")
	for _, m := range modes {
		if _, err := measure(ctx, cfg, w, m, 0); err != nil {
			return IngestReport{}, fmt.Errorf("warming up, mode %s: %w", m.name, err)
		}
	}

	report := newIngestReport(cfg)
	for run := 1; run <= cfg.Runs; run++ {
		// Each run starts with another mode, so that none always goes first.
		for j := range modes {
			i := (j + run - 1) % len(modes)
			m := modes[i]
			result, err := measure(ctx, cfg, w, m, run)
			if err != nil {
				return IngestReport{}, fmt.Errorf("run %d, mode %s: %w", run, m.name, err)
			}
			report.Modes[i].Runs = append(report.Modes[i].Runs, result)
			fmt.Fprintf(progress, "run %d/%d  %-8s  %d events in %.3fs  %6.0f events/s  %5.1f µs CPU, %5.1f allocs, %6.0f B per event\n",
				run, cfg.Runs, m.name, result.Events, result.Seconds, result.EventsPerSec,
				result.CPUMicrosPerEvent, result.AllocsPerEvent, result.AllocBytesPerEvent)
		}
	}
	report.summarise()
	return report, nil
}

// measure runs one mode once on a fresh server, publishing every event of
// w, and verifies the stream. Run 0 is the warm-up.
func measure(ctx context.Context, cfg IngestConfig, w *workload, m mode, run int) (result RunResult, err error) {
	dir, err := os.MkdirTemp(cfg.DataDir, "sluice-bench-"+m.name+"-")
	if err != nil {
		return RunResult{}, fmt.Errorf("creating data directory: %w", err)
	}
	defer func() {
		if rmErr := os.RemoveAll(dir); rmErr != nil && err == nil {
			err = fmt.Errorf("removing data directory: %w", rmErr)
		}
	}()
	srv, err := natsserver.Start(natsserver.Config{DataDir: dir})
	if err != nil {
		return RunResult{}, err
	}
	defer srv.Shutdown()
	nc, err := srv.Connect(nats.Name("sluice-bench-" + m.name))
	if err != nil {
		return RunResult{}, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return RunResult{}, fmt.Errorf("creating JetStream context: %w", err)
	}
	stream, err := pipeline.EnsureStream(ctx, js, pipeline.StreamConfig{})
	if err != nil {
		return RunResult{}, err
	}

	env := &environment{cfg: cfg, workload: w, nc: nc, js: js}
	defer func() {
		for i := len(env.cleanups) - 1; i >= 0; i-- {
			env.cleanups[i]()
		}
	}()
	timed, err := m.prepare(ctx, env)
	if err != nil {
		return RunResult{}, err
	}
	stopProfile, err := startCPUProfile(cfg.CPUProfileDir, m.name, run)
	if err != nil {
		return RunResult{}, err
	}
	// Leave no garbage of the set-up for the timed part to collect.
	runtime.GC()
	before := readUsage()
	start := time.Now()
	err = timed(ctx)
	elapsed := time.Since(start)
	after := readUsage()
	if profErr := stopProfile(); err == nil {
		err = profErr
	}
	if err != nil {
		return RunResult{}, err
	}

	stored, err := storedEvents(ctx, stream)
	if err != nil {
		return RunResult{}, err
	}
	published := len(w.events)
	if stored != uint64(published) {
		return RunResult{}, fmt.Errorf("%w: %d events published, %d in stream %s", ErrStreamCount, published, stored, pipeline.EventsStream)
	}
	result = RunResult{
		Events:       published,
		Stored:       stored,
		Seconds:      elapsed.Seconds(),
		EventsPerSec: float64(published) / elapsed.Seconds(),
	}
	result.setUsage(before, after)
	return result, nil
}

// startCPUProfile starts profiling the CPU into dir/cpu-<mode>-<run>.pprof
// (making dir when it does not exist) and returns the function that stops
// it. With dir "" it does nothing.
func startCPUProfile(dir, mode string, run int) (stop func() error, err error) {
	if dir == "" {
		return func() error { return nil }, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making the CPU profiles' directory: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%s-%d.pprof", mode, run)))
	if err != nil {
		return nil, fmt.Errorf("creating CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting CPU profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("writing CPU profile: %w", err)
		}
		return nil
	}, nil
}

// storedEvents returns how many messages the events stream holds.
func storedEvents(ctx context.Context, stream jetstream.Stream) (uint64, error) {
	info, err := stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading stream %s: %w", pipeline.EventsStream, err)
	}
	return info.State.Msgs, nil
}
