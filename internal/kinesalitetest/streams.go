package kinesalitetest

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// callTimeout bounds each helper: kinesalite answers in milliseconds.
const callTimeout = time.Minute

// CreateStream creates a stream of that many shards, waits until it is
// ACTIVE and returns its ARN.
func (s *Server) CreateStream(t testing.TB, name string, shards int) (streamARN string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	_, err := s.client.CreateStream(ctx, &kinesis.CreateStreamInput{
		StreamName: aws.String(name),
		ShardCount: aws.Int32(int32(shards)),
	})
	if err != nil {
		t.Fatalf("creating stream %s: %v", name, err)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		out, err := s.client.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String(name)})
		if err != nil {
			t.Fatalf("describing stream %s: %v", name, err)
		}
		summary := out.StreamDescriptionSummary
		if summary.StreamStatus == types.StreamStatusActive {
			if got, want := aws.ToString(summary.StreamARN), StreamARN(name); got != want {
				t.Fatalf("kinesalite reports the ARN of stream %s as %s, not %s", name, got, want)
			}
			return StreamARN(name)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("stream %s still %s: %v", name, summary.StreamStatus, ctx.Err())
		case <-tick.C:
		}
	}
}

// Record is one record read back from a stream.
type Record struct {
	PartitionKey string
	Data         []byte
	// ShardID and SequenceNumber say where the record is.
	ShardID, SequenceNumber string
}

// ReadAll returns every record of every shard of the stream, each shard's in
// order, read from the oldest (TRIM_HORIZON) until a read returns nothing
// (kinesalite, unlike Kinesis, returns an empty page only at the end).
func (s *Server) ReadAll(t testing.TB, streamARN string) []Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	name := streamName(streamARN)
	var shards []types.Shard
	input := &kinesis.ListShardsInput{StreamName: aws.String(name)}
	for {
		out, err := s.client.ListShards(ctx, input)
		if err != nil {
			t.Fatalf("listing shards of %s: %v", name, err)
		}
		shards = append(shards, out.Shards...)
		if out.NextToken == nil {
			break
		}
		input = &kinesis.ListShardsInput{NextToken: out.NextToken}
	}
	var records []Record
	for _, shard := range shards {
		records = append(records, s.readShard(ctx, t, name, aws.ToString(shard.ShardId))...)
	}
	return records
}

// readShard returns every record of one shard.
func (s *Server) readShard(ctx context.Context, t testing.TB, stream, shard string) []Record {
	t.Helper()
	it, err := s.client.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{
		StreamName:        aws.String(stream),
		ShardId:           aws.String(shard),
		ShardIteratorType: types.ShardIteratorTypeTrimHorizon,
	})
	if err != nil {
		t.Fatalf("getting an iterator of %s/%s: %v", stream, shard, err)
	}
	var records []Record
	for iterator := it.ShardIterator; iterator != nil; {
		input := &kinesis.GetRecordsInput{ShardIterator: iterator}
		if s.pageLimit > 0 {
			input.Limit = aws.Int32(s.pageLimit)
		}
		out, err := s.client.GetRecords(ctx, input)
		if err != nil {
			t.Fatalf("getting records of %s/%s: %v", stream, shard, err)
		}
		if len(out.Records) == 0 {
			break
		}
		for _, r := range out.Records {
			records = append(records, Record{
				PartitionKey:   aws.ToString(r.PartitionKey),
				Data:           r.Data,
				ShardID:        shard,
				SequenceNumber: aws.ToString(r.SequenceNumber),
			})
		}
		iterator = out.NextShardIterator
	}
	return records
}
