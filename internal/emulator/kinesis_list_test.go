package emulator_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

func TestKinesisListStreams(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	ctx := t.Context()
	client := emu.KinesisClient()
	var want []string
	for i := range 5 {
		name := fmt.Sprintf("stream-%d", i)
		want = append(want, name)
		if err := emu.CreateStream(name, 1); err != nil {
			t.Fatal(err)
		}
	}

	out, err := client.ListStreams(ctx, &kinesis.ListStreamsInput{})
	if err != nil {
		t.Fatalf("ListStreams: %v", err)
	}
	if !slices.Equal(out.StreamNames, want) || aws.ToBool(out.HasMoreStreams) || len(out.StreamSummaries) != 5 {
		t.Fatalf("ListStreams = %v, more %v, %d summaries", out.StreamNames, aws.ToBool(out.HasMoreStreams), len(out.StreamSummaries))
	}
	sum := out.StreamSummaries[0]
	if aws.ToString(sum.StreamARN) != "arn:aws:kinesis:us-east-1:123456789012:stream/stream-0" || sum.StreamStatus != types.StreamStatusActive ||
		sum.StreamModeDetails == nil || sum.StreamModeDetails.StreamMode != types.StreamModeProvisioned || sum.StreamCreationTimestamp == nil {
		t.Fatalf("StreamSummaries[0] = %+v", sum)
	}

	// The SDK's paginator follows NextToken; ExclusiveStartStreamName pages too.
	var paged []string
	pages := kinesis.NewListStreamsPaginator(client, &kinesis.ListStreamsInput{Limit: aws.Int32(2)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatalf("ListStreams page: %v", err)
		}
		if len(page.StreamNames) > 2 {
			t.Fatalf("a page of %d streams, limit 2", len(page.StreamNames))
		}
		paged = append(paged, page.StreamNames...)
	}
	if !slices.Equal(paged, want) {
		t.Fatalf("paged = %v, want %v", paged, want)
	}
	out, err = client.ListStreams(ctx, &kinesis.ListStreamsInput{ExclusiveStartStreamName: aws.String("stream-2"), Limit: aws.Int32(1)})
	if err != nil || !slices.Equal(out.StreamNames, []string{"stream-3"}) || !aws.ToBool(out.HasMoreStreams) {
		t.Fatalf("ListStreams after stream-2 = %v, more %v, %v", out.StreamNames, aws.ToBool(out.HasMoreStreams), err)
	}

	_, err = client.ListStreams(ctx, &kinesis.ListStreamsInput{Limit: aws.Int32(0)})
	wantAPIError(t, err, "ValidationException", 400)
	_, err = client.ListStreams(ctx, &kinesis.ListStreamsInput{NextToken: aws.String("not a token")})
	wantAPIError(t, err, "InvalidArgumentException", 400)
}

func TestKinesisDescribeStream(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	ctx := t.Context()
	client := emu.KinesisClient()
	if err := emu.CreateStream("s", 3); err != nil {
		t.Fatal(err)
	}
	shards, err := client.ListShards(ctx, &kinesis.ListShardsInput{StreamName: aws.String("s")})
	if err != nil {
		t.Fatal(err)
	}

	out, err := client.DescribeStream(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String("s")})
	if err != nil {
		t.Fatalf("DescribeStream: %v", err)
	}
	d := out.StreamDescription
	if aws.ToString(d.StreamName) != "s" || aws.ToString(d.StreamARN) != "arn:aws:kinesis:us-east-1:123456789012:stream/s" || d.StreamStatus != types.StreamStatusActive ||
		aws.ToBool(d.HasMoreShards) || aws.ToInt32(d.RetentionPeriodHours) != 24 || d.StreamCreationTimestamp == nil || d.StreamModeDetails == nil {
		t.Fatalf("StreamDescription = %+v", d)
	}
	if len(d.Shards) != 3 {
		t.Fatalf("%d shards, want 3", len(d.Shards))
	}
	for i, sh := range d.Shards {
		ls := shards.Shards[i]
		if aws.ToString(sh.ShardId) != aws.ToString(ls.ShardId) || aws.ToString(sh.HashKeyRange.StartingHashKey) != aws.ToString(ls.HashKeyRange.StartingHashKey) ||
			aws.ToString(sh.HashKeyRange.EndingHashKey) != aws.ToString(ls.HashKeyRange.EndingHashKey) ||
			aws.ToString(sh.SequenceNumberRange.StartingSequenceNumber) != aws.ToString(ls.SequenceNumberRange.StartingSequenceNumber) {
			t.Errorf("shard %d = %+v, ListShards says %+v", i, sh, ls)
		}
	}
	if aws.ToString(d.Shards[0].HashKeyRange.StartingHashKey) != "0" || aws.ToString(d.Shards[2].HashKeyRange.EndingHashKey) != "340282366920938463463374607431768211455" {
		t.Errorf("the shards do not cover the hash key space: %+v", d.Shards)
	}

	// By ARN, a page at a time.
	page, err := client.DescribeStream(ctx, &kinesis.DescribeStreamInput{StreamARN: d.StreamARN, Limit: aws.Int32(2)})
	if err != nil || len(page.StreamDescription.Shards) != 2 || !aws.ToBool(page.StreamDescription.HasMoreShards) {
		t.Fatalf("DescribeStream limit 2 = %+v, %v", page, err)
	}
	page, err = client.DescribeStream(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String("s"), ExclusiveStartShardId: page.StreamDescription.Shards[1].ShardId})
	if err != nil || len(page.StreamDescription.Shards) != 1 || aws.ToString(page.StreamDescription.Shards[0].ShardId) != "shardId-000000000002" || aws.ToBool(page.StreamDescription.HasMoreShards) {
		t.Fatalf("DescribeStream after shard 1 = %+v, %v", page, err)
	}

	// What Redpanda Connect's aws_kinesis output waits on when it connects.
	if err := kinesis.NewStreamExistsWaiter(client).Wait(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String("s")}, 10*time.Second); err != nil {
		t.Fatalf("StreamExists waiter: %v", err)
	}

	_, err = client.DescribeStream(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String("missing")})
	wantAPIError(t, err, "ResourceNotFoundException", 400)
	_, err = client.DescribeStream(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String("s"), Limit: aws.Int32(10001)})
	wantAPIError(t, err, "ValidationException", 400)
}

