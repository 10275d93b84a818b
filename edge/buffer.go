package edge

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/internal/retry"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// DefaultBufferEvents is how many events a Buffer holds by default:
// about 16 MiB of 1 KB events.
const DefaultBufferEvents = 16384

// bufferBatch is the most events a Buffer publishes at once.
const bufferBatch = 256

// EncodedPublisher publishes encoded events and says, for each, whether
// it was stored (producer.Producer).
type EncodedPublisher interface {
	PublishEncoded(ctx context.Context, events []schemas.Encoded) []producer.Result
}

// Buffer is the Publisher that stands between the edge's traffic and the
// pipeline: Publish never waits, and Run publishes what it holds,
// retrying while NATS is away. Past its size, events are dropped, counted
// and logged: never silently, and never at the cost of traffic.
type Buffer struct {
	events chan schemas.Encoded
	to     EncodedPublisher
	log    *slog.Logger

	dropped   atomic.Int64
	lastLog   atomic.Int64 // unix nanoseconds of the last drop logged
	buffered  prometheus.GaugeFunc
	droppedC  prometheus.CounterFunc
	published prometheus.Counter
}

// NewBuffer returns a buffer of size events (DefaultBufferEvents for 0)
// publishing to to.
func NewBuffer(to EncodedPublisher, size int, log *slog.Logger) *Buffer {
	defaults.Positive(&size, DefaultBufferEvents)
	b := &Buffer{events: make(chan schemas.Encoded, size), to: to, log: log}
	b.buffered = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "sluice", Subsystem: "edge", Name: "events_buffered",
		Help: "Events of the edge waiting to be published."}, func() float64 { return float64(len(b.events)) })
	b.droppedC = prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "sluice", Subsystem: "edge", Name: "events_dropped_total",
		Help: "Events of the edge dropped because its buffer was full (NATS away too long)."}, func() float64 { return float64(b.dropped.Load()) })
	b.published = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sluice", Subsystem: "edge", Name: "events_published_total",
		Help: "Events of the edge stored in the pipeline's stream."})
	return b
}

// Register puts the buffer's metrics on reg.
func (b *Buffer) Register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(b.buffered), reg.Register(b.droppedC), reg.Register(b.published))
}

// Dropped is how many events the buffer dropped.
func (b *Buffer) Dropped() int64 { return b.dropped.Load() }

// Publish takes an event without waiting, or drops it when the buffer is
// full.
func (b *Buffer) Publish(ev schemas.Encoded) {
	select {
	case b.events <- ev:
	default:
		n := b.dropped.Add(1)
		now := time.Now().UnixNano()
		if last := b.lastLog.Load(); now-last > int64(10*time.Second) && b.lastLog.CompareAndSwap(last, now) {
			b.log.Error("the edge's event buffer is full: events are dropped until the pipeline takes them again",
				"dropped_total", n, "buffer_events", cap(b.events))
		}
	}
}

// Run publishes the buffer's events until ctx ends, then for up to
// drainTimeout more what it still holds.
func (b *Buffer) Run(ctx context.Context) error {
	b.loop(ctx)
	drain, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
	defer cancel()
	for len(b.events) > 0 && drain.Err() == nil {
		b.send(drain, b.take(nil))
	}
	return nil
}

// drainTimeout bounds the publishing of what a stopping buffer holds.
const drainTimeout = 5 * time.Second

func (b *Buffer) loop(ctx context.Context) {
	batch := make([]schemas.Encoded, 0, bufferBatch)
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-b.events:
			batch = b.take(append(batch[:0], ev))
			b.send(ctx, batch)
		}
	}
}

// take appends what the buffer holds now, up to a batch.
func (b *Buffer) take(batch []schemas.Encoded) []schemas.Encoded {
	for len(batch) < bufferBatch {
		select {
		case ev := <-b.events:
			batch = append(batch, ev)
		default:
			return batch
		}
	}
	return batch
}

// send publishes a batch, retrying what was not stored, with backoff,
// until it is or ctx ends. An event the stream refuses as invalid is
// dropped and counted.
func (b *Buffer) send(ctx context.Context, batch []schemas.Encoded) {
	policy := retry.Policy{Initial: 100 * time.Millisecond, Max: 5 * time.Second}
	delay := policy.Initial
	for len(batch) > 0 {
		results := b.to.PublishEncoded(ctx, batch)
		failed := batch[:0]
		for i, r := range results {
			switch {
			case r.Err == nil:
				b.published.Inc()
			case errors.Is(r.Err, producer.ErrNotStored):
				failed = append(failed, batch[i])
			default:
				b.dropped.Add(1)
				b.log.Error("the pipeline refused an edge event", "kind", batch[i].Type, "error", r.Err)
			}
		}
		batch = failed
		if len(batch) == 0 || retry.Sleep(ctx, delay) != nil {
			return
		}
		delay = policy.Next(delay)
	}
}
