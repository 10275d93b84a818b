package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/loadgen"
)

// newBenchCommand returns `sluice-bench`, which measures sluice on this
// machine against a raw JetStream baseline measured in the same run.
func newBenchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:           "sluice-bench",
		Short:         "Measure sluice on this machine beside raw baselines measured in the same run (docs/performance.md)",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.AddCommand(newBenchIngestCommand(), newBenchDeliverCommand(), newBenchSinksCommand(), newBenchDrainCommand(), newBenchDrainHelperCommand(), newBenchLoadCommand(), newBenchAttackCommand(), newBenchTunnelCommand(), newBenchSDKAgentCommand())
	return cmd
}

func newBenchIngestCommand() *cobra.Command {
	var (
		cfg    loadgen.IngestConfig
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "ingest",
		Short: "Publish 1 KB events into file-backed JetStream raw, through the producer and over HTTP, and compare the rates",
		Long: fmt.Sprintf(`Publish ~1 KB http_request_complete.v0 events into a fresh embedded,
file-backed JetStream server, three ways: a minimal nats.go asynchronous-publish
loop of pre-encoded events (raw, the baseline), sluice's producer (validation
and encoding included), and the HTTP ingest API over loopback in JSON array
batches. Each way runs once to warm up, then --runs times, taking turns to go
first; the table gives every rate, the medians and the producer and HTTP
medians as shares of the raw median, then the CPU time and heap allocations
per event of the whole process, which depend less on the machine's other
load than the rates do.

The command fails (exits non-zero) after printing the report when the
producer's median rate is below %.2f of the raw median, or the HTTP API's
below %.2f; the report and the error say which floor was missed.

Progress goes to standard error, the report to standard output.`, loadgen.ProducerFloor, loadgen.HTTPFloor),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			report, err := loadgen.RunIngest(cmd.Context(), cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return printReport(cmd, report, asJSON, "bench ingest", report.CheckFloors())
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Events, "events", loadgen.DefaultEvents, "events each mode publishes in each run")
	fl.IntVar(&cfg.Batch, "batch", loadgen.DefaultBatch, "events per HTTP request")
	fl.IntVar(&cfg.Concurrency, "concurrency", loadgen.DefaultConcurrency, "HTTP requests in flight")
	fl.IntVar(&cfg.Runs, "runs", loadgen.DefaultRuns, "measurements of each mode; the report gives the median")
	fl.IntVar(&cfg.MaxPending, "max-pending", loadgen.DefaultMaxPending, "acknowledgements in flight, for the raw loop and the producer")
	fl.StringVar(&cfg.DataDir, "data-dir", "", "directory for the servers' temporary data directories (default: the system's temporary directory)")
	fl.StringVar(&cfg.CPUProfileDir, "cpuprofile-dir", "", "write a CPU profile of each timed measurement to this directory, as cpu-<mode>-<run>.pprof")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// benchReport is the report of a sluice-bench command.
type benchReport interface {
	Format(io.Writer) error
	WriteJSON(io.Writer) error
}

// printReport prints a benchmark's report on standard output, as tables or
// with asJSON as JSON, and then returns verdict, the report's check of its
// floors or limits, named after the command: the report is printed even
// when a floor is missed, so that one can see by how much.
func printReport(cmd *cobra.Command, report benchReport, asJSON bool, command string, verdict error) error {
	write := report.Format
	if asJSON {
		write = report.WriteJSON
	}
	if err := write(cmd.OutOrStdout()); err != nil {
		return err
	}
	if verdict != nil {
		return fmt.Errorf("%s: %w", command, verdict)
	}
	return nil
}
