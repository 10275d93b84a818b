package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/internal/kinesalitetest"
)

// streamTail reads a stream's records as they come, each once, keeping
// each shard's iterator between reads: cheap enough to poll while sluice
// delivers, where reading the whole stream again each time is not.
type streamTail struct {
	kl        *kinesalitetest.Server
	streamARN string
	client    *kinesis.Client
	iterators map[string]*string // by shard id
	seen      map[string]int     // records by event id
}

func newStreamTail(t *testing.T, kl *kinesalitetest.Server, streamARN string) *streamTail {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	s := &streamTail{kl: kl, streamARN: streamARN, client: kl.Client(), iterators: map[string]*string{}, seen: map[string]int{}}
	// kinesalite takes stream names, not ARNs.
	_, name, _ := strings.Cut(streamARN, ":stream/")
	shards, err := s.client.ListShards(ctx, &kinesis.ListShardsInput{StreamName: aws.String(name)})
	if err != nil {
		t.Fatalf("listing the shards of %s: %v", streamARN, err)
	}
	for _, shard := range shards.Shards {
		it, err := s.client.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{
			StreamName:        aws.String(name),
			ShardId:           shard.ShardId,
			ShardIteratorType: types.ShardIteratorTypeTrimHorizon,
		})
		if err != nil {
			t.Fatalf("getting an iterator of shard %s: %v", aws.ToString(shard.ShardId), err)
		}
		s.iterators[aws.ToString(shard.ShardId)] = it.ShardIterator
	}
	return s
}

// read reads the records added since the last read, one page per shard
// (up to 10,000 records), so that it does not chase records still arriving,
// and returns every record read so far, by event id. The map is the tail's
// own.
func (s *streamTail) read(t *testing.T) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for shard, it := range s.iterators {
		out, err := s.client.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it})
		if err != nil {
			t.Fatalf("getting records of shard %s: %v", shard, err)
		}
		for _, r := range out.Records {
			s.seen[aws.ToString(r.PartitionKey)]++
		}
		if out.NextShardIterator != nil {
			s.iterators[shard] = out.NextShardIterator
		}
	}
	return s.seen
}

// readAll reads the whole stream again, with kinesalitetest's reader, and
// counts its records by event id, checking that each is the envelope of
// the event its partition key names.
func (s *streamTail) readAll(t *testing.T) map[string]int {
	t.Helper()
	records := s.kl.ReadAll(t, s.streamARN)
	got := make(map[string]int, len(records))
	for _, r := range records {
		var ev struct {
			ID string `json:"event_id"`
		}
		if err := json.Unmarshal(r.Data, &ev); err != nil || ev.ID != r.PartitionKey {
			t.Fatalf("record with partition key %s is not its event's envelope (%v): %s", r.PartitionKey, err, r.Data)
		}
		got[r.PartitionKey]++
	}
	return got
}
