package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// rangeCountTries is how many times countRange reads its consumers while
// events keep coming, before it settles for an upper bound.
const rangeCountTries = 5

// rangeCounterIdle is how long a consumer of countRange that its process
// failed to delete (it died) outlives its last use.
const rangeCounterIdle = 30 * time.Second

// countRange returns how many events of the subjects the stream holds
// from the first stored at or after since up to the stream sequence end.
//
// JetStream counts no range, but a consumer that has delivered nothing
// counts the events of its filter subjects from its start to the stream's
// end (NumPending), as of the moment it is asked. countRange makes two
// such consumers, one starting at since (as the replay's consumers do) and
// one just after end, and subtracts what the second counts from what the
// first does. An event stored between the two readings would be counted
// by the first only, so the second is read before and after the first:
// when both readings agree, nothing was stored in between and the
// difference is exact. While events keep coming, it reads again, up to
// rangeCountTries times, and then subtracts the earlier reading: the
// count is then too high by the events of the subjects stored between the
// readings, never too low.
func (r *Replayer) countRange(ctx context.Context, subjects []string, since time.Time, end uint64) (uint64, error) {
	if len(subjects) == 0 || end == 0 {
		return 0, nil
	}
	after, err := r.rangeCounter(ctx, subjects, jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: end + 1})
	if err != nil {
		return 0, err
	}
	defer r.deleteRangeCounter(ctx, after)
	from, err := r.rangeCounter(ctx, subjects, jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &since})
	if err != nil {
		return 0, err
	}
	defer r.deleteRangeCounter(ctx, from)
	pending := func(c jetstream.Consumer) (uint64, error) {
		info, err := c.Info(ctx)
		if err != nil {
			return 0, fmt.Errorf("counting the events of the range: %w", err)
		}
		return info.NumPending, nil
	}
	var total uint64
	for range rangeCountTries {
		before, err := pending(after)
		if err != nil {
			return 0, err
		}
		all, err := pending(from)
		if err != nil {
			return 0, err
		}
		later, err := pending(after)
		if err != nil {
			return 0, err
		}
		// A since after the range's last event starts the first consumer
		// past end: the range is empty.
		total = all - min(before, all)
		if later == before {
			break
		}
	}
	return total, nil
}

// rangeCounter makes a consumer of countRange: one that delivers nothing,
// of the subjects, starting where cfg says.
func (r *Replayer) rangeCounter(ctx context.Context, subjects []string, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	cfg.Description = "sluice: counting the events of a replay's range"
	cfg.FilterSubjects = subjects
	cfg.AckPolicy = jetstream.AckNonePolicy
	cfg.InactiveThreshold = rangeCounterIdle
	cfg.Replicas = 1
	cfg.MemoryStorage = true
	c, err := r.stream.CreateConsumer(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("making a consumer to count the events of the range: %w", err)
	}
	return c, nil
}

// deleteRangeCounter deletes a consumer of countRange, within
// rangeCounterDeleteTimeout even once the request has ended: one that
// cannot be deleted now goes once idle for rangeCounterIdle, so its error
// is not the caller's.
func (r *Replayer) deleteRangeCounter(ctx context.Context, c jetstream.Consumer) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rangeCounterDeleteTimeout)
	defer cancel()
	_ = r.stream.DeleteConsumer(ctx, c.CachedInfo().Name)
}

// rangeCounterDeleteTimeout bounds the deletion of a counting consumer, so
// that a stalled NATS cannot hold the replay's request.
const rangeCounterDeleteTimeout = 5 * time.Second
