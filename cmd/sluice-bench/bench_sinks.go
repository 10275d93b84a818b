package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/loadgen"
)

func newBenchSinksCommand() *cobra.Command {
	var (
		cfg    loadgen.SinksConfig
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "sinks",
		Short: "Drain a backlog of 1 KB events through the Kinesis, Firehose and CloudWatch Logs sinks into sluice's AWS emulator",
		Long: fmt.Sprintf(`Drain a backlog of ~1 KB http_request_complete.v0 events through a filtered
route (ev.conn.server_port == 443, half of them) and each real sink, Kinesis,
Firehose and CloudWatch Logs, through the AWS SDK into sluice's emulator over
loopback. Each run starts a fresh embedded JetStream server and emulator; the
clock runs from the start of delivery until the emulator has stored every event
the filter passes and the route's consumer is drained.

The report gives each sink's events per second, the process's CPU time per
event (JetStream and the emulator included: they run in the same process),
records per AWS call, and the call fill: records per call over the most one call can carry. The command
fails (exits non-zero) after printing the report when a sink's median call fill
is below %.0f%%. The emulator's own ceiling, measured alone, is
go test -run '^$' -bench . ./internal/emulator.

Progress goes to standard error, the report to standard output.`, 100*loadgen.CallFillFloor),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			report, err := loadgen.RunSinks(cmd.Context(), cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return printReport(cmd, report, asJSON, "bench sinks", report.CheckFloors())
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Events, "events", loadgen.DefaultSinksEvents, "events each run publishes; the filter passes half")
	fl.IntVar(&cfg.Runs, "runs", loadgen.DefaultSinksRuns, "measurements of each sink; the report gives the median")
	fl.StringVar(&cfg.DataDir, "data-dir", "", "directory for the servers' temporary data directories (default: the system's temporary directory)")
	fl.StringVar(&cfg.CPUProfileDir, "cpuprofile-dir", "", "write a CPU profile of each timed drain to this directory, as cpu-<sink>-<run>.pprof")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
