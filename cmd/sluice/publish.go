package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/sluicehq/sluice/schemas"
)

// publishFlags are the options of `sluice publish`.
type publishFlags struct {
	apiURL      string
	apiKey      string
	sample      string  // a kind, "mixed", "traffic" or "audit"; "" reads NDJSON
	count       int     // sample events to send; 0: until interrupted
	seed        uint64  // seed of the samples; 0: a random one
	sampleTime  string  // RFC 3339 time of the first sample; "": each sample dated now
	rate        float64 // events per second; 0: as fast as the API takes them
	batch       int     // events per request
	concurrency int     // requests in flight
	progress    bool    // report progress even when stderr is not a terminal
}

// newPublishCommand returns `sluice publish`, which sends events to a
// running sluice's ingest API, from NDJSON or generated samples.
func newPublishCommand() *cobra.Command {
	var f publishFlags
	cmd := &cobra.Command{
		Use:   "publish [FILE]",
		Short: "Send events to a running sluice's ingest API, from NDJSON or generated samples",
		Long: `Send events to POST /events of a running sluice.

Events are read from FILE, or standard input when FILE is "-" or not given,
one JSON object per line as producers send them: event_type and object, and
optionally event_id, event_timestamp and principal. With --sample, realistic
sample events are generated instead, each dated when it is made (within the
second before), or from --sample-time on, a second apart.

Events go out in NDJSON batches of --batch events and at most 10 MiB,
--concurrency batches at a time. Every event is sent with an event_id (one
is made for a line without one), so a batch sent again after a 503 or a
lost connection is stored once; a batch is given up within 90 seconds, well
within the two minutes in which sluice recognises an event sent again. Until
sluice has answered once, a batch that cannot connect is given up after 3
seconds: nothing listens at --api-url. A
batch with an invalid event is not stored and stops the command (batches
sent before it are stored): the API's message says what is wrong with each
invalid event and on which line it is. A line over 1 MiB, the API's limit
per event, stops the command before it is sent.

Progress goes to standard error each second when it is a terminal, or with
--progress; a summary goes to standard output at the end.

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		Example: `  sluice publish --api-key $KEY events.ndjson
  sluice publish --api-key $KEY --sample mixed --count 100000 --rate 5000`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPublish(cmd.Context(), f, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.apiURL, "api-url", "http://127.0.0.1:8080", "base URL of the sluice API")
	fl.StringVar(&f.apiKey, "api-key", "", "API key of the account the events belong to (prefer SLUICE_API_KEY: flags show in process lists)")
	fl.StringVar(&f.sample, "sample", "", `generate sample events of this kind instead of reading them: a kind name, "mixed" (mostly traffic, some audit), "traffic" or "audit" (never the audit kinds sluice emits about its own resources, which ingest refuses)`)
	fl.IntVar(&f.count, "count", 1000, "sample events to send with --sample; 0 sends until interrupted")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of the samples: the same seed makes the same events, ids included, but for their times (default: random)")
	fl.StringVar(&f.sampleTime, "sample-time", "", "date the samples from this RFC 3339 time on, such as 2026-11-22T10:00:00Z, a second apart, so that a seed makes the same events at every run, times included (default: each sample dated when it is made, within the second before)")
	fl.Float64Var(&f.rate, "rate", 0, "events per second at most (default: as fast as sluice takes them)")
	fl.IntVar(&f.batch, "batch", 500, fmt.Sprintf("events per request, at most %d", schemas.DefaultMaxEvents))
	fl.IntVar(&f.concurrency, "concurrency", 4, "requests in flight")
	fl.BoolVar(&f.progress, "progress", false, "report progress every second even when standard error is not a terminal")
	return cmd
}

// validate reports what is wrong with the flags and arguments.
func (f publishFlags) validate(args []string) error {
	var errs []error
	if f.apiKey == "" {
		errs = append(errs, errors.New("--api-key is required (or set SLUICE_API_KEY)"))
	}
	if u, err := url.Parse(f.apiURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("--api-url %q: want an http or https URL such as http://127.0.0.1:8080", f.apiURL))
	}
	if f.batch < 1 || f.batch > schemas.DefaultMaxEvents {
		errs = append(errs, fmt.Errorf("--batch %d: must be from 1 to %d", f.batch, schemas.DefaultMaxEvents))
	}
	if f.concurrency < 1 {
		errs = append(errs, fmt.Errorf("--concurrency %d: must be at least 1", f.concurrency))
	}
	if f.rate < 0 {
		errs = append(errs, fmt.Errorf("--rate %g: must be 0 (no limit) or more", f.rate))
	}
	if f.sample != "" && len(args) > 0 {
		errs = append(errs, fmt.Errorf("give either FILE (%s) or --sample, not both", args[0]))
	}
	if _, err := f.sampleStart(); err != nil {
		errs = append(errs, err)
	}
	if f.sampleTime != "" && f.sample == "" {
		errs = append(errs, fmt.Errorf("--sample-time %s dates generated samples: add --sample, or drop --sample-time (events read from a file keep their own event_timestamp)", f.sampleTime))
	}
	if f.sample != "" && f.count < 0 {
		errs = append(errs, fmt.Errorf("--count %d: must be 0 (until interrupted) or more", f.count))
	}
	return errors.Join(errs...)
}

// runPublish sends the events the flags and arguments name, reports
// progress on stderr and a summary on stdout, and returns the first error:
// an *ingestError when the API refused a batch.
func runPublish(ctx context.Context, f publishFlags, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := f.validate(args); err != nil {
		return err
	}
	src, closeSource, err := f.source(args, stdin)
	if err != nil {
		return err
	}
	defer closeSource()

	progress := f.progress
	if file, ok := stderr.(*os.File); ok && isTerminal(file) {
		progress = true
	}
	stderr = &lockedWriter{w: stderr} // progress and retries write from several goroutines
	stats := newPublishStats(time.Now())
	stopProgress := func() {}
	if progress {
		stopProgress = stats.reportEvery(ctx, time.Second, stderr)
	}
	client := newIngestClient(f.apiURL, f.apiKey, f.concurrency)
	client.retrying = func(err error, wait time.Duration) {
		stats.retries.Add(1)
		fmt.Fprintf(stderr, "retrying a batch in %s: %v\n", wait.Round(time.Millisecond), err)
	}
	err = sendEvents(ctx, src, client, f, stats)
	stopProgress()
	stats.summary(stdout, time.Now())
	if err != nil && ctx.Err() != nil && f.sample != "" && f.count == 0 {
		return nil // sending until interrupted, and interrupted
	}
	return err
}

// sampleStart returns the time of --sample-time, zero without it.
func (f publishFlags) sampleStart() (time.Time, error) {
	if f.sampleTime == "" {
		return time.Time{}, nil
	}
	start, err := time.Parse(time.RFC3339Nano, f.sampleTime)
	if err != nil {
		return time.Time{}, fmt.Errorf("--sample-time %q is not an RFC 3339 time: give one such as 2026-11-22T10:00:00Z, or drop it to date the samples now", f.sampleTime)
	}
	return start, nil
}

// source opens where the events come from: samples, FILE or standard input.
func (f publishFlags) source(args []string, stdin io.Reader) (eventSource, func(), error) {
	if f.sample != "" {
		dates := schemas.SampleClock(time.Now)
		if start, err := f.sampleStart(); err != nil {
			return nil, nil, err
		} else if !start.IsZero() {
			dates = schemas.SampleStart(start)
		}
		src, err := newSampleSource(schemas.Default(), f.sample, f.count, f.seed, dates)
		return src, func() {}, err
	}
	if len(args) == 0 || args[0] == "-" {
		return newNDJSONSource(stdin, "standard input"), func() {}, nil
	}
	file, err := os.Open(args[0])
	if err != nil {
		return nil, nil, fmt.Errorf("opening the events: %w", err)
	}
	return newNDJSONSource(file, args[0]), func() { _ = file.Close() }, nil
}

// sendEvents reads the events into batches and sends them, several at a
// time. It stops at the first batch the API refuses.
func sendEvents(ctx context.Context, src eventSource, client *ingestClient, f publishFlags, stats *publishStats) error {
	g, ctx := errgroup.WithContext(ctx)
	events := make(chan sourceEvent, f.batch)
	// Not in the group: a read of standard input may block until the
	// process ends, and must not keep sendEvents from returning.
	go pump(ctx, src, events)
	batches := make(chan publishBatch)
	g.Go(func() error {
		defer close(batches)
		b := &batcher{
			events: events, out: batches,
			size: f.batch, maxBytes: publishMaxBodyBytes,
			linger: publishLinger, pace: newPacer(f.rate, time.Now()),
		}
		return b.run(ctx)
	})
	for range f.concurrency {
		g.Go(func() error {
			for b := range batches {
				stats.sent.Add(int64(len(b.origins)))
				reply, err := client.send(ctx, b.body)
				if err != nil {
					var refused *ingestError
					if errors.As(err, &refused) {
						stats.rejected.Add(int64(len(b.origins)))
						refused.locate(b.origins, src.describe)
					}
					return err
				}
				stats.stored.Add(int64(reply.Stored))
				stats.duplicates.Add(int64(reply.Duplicates))
			}
			return nil
		})
	}
	return g.Wait()
}
