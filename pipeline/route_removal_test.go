package pipeline_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/sinks"
)

// abortingSink is a destination whose writes never end on their own: a
// write waits for its ctx, then takes abort to unwind, as a call to AWS
// cut short does.
type abortingSink struct {
	abort   time.Duration
	writing atomic.Int64 // writes under way
}

func (s *abortingSink) Limits() sinks.Limits {
	return sinks.Limits{MaxRecords: 10, MaxBatchBytes: 5 << 20, MaxRecordBytes: 1 << 20}
}

func (s *abortingSink) Write(ctx context.Context, records []sinks.Record) ([]sinks.Result, error) {
	s.writing.Add(1)
	defer s.writing.Add(-1)
	<-ctx.Done()
	timer := time.NewTimer(s.abort) // the unwinding of the call, not a wait for anything
	defer timer.Stop()
	<-timer.C
	return nil, ctx.Err()
}

// TestDeletedSubscriptionStopsWithinTwoSeconds: the routes of a deleted
// subscription of ten destinations, each with writes under way and events
// pulled ahead, stop and lose their consumers within two seconds, though
// each write takes 400 ms to unwind: their workers stop together, and
// drop what they hold with their consumers instead of handing it back.
func TestDeletedSubscriptionStopsWithinTwoSeconds(t *testing.T) {
	const destinations = 10
	sink := &abortingSink{abort: 400 * time.Millisecond}
	e := startDeliveryTo(t, pipeline.DeliveryConfig{Linger: time.Millisecond}, func(context.Context, store.Destination) (sinks.Sink, error) { return sink, nil })
	var ids []string
	for range destinations {
		d, err := e.store.CreateDestination(e.ctx, e.account, store.Destination{Target: store.Target{Kinesis: &store.KinesisTarget{
			Auth:      store.AWSAuth{Role: &store.AWSRole{RoleARN: "arn:aws:iam::123456789012:role/r"}},
			StreamARN: "arn:aws:kinesis:us-east-1:123456789012:stream/s",
		}}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	sub, err := e.store.CreateSubscription(e.ctx, e.account, store.Subscription{Sources: []store.Source{{Type: httpKind}}, DestinationIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		e.waitConsumer(t, pipeline.ConsumerName(sub.ID, id))
	}
	e.publish(t, httpKind, 500, nil)
	check.Eventually(t, 10*time.Second, "every route writing", func() (error, bool) {
		return nil, sink.writing.Load() >= destinations
	})

	start := time.Now()
	if _, err := e.store.DeleteSubscription(e.ctx, e.account, sub.ID); err != nil {
		t.Fatal(err)
	}
	check.Eventually(t, 10*time.Second, "the routes' consumers deleted", func() (error, bool) {
		for _, id := range ids {
			if _, err := e.stream.Consumer(e.ctx, pipeline.ConsumerName(sub.ID, id)); err == nil {
				return nil, false
			}
		}
		return nil, sink.writing.Load() == 0
	})
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the routes of a deleted subscription stopped in %v, want within 2 s", took)
	}
}
