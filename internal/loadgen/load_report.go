package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// ErrRSSGrowth is wrapped by the error LoadReport.CheckRSSGrowth returns.
var ErrRSSGrowth = errors.New("resident memory kept growing")

// Latencies are percentiles of the latency from an event's
// event_timestamp (set when its request was built, to the millisecond) to
// the sink's acceptance of its record, in milliseconds.
type Latencies struct {
	P50Millis float64 `json:"p50_ms"`
	P95Millis float64 `json:"p95_ms"`
	P99Millis float64 `json:"p99_ms"`
	MaxMillis float64 `json:"max_ms"`
}

// LoadInterval is the figures of one interval of the publishing.
type LoadInterval struct {
	// ElapsedSeconds is the time from the start to the end of the interval.
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	// InPerSec is the events the API stored, OutPerSec the records the
	// sink accepted, per second of the interval.
	InPerSec  float64 `json:"in_per_sec"`
	OutPerSec float64 `json:"out_per_sec"`
	// Latency is of the events the sink accepted in the interval.
	Latency Latencies `json:"latency"`
	// RSSBytes is the resident memory of the process at the end.
	RSSBytes uint64 `json:"rss_bytes"`
}

// LoadReport is the outcome of RunLoad.
type LoadReport struct {
	Config LoadConfig `json:"config"`
	Filter string     `json:"filter"`
	// Published is the events the API stored; Passing how many of them the
	// route's filter passes; Delivered how many of those the sink accepted
	// at least once; Missing how many it never accepted; Duplicates the
	// records of events it had accepted before; Unexpected the records of
	// events the filter does not pass. Records is every record the sink
	// accepted.
	Published  uint64 `json:"published"`
	Passing    uint64 `json:"passing"`
	Delivered  uint64 `json:"delivered"`
	Missing    uint64 `json:"missing"`
	Duplicates uint64 `json:"duplicates"`
	Unexpected uint64 `json:"unexpected"`
	Records    uint64 `json:"records"`
	// EmulatorRecords is the records the emulator's stream accepted (the
	// emulator sink only).
	EmulatorRecords int64 `json:"emulator_records,omitempty"`
	// Refused is the requests the API refused with 503 and that were
	// posted again.
	Refused uint64 `json:"refused"`
	// DrainTimedOut says the sink had not accepted every passing event
	// within Config.DrainTimeout of the end of publishing.
	DrainTimedOut bool `json:"drain_timed_out"`
	// PublishSeconds is how long events were published; InPerSec the
	// events stored per second of it. OutPerSec is the records the sink
	// accepted per second from the start to its last acceptance, which
	// DrainSeconds after the end of publishing.
	PublishSeconds float64 `json:"publish_seconds"`
	InPerSec       float64 `json:"in_per_sec"`
	OutPerSec      float64 `json:"out_per_sec"`
	DrainSeconds   float64 `json:"drain_seconds"`
	// Latency is of every event the sink accepted.
	Latency Latencies `json:"latency"`
	// PeakRSS is the peak resident memory of the process (VmHWM).
	PeakRSS   uint64         `json:"peak_rss_bytes"`
	Intervals []LoadInterval `json:"intervals"`

	GoVersion  string `json:"go_version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	NumCPU     int    `json:"num_cpu"`
}

func newLoadReport(cfg LoadConfig) LoadReport {
	r := LoadReport{Config: cfg, Filter: deliverFilter}
	r.GoVersion, r.GOMAXPROCS, r.NumCPU = goRuntime()
	return r
}

// sampleWhile runs run, and appends the figures of an interval to the
// report, and writes them to progress, every interval until run returns;
// it returns run's error.
func (r *LoadReport) sampleWhile(ctx context.Context, interval time.Duration, start time.Time, pub *loadPublisher, rec *deliveryRecorder, progress io.Writer, run func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	fmt.Fprintf(progress, "%8s %10s %10s %8s %8s %8s %8s %8s\n", "elapsed", "in/s", "out/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "RSS MiB")
	prevAt, prevStored, prevRecords := start, uint64(0), uint64(0)
	for {
		select {
		case err := <-done:
			return err
		case now := <-tick.C:
			rss, _, err := readRSS()
			if err != nil {
				// Stop the run, and wait for it: no goroutine outlives the call.
				cancel()
				<-done
				return err
			}
			stored, records := pub.stored.Load(), rec.state().records
			dt := now.Sub(prevAt).Seconds()
			iv := LoadInterval{
				ElapsedSeconds: now.Sub(start).Seconds(),
				InPerSec:       float64(stored-prevStored) / dt,
				OutPerSec:      float64(records-prevRecords) / dt,
				Latency:        rec.takeInterval(),
				RSSBytes:       rss,
			}
			prevAt, prevStored, prevRecords = now, stored, records
			r.Intervals = append(r.Intervals, iv)
			fmt.Fprintf(progress, "%7.0fs %10.0f %10.0f %8.0f %8.0f %8.0f %8.0f %8.1f\n", iv.ElapsedSeconds, iv.InPerSec, iv.OutPerSec,
				iv.Latency.P50Millis, iv.Latency.P95Millis, iv.Latency.P99Millis, iv.Latency.MaxMillis, float64(iv.RSSBytes)/(1<<20))
		}
	}
}

// finish fills in the totals once the drain is over.
func (r *LoadReport) finish(start, publishEnd time.Time, pub *loadPublisher, rec *deliveryRecorder) {
	st := rec.state()
	r.Published = pub.stored.Load()
	r.Passing = uint64(passing(int(r.Published)))
	r.Delivered, r.Records, r.Duplicates, r.Unexpected = st.distinct, st.records, st.duplicates, st.unexpected
	r.Missing = rec.missing(r.Published)
	r.Refused = pub.refused.Load()
	r.PublishSeconds = publishEnd.Sub(start).Seconds()
	r.InPerSec = float64(r.Published) / r.PublishSeconds
	if !st.last.IsZero() {
		r.OutPerSec = float64(st.records) / st.last.Sub(start).Seconds()
		r.DrainSeconds = max(0, st.last.Sub(publishEnd).Seconds())
	}
	r.Latency = rec.totalLatencies()
}

// CheckDelivered returns an error wrapping ErrDeliveredCount when the sink
// did not accept every event the filter passes exactly once, accepted an
// event it does not pass, or (emulator) the emulator's count differs.
func (r LoadReport) CheckDelivered() error {
	var errs []error
	if r.Missing > 0 {
		errs = append(errs, fmt.Errorf("%w: %d of %d events passing the filter never delivered", ErrDeliveredCount, r.Missing, r.Passing))
	}
	if r.Duplicates > 0 {
		errs = append(errs, fmt.Errorf("%w: %d records of events delivered before", ErrDeliveredCount, r.Duplicates))
	}
	if r.Unexpected > 0 {
		errs = append(errs, fmt.Errorf("%w: %d records of events the filter does not pass", ErrDeliveredCount, r.Unexpected))
	}
	if r.Config.Sink == LoadSinkEmulator && uint64(r.EmulatorRecords) != r.Records {
		errs = append(errs, fmt.Errorf("%w: the sink accepted %d records, the emulator's stream %d", ErrDeliveredCount, r.Records, r.EmulatorRecords))
	}
	return errors.Join(errs...)
}

// CheckRSSGrowth returns an error wrapping ErrRSSGrowth when
// Config.MaxRSSGrowth is positive and the median resident memory of the
// last third of the intervals exceeds that of the second third by more
// than that share. The first third, the warm-up, is left out. It returns
// nil when there are fewer than 3 intervals.
func (r LoadReport) CheckRSSGrowth() error {
	second, last, ok := r.rssThirds()
	if r.Config.MaxRSSGrowth <= 0 || !ok {
		return nil
	}
	if growth := float64(last)/float64(second) - 1; growth > r.Config.MaxRSSGrowth {
		return fmt.Errorf("%w: median %d MiB in the last third of the run, %d MiB in the second, %.0f%% more (at most %.0f%%)",
			ErrRSSGrowth, last>>20, second>>20, 100*growth, 100*r.Config.MaxRSSGrowth)
	}
	return nil
}

// rssThirds returns the median resident memory of the second and the
// last third of the intervals.
func (r LoadReport) rssThirds() (second, last uint64, ok bool) {
	n := len(r.Intervals)
	if n < 3 {
		return 0, 0, false
	}
	medianRSS := func(ivs []LoadInterval) uint64 {
		rss := make([]uint64, len(ivs))
		for i, iv := range ivs {
			rss[i] = iv.RSSBytes
		}
		slices.Sort(rss)
		return rss[len(rss)/2]
	}
	return medianRSS(r.Intervals[n/3 : 2*n/3]), medianRSS(r.Intervals[2*n/3:]), true
}

// Format writes the report: what ran, the totals, and the checks.
func (r LoadReport) Format(w io.Writer) error {
	cfg := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "sluice-bench load: one process (embedded file-backed JetStream, HTTP API, reconciler, deliverer), sink %s\n", cfg.Sink)
	fmt.Fprintf(&b, "~1 KB http_request_complete.v0 events to POST /events for %s, %s, %d a request, %d in flight; filter %s passes half\n",
		cfg.Duration, rateText(cfg.Rate), cfg.Batch, cfg.Concurrency, r.Filter)
	fmt.Fprintf(&b, "%s, GOMAXPROCS %d, %d CPUs\n\n", r.GoVersion, r.GOMAXPROCS, r.NumCPU)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "in events/s\tout records/s\tp50 ms\tp95 ms\tp99 ms\tmax ms\tpeak RSS MiB\t\n")
	fmt.Fprintf(tw, "%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f\t\n", r.InPerSec, r.OutPerSec,
		r.Latency.P50Millis, r.Latency.P95Millis, r.Latency.P99Millis, r.Latency.MaxMillis, float64(r.PeakRSS)/(1<<20))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\n%d events stored in %.1fs; %d pass the filter; the sink accepted %d of them (%d records), %.1fs after publishing stopped\n",
		r.Published, r.PublishSeconds, r.Passing, r.Delivered, r.Records, r.DrainSeconds)
	fmt.Fprintf(&b, "missing %d, duplicates %d, unexpected %d; requests refused and posted again %d\n", r.Missing, r.Duplicates, r.Unexpected, r.Refused)
	if cfg.Sink == LoadSinkEmulator {
		fmt.Fprintf(&b, "the emulator's stream accepted %d records\n", r.EmulatorRecords)
	}
	if r.DrainTimedOut {
		fmt.Fprintf(&b, "DRAIN TIMED OUT after %s\n", cfg.DrainTimeout)
	}
	if second, last, ok := r.rssThirds(); ok {
		fmt.Fprintf(&b, "median RSS: second third %.1f MiB, last third %.1f MiB\n", float64(second)/(1<<20), float64(last)/(1<<20))
	}
	verdict := "every passing event delivered once\n"
	if err := errors.Join(r.CheckDelivered(), r.CheckRSSGrowth()); err != nil {
		verdict = "FAILED: " + strings.ReplaceAll(err.Error(), "\n", "; ") + "\n"
	}
	b.WriteString(verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as indented JSON.
func (r LoadReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
