package edge_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// awayPipeline stores nothing while away, then everything.
type awayPipeline struct {
	mu     sync.Mutex
	away   bool
	stored []string
}

func (p *awayPipeline) PublishEncoded(_ context.Context, events []schemas.Encoded) []producer.Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]producer.Result, len(events))
	for i, ev := range events {
		if p.away {
			out[i] = producer.Result{EventID: ev.ID, Err: fmt.Errorf("%w: no responders", producer.ErrNotStored)}
			continue
		}
		p.stored = append(p.stored, ev.ID)
		out[i] = producer.Result{EventID: ev.ID}
	}
	return out
}

func (p *awayPipeline) set(away bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.away = away
}

func (p *awayPipeline) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.stored)
}

// TestBufferHoldsEventsWhileNATSIsAway: with the pipeline away, Publish
// never waits; the buffer holds what fits, counts what does not, and
// publishes what it held, in order, once the pipeline is back.
func TestBufferHoldsEventsWhileNATSIsAway(t *testing.T) {
	p := &awayPipeline{away: true}
	b := edge.NewBuffer(p, 10, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Run(ctx) }()
	defer func() { cancel(); <-done }()

	start := time.Now()
	for i := range 25 {
		b.Publish(schemas.Encoded{ID: fmt.Sprintf("ev_%02d", i), Type: "http_request_complete.v0"})
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("publishing 25 events with the pipeline away took %v: Publish must not wait", d)
	}
	// One batch may be out of the buffer, being retried: 10 held, one
	// batch of up to 10 in the retry, the rest dropped.
	dropped := check.Eventually(t, 5*time.Second, "the drops counted", func() (int64, bool) {
		return b.Dropped(), b.Dropped() >= 5
	})
	p.set(false)
	stored := check.Eventually(t, 10*time.Second, "the held events published", func() (int, bool) {
		return p.count(), int64(p.count())+b.Dropped() == 25
	})
	if stored < 10 {
		t.Fatalf("stored %d events after the pipeline came back, want at least the 10 the buffer holds (dropped %d)", stored, dropped)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := 1; i < len(p.stored); i++ {
		if p.stored[i] < p.stored[i-1] {
			t.Fatalf("published out of order: %v", p.stored)
		}
	}
}
