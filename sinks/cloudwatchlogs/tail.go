package cloudwatchlogs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/sluicehq/sluice/sinks"
)

// logsLag is how far before the newest event seen a following reader asks
// again: CloudWatch Logs orders events by their own timestamps, and an
// event can be stored after a newer one was (sluice delivers each route on
// its own).
const logsLag = time.Minute

// tailReader reads a CloudWatch Logs log group with FilterLogEvents
// (sluice tail).
type tailReader struct {
	cfg    sinks.TailConfig
	client *cloudwatchlogs.Client
	group  string
}

// newTailReader returns the reader of the log group cfg.Name, "NAME" or
// "NAME:*": TargetType's Tail.
func newTailReader(cfg sinks.TailConfig) (sinks.TailReader, error) {
	return &tailReader{cfg: cfg, client: cloudwatchlogs.NewFromConfig(cfg.AWS), group: strings.TrimSuffix(cfg.Name, ":*")}, nil
}

// Read asks for the events from Since (or a minute ago) on, page by page;
// following, it asks again from a minute before the newest event seen,
// leaving out the events it has read already.
func (r *tailReader) Read(ctx context.Context, emit func(sinks.TailRecord) error) error {
	start := r.cfg.Since
	if start.IsZero() {
		start = time.Now().Add(-logsLag)
	}
	seen := make(map[string]int64) // event id → timestamp, of the events at or after start
	for {
		newest, err := r.readFrom(ctx, start, seen, emit)
		if err != nil {
			return sinks.IgnoreEnd(ctx, err)
		}
		if !r.cfg.Follow {
			return nil
		}
		if from := newest.Add(-logsLag); from.After(start) {
			start = from
			for id, ts := range seen {
				if ts < start.UnixMilli() {
					delete(seen, id)
				}
			}
		}
		if !r.cfg.Wait(ctx) {
			return nil
		}
	}
}

// readFrom reads every page of events from start and returns the
// timestamp of the newest event seen.
func (r *tailReader) readFrom(ctx context.Context, start time.Time, seen map[string]int64, emit func(sinks.TailRecord) error) (time.Time, error) {
	newest := start
	input := &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String(r.group), StartTime: aws.Int64(start.UnixMilli())}
	for {
		out, err := r.client.FilterLogEvents(ctx, input)
		var missing *types.ResourceNotFoundException
		if errors.As(err, &missing) && r.cfg.WaitsFor("log group "+r.group) {
			// Following a log group that does not exist yet may wait
			// for it.
			return newest, nil
		}
		if err != nil {
			return newest, fmt.Errorf("reading log group %s: %w", r.group, err)
		}
		for _, ev := range out.Events {
			id := aws.ToString(ev.EventId)
			if _, ok := seen[id]; ok {
				continue
			}
			ts := aws.ToInt64(ev.Timestamp)
			seen[id] = ts
			if t := time.UnixMilli(ts); t.After(newest) {
				newest = t
			}
			rec := sinks.TailRecord{Data: []byte(aws.ToString(ev.Message)), Where: aws.ToString(ev.LogStreamName)}
			if ev.IngestionTime != nil {
				rec.Time = time.UnixMilli(*ev.IngestionTime)
			}
			if err := emit(rec); err != nil {
				return newest, err
			}
		}
		if out.NextToken == nil {
			return newest, nil
		}
		input.NextToken = out.NextToken
	}
}
