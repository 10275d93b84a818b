package loadgen

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"time"

	"github.com/sluicehq/sluice/internal/destinations"
	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks"
)

// Defaults of SinksConfig.
const (
	DefaultSinksEvents = 100_000
	DefaultSinksRuns   = 3
)

// CallFillFloor is the least share of a call's limit the sinks' calls
// must fill, on average, when the backlog is large.
const CallFillFloor = 0.95

// SinksConfig says how to run the sinks benchmark. The zero value gets the
// defaults.
type SinksConfig struct {
	// Events is the backlog of each run, half of which the route's filter
	// passes; default DefaultSinksEvents. It must be even.
	Events int `json:"events"`
	// Runs is how many times each sink is measured; the report gives the
	// median. Default DefaultSinksRuns.
	Runs int `json:"runs"`
	// DataDir is where each server gets its own temporary directory.
	DataDir string `json:"-"`
	// CPUProfileDir, when set, is where a CPU profile of the timed part of
	// each run is written, as cpu-<sink>-<run>.pprof.
	CPUProfileDir string `json:"-"`
}

func (c *SinksConfig) setDefaults() {
	setDefault(&c.Events, DefaultSinksEvents)
	setDefault(&c.Runs, DefaultSinksRuns)
}

// Validate reports what is wrong with the configuration, defaults applied.
func (c SinksConfig) Validate() error {
	c.setDefaults()
	return validateRuns(c.Events, c.Runs)
}

// benchSink is one kind of destination the benchmark writes to.
type benchSink struct {
	name      string
	service   emulator.Service
	operation string // the put call whose records are counted
	target    func(auth store.AWSAuth) store.Target
	limits    sinks.Limits
	resource  string // the stream, delivery stream or log group
}

// benchSinks are the three destinations, writing to resources named
// sluice-bench in the emulator.
var benchSinks = []benchSink{
	{
		name: "kinesis", service: emulator.ServiceKinesis, operation: "PutRecords", resource: "sluice-bench",
		limits: sinks.Limits{MaxRecords: 500, MaxBatchBytes: 5 << 20, MaxRecordBytes: 1 << 20, CountID: true},
		target: func(auth store.AWSAuth) store.Target {
			return store.Target{Kinesis: &store.KinesisTarget{Auth: auth, StreamARN: "arn:aws:kinesis:us-east-1:123456789012:stream/sluice-bench"}}
		},
	},
	{
		name: "firehose", service: emulator.ServiceFirehose, operation: "PutRecordBatch", resource: "sluice-bench",
		limits: sinks.Limits{MaxRecords: 500, MaxBatchBytes: 4 << 20, MaxRecordBytes: 1000 << 10, RecordOverhead: 1},
		target: func(auth store.AWSAuth) store.Target {
			return store.Target{Firehose: &store.FirehoseTarget{Auth: auth, DeliveryStreamARN: "arn:aws:firehose:us-east-1:123456789012:deliverystream/sluice-bench"}}
		},
	},
	{
		name: "cloudwatch_logs", service: emulator.ServiceLogs, operation: "PutLogEvents", resource: "sluice-bench",
		limits: sinks.Limits{MaxRecords: 10_000, MaxBatchBytes: 1_048_576, MaxRecordBytes: 1_048_576 - 26, RecordOverhead: 26},
		target: func(auth store.AWSAuth) store.Target {
			return store.Target{CloudWatchLogs: &store.CloudWatchLogsTarget{Auth: auth, LogGroupARN: "arn:aws:logs:us-east-1:123456789012:log-group:sluice-bench"}}
		},
	},
}

// SinkRun is one measurement of one sink.
type SinkRun struct {
	Seconds        float64 `json:"seconds"`
	EventsPerSec   float64 `json:"events_per_sec"`
	Calls          int64   `json:"calls"`
	RecordsPerCall float64 `json:"records_per_call"`
	// CallFill is RecordsPerCall over the most records one call can carry:
	// the sink's record limit, or the byte limit over the average record.
	CallFill float64 `json:"call_fill"`
	// CPUMicrosPerEvent is the CPU time of the whole process (the
	// embedded server and the emulator included) over the timed part, per
	// event delivered; 0 where the system does not say.
	CPUMicrosPerEvent float64 `json:"cpu_us_per_event"`
}

