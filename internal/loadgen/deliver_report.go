package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
)

// DeliverReport is the outcome of RunDeliver.
type DeliverReport struct {
	// Config is the configuration the benchmark ran with, defaults applied.
	Config DeliverConfig `json:"config"`
	// Filter is the route's filter; Delivered is how many events of the
	// backlog it passes, which the null sink accepted in every run.
	Filter    string `json:"filter"`
	Delivered int    `json:"delivered"`
	// Modes are raw and null-sink, in that order.
	Modes []ModeReport `json:"modes"`
	// NullSinkRatio is the null sink's median rate over the raw median
	// rate; NullSinkFloor is the least the benchmark asks for.
	NullSinkRatio float64 `json:"null_sink_ratio"`
	NullSinkFloor float64 `json:"null_sink_floor"`
	// CPURatio is the raw median CPU time per event over the null sink's:
	// the share of the raw rate the null sink would reach if both were
	// bound by the CPU alone. It varies much less than the rates on a
	// shared machine; no floor applies to it.
	CPURatio float64 `json:"cpu_ratio"`
	// GOMAXPROCS, NumCPU, GoVersion, OS and Arch describe where it ran.
	GOMAXPROCS int    `json:"gomaxprocs"`
	NumCPU     int    `json:"num_cpu"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

// newDeliverReport returns an empty report of the two modes.
func newDeliverReport(cfg DeliverConfig) DeliverReport {
	return DeliverReport{
		Config:        cfg,
		Filter:        deliverFilter,
		Delivered:     passing(cfg.Events),
		Modes:         []ModeReport{{Mode: ModeRawDrain}, {Mode: ModeNullSink}},
		NullSinkFloor: DeliverFloor,
		GOMAXPROCS:    runtime.GOMAXPROCS(0),
		NumCPU:        runtime.NumCPU(),
		GoVersion:     runtime.Version(),
		OS:            runtime.GOOS,
		Arch:          runtime.GOARCH,
	}
}

// summarise fills in the medians and the ratio from the runs.
func (r *DeliverReport) summarise() {
	for i := range r.Modes {
		r.Modes[i].summarise()
	}
	if raw := r.Modes[0].MedianEventsPerSec; raw > 0 {
		r.NullSinkRatio = r.Modes[1].MedianEventsPerSec / raw
	}
	if null := r.Modes[1].MedianCPUMicrosPerEvent; null > 0 {
		r.CPURatio = r.Modes[0].MedianCPUMicrosPerEvent / null
	}
}

// Format writes the report as tables: the drain rate of every run of every
// mode in events per second, the medians, and the null sink's median as a
// share of the raw median beside its floor; then the CPU time and heap
// allocations per event of each mode.
func (r DeliverReport) Format(w io.Writer) error {
	cfg := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "sluice-bench deliver: a backlog of %d http_request_complete.v0 events of ~1 KB per run, file-backed JetStream, embedded server, in-process connection\n", cfg.Events)
	fmt.Fprintf(&b, "route filter %s passes %d; null sink with Kinesis limits; %s %s/%s, GOMAXPROCS %d, %d CPUs\n\n",
		r.Filter, r.Delivered, r.GoVersion, r.OS, r.Arch, r.GOMAXPROCS, r.NumCPU)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := formatModes(w, cfg.Runs, r.Modes, r.verdict); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "\nraw CPU per event over the null sink's: %.2f (the rate ratio if both were bound by the CPU alone)\n", r.CPURatio); err != nil {
		return err
	}
	verdict := "\nevery ratio reaches its floor\n"
	if err := r.CheckFloors(); err != nil {
		verdict = "\nBELOW FLOOR: " + strings.ReplaceAll(err.Error(), "\n", "; ") + "\n"
	}
	_, err := io.WriteString(w, verdict)
	return err
}

// verdict returns the ratio, floor and pass mark of a mode's row.
func (r DeliverReport) verdict(mode string) []string {
	if mode != ModeNullSink {
		return []string{"1.00", "", ""}
	}
	return ratioVerdict(r.NullSinkRatio, r.NullSinkFloor)
}

// CheckFloors returns nil when the null sink's ratio reaches its floor, or
// a *FloorError wrapping ErrBelowFloor. RunDeliver does not call it: a run
// too small to measure, such as a test's, would fail it by chance.
func (r DeliverReport) CheckFloors() error {
	if r.NullSinkRatio < r.NullSinkFloor {
		return &FloorError{Mode: ModeNullSink, Ratio: r.NullSinkRatio, Floor: r.NullSinkFloor}
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (r DeliverReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
