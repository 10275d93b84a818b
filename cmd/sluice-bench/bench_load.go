package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/loadgen"
)

func newBenchLoadCommand() *cobra.Command {
	var (
		cfg    loadgen.LoadConfig
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Run sluice in one process under load over HTTP and measure events/s in and out, latency to the sink and resident memory",
		Long: `Run sluice as one process of ` + "`sluice serve`" + ` does, in this process: an embedded,
file-backed JetStream server, the store with an account and an API key, the
HTTP API on a loopback port, the reconciler and the deliverer, and a sink:
null (accepts every record at once) or emulator (sluice's AWS emulator in
process, written to through a Kinesis destination and the AWS SDK). A
destination and a subscription of http_request_complete.v0 events whose
filter (ev.conn.server_port == 443) passes half of them are made through the
store.

It posts ~1 KB events to POST /events in batches of --batch, --concurrency
requests at most in flight, for --duration, at --rate events per second (0:
flat out), each event's event_timestamp set when its request is built. Every
--interval it writes a line to standard error: events/s in (stored by the
API), records/s out (accepted by the sink), the latency from event_timestamp
to the sink's acceptance (p50, p95, p99, max; to the millisecond) of the
interval, and the resident memory. Once publishing stops it waits up to
--drain-timeout for the sink to accept every passing event, then prints the
totals and the peak resident memory (VmHWM) to standard output.

The command fails (exits non-zero) after printing the report when an event
passing the filter was never delivered, or delivered twice, and, with
--max-rss-growth, when the median resident memory of the last third of the
intervals exceeds that of the second third by more than that share.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			report, err := loadgen.RunLoad(cmd.Context(), cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return printReport(cmd, report, asJSON, "bench load", errors.Join(report.CheckDelivered(), report.CheckRSSGrowth()))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Sink, "sink", loadgen.LoadSinkNull, "null (accepts every record at once) or emulator (the AWS emulator in process, through a Kinesis destination)")
	fl.IntVar(&cfg.Rate, "rate", 0, "events per second to publish; 0 publishes flat out")
	fl.DurationVar(&cfg.Duration, "duration", loadgen.DefaultLoadDuration, "how long to publish")
	fl.DurationVar(&cfg.Interval, "interval", loadgen.DefaultLoadInterval, "how often to write a line of figures and sample the resident memory")
	fl.IntVar(&cfg.Batch, "batch", loadgen.DefaultLoadBatch, "events per HTTP request")
	fl.IntVar(&cfg.Concurrency, "concurrency", loadgen.DefaultLoadConcurrency, "HTTP requests in flight at most")
	fl.DurationVar(&cfg.DrainTimeout, "drain-timeout", loadgen.DefaultLoadDrainTimeout, "how long to wait, once publishing stops, for the sink to accept every passing event")
	fl.Float64Var(&cfg.MaxRSSGrowth, "max-rss-growth", 0, "fail when the median resident memory of the last third of the intervals exceeds the second third's by more than this share (0.2 is 20%); 0 does not check")
	fl.StringVar(&cfg.DataDir, "data-dir", "", "directory for the server's temporary data directory (default: the system's temporary directory)")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
