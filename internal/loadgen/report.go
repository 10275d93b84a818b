package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
)

// IngestReport is the outcome of RunIngest.
type IngestReport struct {
	// Config is the configuration the benchmark ran with, defaults applied.
	Config IngestConfig `json:"config"`
	// Modes are raw, producer and http, in that order.
	Modes []ModeReport `json:"modes"`
	// ProducerRatio is the producer's median rate over the raw median rate.
	ProducerRatio float64 `json:"producer_ratio"`
	// HTTPRatio is the HTTP API's median rate over the raw median rate.
	HTTPRatio float64 `json:"http_ratio"`
	// ProducerFloor and HTTPFloor are the least ratios the benchmark asks for.
	ProducerFloor float64 `json:"producer_floor"`
	HTTPFloor     float64 `json:"http_floor"`
	// GOMAXPROCS, NumCPU, GoVersion, OS and Arch describe where it ran.
	GOMAXPROCS int    `json:"gomaxprocs"`
	NumCPU     int    `json:"num_cpu"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

// ModeReport is every measurement of one mode.
type ModeReport struct {
	// Mode is ModeRaw, ModeProducer or ModeHTTP of the ingest benchmark, or
	// ModeRawDrain or ModeNullSink of the delivery benchmark.
	Mode string `json:"mode"`
	// Runs are the measurements, in the order taken.
	Runs []RunResult `json:"runs"`
	// MedianEventsPerSec is the median of the runs' rates.
	MedianEventsPerSec float64 `json:"median_events_per_sec"`
	// MedianCPUMicrosPerEvent, MedianAllocsPerEvent and
	// MedianAllocBytesPerEvent are the medians of the runs' usage.
	MedianCPUMicrosPerEvent  float64 `json:"median_cpu_us_per_event"`
	MedianAllocsPerEvent     float64 `json:"median_allocs_per_event"`
	MedianAllocBytesPerEvent float64 `json:"median_alloc_bytes_per_event"`
}

// RunResult is one measurement of one mode.
type RunResult struct {
	// Events is how many events were published (ingest) or drained
	// (delivery).
	Events int `json:"events"`
	// Stored is how many messages the stream held afterwards.
	Stored uint64 `json:"stored"`
	// Seconds is the time from the first publish to the last ack (ingest),
	// or from the first pull to the consumer having nothing pending or
	// unacknowledged (delivery).
	Seconds float64 `json:"seconds"`
	// EventsPerSec is Events over Seconds.
	EventsPerSec float64 `json:"events_per_sec"`
	// CPUSeconds is the CPU time the whole process (the embedded server
	// included) used meanwhile, user and system; 0 where the system does
	// not say. Unlike the rate, it hardly depends on what else the machine
	// runs.
	CPUSeconds float64 `json:"cpu_seconds"`
	// CPUMicrosPerEvent is CPUSeconds per event, in microseconds.
	CPUMicrosPerEvent float64 `json:"cpu_us_per_event"`
	// AllocsPerEvent and AllocBytesPerEvent are the heap allocations of the
	// whole process meanwhile, per event.
	AllocsPerEvent     float64 `json:"allocs_per_event"`
	AllocBytesPerEvent float64 `json:"alloc_bytes_per_event"`
	// PullStalls is how many times the raw delivery loop waited
	// pipeline.DefaultLinger with no event coming because nats.go had not
	// sent its next pull (see docs/performance.md); 0 for other modes.
	PullStalls int `json:"pull_stalls,omitempty"`
}

// newIngestReport returns an empty report of the three modes.
func newIngestReport(cfg IngestConfig) IngestReport {
	return IngestReport{
		Config:        cfg,
		Modes:         []ModeReport{{Mode: ModeRaw}, {Mode: ModeProducer}, {Mode: ModeHTTP}},
		ProducerFloor: ProducerFloor,
		HTTPFloor:     HTTPFloor,
		GOMAXPROCS:    runtime.GOMAXPROCS(0),
		NumCPU:        runtime.NumCPU(),
		GoVersion:     runtime.Version(),
		OS:            runtime.GOOS,
		Arch:          runtime.GOARCH,
	}
}

// summarise fills in the medians and ratios from the runs.
func (r *IngestReport) summarise() {
	for i := range r.Modes {
		r.Modes[i].summarise()
	}
	raw := r.Modes[0].MedianEventsPerSec
	if raw > 0 {
		r.ProducerRatio = r.Modes[1].MedianEventsPerSec / raw
		r.HTTPRatio = r.Modes[2].MedianEventsPerSec / raw
	}
}

// summarise fills in the medians from the runs.
func (m *ModeReport) summarise() {
	m.MedianEventsPerSec = medianOf(m.Runs, func(r RunResult) float64 { return r.EventsPerSec })
	m.MedianCPUMicrosPerEvent = medianOf(m.Runs, func(r RunResult) float64 { return r.CPUMicrosPerEvent })
	m.MedianAllocsPerEvent = medianOf(m.Runs, func(r RunResult) float64 { return r.AllocsPerEvent })
	m.MedianAllocBytesPerEvent = medianOf(m.Runs, func(r RunResult) float64 { return r.AllocBytesPerEvent })
}

// medianOf returns the median of one figure of the runs.
func medianOf[R any](runs []R, figure func(R) float64) float64 {
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = figure(r)
	}
	return median(xs)
}

// median returns the median of xs, the mean of the middle two for an even
// count, or 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}

// Format writes the report as tables: the rate of every run of every mode
// in events per second, the medians, and each median as a share of the raw
// median beside its floor; then the CPU time and heap allocations per
// event of each mode.
func (r IngestReport) Format(w io.Writer) error {
	cfg := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "sluice-bench ingest: %d http_request_complete.v0 events of ~1 KB per run, file-backed JetStream, embedded server, in-process connection\n", cfg.Events)
	fmt.Fprintf(&b, "HTTP batches of %d, %d in flight; max pending acks %d; %s %s/%s, GOMAXPROCS %d, %d CPUs\n\n",
		cfg.Batch, cfg.Concurrency, cfg.MaxPending, r.GoVersion, r.OS, r.Arch, r.GOMAXPROCS, r.NumCPU)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}

	if err := formatModes(w, cfg.Runs, r.Modes, r.verdict); err != nil {
		return err
	}
	verdict := "\nevery ratio reaches its floor\n"
	if err := r.CheckFloors(); err != nil {
		verdict = "\nBELOW FLOOR: " + strings.ReplaceAll(err.Error(), "\n", "; ") + "\n"
	}
	_, err := io.WriteString(w, verdict)
	return err
}

// formatModes writes the rate of every run of every mode, the medians and
// what verdict says of each mode (its ratio to raw, floor and pass mark);
// then the CPU time and heap allocations per event of each mode.
func formatModes(w io.Writer, runs int, modes []ModeReport, verdict func(mode string) []string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"mode"}
	for i := range runs {
		header = append(header, fmt.Sprintf("run %d", i+1))
	}
	header = append(header, "median ev/s", "vs raw", "floor", "")
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, m := range modes {
		row := []string{m.Mode}
		for _, run := range m.Runs {
			row = append(row, fmt.Sprintf("%.0f", run.EventsPerSec))
		}
		row = append(row, fmt.Sprintf("%.0f", m.MedianEventsPerSec))
		row = append(row, verdict(m.Mode)...)
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if _, err := io.WriteString(w, "\nper event, whole process (server included), medians of the runs:\n"); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tCPU µs\theap allocs\theap bytes\t")
	for _, m := range modes {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.0f\t\n", m.Mode, m.MedianCPUMicrosPerEvent, m.MedianAllocsPerEvent, m.MedianAllocBytesPerEvent)
	}
	return tw.Flush()
}

// ratioVerdict returns the ratio, floor and pass mark of a mode's row.
func ratioVerdict(ratio, floor float64) []string {
	mark := "ok"
	if ratio < floor {
		mark = "BELOW FLOOR"
	}
	return []string{fmt.Sprintf("%.2f", ratio), fmt.Sprintf("≥ %.2f", floor), mark}
}

// verdict returns the ratio, floor and pass mark of a mode's row.
func (r IngestReport) verdict(mode string) []string {
	var ratio, floor float64
	switch mode {
	case ModeProducer:
		ratio, floor = r.ProducerRatio, r.ProducerFloor
	case ModeHTTP:
		ratio, floor = r.HTTPRatio, r.HTTPFloor
	default:
		return []string{"1.00", "", ""}
	}
	return ratioVerdict(ratio, floor)
}

// ErrBelowFloor is wrapped by the error CheckFloors returns when a ratio is
// below its floor.
var ErrBelowFloor = errors.New("below its floor")

// FloorError is a mode whose median rate, as a share of the raw median, is
// below its floor.
type FloorError struct {
	Mode  string  // ModeProducer, ModeHTTP or ModeNullSink
	Ratio float64 // the mode's median rate over the raw median rate
	Floor float64 // the least ratio asked for
}

func (e *FloorError) Error() string {
	return fmt.Sprintf("%s reached %.2f of the raw JetStream rate, %v of %.2f", e.Mode, e.Ratio, ErrBelowFloor, e.Floor)
}

// Unwrap returns ErrBelowFloor.
func (e *FloorError) Unwrap() error { return ErrBelowFloor }

// CheckFloors returns nil when the producer and HTTP ratios reach their
// floors, or a *FloorError (wrapping ErrBelowFloor) for each that does not,
// joined. RunIngest does not call it: a run too small to measure, such as a
// test's, would fail it by chance.
func (r IngestReport) CheckFloors() error {
	var errs []error
	for _, m := range []FloorError{
		{Mode: ModeProducer, Ratio: r.ProducerRatio, Floor: r.ProducerFloor},
		{Mode: ModeHTTP, Ratio: r.HTTPRatio, Floor: r.HTTPFloor},
	} {
		if m.Ratio < m.Floor {
			errs = append(errs, &m)
		}
	}
	return errors.Join(errs...)
}

// WriteJSON writes the report as indented JSON.
func (r IngestReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
