package loadgen

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/sinks"
)

// kinesisLimits are the limits of Kinesis PutRecords (docs/architecture.md#sinks),
// which the benchmark's sinks take as theirs.
var kinesisLimits = sinks.Limits{MaxRecords: 500, MaxBatchBytes: 5 << 20, MaxRecordBytes: 1 << 20, CountID: true}

// nullSink accepts every record at once and keeps none; it counts them,
// and says when it has accepted want.
type nullSink struct {
	want     int64
	accepted atomic.Int64
	reached  chan struct{}
	once     sync.Once
}

func newNullSink(want int64) *nullSink {
	return &nullSink{want: want, reached: make(chan struct{})}
}

// factory is the deliverer's SinkFactory: every destination writes here.
func (s *nullSink) factory(context.Context, store.Destination) (sinks.Sink, error) { return s, nil }

func (s *nullSink) Limits() sinks.Limits { return kinesisLimits }

func (s *nullSink) Write(_ context.Context, records []sinks.Record) ([]sinks.Result, error) {
	if s.accepted.Add(int64(len(records))) >= s.want {
		s.once.Do(func() { close(s.reached) })
	}
	return make([]sinks.Result, len(records)), nil // every one Accepted
}

// wait waits until the sink has accepted want records, or ctx ends.
func (s *nullSink) wait(ctx context.Context) error {
	select {
	case <-s.reached:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
