package tail_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logstypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	firehosetypes "github.com/aws/aws-sdk-go-v2/service/firehose/types"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
	"github.com/sluicehq/sluice/internal/tail"
)

// startEmulator starts the emulator and points the AWS SDK's default
// configuration at it, as a user's environment would.
func startEmulator(t *testing.T) *emulatortest.Emulator {
	t.Helper()
	emu := emulatortest.Start(t, emulator.Config{})
	for _, kv := range emu.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("AWS_ENDPOINT_URL_FIREHOSE", "")
	return emu
}

// readAll reads what the reader gives until it stops.
func readAll(t *testing.T, cfg tail.Config) []string {
	t.Helper()
	r, err := tail.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := r.Read(t.Context(), collect(&got)); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestLogsRead(t *testing.T) {
	emu := startEmulator(t)
	if err := emu.CreateLogGroup("/sluice/audit", 0); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var want []string
	for s, stream := range []string{"esb_1", "esb_2"} {
		if err := emu.CreateLogStream("/sluice/audit", stream); err != nil {
			t.Fatal(err)
		}
		var events []logstypes.InputLogEvent
		for i := range 5 {
			msg := fmt.Sprintf(`{"event_id":"ev_%d_%d"}`, s, i)
			want = append(want, msg)
			events = append(events, logstypes.InputLogEvent{Message: aws.String(msg), Timestamp: aws.Int64(now.Add(time.Duration(i-10) * time.Second).UnixMilli())})
		}
		if _, err := emu.LogsClient().PutLogEvents(t.Context(), &cloudwatchlogs.PutLogEventsInput{
			LogGroupName: aws.String("/sluice/audit"), LogStreamName: aws.String(stream), LogEvents: events,
		}); err != nil {
			t.Fatal(err)
		}
	}
	groupARN := "arn:aws:logs:us-east-1:123456789012:log-group:/sluice/audit:*"
	got := readAll(t, tail.Config{ARN: groupARN, Since: now.Add(-time.Hour)})
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	// From now: the events are 6 to 10 s old, within the minute a reader
	// looks back.
	if got := readAll(t, tail.Config{ARN: groupARN}); len(got) != len(want) {
		t.Fatalf("read %d events from now, want the %d of the last minute", len(got), len(want))
	}
	if got := readAll(t, tail.Config{ARN: groupARN, Since: now.Add(-7 * time.Second)}); len(got) != 4 {
		t.Fatalf("read %d events of the last 7 s, want 4", len(got))
	}
}

func TestLogsFollow(t *testing.T) {
	emu := startEmulator(t)
	if err := emu.CreateLogGroup("g", 0); err != nil {
		t.Fatal(err)
	}
	if err := emu.CreateLogStream("g", "s"); err != nil {
		t.Fatal(err)
	}
	r, err := tail.New(t.Context(), tail.Config{ARN: "arn:aws:logs:us-east-1:123456789012:log-group:g", Follow: true, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	got := make(chan string, 100)
	done := make(chan error, 1)
	go func() { done <- r.Read(ctx, func(rec tail.Record) error { got <- string(rec.Data); return nil }) }()
	for i := range 3 {
		msg := fmt.Sprintf("event %d", i)
		if _, err := emu.LogsClient().PutLogEvents(ctx, &cloudwatchlogs.PutLogEventsInput{
			LogGroupName: aws.String("g"), LogStreamName: aws.String("s"),
			LogEvents: []logstypes.InputLogEvent{{Message: aws.String(msg), Timestamp: aws.Int64(time.Now().UnixMilli())}},
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-got:
			if m != msg {
				t.Fatalf("read %q, want %q", m, msg)
			}
		case <-ctx.Done():
			t.Fatalf("%q not read while following", msg)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("read %q again", <-got)
	}
}

func TestFirehoseRead(t *testing.T) {
	emu := startEmulator(t)
	if err := emu.CreateDeliveryStream("events"); err != nil {
		t.Fatal(err)
	}
	var records []firehosetypes.Record
	var want []string
	for i := range 4 {
		data := fmt.Sprintf(`{"event_id":"ev_%d"}`, i)
		want = append(want, data)
		records = append(records, firehosetypes.Record{Data: []byte(data + "\n")})
	}
	if _, err := emu.FirehoseClient().PutRecordBatch(t.Context(), &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String("events"), Records: records}); err != nil {
		t.Fatal(err)
	}
	arn := "arn:aws:firehose:us-east-1:123456789012:deliverystream/events"
	if got := readAll(t, tail.Config{ARN: arn, Since: time.Now().Add(-time.Minute)}); !slices.Equal(got, want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	if got := readAll(t, tail.Config{ARN: arn}); len(got) != 0 {
		t.Fatalf("read %q from now, before anything new arrived", got)
	}
	t.Setenv("AWS_ENDPOINT_URL", "")
	if _, err := tail.New(t.Context(), tail.Config{ARN: arn}); err == nil || !strings.Contains(err.Error(), "emulator") {
		t.Fatalf("New without an emulator: %v, want ErrFirehoseNeedsEmulator", err)
	}
}
