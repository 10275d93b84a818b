package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/sluicehq/sluice/schemas"
)

// DrainRun is one drain of one mode.
type DrainRun struct {
	// Events is the backlog drained.
	Events int `json:"events"`
	// Seconds is the time from the first pull to the consumer having
	// nothing pending or unacknowledged; EventsPerSec is Events over it.
	Seconds      float64 `json:"seconds"`
	EventsPerSec float64 `json:"events_per_sec"`
	// CPUSeconds is the user and system CPU time of the bench process
	// alone meanwhile (the NATS server and the endpoint run in others); 0
	// where the system does not say. CPUMsPer1000 is it in milliseconds
	// per 1,000 events of the backlog.
	CPUSeconds   float64 `json:"cpu_seconds"`
	CPUMsPer1000 float64 `json:"cpu_ms_per_1000_events"`
	// LoadAverage is the machine's one-minute load average read right
	// after the drain; -1 where the system does not say.
	LoadAverage float64 `json:"load_average"`
	// Delivered is how many records the endpoint received; 0 for raw.
	Delivered int64 `json:"delivered"`
	// PullStalls is as RunResult's: the raw loop's pulls that waited for
	// nothing.
	PullStalls int `json:"pull_stalls,omitempty"`
}

// DrainModeReport is every drain of one mode and its medians.
type DrainModeReport struct {
	// Mode is ModeRawDrain, ModePassThrough or ModeFilter.
	Mode string     `json:"mode"`
	Runs []DrainRun `json:"runs"`
	// MedianEventsPerSec and MedianCPUMsPer1000 are the medians of the
	// runs' rates and CPU times.
	MedianEventsPerSec float64 `json:"median_events_per_sec"`
	MedianCPUMsPer1000 float64 `json:"median_cpu_ms_per_1000_events"`
	// Ratio is MedianEventsPerSec over raw's; Floor is the least it may
	// be (0: none).
	Ratio float64 `json:"ratio"`
	Floor float64 `json:"floor,omitempty"`
	// CPULimit is the most MedianCPUMsPer1000 may be (0: none).
	CPULimit float64 `json:"cpu_limit_ms_per_1000_events,omitempty"`
}

