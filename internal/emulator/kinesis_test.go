package emulator_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

func TestKinesisRoundTrip(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{Region: "eu-west-1"})
	client := emu.KinesisClient()
	ctx := t.Context()
	if _, err := client.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("orders"), ShardCount: aws.Int32(3)}); err != nil {
		t.Fatalf("CreateStream: %v", err)
	}
	_, err := client.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("orders"), ShardCount: aws.Int32(3)})
	wantAPIError(t, err, "ResourceInUseException", 400)

	summary, err := client.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String("orders")})
	if err != nil {
		t.Fatalf("DescribeStreamSummary: %v", err)
	}
	arn := aws.ToString(summary.StreamDescriptionSummary.StreamARN)
	if want := "arn:aws:kinesis:eu-west-1:123456789012:stream/orders"; arn != want {
		t.Errorf("StreamARN = %s, want %s", arn, want)
	}
	if got := aws.ToInt32(summary.StreamDescriptionSummary.OpenShardCount); got != 3 {
		t.Errorf("OpenShardCount = %d, want 3", got)
	}
	shards, err := client.ListShards(ctx, &kinesis.ListShardsInput{StreamARN: aws.String(arn)})
	if err != nil {
		t.Fatalf("ListShards: %v", err)
	}
	if len(shards.Shards) != 3 {
		t.Fatalf("ListShards: %d shards, want 3", len(shards.Shards))
	}

	var entries []types.PutRecordsRequestEntry
	for i := range 300 {
		entries = append(entries, types.PutRecordsRequestEntry{Data: []byte(fmt.Sprintf("record %d", i)), PartitionKey: aws.String(fmt.Sprintf("key-%d", i))})
	}
	// The SDK sends StreamARN; sluice's sink sends both.
	put, err := client.PutRecords(ctx, &kinesis.PutRecordsInput{StreamARN: aws.String(arn), StreamName: aws.String("orders"), Records: entries})
	if err != nil {
		t.Fatalf("PutRecords: %v", err)
	}
	if aws.ToInt32(put.FailedRecordCount) != 0 || len(put.Records) != 300 {
		t.Fatalf("PutRecords: %d failed, %d results", aws.ToInt32(put.FailedRecordCount), len(put.Records))
	}
	perShard := map[string]int{}
	for _, r := range put.Records {
		perShard[aws.ToString(r.ShardId)]++
	}
	if len(perShard) != 3 {
		t.Errorf("records spread over %d shards, want 3: %v", len(perShard), perShard)
	}

	// Read every shard from TRIM_HORIZON, 50 records a page.
	var read int
	for _, sh := range shards.Shards {
		it, err := client.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamARN: aws.String(arn), ShardId: sh.ShardId, ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
		if err != nil {
			t.Fatalf("GetShardIterator: %v", err)
		}
		iterator := it.ShardIterator
		for {
			page, err := client.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: iterator, Limit: aws.Int32(50), StreamARN: aws.String(arn)})
			if err != nil {
				t.Fatalf("GetRecords: %v", err)
			}
			for _, r := range page.Records {
				if !strings.HasPrefix(string(r.Data), "record ") || r.ApproximateArrivalTimestamp == nil {
					t.Fatalf("record %+v", r)
				}
			}
			read += len(page.Records)
			iterator = page.NextShardIterator
			if len(page.Records) == 0 {
				break
			}
		}
	}
	if read != 300 {
		t.Errorf("read %d records, want 300", read)
	}
	stored, err := emu.KinesisRecords("orders")
	if err != nil || len(stored) != 300 {
		t.Errorf("KinesisRecords: %d records, %v", len(stored), err)
	}
	if got := emu.Counters(emulator.ServiceKinesis, "orders").ByOperation["PutRecords"]; got.Calls != 1 || got.RecordsAccepted != 300 {
		t.Errorf("PutRecords counters = %+v", got)
	}
}

