package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/loadgen"
)

func newBenchDeliverCommand() *cobra.Command {
	var (
		cfg    loadgen.DeliverConfig
		asJSON bool
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

Progress goes to standard error, the report to standard output.`, loadgen.DeliverFloor),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			report, err := loadgen.RunDeliver(cmd.Context(), cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			write := report.Format
			if asJSON {
				write = report.WriteJSON
			}
			if err := write(cmd.OutOrStdout()); err != nil {
				return err
			}
			if err := report.CheckFloors(); err != nil {
				return fmt.Errorf("bench deliver: %w", err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Events, "events", loadgen.DefaultDeliverEvents, "events of the backlog each mode drains in each run (even; the filter passes half)")
	fl.IntVar(&cfg.Runs, "runs", loadgen.DefaultRuns, "measurements of each mode; the report gives the median")
	fl.StringVar(&cfg.CPUProfileDir, "cpuprofile-dir", "", "write a CPU profile of each timed drain to this directory, as cpu-<mode>-<run>.pprof")
	fl.StringVar(&cfg.DataDir, "data-dir", "", "directory for the servers' temporary data directories (default: the system's temporary directory)")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