// SinkReport is the runs of one sink and their medians.
type SinkReport struct {
	Sink                 string    `json:"sink"`
	Runs                 []SinkRun `json:"runs"`
	MedianEventsPerSec   float64   `json:"median_events_per_sec"`
	MedianRecordsPerCall float64   `json:"median_records_per_call"`
	MedianCallFill       float64   `json:"median_call_fill"`
	MedianCPUPerEvent    float64   `json:"median_cpu_us_per_event"`
}

// SinksReport is the outcome of RunSinks.
type SinksReport struct {
	Config    SinksConfig  `json:"config"`
	Delivered int          `json:"delivered"`
	Sinks     []SinkReport `json:"sinks"`
	FillFloor float64      `json:"fill_floor"`
	GoVersion string       `json:"go_version"`
	NumCPU    int          `json:"num_cpu"`
}

// RunSinks measures each sink writing a route's backlog of ~1 KB events
// into sluice's AWS emulator, through the real AWS SDK over loopback: the
// drain rate, and how full the calls are. Each run starts a fresh embedded
// NATS server and emulator, makes the route, publishes the backlog, then
// times from the start of delivery until the emulator has accepted every
// event the filter passes and the route's consumer is drained.
func RunSinks(ctx context.Context, cfg SinksConfig, progress io.Writer) (SinksReport, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return SinksReport{}, fmt.Errorf("sinks benchmark config: %w", err)
	}
	b, err := newBacklog()
	if err != nil {
		return SinksReport{}, fmt.Errorf("sampling events: %w", err)
	}
	log := slog.New(slog.NewTextHandler(progress, &slog.HandlerOptions{Level: slog.LevelWarn}))
	report := SinksReport{Config: cfg, Delivered: passing(cfg.Events), FillFloor: CallFillFloor, GoVersion: runtime.Version(), NumCPU: runtime.NumCPU()}
	for _, sink := range benchSinks {
		sr := SinkReport{Sink: sink.name}
		for run := 1; run <= cfg.Runs; run++ {
			r, err := measureSink(ctx, cfg, b, log, sink, run)
			if err != nil {
				return SinksReport{}, fmt.Errorf("sink %s, run %d: %w", sink.name, run, err)
			}
			sr.Runs = append(sr.Runs, r)
			fmt.Fprintf(progress, "%-15s run %d/%d  %d events in %.3fs  %6.0f events/s  %.1f µs CPU an event  %d calls, %.1f records a call (%.1f%% of its limit)\n",
				sink.name, run, cfg.Runs, passing(cfg.Events), r.Seconds, r.EventsPerSec, r.CPUMicrosPerEvent, r.Calls, r.RecordsPerCall, 100*r.CallFill)
		}
		sr.MedianEventsPerSec = medianOf(sr.Runs, func(r SinkRun) float64 { return r.EventsPerSec })
		sr.MedianRecordsPerCall = medianOf(sr.Runs, func(r SinkRun) float64 { return r.RecordsPerCall })
		sr.MedianCallFill = medianOf(sr.Runs, func(r SinkRun) float64 { return r.CallFill })
		sr.MedianCPUPerEvent = medianOf(sr.Runs, func(r SinkRun) float64 { return r.CPUMicrosPerEvent })
		report.Sinks = append(report.Sinks, sr)
	}
	return report, nil
}

