// Package emulatortest starts an AWS emulator (package emulator) for a
// test, on a free loopback port, and makes real AWS SDK clients pointed at
// it. It is for tests only.
//
//	emu := emulatortest.Start(t, emulator.Config{})
//	emu.CreateDeliveryStream("events")
//	client := emu.FirehoseClient()            // or pass emu.Env() to a subprocess
//	emu.SetFault(emulator.Fault{Service: emulator.ServiceFirehose, Resource: "events", ThrottleRecords: 0.3})
//	... write through the sink ...
//	records, _, _ := emu.FirehoseRecords("events")
//	calls := emu.Counters(emulator.ServiceFirehose, "events").Calls
package emulatortest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/sinks"
)

// Static credentials to sign requests with; the emulator takes any.
const (
	AccessKeyID     = "AKIAEMULATORTEST0000"
	SecretAccessKey = "emulator-test-secret"
)

// Emulator is an emulator serving for the length of a test.
type Emulator struct {
	*emulator.Server
	// Endpoint is its base URL, http://127.0.0.1:PORT, for the SDK's
	// BaseEndpoint or AWS_ENDPOINT_URL.
	Endpoint string
	// Region is the region the clients sign for (cfg.Region).
	Region string
	stop   func() error
}

// Start starts an emulator configured by cfg on a free loopback port. It
// stops, and Start's caller waits for it, when the test ends, or at Stop.
func Start(t testing.TB, cfg emulator.Config) *Emulator {
	t.Helper()
	if cfg.Region == "" {
		cfg.Region = emulator.DefaultRegion
	}
	srv, err := emulator.New(cfg)
	if err != nil {
		t.Fatalf("emulator: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("emulator listener: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	stop := sync.OnceValue(func() error {
		cancel()
		return <-served
	})
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("emulator: %v", err)
		}
	})
	return &Emulator{Server: srv, Endpoint: "http://" + ln.Addr().String(), Region: cfg.Region, stop: stop}
}

// Stop stops the emulator as the end of the test would, and returns what
// Serve returned: to restart one on the same Config.DataDir.
func (e *Emulator) Stop() error { return e.stop() }

// LogStreams returns the names of the log streams of a group, sorted. It
// returns an error wrapping emulator.ErrNotFound when the group does not
// exist.
func (e *Emulator) LogStreams(group string) ([]string, error) {
	streams, err := e.DescribeLogStreams(group)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(streams))
	for i, ls := range streams {
		names[i] = ls.Name
	}
	return names, nil
}

// Env returns the environment that points an AWS SDK at the emulator, for a
// subprocess: AWS_ENDPOINT_URL, AWS_REGION and static keys.
func (e *Emulator) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL=" + e.Endpoint,
		"AWS_REGION=" + e.Region,
		"AWS_ACCESS_KEY_ID=" + AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + SecretAccessKey,
	}
}

// AWSConfig returns an SDK configuration for the emulator: its region,
// static keys, an HTTP client that dials loopback only, and no retries,
// so that a test sees every answer. Set BaseEndpoint from Endpoint in each
// client's options, as the clients of this package do.
func (e *Emulator) AWSConfig() aws.Config {
	return aws.Config{
		Region:      e.Region,
		Credentials: aws.NewCredentialsCache(staticCredentials{}),
		HTTPClient:  LoopbackHTTPClient(),
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
	}
}

// KinesisClient returns a Kinesis client of the emulator, without retries.
func (e *Emulator) KinesisClient() *kinesis.Client {
	return kinesis.NewFromConfig(e.AWSConfig(), func(o *kinesis.Options) { o.BaseEndpoint = aws.String(e.Endpoint) })
}

// FirehoseClient returns a Firehose client of the emulator, without
// retries.
func (e *Emulator) FirehoseClient() *firehose.Client {
	return firehose.NewFromConfig(e.AWSConfig(), func(o *firehose.Options) { o.BaseEndpoint = aws.String(e.Endpoint) })
}

// LogsClient returns a CloudWatch Logs client of the emulator, without
// retries.
func (e *Emulator) LogsClient() *cloudwatchlogs.Client {
	return cloudwatchlogs.NewFromConfig(e.AWSConfig(), func(o *cloudwatchlogs.Options) { o.BaseEndpoint = aws.String(e.Endpoint) })
}

type staticCredentials struct{}

func (staticCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: AccessKeyID, SecretAccessKey: SecretAccessKey, Source: "emulatortest"}, nil
}

// LoopbackHTTPClient returns an SDK HTTP client that connects only to
// loopback addresses, so that a client a test failed to point at the
// emulator fails at once instead of calling AWS. It sends each request from
// its own copy of the body, as the sinks' clients do
// (sinks.BodyCopyingHTTPClient): the emulator answers fast enough to meet
// the SDK's early close of request bodies at every few hundred calls.
func LoopbackHTTPClient() aws.HTTPClient {
	return sinks.BodyCopyingHTTPClient(awshttp.NewBuildableClient().WithDialerOptions(func(d *net.Dialer) {
		d.Control = LoopbackOnly
	}))
}

// errNotLoopback is the error of a connection refused by LoopbackOnly.
var errNotLoopback = errors.New("test client dials loopback only")

// LoopbackOnly is a net.Dialer Control refusing a connection to any
// address but a loopback one, before it is made: that of
// LoopbackHTTPClient, for other test clients to share.
func LoopbackOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w, not %s", errNotLoopback, address)
	}
	return nil
}
