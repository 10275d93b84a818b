package main

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/sluicehq/sluice/internal/retry"
)

// sourceEvent is an event read from a source, or the error that ended the
// source (io.EOF at its end).
type sourceEvent struct {
	line   []byte
	origin int
	err    error
}

// pump reads src into out until src or ctx ends.
func pump(ctx context.Context, src eventSource, out chan<- sourceEvent) {
	for {
		line, origin, err := src.next()
		select {
		case out <- sourceEvent{line: line, origin: origin, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// publishLinger is how long a batch that is not full waits for more events
// when none is ready, as when events are piped in slowly.
const publishLinger = 100 * time.Millisecond

// publishMaxBodyBytes is the most bytes of events, newlines included, one
// request carries: the ingest API's default limit of 10 MiB per request
// body, less some slack. The API refuses a larger body whole.
const publishMaxBodyBytes = 10<<20 - 4<<10

// publishBatch is the body of one request and where its events came from.
type publishBatch struct {
	body    []byte // NDJSON
	origins []int  // origin of each event, for eventSource.describe
}

// batcher reads events into batches of up to size events and maxBytes
// bytes and sends them on, pacing the events. A batch that is not full goes
// out when the next event is not due yet (a slow --rate) or does not come
// within linger (slow input), so that events are not held back. An event
// longer than maxBytes goes out alone; the source keeps events well below.
type batcher struct {
	events   <-chan sourceEvent
	out      chan<- publishBatch
	size     int // events per batch
	maxBytes int // bytes per batch body
	linger   time.Duration
	pace     *pacer
	batch    publishBatch
}

// run batches the events until they end or ctx does.
func (b *batcher) run(ctx context.Context) error {
	idle := time.NewTimer(b.linger)
	idle.Stop()
	defer idle.Stop()
	for n := 0; ; n++ {
		if !b.pace.ready(n, time.Now()) {
			if err := b.flush(ctx); err != nil {
				return err
			}
			if err := b.pace.wait(ctx, n); err != nil {
				return err
			}
		}
		ev, err := b.receive(ctx, idle)
		switch {
		case err != nil:
			return err
		case errors.Is(ev.err, io.EOF):
			return b.flush(ctx)
		case ev.err != nil:
			return ev.err
		}
		if len(b.batch.origins) > 0 && len(b.batch.body)+len(ev.line)+1 > b.maxBytes {
			if err := b.flush(ctx); err != nil {
				return err
			}
		}
		b.batch.body = append(append(b.batch.body, ev.line...), '\n')
		b.batch.origins = append(b.batch.origins, ev.origin)
		if len(b.batch.origins) >= b.size {
			if err := b.flush(ctx); err != nil {
				return err
			}
		}
	}
}

// receive returns the next event. When none is ready, the batch so far
// goes out unless an event comes within linger.
func (b *batcher) receive(ctx context.Context, idle *time.Timer) (sourceEvent, error) {
	select {
	case ev := <-b.events:
		return ev, nil
	default:
	}
	if len(b.batch.origins) > 0 {
		idle.Reset(b.linger)
		select {
		case ev := <-b.events:
			idle.Stop()
			return ev, nil
		case <-idle.C:
			if err := b.flush(ctx); err != nil {
				return sourceEvent{}, err
			}
		case <-ctx.Done():
			return sourceEvent{}, ctx.Err()
		}
	}
	select {
	case ev := <-b.events:
		return ev, nil
	case <-ctx.Done():
		return sourceEvent{}, ctx.Err()
	}
}

// flush sends the batch, if it holds events, and starts a new one.
func (b *batcher) flush(ctx context.Context) error {
	if len(b.batch.origins) == 0 {
		return nil
	}
	select {
	case b.out <- b.batch:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.batch = publishBatch{}
	return nil
}

// pacer spaces events at a rate: event n is due n/rate seconds after the
// start. A rate of 0 or less lets every event through at once.
type pacer struct {
	rate  float64
	start time.Time
}

// maxPacerLag is how far behind its rate a pacer may fall before it stops
// trying to catch up, so that events held up (by a slow API) do not go out
// in a burst.
const maxPacerLag = time.Second

func newPacer(rate float64, start time.Time) *pacer {
	return &pacer{rate: rate, start: start}
}

// due returns when event n may be sent.
func (p *pacer) due(n int) time.Time {
	return p.start.Add(time.Duration(float64(n) / p.rate * float64(time.Second)))
}

// ready reports whether event n may be sent at now.
func (p *pacer) ready(n int, now time.Time) bool {
	if p.rate <= 0 {
		return true
	}
	if lag := now.Sub(p.due(n)); lag > maxPacerLag {
		p.start = p.start.Add(lag - maxPacerLag)
	}
	return !now.Before(p.due(n))
}

// wait returns when event n is due, or ctx ends.
func (p *pacer) wait(ctx context.Context, n int) error {
	if p.rate <= 0 {
		return nil
	}
	return retry.Sleep(ctx, time.Until(p.due(n)))
}
