package loadgen

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/sinks"
)

// countingSinks wraps the sinks a factory makes, counting the records
// they accepted, and says when they have accepted want: the drain
// benchmark's signal that a route has delivered everything, which costs
// the process measured nothing but an addition per batch.
type countingSinks struct {
	newSink  pipeline.SinkFactory
	want     int64
	accepted atomic.Int64
	reached  chan struct{}
	once     sync.Once
}

func newCountingSinks(newSink pipeline.SinkFactory, want int64) *countingSinks {
	return &countingSinks{newSink: newSink, want: want, reached: make(chan struct{})}
}

// factory is the deliverer's SinkFactory: newSink's sink, counted.
func (c *countingSinks) factory(ctx context.Context, d store.Destination) (sinks.Sink, error) {
	sink, err := c.newSink(ctx, d)
	if err != nil {
		return nil, err
	}
	return &countingSink{Sink: sink, counts: c}, nil
}

// wait waits until the sinks have accepted want records, or ctx ends.
func (c *countingSinks) wait(ctx context.Context) error {
	select {
	case <-c.reached:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// countingSink is a sink whose accepted records are counted.
type countingSink struct {
	sinks.Sink
	counts *countingSinks
}

func (s *countingSink) Write(ctx context.Context, records []sinks.Record) ([]sinks.Result, error) {
	results, err := s.Sink.Write(ctx, records)
	var accepted int64
	for _, r := range results {
		if r.Status == sinks.Accepted {
			accepted++
		}
	}
	if s.counts.accepted.Add(accepted) >= s.counts.want {
		s.counts.once.Do(func() { close(s.counts.reached) })
	}
	return results, err
}