// LoadAverages sums up the one-minute load averages read after the
// drains of the rounds.
type LoadAverages struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// DrainReport is the outcome of RunDrain.
type DrainReport struct {
	// Command is the command line that ran the benchmark, when the caller
	// sets it (sluice-bench drain does).
	Command string `json:"command,omitempty"`
	// Config is the configuration the benchmark ran with, defaults applied.
	Config DrainConfig `json:"config"`
	// EventBytes is the average size of an event as stored.
	EventBytes int `json:"event_bytes"`
	// Filter and Fields are the filter mode's; FilterPasses is how many
	// events of the backlog the filter passes.
	Filter       string   `json:"filter"`
	Fields       []string `json:"fields"`
	FilterPasses int      `json:"filter_passes"`
	// Modes are raw, pass-through and filter, in that order.
	Modes []DrainModeReport `json:"modes"`
	// LoadAverage sums up the load averages of the rounds' drains.
	LoadAverage LoadAverages `json:"load_average"`
	// GOMAXPROCS, NumCPU, GoVersion, OS and Arch describe where it ran.
	GOMAXPROCS int    `json:"gomaxprocs"`
	NumCPU     int    `json:"num_cpu"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

// newDrainReport returns an empty report of the three modes.
func newDrainReport(cfg DrainConfig, b *backlog) DrainReport {
	return DrainReport{
		Config:       cfg,
		EventBytes:   b.averageStoredSize(),
		Filter:       deliverFilter,
		Fields:       drainFields,
		FilterPasses: passing(cfg.Events),
		Modes: []DrainModeReport{
			{Mode: ModeRawDrain},
			{Mode: ModePassThrough, Floor: PassThroughFloor, CPULimit: PassThroughCPULimit},
			{Mode: ModeFilter, Floor: FilterFloor},
		},
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		NumCPU:     runtime.NumCPU(),
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
	}
}

// averageStoredSize is the average size of the backlog's events as
// stored, or 0 if one cannot be encoded (publish would then fail).
func (b *backlog) averageStoredSize() int {
	cat := schemas.Default()
	total := 0
	for _, ev := range b.samples {
		enc, err := cat.Encode(withBenchIDs(ev))
		if err != nil {
			return 0
		}
		total += len(enc.Data)
	}
	return total / len(b.samples)
}

// summarise fills in the medians, the ratios and the load averages.
func (r *DrainReport) summarise() {
	var loads []float64
	for i := range r.Modes {
		m := &r.Modes[i]
		m.MedianEventsPerSec = medianOf(m.Runs, func(r DrainRun) float64 { return r.EventsPerSec })
		m.MedianCPUMsPer1000 = medianOf(m.Runs, func(r DrainRun) float64 { return r.CPUMsPer1000 })
		for _, run := range m.Runs {
			if run.LoadAverage >= 0 {
				loads = append(loads, run.LoadAverage)
			}
		}
	}
	if raw := r.Modes[0].MedianEventsPerSec; raw > 0 {
		for i := range r.Modes {
			r.Modes[i].Ratio = r.Modes[i].MedianEventsPerSec / raw
		}
	}
	if len(loads) > 0 {
		r.LoadAverage = LoadAverages{Min: loads[0], Median: median(loads), Max: loads[0]}
		for _, l := range loads {
			r.LoadAverage.Min, r.LoadAverage.Max = min(r.LoadAverage.Min, l), max(r.LoadAverage.Max, l)
		}
	}
}

// CheckFloors returns nil when every mode's ratio reaches its floor and
// its CPU time per 1,000 events is within its limit; otherwise a
// *FloorError (wrapping ErrBelowFloor) for each ratio short of its floor
// and an error wrapping ErrOverLimit for each CPU time over its limit,
// joined. RunDrain does not call it: a run too small to measure, such as a
// test's, would fail it by chance.
func (r DrainReport) CheckFloors() error {
	var errs []error
	for _, m := range r.Modes {
		if m.Floor > 0 && m.Ratio < m.Floor {
			errs = append(errs, &FloorError{Mode: m.Mode, Ratio: m.Ratio, Floor: m.Floor})
		}
		if m.CPULimit > 0 && m.MedianCPUMsPer1000 > m.CPULimit {
			errs = append(errs, fmt.Errorf("%s spent %.2f ms of CPU per 1,000 events: %w of %.1f ms", m.Mode, m.MedianCPUMsPer1000, ErrOverLimit, m.CPULimit))
		}
	}
	return errors.Join(errs...)
}

// Format writes the report as tables: every rate, the medians and each
// median as a share of raw's beside its floor; the CPU time of the bench
// process per 1,000 events beside its limit; the load averages.
func (r DrainReport) Format(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "sluice-bench drain: a backlog of %d http_request_complete.v0 events of %d bytes stored per drain; file-backed JetStream and a minimal Kinesis endpoint, each in a process of its own\n", r.Config.Events, r.EventBytes)
	fmt.Fprintf(&b, "filter mode: %s passes %d, fields %s; %s %s/%s, GOMAXPROCS %d, %d CPUs\n",
		r.Filter, r.FilterPasses, strings.Join(r.Fields, ", "), r.GoVersion, r.OS, r.Arch, r.GOMAXPROCS, r.NumCPU)
	if r.Command != "" {
		fmt.Fprintf(&b, "command: %s\n", r.Command)
	}
	b.WriteString("\nevents per second:\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	err := r.formatTable(w, "median ev/s", func(run DrainRun) float64 { return run.EventsPerSec }, func(m DrainModeReport) []string {
		row := []string{fmt.Sprintf("%.0f", m.MedianEventsPerSec), fmt.Sprintf("%.2f", m.Ratio), "", ""}
		if m.Floor > 0 {
			row = append(row[:1], ratioVerdict(m.Ratio, m.Floor)...)
		}
		return row
	}, "vs raw", "floor")
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\nCPU of the bench process (not the server's, not the endpoint's), ms per 1,000 events:\n"); err != nil {
		return err
	}
	err = r.formatTable(w, "median", func(run DrainRun) float64 { return run.CPUMsPer1000 }, func(m DrainModeReport) []string {
		row := []string{fmt.Sprintf("%.2f", m.MedianCPUMsPer1000), "", ""}
		if m.CPULimit > 0 {
			mark := "ok"
			if m.MedianCPUMsPer1000 > m.CPULimit {
				mark = "OVER LIMIT"
			}
			row = []string{row[0], fmt.Sprintf("≤ %.1f", m.CPULimit), mark}
		}
		return row
	}, "limit")
	if err != nil {
		return err
	}
	l := r.LoadAverage
	verdict := "every mode reaches its floor and limit"
	if err := r.CheckFloors(); err != nil {
		verdict = "MISSED: " + strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	_, err = fmt.Fprintf(w, "\nload average (1 minute) after the rounds' drains: min %.2f, median %.2f, max %.2f\n\n%s\n", l.Min, l.Median, l.Max, verdict)
	return err
}

// formatTable writes a row per mode: the figure of every round, then the
// mode's summary columns, under the column names given.
func (r DrainReport) formatTable(w io.Writer, medianName string, figure func(DrainRun) float64, summary func(DrainModeReport) []string, columns ...string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"mode"}
	for i := range r.Config.Rounds {
		header = append(header, fmt.Sprintf("round %d", i+1))
	}
	header = append(append(append(header, medianName), columns...), "")
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, m := range r.Modes {
		row := []string{m.Mode}
		for _, run := range m.Runs {
			v := figure(run)
			if v >= 100 {
				row = append(row, fmt.Sprintf("%.0f", v))
			} else {
				row = append(row, fmt.Sprintf("%.2f", v))
			}
		}
		row = append(row, summary(m)...)
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}

// WriteJSON writes the report as indented JSON.
func (r DrainReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
