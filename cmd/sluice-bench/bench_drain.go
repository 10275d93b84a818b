package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/internal/loadgen"
)

// drainHelperCommand is the hidden command of `sluice-bench` that runs a
// helper process of `sluice-bench drain`.
const drainHelperCommand = "drain-helper"

func newBenchDrainCommand() *cobra.Command {
	var (
		cfg    loadgen.DrainConfig
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "drain",
		Short: "Drain a backlog of events from JetStream in another process into a minimal Kinesis endpoint in a third, beside a raw pull-and-ack loop",
		Long: fmt.Sprintf(`Drain a backlog of http_request_complete.v0 events of about --event-bytes
bytes each as stored (default %d) from a file-backed JetStream server
running in a process of its own (this binary, re-executed), three ways: a nats.go pull loop acknowledging every event and writing
nothing (raw, the baseline); pass-through, a route of every event, whole, to
a Kinesis destination; and filter, a route whose filter
(ev.conn.server_port == 443) passes half of the events, with three fields
selected. Both routes are made through the store and delivered by sluice's
reconciler and deliverer with the Kinesis sink sluice serve builds (static
credentials, the endpoint overridden), writing to a minimal Kinesis endpoint
in a third process, which answers PutRecords with success and stores
nothing. Before each drain the stream is purged, the mode's consumer made
and --events events published; the clock runs from the first pull to the
consumer having nothing pending and nothing unacknowledged.

After a warm-up round, each of --rounds rounds drains every mode, starting
with another each round. The report gives every rate, the medians, each
median as a share of raw's, the CPU time of this process alone per 1,000
events, the one-minute load average after each drain, and the command.

The command fails (exits non-zero) after printing the report when
pass-through's median rate is below %.2f of raw's, filter's below %.2f, or
pass-through's median CPU time above %.0f ms per 1,000 events.

Progress goes to standard error, the report to standard output.`, loadgen.DefaultDrainEventBytes, loadgen.PassThroughFloor, loadgen.FilterFloor, loadgen.PassThroughCPULimit),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding this binary to run the helpers: %w", err)
			}
			cfg.Helper = []string{self, drainHelperCommand}
			report, err := loadgen.RunDrain(cmd.Context(), cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			report.Command = commandLine(cmd)
			return printReport(cmd, report, asJSON, "bench drain", report.CheckFloors())
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Events, "events", loadgen.DefaultDrainEvents, "events of the backlog each mode drains in each round (even; the filter passes half)")
	fl.IntVar(&cfg.EventBytes, "event-bytes", loadgen.DefaultDrainEventBytes, "about how large each event is as stored: the ~1 KB events of the other benchmarks are padded with a request header")
	fl.IntVar(&cfg.Rounds, "rounds", loadgen.DefaultDrainRounds, "rounds, each draining every mode once; the report gives the medians")
	fl.StringVar(&cfg.DataDir, "data-dir", "", "directory for the server's temporary data directory (default: the system's temporary directory)")
	fl.StringVar(&cfg.CPUProfileDir, "cpuprofile-dir", "", "write a CPU profile of this process during each timed drain to this directory, as cpu-<mode>-<round>.pprof")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// newBenchDrainHelperCommand returns the hidden `sluice-bench
// drain-helper`, which `sluice-bench drain` runs in processes of their own:
// the NATS server (nats) and the minimal Kinesis endpoint (kinesis). It
// prints its URL and serves until its standard input ends.
func newBenchDrainHelperCommand() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:    drainHelperCommand + " nats|kinesis",
		Short:  "A helper process of sluice-bench drain",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return loadgen.ServeDrainHelper(cmd.Context(), args[0], dataDir, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "with nats: where the server makes its temporary data directory, removed when it stops (default: the system's temporary directory)")
	return cmd
}

// commandLine is the command as run: its path and the flags given.
func commandLine(cmd *cobra.Command) string {
	parts := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		parts = append(parts, "--"+f.Name+"="+f.Value.String())
	})
	return strings.Join(parts, " ")
}
