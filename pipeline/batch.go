package pipeline

import (
	"time"

	"github.com/sluicehq/sluice/sinks"
)

// Batch gathers the items of one call to a sink, within the sink's limits:
// a pure state machine that decides when a batch is full or has waited
// long enough, and knows no timers. The worker that owns it asks Ready
// after each change and sleeps until Deadline.
//
// The items are generic so that each can carry what the worker needs
// besides its sinks.Record, such as the JetStream message to acknowledge;
// a size function says what each counts for against the limits, usually
// sinks.Limits.Size of its record. A Batch is not safe for concurrent use.
type Batch[T any] struct {
	limits sinks.Limits
	linger time.Duration
	size   func(T) int

	items []T
	bytes int       // sum of the items' sizes
	first time.Time // when the first item was added
}

// NewBatch returns an empty batch of items held to limits, each counting
// for size(item) bytes (call it with limits.Size of the item's record).
// A limit of 0 or less is no limit. linger is how long the first item may
// wait for others before the batch is ready even if not full; 0 or less
// makes a batch ready as soon as it holds an item (DefaultLinger is a
// worker's default).
func NewBatch[T any](limits sinks.Limits, linger time.Duration, size func(T) int) *Batch[T] {
	return &Batch[T]{limits: limits, linger: max(linger, 0), size: size}
}

// Add adds item, added at now, and reports whether it did. It refuses an
// item that would take the batch over MaxRecords or MaxBatchBytes: the
// caller then takes the batch, sends it and adds the item to the empty
// batch, where it is accepted unless it is larger than MaxRecordBytes or
// MaxBatchBytes: such an item can never be written to the sink, and the
// caller dead-letters it.
func (b *Batch[T]) Add(now time.Time, item T) bool {
	n := b.size(item)
	if !within(n, b.limits.MaxRecordBytes) ||
		!within(len(b.items)+1, b.limits.MaxRecords) ||
		!within(b.bytes+n, b.limits.MaxBatchBytes) {
		return false
	}
	if len(b.items) == 0 {
		b.first = now
	}
	b.items = append(b.items, item)
	b.bytes += n
	return true
}

// within reports whether n is within limit, where a limit of 0 or less is
// no limit.
func within(n, limit int) bool { return limit <= 0 || n <= limit }

// Ready reports whether the batch should be sent at now: it is full (it
// holds MaxRecords items or MaxBatchBytes bytes), or its first item has
// waited the linger. An empty batch is never ready.
func (b *Batch[T]) Ready(now time.Time) bool {
	if len(b.items) == 0 {
		return false
	}
	if b.full() {
		return true
	}
	return !now.Before(b.first.Add(b.linger))
}

// full reports whether no item at all can be added.
func (b *Batch[T]) full() bool {
	return b.limits.MaxRecords > 0 && len(b.items) >= b.limits.MaxRecords ||
		b.limits.MaxBatchBytes > 0 && b.bytes >= b.limits.MaxBatchBytes
}

// Deadline returns when the batch becomes ready by its linger, for the
// caller's timer, and false when the batch is empty (no timer is needed).
func (b *Batch[T]) Deadline() (time.Time, bool) {
	if len(b.items) == 0 {
		return time.Time{}, false
	}
	return b.first.Add(b.linger), true
}

// Take returns the items, in the order they were added, and empties the
// batch. The slice is the caller's: the batch does not use it again.
func (b *Batch[T]) Take() []T {
	items := b.items
	b.items = make([]T, 0, cap(items))
	b.bytes = 0
	b.first = time.Time{}
	return items
}
