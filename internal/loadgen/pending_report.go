package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// PendingReport is the outcome of RunPending. Memory figures are in bytes.
type PendingReport struct {
	// Config is the configuration the benchmark ran with, defaults applied.
	Config PendingConfig `json:"config"`
	// PublishSeconds is how long publishing every event took.
	PublishSeconds float64 `json:"publish_seconds"`
	// Pending is how many events the route's consumer had not had
	// acknowledged at the end: not yet handed out, or handed out and not
	// acknowledged (Unacknowledged).
	Pending        uint64 `json:"pending"`
	Unacknowledged int    `json:"unacknowledged"`
	// DuplicateWindow is the events stream's: the server keeps the
	// Nats-Msg-Id of every event stored within it in memory, so the
	// memory used depends on the events published in the last
	// DuplicateWindow as well as on those pending.
	DuplicateWindow time.Duration `json:"duplicate_window"`
	// SinkWrites is how many writes the sink refused or left unanswered.
	SinkWrites int64 `json:"sink_writes"`
	// PeakRSS is the peak resident memory of the whole process (VmHWM),
	// publishing included; PublishedRSS the resident memory once every
	// event was published; HoldPeakRSS and EndRSS the highest and the last
	// reading during the hold.
	PeakRSS      uint64 `json:"peak_rss"`
	PublishedRSS uint64 `json:"published_rss"`
	HoldPeakRSS  uint64 `json:"hold_peak_rss"`
	EndRSS       uint64 `json:"end_rss"`
	// GoHeapInuse and GoSys are the Go runtime's heap in use and memory
	// obtained from the system, at the end.
	GoHeapInuse uint64 `json:"go_heap_inuse"`
	GoSys       uint64 `json:"go_sys"`
	// Limit is the most PeakRSS may be (PendingRSSLimit).
	Limit uint64 `json:"limit"`
}

// Format writes the report as a table of the memory figures, in MiB, with
// the verdict on the peak.
func (r PendingReport) Format(w io.Writer) error {
	cfg := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "sluice-bench deliver --pending: %d http_request_complete.v0 events of ~1 KB published in %.1fs to a route whose destination is down (%s sink), delivery running %s more\n",
		cfg.Events, r.PublishSeconds, cfg.Sink, cfg.Hold)
	fmt.Fprintf(&b, "pending for the route at the end: %d (%d unacknowledged); %d writes refused or unanswered; %s %s/%s, GOMAXPROCS %d\n",
		r.Pending, r.Unacknowledged, r.SinkWrites, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	if r.DuplicateWindow > 0 {
		fmt.Fprintf(&b, "the stream's duplicate window is %s: until it has passed since the last publish, the server holds the id of every event published within it\n", r.DuplicateWindow)
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range []struct {
		name  string
		bytes uint64
	}{
		{"peak resident memory, whole run (VmHWM)", r.PeakRSS},
		{"resident once published", r.PublishedRSS},
		{"highest resident during the hold", r.HoldPeakRSS},
		{"resident at the end", r.EndRSS},
		{"Go heap in use at the end", r.GoHeapInuse},
		{"Go memory from the system at the end", r.GoSys},
	} {
		fmt.Fprintf(tw, "%s\t%.1f MiB\t\n", row.name, float64(row.bytes)/(1<<20))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	verdict := fmt.Sprintf("\nthe peak is under the limit of %d MiB\n", r.Limit>>20)
	if err := r.CheckLimit(); err != nil {
		verdict = "\nOVER LIMIT: " + err.Error() + "\n"
	}
	_, err := io.WriteString(w, verdict)
	return err
}

// CheckLimit returns nil when the peak resident memory of the process is
// under Limit, or an error wrapping ErrOverLimit.
func (r PendingReport) CheckLimit() error {
	if r.PeakRSS >= r.Limit {
		return fmt.Errorf("peak resident memory %.1f MiB with %d events pending: %w of %d MiB", float64(r.PeakRSS)/(1<<20), r.Pending, ErrOverLimit, r.Limit>>20)
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (r PendingReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
