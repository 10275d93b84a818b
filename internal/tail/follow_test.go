package tail_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logstypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	firehosetypes "github.com/aws/aws-sdk-go-v2/service/firehose/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
	"github.com/sluicehq/sluice/internal/tail"
)

// TestFollowWaitsForTheTarget checks that a following reader told to wait
// for its target (WaitForTarget), of a stream, log group or delivery stream
// that does not exist yet, says so once, waits for it, and reads what
// arrives in it, as a tail started right after a destination was made
// (before the first delivery makes its stream in the emulator of serve
// --dev) must; without Follow, the missing target is an error.
func TestFollowWaitsForTheTarget(t *testing.T) {
	emu := startEmulator(t)
	for _, tt := range []struct {
		name, arn string
		create    func(ctx context.Context, emu *emulatortest.Emulator) error
	}{
		{"kinesis", "arn:aws:kinesis:us-east-1:123456789012:stream/later", func(ctx context.Context, emu *emulatortest.Emulator) error {
			kc := emu.KinesisClient()
			if _, err := kc.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("later"), ShardCount: aws.Int32(2)}); err != nil {
				return err
			}
			_, err := kc.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String("later"), PartitionKey: aws.String("k"), Data: []byte(`{"n":1}`)})
			return err
		}},
		{"logs", "arn:aws:logs:us-east-1:123456789012:log-group:/later:*", func(ctx context.Context, emu *emulatortest.Emulator) error {
			if err := emu.CreateLogGroup("/later", 0); err != nil {
				return err
			}
			if err := emu.CreateLogStream("/later", "esb_1"); err != nil {
				return err
			}
			_, err := emu.LogsClient().PutLogEvents(ctx, &cloudwatchlogs.PutLogEventsInput{
				LogGroupName: aws.String("/later"), LogStreamName: aws.String("esb_1"),
				LogEvents: []logstypes.InputLogEvent{{Message: aws.String(`{"n":1}`), Timestamp: aws.Int64(time.Now().UnixMilli())}},
			})
			return err
		}},
		{"firehose", "arn:aws:firehose:us-east-1:123456789012:deliverystream/later", func(ctx context.Context, emu *emulatortest.Emulator) error {
			fc := emu.FirehoseClient()
			if _, err := fc.CreateDeliveryStream(ctx, &firehose.CreateDeliveryStreamInput{DeliveryStreamName: aws.String("later")}); err != nil {
				return err
			}
			_, err := fc.PutRecord(ctx, &firehose.PutRecordInput{DeliveryStreamName: aws.String("later"), Record: &firehosetypes.Record{Data: []byte("{\"n\":1}\n")}})
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Without Follow, the missing target is an error.
			if r, err := tail.New(t.Context(), tail.Config{ARN: tt.arn}); err == nil {
				if err := r.Read(t.Context(), func(tail.Record) error { return nil }); err == nil {
					t.Fatalf("reading %s, which does not exist, without Follow: no error", tt.arn)
				}
			}

			waiting := make(chan string, 2)
			r, err := tail.New(t.Context(), tail.Config{ARN: tt.arn, Follow: true, WaitForTarget: true, Poll: 20 * time.Millisecond, Waiting: func(what string) { waiting <- what }})
			if err != nil {
				t.Fatal(err)
			}
			errRead := make(chan error, 1)
			got := make(chan string, 1)
			stop := errors.New("read one")
			go func() {
				errRead <- r.Read(t.Context(), func(rec tail.Record) error {
					got <- string(rec.Data)
					return stop
				})
			}()
			select {
			case <-waiting:
			case err := <-errRead:
				t.Fatalf("following %s, which does not exist yet: %v, want it waited for", tt.arn, err)
			case <-time.After(10 * time.Second):
				t.Fatalf("following %s: not told it waits for it after 10 s", tt.arn)
			}
			if err := tt.create(t.Context(), emu); err != nil {
				t.Fatal(err)
			}
			select {
			case rec := <-got:
				if rec != `{"n":1}` {
					t.Errorf("read %q, want the record put after the target appeared", rec)
				}
			case err := <-errRead:
				t.Fatalf("reading: %v before the record", err)
			case <-time.After(10 * time.Second):
				t.Fatalf("following %s: nothing read 10 s after it appeared with a record", tt.arn)
			}
			if err := <-errRead; !errors.Is(err, stop) {
				t.Errorf("Read: %v, want emit's error", err)
			}
			if len(waiting) != 0 {
				t.Errorf("told it waits more than once: %q", <-waiting)
			}
		})
	}
}

// TestFollowMissingTargetIsAnError checks that a following reader not told
// to wait for its target returns the error naming a stream, log group or
// delivery stream that does not exist, as against AWS, where it is a typo
// that nothing will create, rather than wait forever.
func TestFollowMissingTargetIsAnError(t *testing.T) {
	startEmulator(t)
	for name, tt := range map[string]struct{ arn, want string }{
		"kinesis":  {"arn:aws:kinesis:us-east-1:123456789012:stream/typo", "typo"},
		"logs":     {"arn:aws:logs:us-east-1:123456789012:log-group:/typo:*", "/typo"},
		"firehose": {"arn:aws:firehose:us-east-1:123456789012:deliverystream/typo", "typo"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			waited := false
			r, err := tail.New(ctx, tail.Config{ARN: tt.arn, Follow: true, Poll: 20 * time.Millisecond, Waiting: func(string) { waited = true }})
			if err != nil {
				t.Fatal(err)
			}
			err = r.Read(ctx, func(tail.Record) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("following %s, which does not exist, without WaitForTarget: %v, want an error naming %s", tt.arn, err, tt.want)
			}
			if waited {
				t.Errorf("following %s without WaitForTarget: told it waits for it", tt.arn)
			}
		})
	}
}

// TestReadMissingTargetOfEmulatorIsEmpty checks that a reader that does
// not follow, told its target is an emulator's (WaitForTarget), reads a
// stream, log group or delivery stream that does not exist as an empty
// one: nothing, and no error, as the emulator makes it with the first
// records delivered, so none have been. It does not wait, nor say it does.
func TestReadMissingTargetOfEmulatorIsEmpty(t *testing.T) {
	startEmulator(t)
	for name, arn := range map[string]string{
		"kinesis":  "arn:aws:kinesis:us-east-1:123456789012:stream/none",
		"logs":     "arn:aws:logs:us-east-1:123456789012:log-group:/none:*",
		"firehose": "arn:aws:firehose:us-east-1:123456789012:deliverystream/none",
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			waited := false
			r, err := tail.New(ctx, tail.Config{ARN: arn, WaitForTarget: true, Poll: 20 * time.Millisecond, Waiting: func(string) { waited = true }})
			if err != nil {
				t.Fatal(err)
			}
			var read int
			if err := r.Read(ctx, func(tail.Record) error { read++; return nil }); err != nil || read != 0 {
				t.Fatalf("reading %s, which does not exist, without Follow: %d records, %v; want none and no error", arn, read, err)
			}
			if ctx.Err() != nil {
				t.Fatalf("reading %s without Follow ended with the test's deadline, not by itself", arn)
			}
			if waited {
				t.Errorf("reading %s without Follow: told it waits for it", arn)
			}
		})
	}
}