func TestKinesisShardIteratorTypes(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := now
	emu := emulatortest.Start(t, emulator.Config{Now: func() time.Time { return clock }})
	client := emu.KinesisClient()
	ctx := t.Context()
	if err := emu.CreateStream("s", 1); err != nil {
		t.Fatal(err)
	}
	var seqs []string
	for i := range 5 {
		clock = now.Add(time.Duration(i) * time.Second)
		out, err := client.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte{byte('a' + i)}})
		if err != nil {
			t.Fatalf("PutRecord: %v", err)
		}
		seqs = append(seqs, aws.ToString(out.SequenceNumber))
	}
	clock = now.Add(time.Minute)
	tests := []struct {
		name  string
		input kinesis.GetShardIteratorInput
		want  string
	}{
		{"trim horizon", kinesis.GetShardIteratorInput{ShardIteratorType: types.ShardIteratorTypeTrimHorizon}, "abcde"},
		{"latest", kinesis.GetShardIteratorInput{ShardIteratorType: types.ShardIteratorTypeLatest}, ""},
		{"at sequence number", kinesis.GetShardIteratorInput{ShardIteratorType: types.ShardIteratorTypeAtSequenceNumber, StartingSequenceNumber: aws.String(seqs[2])}, "cde"},
		{"after sequence number", kinesis.GetShardIteratorInput{ShardIteratorType: types.ShardIteratorTypeAfterSequenceNumber, StartingSequenceNumber: aws.String(seqs[2])}, "de"},
		{"at timestamp", kinesis.GetShardIteratorInput{ShardIteratorType: types.ShardIteratorTypeAtTimestamp, Timestamp: aws.Time(now.Add(1500 * time.Millisecond))}, "cde"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.input
			in.StreamName, in.ShardId = aws.String("s"), aws.String("shardId-000000000000")
			it, err := client.GetShardIterator(ctx, &in)
			if err != nil {
				t.Fatalf("GetShardIterator: %v", err)
			}
			page, err := client.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it.ShardIterator})
			if err != nil {
				t.Fatalf("GetRecords: %v", err)
			}
			var got []byte
			for _, r := range page.Records {
				got = append(got, r.Data...)
			}
			if string(got) != tt.want {
				t.Errorf("read %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("expired iterator", func(t *testing.T) {
		it, err := client.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String("shardId-000000000000"), ShardIteratorType: types.ShardIteratorTypeLatest})
		if err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(6 * time.Minute)
		_, err = client.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it.ShardIterator})
		wantAPIError(t, err, "ExpiredIteratorException", 400)
	})
}

func TestKinesisLimits(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	client := emu.KinesisClient()
	ctx := t.Context()
	if err := emu.CreateStream("s", 2); err != nil {
		t.Fatal(err)
	}
	record := func(key string, size int) types.PutRecordsRequestEntry {
		return types.PutRecordsRequestEntry{PartitionKey: aws.String(key), Data: bytes.Repeat([]byte("x"), size)}
	}
	records := func(n int, key string, size int) []types.PutRecordsRequestEntry {
		out := make([]types.PutRecordsRequestEntry, n)
		for i := range out {
			out[i] = record(key, size)
		}
		return out
	}
	tests := []struct {
		name     string
		stream   string
		records  []types.PutRecordsRequestEntry
		wantCode string
	}{
		{"500 records", "s", records(500, "k", 10), ""},
		{"501 records", "s", records(501, "k", 10), "ValidationException"},
		{"a record of 1 MiB with its key", "s", records(1, "k", 1<<20-1), ""},
		{"a record over 1 MiB with its key", "s", records(1, "kk", 1<<20-1), "ValidationException"},
		{"5 MiB with the keys", "s", records(5, "k", 1<<20-1), ""},
		{"over 5 MiB", "s", append(records(5, "k", 1<<20-1), record("k", 6)), "InvalidArgumentException"},
		{"an empty partition key", "s", records(1, "", 10), "ValidationException"},
		{"a partition key of 256 characters", "s", records(1, strings.Repeat("é", 256), 10), ""},
		{"a partition key of 257 characters", "s", records(1, strings.Repeat("k", 257), 10), "ValidationException"},
		{"a missing stream", "nope", records(1, "k", 10), "ResourceNotFoundException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := client.PutRecords(ctx, &kinesis.PutRecordsInput{StreamName: aws.String(tt.stream), Records: tt.records})
			if tt.wantCode != "" {
				wantAPIError(t, err, tt.wantCode, 400)
				return
			}
			if err != nil {
				t.Fatalf("PutRecords: %v", err)
			}
			if aws.ToInt32(out.FailedRecordCount) != 0 {
				t.Fatalf("FailedRecordCount = %d", aws.ToInt32(out.FailedRecordCount))
			}
		})
	}
}

func TestKinesisAutoCreate(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{AutoCreate: true})
	arn := "arn:aws:kinesis:ap-south-1:999999999999:stream/anything"
	_, err := emu.KinesisClient().PutRecord(t.Context(), &kinesis.PutRecordInput{StreamARN: aws.String(arn), PartitionKey: aws.String("k"), Data: []byte("x")})
	if err != nil {
		t.Fatalf("PutRecord to a new stream: %v", err)
	}
	if records, err := emu.KinesisRecords("anything"); err != nil || len(records) != 1 {
		t.Fatalf("KinesisRecords = %d records, %v", len(records), err)
	}
}

func TestKinesisBoundedStorage(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{MaxStoredRecords: 10})
	if err := emu.CreateStream("s", 2); err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		_, err := emu.KinesisClient().PutRecord(t.Context(), &kinesis.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String(fmt.Sprint(i)), Data: []byte{byte(i)}})
		if err != nil {
			t.Fatal(err)
		}
	}
	records, err := emu.KinesisRecords("s")
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 10 {
		t.Fatalf("kept %d records, want 10", len(records))
	}
	for _, r := range records {
		if r.Data[0] < 15 {
			t.Errorf("kept record %d, not one of the newest 10", r.Data[0])
		}
	}
}
