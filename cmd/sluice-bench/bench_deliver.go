package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/loadgen"
)

func newBenchDeliverCommand() *cobra.Command {
	var (
		cfg     loadgen.DeliverConfig
		pending loadgen.PendingConfig
		dataDir string
		memory  bool
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "deliver",
		Short: "Drain a backlog of 1 KB events through a filtered route into a null sink, beside a raw JetStream pull loop",
		Long: fmt.Sprintf(`Drain a backlog of ~1 KB http_request_complete.v0 events from a fresh
embedded, file-backed JetStream server, two ways: a minimal nats.go pull loop
that acknowledges every event (raw, the baseline), and sluice's reconciler and
deliverer running a route made through the store, whose filter
(ev.conn.server_port == 443) passes half of the events, into a sink that
accepts every record at once with Kinesis's limits (null-sink). Each consumer
exists before the backlog is published; the clock runs from the first pull to
the consumer having nothing pending and nothing unacknowledged. Each way runs
once to warm up, then --runs times, taking turns to go first; the table gives
every rate, the medians and the null sink's median as a share of the raw
median, then the CPU time and heap allocations per event of the whole process.

The command fails (exits non-zero) after printing the report when the null
sink's median rate is below %.2f of the raw median.

With --pending it measures memory instead: it publishes --pending-events
events (default %d) to a route whose destination takes none (--pending-sink
refusing fails every write as an unavailable service; blocking never
answers), lets delivery run --hold longer, and reports the peak resident
memory of the process, server included. It fails when the peak reaches
%d MiB.

Progress goes to standard error, the report to standard output.`, loadgen.DeliverFloor, loadgen.DefaultPendingEvents, loadgen.PendingRSSLimit>>20),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.DataDir, pending.DataDir = dataDir, dataDir
			if memory {
				return runBenchPending(cmd, pending, asJSON)
			}
			report, err := loadgen.RunDeliver(cmd.Context(), cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return printReport(cmd, report, asJSON, "bench deliver", report.CheckFloors())
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Events, "events", loadgen.DefaultDeliverEvents, "events of the backlog each mode drains in each run (even; the filter passes half)")
	fl.IntVar(&cfg.Runs, "runs", loadgen.DefaultDeliverRuns, "measurements of each mode; the report gives the median")
	fl.StringVar(&cfg.CPUProfileDir, "cpuprofile-dir", "", "write a CPU profile of each timed drain to this directory, as cpu-<mode>-<run>.pprof")
	fl.BoolVar(&memory, "pending", false, "measure the resident memory with events pending for a destination that is down, instead of the drain rate")
	fl.IntVar(&pending.Events, "pending-events", loadgen.DefaultPendingEvents, "with --pending: events published to the route")
	fl.DurationVar(&pending.Hold, "hold", loadgen.DefaultPendingHold, "with --pending: how long delivery runs once every event is published")
	fl.StringVar(&pending.Sink, "pending-sink", loadgen.PendingSinkRefusing, "with --pending: refusing (fails every write) or blocking (never answers)")
	fl.StringVar(&pending.HeapProfile, "memprofile", "", "with --pending: write a heap profile to this file at the end of the hold")
	fl.StringVar(&dataDir, "data-dir", "", "directory for the servers' temporary data directories (default: the system's temporary directory)")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// runBenchPending runs `sluice-bench deliver --pending`.
func runBenchPending(cmd *cobra.Command, cfg loadgen.PendingConfig, asJSON bool) error {
	report, err := loadgen.RunPending(cmd.Context(), cfg, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	return printReport(cmd, report, asJSON, "bench deliver --pending", report.CheckLimit())
}
