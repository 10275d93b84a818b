package emulator_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logstypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	firehosetypes "github.com/aws/aws-sdk-go-v2/service/firehose/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kinesistypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// The benchmarks measure the emulator's own ceiling: full calls of 1 KB
// records through the real SDK clients over loopback, one call at a time
// (b.RunParallel would measure the SDK's and the machine's parallelism as
// much). Each reports records/s; run with -count and take the median.
//
//	go test -run '^$' -bench . -count 5 ./internal/emulator

// benchRecord is a 1 KB record.
var benchRecord = bytes.Repeat([]byte("x"), 1023)

// startBench starts an emulator that keeps few records, so that memory
// stays flat however long the benchmark runs.
func startBench(b *testing.B) *emulatortest.Emulator {
	b.Helper()
	return emulatortest.Start(b, emulator.Config{MaxStoredRecords: 10_000})
}

func BenchmarkKinesisPutRecords(b *testing.B) {
	emu := startBench(b)
	if err := emu.CreateStream("bench", 4); err != nil {
		b.Fatal(err)
	}
	client := emu.KinesisClient()
	entries := make([]kinesistypes.PutRecordsRequestEntry, 500)
	for i := range entries {
		entries[i] = kinesistypes.PutRecordsRequestEntry{PartitionKey: aws.String(fmt.Sprintf("ev_%020d", i)), Data: benchRecord}
	}
	in := &kinesis.PutRecordsInput{StreamName: aws.String("bench"), Records: entries}
	ctx := b.Context()
	b.ResetTimer()
	for b.Loop() {
		out, err := client.PutRecords(ctx, in)
		if err != nil || aws.ToInt32(out.FailedRecordCount) != 0 {
			b.Fatalf("PutRecords: %v", err)
		}
	}
	b.ReportMetric(float64(b.N*len(entries))/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkFirehosePutRecordBatch(b *testing.B) { benchFirehose(b, startBench(b)) }

// BenchmarkFirehosePutRecordBatchDataDir is BenchmarkFirehosePutRecordBatch
// with the state saved to a directory while the calls go on, as under
// serve --dev: 10,000 records of 1 KB, saved each second or so.
func BenchmarkFirehosePutRecordBatchDataDir(b *testing.B) {
	benchFirehose(b, emulatortest.Start(b, emulator.Config{MaxStoredRecords: 10_000, DataDir: b.TempDir()}))
}

func benchFirehose(b *testing.B, emu *emulatortest.Emulator) {
	if err := emu.CreateDeliveryStream("bench"); err != nil {
		b.Fatal(err)
	}
	client := emu.FirehoseClient()
	records := make([]firehosetypes.Record, 500)
	for i := range records {
		records[i] = firehosetypes.Record{Data: benchRecord}
	}
	in := &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String("bench"), Records: records}
	ctx := b.Context()
	b.ResetTimer()
	for b.Loop() {
		out, err := client.PutRecordBatch(ctx, in)
		if err != nil || aws.ToInt32(out.FailedPutCount) != 0 {
			b.Fatalf("PutRecordBatch: %v", err)
		}
	}
	b.ReportMetric(float64(b.N*len(records))/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkLogsPutLogEvents puts calls as full as 1 KB events make them:
// 1,024 events of 998 bytes, 1,048,576 bytes counting 26 per event, all of
// the time of the call.
func BenchmarkLogsPutLogEvents(b *testing.B) {
	benchLogs(b, func(now int64, _ int) int64 { return now })
}

// BenchmarkLogsPutLogEventsOverlapping is BenchmarkLogsPutLogEvents with
// the timestamps of a route's batches: each call's a millisecond apart,
// starting before the last call's ended, so that most events are older
// than the newest kept.
func BenchmarkLogsPutLogEventsOverlapping(b *testing.B) {
	benchLogs(b, func(now int64, i int) int64 { return now - 1000 + int64(i) })
}

// benchLogs puts full calls of 1 KB events, event i of each stamped
// stamp(the call's time in milliseconds, i).
func benchLogs(b *testing.B, stamp func(now int64, i int) int64) {
	emu := startBench(b)
	if err := emu.CreateLogGroup("bench", 0); err != nil {
		b.Fatal(err)
	}
	if err := emu.CreateLogStream("bench", "s"); err != nil {
		b.Fatal(err)
	}
	client := emu.LogsClient()
	message := string(benchRecord[:1024-26])
	events := make([]logstypes.InputLogEvent, 1_048_576/1024)
	ctx := b.Context()
	b.ResetTimer()
	for b.Loop() {
		now := time.Now().UnixMilli()
		for i := range events {
			events[i] = logstypes.InputLogEvent{Timestamp: aws.Int64(stamp(now, i)), Message: aws.String(message)}
		}
		out, err := client.PutLogEvents(ctx, &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String("bench"), LogStreamName: aws.String("s"), LogEvents: events})
		if err != nil || out.RejectedLogEventsInfo != nil {
			b.Fatalf("PutLogEvents: %v", err)
		}
	}
	b.ReportMetric(float64(b.N*len(events))/b.Elapsed().Seconds(), "records/s")
}
