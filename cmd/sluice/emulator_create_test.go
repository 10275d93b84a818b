package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// awsConfigOf returns an SDK configuration for the environment a
// `sluice emulator` printed, without retries.
func awsConfigOf(env map[string]string) aws.Config {
	return aws.Config{
		Region:       env["AWS_REGION"],
		BaseEndpoint: aws.String(env["AWS_ENDPOINT_URL"]),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: env["AWS_ACCESS_KEY_ID"], SecretAccessKey: env["AWS_SECRET_ACCESS_KEY"]}, nil
		}),
		HTTPClient: emulatortest.LoopbackHTTPClient(),
		Retryer:    func() aws.Retryer { return aws.NopRetryer{} },
	}
}

// TestEmulatorCreate checks that `sluice emulator --create` makes the
// streams, delivery streams and log groups it names before anything is put
// to them, that a restart on the same --data-dir keeps them, and that
// SLUICE_CREATE does as the flag.
func TestEmulatorCreate(t *testing.T) {
	clearSluiceEnv(t)
	dataDir := t.TempDir()
	args := []string{"--data-dir", dataDir,
		"--create", "kinesis/orders:shards=2", "--create", "firehose/events",
		"--create", "logs//sluice/audit:stream=app,stream=more", "--create", "logs//sluice/audit:stream=web"}
	for _, run := range []string{"first start", "restart"} {
		t.Run(run, func(t *testing.T) {
			cfg := awsConfigOf(startEmulatorCommand(t, args...))
			wantStream(t, cfg, "orders", 2)
			if _, err := firehose.NewFromConfig(cfg).DescribeDeliveryStream(t.Context(), &firehose.DescribeDeliveryStreamInput{DeliveryStreamName: aws.String("events")}); err != nil {
				t.Errorf("DescribeDeliveryStream events: %v", err)
			}
			wantLogStreams(t, cfg, "/sluice/audit", "[app more web]")
		})
	}
	t.Run("SLUICE_CREATE", func(t *testing.T) {
		t.Setenv("SLUICE_CREATE", "kinesis/clicks; logs//sluice/audit:stream=web")
		cfg := awsConfigOf(startEmulatorCommand(t))
		wantStream(t, cfg, "clicks", 1)
		wantLogStreams(t, cfg, "/sluice/audit", "[web]")
	})
}

// wantStream checks that the emulator has a Kinesis stream of shards
// shards.
func wantStream(t *testing.T, cfg aws.Config, stream string, shards int32) {
	t.Helper()
	out, err := kinesis.NewFromConfig(cfg).DescribeStreamSummary(t.Context(), &kinesis.DescribeStreamSummaryInput{StreamName: aws.String(stream)})
	if err != nil {
		t.Fatalf("DescribeStreamSummary %s: %v", stream, err)
	}
	if got := aws.ToInt32(out.StreamDescriptionSummary.OpenShardCount); got != shards {
		t.Errorf("stream %s has %d shards, want %d", stream, got, shards)
	}
}

// wantLogStreams checks the names of the log streams of a log group of
// the emulator, as fmt.Sprint prints them.
func wantLogStreams(t *testing.T, cfg aws.Config, group, want string) {
	t.Helper()
	out, err := cloudwatchlogs.NewFromConfig(cfg).DescribeLogStreams(t.Context(), &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String(group)})
	if err != nil {
		t.Fatalf("DescribeLogStreams %s: %v", group, err)
	}
	var names []string
	for _, ls := range out.LogStreams {
		names = append(names, aws.ToString(ls.LogStreamName))
	}
	if fmt.Sprint(names) != want {
		t.Errorf("log streams of %s: %v, want %s", group, names, want)
	}
}

// TestEmulatorCreateRefusesBadValues checks that `sluice emulator` refuses
// a --create it cannot make, before serving, saying which value and the
// form it takes.
func TestEmulatorCreateRefusesBadValues(t *testing.T) {
	clearSluiceEnv(t)
	for value, want := range map[string]string{
		"orders":                      "want " + createForms,
		"kinesis/":                    "want " + createForms,
		"kinesis/orders:":             "want " + createForms,
		"s3/bucket":                   `service "s3": want ` + createForms,
		"sts/role":                    `service "sts": want ` + createForms,
		"kinesis/orders:shards=0":     `shards="0": want a number of shards, 1 or more`,
		"kinesis/orders:shards=two":   `shards="two": want a number of shards, 1 or more`,
		"kinesis/orders:stream=a":     `setting "stream=a": want ` + createForms,
		"firehose/events:shards=2":    `setting "shards=2": want ` + createForms,
		"logs//sluice/audit:stream=":  `setting "stream=": want ` + createForms,
		"kinesis/orders:shards=10000": "a stream has 1 to 500 shards",
		"kinesis/no spaces":           "a stream's name is 1 to 128 letters, digits, '_', '.' or '-'",
		"logs/no spaces":              "logGroupName",
		"logs//sluice/audit:stream=*": "logStreamName",
	} {
		t.Run(value, func(t *testing.T) {
			cmd := newRootCommand()
			cmd.SetArgs([]string{"emulator", "--listen", "127.0.0.1:0", "--log-level", "error", "--create", "firehose/fine", "--create", value})
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			err := cmd.ExecuteContext(ctx)
			if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), fmt.Sprintf("--create %q: ", value)) || !strings.Contains(err.Error(), want) {
				t.Fatalf("sluice emulator --create %q = %v, want it refused saying %q", value, err, want)
			}
		})
	}
}
