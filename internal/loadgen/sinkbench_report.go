package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrCallsNotFull means a sink's calls carried on average less than
// CallFillFloor of what one call can.
var ErrCallsNotFull = errors.New("calls not full")

// Format writes the report: each sink's rate and call fill in every run,
// and the medians.
func (r SinksReport) Format(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "sluice-bench sinks: a backlog of %d http_request_complete.v0 events of ~1 KB per run, %d passing the route's filter,\n", r.Config.Events, r.Delivered)
	fmt.Fprintf(&b, "delivered through each sink and the AWS SDK into sluice's emulator over loopback; %s, %d CPUs\n\n", r.GoVersion, r.NumCPU)
	fmt.Fprintf(&b, "%-16s %12s %14s %14s %12s %10s\n", "sink", "events/s", "CPU µs/event", "records/call", "call fill", "floor")
	for _, s := range r.Sinks {
		mark := "ok"
		if s.MedianCallFill < r.FillFloor {
			mark = "BELOW"
		}
		fmt.Fprintf(&b, "%-16s %12.0f %14.1f %14.1f %11.1f%% %9.0f%% %s\n", s.Sink, s.MedianEventsPerSec, s.MedianCPUPerEvent, s.MedianRecordsPerCall, 100*s.MedianCallFill, 100*r.FillFloor, mark)
	}
	b.WriteString("\nmedians of the runs; CPU is the whole process's (JetStream and the emulator included) per event delivered;\n")
	b.WriteString("call fill is records per call over the most one call can carry (its record limit, or its byte limit over the average record)\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// CheckFloors returns an error wrapping ErrCallsNotFull for each sink whose
// median call fill is below the floor.
func (r SinksReport) CheckFloors() error {
	var errs []error
	for _, s := range r.Sinks {
		if s.MedianCallFill < r.FillFloor {
			errs = append(errs, fmt.Errorf("%w: %s calls carry %.1f%% of their limit, below %.0f%%", ErrCallsNotFull, s.Sink, 100*s.MedianCallFill, 100*r.FillFloor))
		}
	}
	return errors.Join(errs...)
}

// WriteJSON writes the report as indented JSON.
func (r SinksReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
