package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/tail"
)

// errEnough ends a tail that printed --count events.
var errEnough = errors.New("enough events")

// tailFlags are the flags of sluice tail.
type tailFlags struct {
	since    string
	follow   bool
	pretty   bool
	filter   string
	count    int
	emulator string
	api      resourceFlags
}

func newTailCommand() *cobra.Command {
	var f tailFlags
	cmd := &cobra.Command{
		Use:   "tail ARN|DESTINATION_ID",
		Short: "Print the events a destination holds: a Kinesis stream, a CloudWatch Logs log group, or the emulator's Firehose records",
		Long: `Print the events a destination holds, one per line (or indented with --pretty):
every shard of a Kinesis data stream, a CloudWatch Logs log group (with
FilterLogEvents), or the records a Firehose delivery stream of sluice's AWS
emulator received.

Give the ARN of the stream, log group or delivery stream, or the id of an event
destination (ed_...), whose target sluice's API tells (SLUICE_API_URL,
SLUICE_API_KEY). AWS is reached with the default credential chain (environment,
shared files, the instance's role) and the SDK's endpoint variables
(AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_KINESIS, ...), so the same command reads real
AWS and an emulator.

By default it prints what arrives from now on until interrupted; --since starts
earlier (a duration such as 15m, or an RFC 3339 time), --follow=false stops once
it has read what is there, and --count stops after that many events. --filter
keeps the events a CEL expression over the event (ev) accepts, such as
  ev.event_type == "http_request_complete.v0" && ev.object.conn.server_port == 443`,
		Example: `  sluice tail arn:aws:kinesis:us-east-1:123456789012:stream/edge
  sluice tail ed_36Jc... --since 1h --follow=false --pretty
  sluice tail --emulator http://127.0.0.1:4566 arn:aws:firehose:us-east-1:123456789012:deliverystream/edge
  sluice tail arn:aws:logs:eu-west-1:123456789012:log-group:/sluice/audit --filter 'ev.event_type.startsWith("api_key_")'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTail(cmd.Context(), args[0], f, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.since, "since", "", "start this long ago (15m, 2h) or at this RFC 3339 time; default: now")
	fl.BoolVarP(&f.follow, "follow", "f", true, "keep printing events as they arrive")
	fl.BoolVar(&f.pretty, "pretty", false, "print each event as indented JSON")
	fl.StringVar(&f.filter, "filter", "", "print only the events this CEL expression over ev accepts")
	fl.IntVar(&f.count, "count", 0, "stop after printing this many events (0: no limit)")
	fl.StringVar(&f.emulator, "emulator", "", "read from sluice's AWS emulator at this URL (as sluice serve --dev prints) instead of AWS")
	f.api.register(fl)
	return cmd
}

func runTail(ctx context.Context, target string, f tailFlags, out io.Writer) error {
	since, err := parseSince(f.since, time.Now())
	if err != nil {
		return err
	}
	var filter *filters.EnvelopeFilter
	if f.filter != "" {
		if filter, err = filters.CompileEnvelope(f.filter); err != nil {
			return fmt.Errorf("--filter: %w", err)
		}
	}
	arn := target
	if strings.HasPrefix(target, "ed_") {
		if arn, err = destinationARN(ctx, f.api, target); err != nil {
			return err
		}
	}
	cfg := tail.Config{ARN: arn, Since: since, Follow: f.follow}
	if f.emulator != "" {
		if cfg.AWS, err = emulatorAWS(f.emulator); err != nil {
			return err
		}
	}
	reader, err := tail.New(ctx, cfg)
	if err != nil {
		return err
	}
	printer := &eventPrinter{out: out, pretty: f.pretty, filter: filter, limit: f.count}
	err = reader.Read(ctx, func(r tail.Record) error { return printer.print(ctx, r.Data) })
	if errors.Is(err, errEnough) {
		return nil
	}
	return err
}

// parseSince reads --since: empty (now, the zero time), a duration ago, or
// an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: give a duration such as 15m or 2h, or an RFC 3339 time such as 2026-11-22T10:00:00Z", s)
}

// emulatorAWS is the AWS configuration that reaches sluice's emulator at
// endpoint, which takes any keys.
func emulatorAWS(endpoint string) (*aws.Config, error) {
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--emulator %q: give the emulator's URL, such as http://127.0.0.1:4566", endpoint)
	}
	return &aws.Config{
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("sluice-dev", "sluice-dev", ""),
	}, nil
}

// destinationARN asks the API for the ARN of a destination's target.
func destinationARN(ctx context.Context, flags resourceFlags, id string) (string, error) {
	client, err := flags.client()
	if err != nil {
		return "", err
	}
	raw, err := client.get(ctx, "/event_destinations/"+url.PathEscape(id))
	if err != nil {
		return "", err
	}
	var d struct {
		Target struct {
			Firehose *struct {
				DeliveryStreamARN string `json:"delivery_stream_arn"`
			} `json:"firehose"`
			Kinesis *struct {
				StreamARN string `json:"stream_arn"`
			} `json:"kinesis"`
			CloudWatchLogs *struct {
				LogGroupARN string `json:"log_group_arn"`
			} `json:"cloudwatch_logs"`
		} `json:"target"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", fmt.Errorf("reading destination %s: %w", id, err)
	}
	switch t := d.Target; {
	case t.Kinesis != nil:
		return t.Kinesis.StreamARN, nil
	case t.Firehose != nil:
		return t.Firehose.DeliveryStreamARN, nil
	case t.CloudWatchLogs != nil:
		return t.CloudWatchLogs.LogGroupARN, nil
	}
	return "", fmt.Errorf("destination %s has no target sluice tail can read", id)
}

// eventPrinter prints the events a filter accepts, up to a limit.
type eventPrinter struct {
	out     io.Writer
	pretty  bool
	filter  *filters.EnvelopeFilter
	limit   int
	printed int
}

// print prints one record; a record that is not a JSON object is printed
// as it is, unless a filter is set.
func (p *eventPrinter) print(ctx context.Context, data []byte) error {
	data = bytes.TrimRight(data, "\n")
	if p.filter != nil {
		var event map[string]any
		if err := json.Unmarshal(data, &event); err != nil {
			return nil
		}
		ok, err := p.filter.Match(ctx, event)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
	}
	line := data
	if p.pretty {
		var buf bytes.Buffer
		if json.Indent(&buf, data, "", "  ") == nil {
			line = buf.Bytes()
		}
	}
	if _, err := fmt.Fprintf(p.out, "%s\n", line); err != nil {
		return err
	}
	p.printed++
	if p.limit > 0 && p.printed >= p.limit {
		return errEnough
	}
	return nil
}
