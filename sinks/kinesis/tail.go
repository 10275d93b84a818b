package kinesis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/sinks"
)

// relistShards is how often a following reader looks for new shards (the
// stream was resharded).
const relistShards = 30 * time.Second

// tailReader reads every shard of a Kinesis data stream (sluice tail).
type tailReader struct {
	cfg    sinks.TailConfig
	client *kinesis.Client
	stream string
}

// newTailReader returns the reader of the stream cfg.Name: TargetType's
// Tail.
func newTailReader(cfg sinks.TailConfig) (sinks.TailReader, error) {
	return &tailReader{cfg: cfg, client: kinesis.NewFromConfig(cfg.AWS), stream: cfg.Name}, nil
}

// shardCursor is where the reader is in one shard.
type shardCursor struct {
	id       string
	iterator *string // nil once the shard is closed and read
	last     string  // the sequence number of the last record read
	caughtUp bool    // the last read returned nothing and was not behind
}

// Read reads every shard in turn, a page at a time.
func (r *tailReader) Read(ctx context.Context, emit func(sinks.TailRecord) error) error {
	cursors := make(map[string]*shardCursor)
	// Following a stream that does not exist yet with WaitForTarget waits
	// for it, and then reads it from its start: all it holds arrived after
	// the tail began.
	for waited := false; ; waited = true {
		err := r.addShards(ctx, cursors, !waited)
		var missing *types.ResourceNotFoundException
		if err == nil {
			break
		}
		if !errors.As(err, &missing) || !r.cfg.WaitsFor("Kinesis stream "+r.stream) {
			return sinks.IgnoreEnd(ctx, err)
		}
		if !r.cfg.Wait(ctx) {
			return nil
		}
	}
	listed := time.Now()
	for {
		progressed, done := false, true
		for _, c := range cursors {
			if c.iterator == nil {
				continue
			}
			n, err := r.readPage(ctx, c, emit)
			if err != nil {
				return sinks.IgnoreEnd(ctx, err)
			}
			progressed = progressed || n > 0
			done = done && (c.caughtUp || c.iterator == nil)
		}
		if !r.cfg.Follow && done {
			return nil
		}
		if r.cfg.Follow && time.Since(listed) >= relistShards {
			if err := r.addShards(ctx, cursors, false); err != nil {
				return sinks.IgnoreEnd(ctx, err)
			}
			listed = time.Now()
		}
		if !progressed && !r.cfg.Wait(ctx) {
			return nil
		}
	}
}

// addShards adds a cursor for each shard not known yet: at Since (or the
// end) at the start, and from the shard's start for shards that appear
// later.
func (r *tailReader) addShards(ctx context.Context, cursors map[string]*shardCursor, first bool) error {
	input := &kinesis.ListShardsInput{StreamName: aws.String(r.stream)}
	for {
		out, err := r.client.ListShards(ctx, input)
		if err != nil {
			return fmt.Errorf("listing the shards of %s: %w", r.stream, err)
		}
		for _, shard := range out.Shards {
			id := aws.ToString(shard.ShardId)
			if _, ok := cursors[id]; ok {
				continue
			}
			in := &kinesis.GetShardIteratorInput{StreamName: aws.String(r.stream), ShardId: aws.String(id)}
			switch {
			case !first:
				in.ShardIteratorType = types.ShardIteratorTypeTrimHorizon
			case r.cfg.Since.IsZero():
				in.ShardIteratorType = types.ShardIteratorTypeLatest
			default:
				in.ShardIteratorType = types.ShardIteratorTypeAtTimestamp
				in.Timestamp = aws.Time(r.cfg.Since)
			}
			it, err := r.client.GetShardIterator(ctx, in)
			if err != nil {
				return fmt.Errorf("starting to read shard %s of %s: %w", id, r.stream, err)
			}
			cursors[id] = &shardCursor{id: id, iterator: it.ShardIterator}
		}
		if out.NextToken == nil {
			return nil
		}
		input = &kinesis.ListShardsInput{NextToken: out.NextToken}
	}
}

// readPage reads one page of a shard and returns how many records it had.
// A throttled read or an expired iterator reads nothing this time.
func (r *tailReader) readPage(ctx context.Context, c *shardCursor, emit func(sinks.TailRecord) error) (int, error) {
	out, err := r.client.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: c.iterator, Limit: aws.Int32(1000)})
	var throttled *types.ProvisionedThroughputExceededException
	var expired *types.ExpiredIteratorException
	switch {
	case errors.As(err, &throttled):
		return 0, nil
	case errors.As(err, &expired):
		return 0, r.restart(ctx, c)
	case err != nil:
		return 0, fmt.Errorf("reading shard %s of %s: %w", c.id, r.stream, err)
	}
	for _, rec := range out.Records {
		c.last = aws.ToString(rec.SequenceNumber)
		if err := emit(sinks.TailRecord{Data: rec.Data, Where: c.id, Time: aws.ToTime(rec.ApproximateArrivalTimestamp)}); err != nil {
			return 0, err
		}
	}
	c.iterator = out.NextShardIterator
	c.caughtUp = len(out.Records) == 0 && aws.ToInt64(out.MillisBehindLatest) == 0
	return len(out.Records), nil
}

// restart gets a new iterator after the last record read, for one that
// expired (they last five minutes).
func (r *tailReader) restart(ctx context.Context, c *shardCursor) error {
	in := &kinesis.GetShardIteratorInput{StreamName: aws.String(r.stream), ShardId: aws.String(c.id)}
	if c.last == "" {
		in.ShardIteratorType = types.ShardIteratorTypeLatest
	} else {
		in.ShardIteratorType = types.ShardIteratorTypeAfterSequenceNumber
		in.StartingSequenceNumber = aws.String(c.last)
	}
	it, err := r.client.GetShardIterator(ctx, in)
	if err != nil {
		return fmt.Errorf("reading shard %s of %s again: %w", c.id, r.stream, err)
	}
	c.iterator = it.ShardIterator
	return nil
}
