package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/client"
	"github.com/sluicehq/sluice/internal/tail"
	"github.com/sluicehq/sluice/sinks/desttype"
)

// errEnough ends a tail that printed --count events.
var errEnough = errors.New("enough events")

// devProbeTimeout bounds the request that asks the API of an ARN tail
// whether it is a serve --dev process.
const devProbeTimeout = 3 * time.Second

// noCredentialsHint says what to do when tail finds no AWS credentials.
const noCredentialsHint = "to read AWS, set AWS_PROFILE (a profile of ~/.aws/config) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; " +
	"to read an AWS emulator, give --emulator URL (such as http://127.0.0.1:4566); " +
	"to read what sluice serve --dev delivered, give the destination's id (ed_...) with SLUICE_API_KEY (and SLUICE_API_URL) of that server"

// tailFlags are the flags of sluice tail.
type tailFlags struct {
	since    string
	follow   bool
	pretty   bool
	filter   string
	types    []string
	count    int
	emulator string
	api      resourceFlags
}

func newTailCommand() *cobra.Command {
	var f tailFlags
	cmd := &cobra.Command{
		Use:   "tail ARN|DESTINATION_ID",
		Short: "Print the events a destination holds: a Kinesis stream, a CloudWatch Logs log group, or the emulator's Firehose records",
		Long: `Print the events a destination holds, one a line: its time, kind, id and
object (--json: the event's JSON, one document a line; --pretty: indented
JSON). It reads every shard of a Kinesis data stream, a CloudWatch Logs log
group (with FilterLogEvents), or the records a Firehose delivery stream of
sluice's AWS emulator received.

Give the ARN of the stream, log group or delivery stream, or the id of an event
destination (ed_...), whose target sluice's API tells (SLUICE_API_URL,
SLUICE_API_KEY). AWS is reached with the default credential chain (environment,
shared files, the instance's role) and the SDK's endpoint variables
(AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_KINESIS, ...), so the same command reads real
AWS and an emulator. A sluice serve --dev tells tail where its emulator is, so
its destinations are read from there, and so are ARNs when SLUICE_API_KEY is
set and SLUICE_API_URL is on this machine (loopback); tail says so on standard
error. --emulator URL reads from the emulator at URL instead.

By default it prints what arrives from now on until interrupted, and, reading an
emulator, waits for a stream that does not exist yet; --since starts
earlier (a duration such as 15m, or an RFC 3339 time), --follow=false stops once
it has read what is there, and --count stops after that many events. --filter
keeps the events a CEL expression accepts, written as a subscription's filter:
ev is the event's object, with the filterable fields of its kind, and
envelope.event_type, envelope.event_id, envelope.event_timestamp and
envelope.account_id are the envelope's, such as
  envelope.event_type == "http_request_complete.v0" && ev.conn.server_port == 443
It is type-checked against each kind's fields: one that fits no kind, a kind of
--type, or a kind the destination's subscriptions send it, is refused at once,
and an event of a kind it does not fit stops the tail with the error. --type
keeps only the events of the kinds given.`,
		Example: `  sluice tail arn:aws:kinesis:us-east-1:123456789012:stream/edge --filter 'ev.conn.server_port == 443'
  sluice tail ed_36Jc... --since 1h --follow=false --pretty
  sluice tail ed_36Jc... --since 1h --follow=false --json | jq .object.conn
  sluice tail --emulator http://127.0.0.1:4566 arn:aws:firehose:us-east-1:123456789012:deliverystream/edge
  sluice tail arn:aws:logs:eu-west-1:123456789012:log-group:/sluice/audit --filter 'envelope.event_type.startsWith("api_key_")'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTail(cmd.Context(), args[0], f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.since, "since", "", "start this long ago (15m, 2h) or at this RFC 3339 time; default: now")
	fl.BoolVarP(&f.follow, "follow", "f", true, "keep printing events as they arrive")
	fl.BoolVar(&f.pretty, "pretty", false, "print each event as indented JSON")
	fl.StringVar(&f.filter, "filter", "", "print only the events this CEL expression accepts: ev is the object (as in a subscription's filter), envelope.event_type etc. the envelope's fields")
	fl.StringSliceVar(&f.types, "type", nil, "print only the events of this kind, such as http_request_complete.v0 (repeatable)")
	fl.IntVar(&f.count, "count", 0, "stop after printing this many events (0: no limit)")
	fl.StringVar(&f.emulator, "emulator", "", "read from the AWS emulator at this URL (sluice emulator, or the one of sluice serve --dev) instead of AWS")
	f.api.register(fl)
	fl.Lookup("json").Usage = "print each event's JSON, one document a line, for machines (jq)"
	return cmd
}

func runTail(ctx context.Context, target string, f tailFlags, out, errOut io.Writer) error {
	since, err := parseSince(f.since, time.Now())
	if err != nil {
		return err
	}
	if f.api.json && f.pretty {
		return errors.New("--json prints one event a line, --pretty indents them: give one or the other")
	}
	kinds, err := newKindFilters(f.filter, f.types)
	if err != nil {
		return err
	}
	arn, devEndpoint := target, ""
	if strings.HasPrefix(target, "ed_") {
		if arn, devEndpoint, err = destinationARN(ctx, f.api, errOut, target); err != nil {
			return err
		}
		if kinds.expr != "" {
			sent, err := destinationKinds(ctx, f.api, errOut, target)
			if err != nil {
				return err
			}
			if err := kinds.refuseUnfit(target, sent); err != nil {
				return err
			}
			if err := kinds.warnUnselected(errOut, target, sent); err != nil {
				return err
			}
		}
	} else if f.emulator == "" && f.api.apiKey != "" && !awsEndpointSet() && loopbackAPI(f.api.apiURL) {
		// Only a serve --dev on this machine: its emulator listens on
		// loopback, so a remote server's would be this machine's
		// 127.0.0.1, something else.
		devEndpoint = devServerEndpoint(ctx, f.api, errOut)
	}
	cfg := tail.Config{ARN: arn, Since: since, Follow: f.follow, Waiting: func(what string) {
		fmt.Fprintf(errOut, "sluice: %s does not exist yet; waiting for it to appear (the emulator of sluice serve --dev, or sluice emulator --auto-create, makes it with the first events delivered to it)\n", what)
	}}
	// Only an emulator makes a missing target later: against AWS, it is a
	// typo, and the error names it.
	switch {
	case f.emulator != "":
		if cfg.AWS, err = emulatorAWS("--emulator", f.emulator); err != nil {
			return err
		}
		cfg.WaitForTarget = true
	case devEndpoint != "":
		if cfg.AWS, err = emulatorAWS("the "+headerDevAWSEndpoint+" of "+f.api.apiURL, devEndpoint); err != nil {
			return err
		}
		cfg.WaitForTarget = true
		elsewhere := "give --emulator URL to read another emulator"
		if arn == target {
			elsewhere = "give --emulator URL or set AWS_ENDPOINT_URL to read elsewhere, or unset SLUICE_API_KEY to read AWS"
		}
		fmt.Fprintf(errOut, "sluice: reading the AWS emulator %s of the sluice serve --dev at %s; %s\n", devEndpoint, f.api.apiURL, elsewhere)
	}
	reader, err := tail.New(ctx, cfg)
	if errors.Is(err, tail.ErrNoCredentials) {
		return fmt.Errorf("%w; %s", err, noCredentialsHint)
	}
	if err != nil {
		return err
	}
	printer := &eventPrinter{out: out, errOut: errOut, format: outputFormat(f), kinds: kinds, limit: f.count}
	err = reader.Read(ctx, func(r tail.Record) error { return printer.print(ctx, r) })
	if errors.Is(err, errEnough) {
		return nil
	}
	return err
}

// awsEndpointSet reports whether an AWS_ENDPOINT_URL variable of the SDK
// says where AWS is: then an ARN tail does not ask sluice's API.
func awsEndpointSet() bool {
	for _, kv := range os.Environ() {
		if name, value, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "AWS_ENDPOINT_URL") && value != "" {
			return true
		}
	}
	return false
}

// loopbackAPI reports whether the API URL's host is this machine's
// loopback: an address of 127.0.0.0/8 or ::1, or localhost.
func loopbackAPI(apiURL string) bool {
	u, err := url.Parse(apiURL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// devServerEndpoint asks the sluice API whether it is a serve --dev
// process, and returns the URL of its AWS emulator if it is, "" if it is
// not or does not answer within devProbeTimeout, once (a 429 is not waited
// out): an ARN tail then reads AWS.
func devServerEndpoint(ctx context.Context, flags resourceFlags, errOut io.Writer) string {
	c, err := flags.client(errOut, client.WithTimeout(devProbeTimeout), client.WithRateLimitRetry(client.RateLimitRetry{Attempts: 1}))
	if err != nil {
		return ""
	}
	var header http.Header
	if err := c.Do(ctx, http.MethodGet, healthzPath, nil, nil, client.ReplyHeader(&header)); err != nil {
		return ""
	}
	return header.Get(headerDevAWSEndpoint)
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
// endpoint, which takes any keys; from says where the endpoint came from.
func emulatorAWS(from, endpoint string) (*aws.Config, error) {
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s %q: give the emulator's URL, such as http://127.0.0.1:4566", from, endpoint)
	}
	return &aws.Config{
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("sluice-dev", "sluice-dev", ""),
	}, nil
}

// destinationARN asks the API for the ARN of a destination's target, and
// returns it with the URL of the API's AWS emulator when the API is a
// serve --dev process (headerDevAWSEndpoint), "" otherwise.
func destinationARN(ctx context.Context, flags resourceFlags, errOut io.Writer, id string) (arn, devEndpoint string, err error) {
	c, err := flags.client(errOut)
	if err != nil {
		return "", "", err
	}
	var header http.Header
	d, err := c.EventDestinations().Get(ctx, id, client.ReplyHeader(&header))
	if decodeErr := (*client.DecodeError)(nil); errors.As(err, &decodeErr) {
		return "", "", fmt.Errorf("reading destination %s: %w", id, decodeErr.Err)
	}
	if err != nil {
		return "", "", err
	}
	devEndpoint = header.Get(headerDevAWSEndpoint)
	for _, t := range desttype.All() {
		if d.Target.Type != t.Name {
			continue
		}
		if d.Target.ARNField == t.ARNField {
			arn = d.Target.ARN
		}
		return arn, devEndpoint, nil
	}
	return "", "", fmt.Errorf("destination %s has no target sluice tail can read", id)
}