// measureSink drains one backlog through one sink into a fresh emulator.
func measureSink(ctx context.Context, cfg SinksConfig, b *backlog, log *slog.Logger, sink benchSink, run int) (result SinkRun, err error) {
	server, err := startDeliveryServer(ctx, cfg.DataDir, "sinks-"+sink.name)
	if err != nil {
		return SinkRun{}, err
	}
	defer func() {
		if closeErr := server.close(); closeErr != nil && err == nil {
			err = closeErr
		}
	}()
	emu, stopEmulator, err := startEmulator(ctx)
	if err != nil {
		return SinkRun{}, err
	}
	defer stopEmulator()

	factory := destinations.Factory{Endpoint: emu.endpoint}
	d := startDelivery(ctx, server, factory.New, log)
	defer d.stop()
	auth := store.AWSAuth{Creds: &store.AWSCreds{AccessKeyID: "AKIASLUICEBENCH00000", SecretAccessKey: "sluice-bench"}}
	name, err := server.createRouteTo(ctx, deliverSource(), sink.target(auth))
	if err != nil {
		return SinkRun{}, err
	}
	if err := d.waitRoute(ctx); err != nil {
		return SinkRun{}, err
	}
	consumer, err := server.stream.Consumer(ctx, name)
	if err != nil {
		return SinkRun{}, fmt.Errorf("consumer %s: %w", name, err)
	}
	if err := b.publish(ctx, server.nc, server.account, cfg.Events); err != nil {
		return SinkRun{}, err
	}
	if err := waitPending(ctx, consumer, uint64(cfg.Events)); err != nil {
		return SinkRun{}, err
	}
	want := int64(passing(cfg.Events))
	stopProfile, err := startCPUProfile(cfg.CPUProfileDir, sink.name, run)
	if err != nil {
		return SinkRun{}, err
	}
	drainCtx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	cpu := processCPU()
	start := time.Now()
	d.start()
	err = emu.waitAccepted(drainCtx, sink, want)
	if err == nil {
		err = waitDrained(drainCtx, consumer)
	}
	elapsed := time.Since(start)
	cpu = processCPU() - cpu
	if profErr := stopProfile(); err == nil {
		err = profErr
	}
	if err != nil {
		return SinkRun{}, err
	}
	put := emu.server.Counters(sink.service, sink.resource).ByOperation[sink.operation]
	if put.RecordsAccepted != want {
		return SinkRun{}, fmt.Errorf("%w: the emulator stored %d records, %d events passed the filter", ErrDeliveredCount, put.RecordsAccepted, want)
	}
	result = SinkRun{Seconds: elapsed.Seconds(), EventsPerSec: float64(want) / elapsed.Seconds(), Calls: put.Calls,
		CPUMicrosPerEvent: cpu.Seconds() * 1e6 / float64(want)}
	if put.Calls > 0 {
		result.RecordsPerCall = float64(put.RecordsAccepted) / float64(put.Calls)
		size, err := b.averageRecordSize(sink.limits)
		if err != nil {
			return SinkRun{}, err
		}
		result.CallFill = result.RecordsPerCall / float64(callCapacity(sink.limits, size))
	}
	return result, nil
}

// callCapacity is the most records of the given size one call can carry.
func callCapacity(l sinks.Limits, recordSize int) int {
	return min(l.MaxRecords, l.MaxBatchBytes/recordSize)
}

// benchEmulator is an emulator serving on loopback for one run.
type benchEmulator struct {
	server   *emulator.Server
	endpoint string
}

// startEmulator starts an emulator that creates what a put names; the
// returned func stops it.
func startEmulator(ctx context.Context) (*benchEmulator, func(), error) {
	srv, err := emulator.New(emulator.Config{AutoCreate: true})
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("listening for the emulator: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ctx, ln)
	}()
	return &benchEmulator{server: srv, endpoint: "http://" + ln.Addr().String()}, func() { cancel(); <-done }, nil
}

// waitAccepted waits until the emulator has stored want records of the
// sink's resource.
func (e *benchEmulator) waitAccepted(ctx context.Context, sink benchSink, want int64) error {
	t := time.NewTicker(drainPoll)
	defer t.Stop()
	for {
		got := e.server.Counters(sink.service, sink.resource).ByOperation[sink.operation].RecordsAccepted
		if got >= want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d records stored: %w", got, want, ctx.Err())
		case <-t.C:
		}
	}
}

// averageRecordSize is the average size, as the sink's limits count it, of
// the records of the events the filter passes (the even samples).
func (b *backlog) averageRecordSize(l sinks.Limits) (int, error) {
	cat := schemas.Default()
	total, n := 0, 0
	for i := 0; i < len(b.samples); i += 2 {
		enc, err := cat.Encode(withBenchIDs(b.samples[i]))
		if err != nil {
			return 0, fmt.Errorf("encoding sample %d: %w", i, err)
		}
		total += l.Size(sinks.Record{ID: enc.ID, Data: enc.Data})
		n++
	}
	return total / n, nil
}