// TestKinesisDescribeBytes checks the answers of DescribeStreamSummary and
// DescribeStream byte for byte, their keys in AWS's order: what the two
// say alike of a stream is one code, which must not reorder either.
func TestKinesisDescribeBytes(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	if err := emu.CreateStream("s", 2); err != nil {
		t.Fatal(err)
	}
	const (
		identity = `"StreamName":"s","StreamARN":"arn:aws:kinesis:us-east-1:123456789012:stream/s","StreamStatus":"ACTIVE","StreamModeDetails":{"StreamMode":"PROVISIONED"}`
		settings = `"RetentionPeriodHours":24,"StreamCreationTimestamp":T,"EnhancedMonitoring":[{"ShardLevelMetrics":[]}],"EncryptionType":"NONE"`
		shard1   = `{"ShardId":"shardId-000000000001","HashKeyRange":{"StartingHashKey":"170141183460469231731687303715884105728","EndingHashKey":"340282366920938463463374607431768211455"},"SequenceNumberRange":{"StartingSequenceNumber":"N"}}`
	)
	timestamp := regexp.MustCompile(`"StreamCreationTimestamp":[0-9.e+]+`)
	sequence := regexp.MustCompile(`"StartingSequenceNumber":"[0-9]+"`)
	for _, tt := range []struct {
		target string
		body   map[string]any
		want   string
	}{
		{"Kinesis_20131202.DescribeStreamSummary", map[string]any{"StreamName": "s"},
			`{"StreamDescriptionSummary":{` + identity + `,` + settings + `,"OpenShardCount":2,"ConsumerCount":0}}`},
		{"Kinesis_20131202.DescribeStream", map[string]any{"StreamName": "s", "ExclusiveStartShardId": "shardId-000000000000"},
			`{"StreamDescription":{` + identity + `,"Shards":[` + shard1 + `],"HasMoreShards":false,` + settings + `}}`},
		{"Kinesis_20131202.DescribeStream", map[string]any{"StreamName": "s", "Limit": 1},
			`{"StreamDescription":{` + identity + `,"Shards":[{"ShardId":"shardId-000000000000"`},
	} {
		status, raw, err := rawSend(emu.Endpoint, tt.target, tt.body, nil, time.Minute)
		if err != nil || status != 200 {
			t.Fatalf("%s %v: %d %s, %v", tt.target, tt.body, status, raw, err)
		}
		got := timestamp.ReplaceAllString(string(raw), `"StreamCreationTimestamp":T`)
		got = sequence.ReplaceAllString(got, `"StartingSequenceNumber":"N"`)
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s %v answered\n%s\nwant (the start of)\n%s", tt.target, tt.body, got, tt.want)
		}
	}
}

func TestFirehoseListDeliveryStreams(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	ctx := t.Context()
	client := emu.FirehoseClient()
	var want []string
	for i := range 12 {
		name := fmt.Sprintf("ds-%02d", i)
		want = append(want, name)
		if err := emu.CreateDeliveryStream(name); err != nil {
			t.Fatal(err)
		}
	}
	out, err := client.ListDeliveryStreams(ctx, &firehose.ListDeliveryStreamsInput{})
	if err != nil {
		t.Fatalf("ListDeliveryStreams: %v", err)
	}
	if !slices.Equal(out.DeliveryStreamNames, want[:10]) || !aws.ToBool(out.HasMoreDeliveryStreams) {
		t.Fatalf("ListDeliveryStreams = %v, more %v; want the first 10 and more", out.DeliveryStreamNames, aws.ToBool(out.HasMoreDeliveryStreams))
	}
	out, err = client.ListDeliveryStreams(ctx, &firehose.ListDeliveryStreamsInput{ExclusiveStartDeliveryStreamName: aws.String("ds-09"), Limit: aws.Int32(100)})
	if err != nil || !slices.Equal(out.DeliveryStreamNames, want[10:]) || aws.ToBool(out.HasMoreDeliveryStreams) {
		t.Fatalf("ListDeliveryStreams after ds-09 = %v, more %v, %v", out.DeliveryStreamNames, aws.ToBool(out.HasMoreDeliveryStreams), err)
	}
	out, err = client.ListDeliveryStreams(ctx, &firehose.ListDeliveryStreamsInput{DeliveryStreamType: "KinesisStreamAsSource"})
	if err != nil || len(out.DeliveryStreamNames) != 0 || out.DeliveryStreamNames == nil {
		t.Fatalf("ListDeliveryStreams of KinesisStreamAsSource = %#v, %v", out.DeliveryStreamNames, err)
	}
	_, err = client.ListDeliveryStreams(ctx, &firehose.ListDeliveryStreamsInput{Limit: aws.Int32(0)})
	wantAPIError(t, err, "ValidationException", 400)
}
