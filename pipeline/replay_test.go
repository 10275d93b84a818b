package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/sinks"
)

// TestDeliverReplay replays a subscription from a time between two bursts
// of events: the destination receives the second burst again, selected
// as the subscription selects, and nothing stored after the replay was
// made twice; live delivery goes on meanwhile; the replay ends done, its
// consumer deleted, the route's consumer untouched.
func TestDeliverReplay(t *testing.T) {
	e := newDeliveryEnv(t)
	e.sink = newMemorySink()
	e.startProcess(t, pipeline.DeliveryConfig{Linger: 20 * time.Millisecond, Replays: e.store.Replays()},
		func(context.Context, store.Destination) (sinks.Sink, error) { return e.sink, nil })
	sub, dest := e.route(t, store.Source{Type: httpKind, Filter: "ev.conn.server_port == 443", Fields: []string{"conn.server_port"}})

	before := e.publish(t, httpKind, 30, setPort(443))
	e.sink.waitFor(t, "the events before the replay's range", func(r []sinks.Record) bool { return len(r) >= len(before) })
	waitAllAcked(t, e)
	info, err := e.stream.Info(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	since := info.State.LastTime.Add(time.Nanosecond)

	replayed := e.publish(t, httpKind, 40, setPort(443))
	e.publish(t, httpKind, 40, setPort(80)) // filtered out, live and replayed
	e.sink.waitFor(t, "the events of the replay's range", func(r []sinks.Record) bool { return len(r) >= len(before)+len(replayed) })
	if info, err = e.stream.Info(e.ctx); err != nil {
		t.Fatal(err)
	}
	replay, err := e.store.Replays().CreateReplay(e.ctx, e.account, sub.ID, store.Replay{Since: since, Until: time.Now(), EndSeq: info.State.LastSeq}, nil)
	if err != nil {
		t.Fatal(err)
	}
	after := e.publish(t, httpKind, 25, setPort(443)) // live, past the replay's range

	check.Eventually(t, 20*time.Second, "the replay done", func() (string, bool) {
		r, err := e.store.Replays().GetReplay(e.ctx, e.account, replay.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r.State, r.State == store.ReplayDone
	})
	got := e.sink.waitFor(t, "the live events", func(r []sinks.Record) bool {
		return len(r) >= len(before)+2*len(replayed)+len(after)
	})
	count := make(map[string]int)
	for _, r := range got {
		count[r.ID]++
		var ev struct {
			Object map[string]any `json:"object"`
		}
		if err := json.Unmarshal(r.Data, &ev); err != nil {
			t.Fatalf("record %s is not JSON: %v", r.Data, err)
		}
		if b, _ := json.Marshal(ev.Object); string(b) != `{"conn":{"server_port":443}}` {
			t.Fatalf("record object %s: want only the selected field", b)
		}
	}
	for _, c := range []struct {
		what string
		ids  []string
		want int
	}{{"before the range", before, 1}, {"in the range", replayed, 2}, {"after the range", after, 1}} {
		for _, id := range c.ids {
			if count[id] != c.want {
				t.Fatalf("event %s %s delivered %d times, want %d", id, c.what, count[id], c.want)
			}
		}
	}
	if len(got) != len(before)+2*len(replayed)+len(after) {
		t.Fatalf("delivered %d records, want %d", len(got), len(before)+2*len(replayed)+len(after))
	}

	name := pipeline.ReplayConsumerName(replay.ID, dest.ID)
	check.Eventually(t, 5*time.Second, "the replay's consumer "+name+" gone once it is done", func() (error, bool) {
		_, err := e.stream.Consumer(e.ctx, name)
		return err, errors.Is(err, jetstream.ErrConsumerNotFound)
	})
	if _, err := e.stream.Consumer(e.ctx, pipeline.ConsumerName(sub.ID, dest.ID)); err != nil {
		t.Fatalf("the route's consumer: %v", err)
	}
	live := e.publish(t, httpKind, 5, setPort(443))
	e.sink.waitFor(t, "events after the replay", func(r []sinks.Record) bool { return len(r) >= len(got)+len(live) })
	waitAllAcked(t, e)
}

// gatedSink is a memory sink whose writes each wait for a token, or for
// the gate to open for good.
type gatedSink struct {
	*memorySink
	tokens chan struct{}
	open   chan struct{}
}

func newGatedSink() *gatedSink {
	s := &gatedSink{memorySink: newMemorySink(), tokens: make(chan struct{}), open: make(chan struct{})}
	s.limits.MaxRecords = 10
	return s
}

func (s *gatedSink) Write(ctx context.Context, records []sinks.Record) ([]sinks.Result, error) {
	select {
	case <-s.tokens:
	case <-s.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.memorySink.Write(ctx, records)
}

// TestDeliverReplayProgress replays, to two destinations, a range of
// events stored before the subscription existed (so that only the replay
// delivers them): the replay counts the range's events of the
// subscription's kind, those its filter leaves out included, once per
// destination; while the destinations take them, the events replayed
// grow and stay below the total; once done, both are the total.
func TestDeliverReplayProgress(t *testing.T) {
	e := newDeliveryEnv(t)
	var mu sync.Mutex
	gated := make(map[string]*gatedSink)
	sinkOf := func(id string) *gatedSink {
		mu.Lock()
		defer mu.Unlock()
		if gated[id] == nil {
			gated[id] = newGatedSink()
		}
		return gated[id]
	}
	// Batches go full, of ten events (newGatedSink), never at the linger.
	e.startProcess(t, pipeline.DeliveryConfig{Linger: time.Minute, Replays: e.store.Replays(), ReplayCheck: 20 * time.Millisecond},
		func(_ context.Context, d store.Destination) (sinks.Sink, error) { return sinkOf(d.ID), nil })

	since := time.Now().Add(-time.Minute)
	e.publish(t, httpKind, 10, setPort(80)) // in the range, left out by the filter
	delivered := e.publish(t, httpKind, 50, setPort(443))
	e.publish(t, tcpKind, 20, nil) // not a kind of the subscription
	const rangeEvents = 60

	var destinations []string
	for range 2 {
		dest, err := e.store.CreateDestination(e.ctx, e.account, store.Destination{Target: store.Target{Kinesis: &store.KinesisTarget{
			Auth:      store.AWSAuth{Role: &store.AWSRole{RoleARN: "arn:aws:iam::123456789012:role/r"}},
			StreamARN: "arn:aws:kinesis:us-east-1:123456789012:stream/s",
		}}})
		if err != nil {
			t.Fatal(err)
		}
		destinations = append(destinations, dest.ID)
	}
	sub, err := e.store.CreateSubscription(e.ctx, e.account, store.Subscription{
		Sources:        []store.Source{{Type: httpKind, Filter: "ev.conn.server_port == 443"}},
		DestinationIDs: destinations,
	})
	if err != nil {
		t.Fatal(err)
	}
	replayer := pipeline.NewReplayer(e.stream, e.store.Replays(), e.store)
	replay, err := replayer.StartReplay(e.ctx, e.account, sub.ID, since, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if replay.RangeEvents != rangeEvents || replay.EventsTotal != 2*rangeEvents {
		t.Fatalf("replay of %d events, %d in all; want %d, %d for two destinations", replay.RangeEvents, replay.EventsTotal, rangeEvents, 2*rangeEvents)
	}
	progress := func() (replayed, total uint64, state string) {
		r, err := replayer.GetReplay(e.ctx, e.account, replay.ID)
		if err != nil {
			t.Fatal(err)
		}
		replayed, total = r.Progress()
		return replayed, total, r.State
	}
	if replayed, total, _ := progress(); replayed != 0 || total != 2*rangeEvents {
		t.Fatalf("progress at the start: %d of %d, want 0 of %d", replayed, total, 2*rangeEvents)
	}

	// The events the filter leaves out are settled at once, at both
	// destinations; then two batches of ten reach the first destination,
	// and the rest wait.
	first := sinkOf(destinations[0])
	for range 2 {
		select {
		case first.tokens <- struct{}{}:
		case <-e.ctx.Done():
			t.Fatal("the first destination was never written to")
		}
	}
	check.Eventually(t, 10*time.Second, "40 events replayed", func() (string, bool) {
		replayed, total, _ := progress()
		return fmt.Sprintf("%d of %d", replayed, total), replayed == 40
	})
	if replayed, total, state := progress(); replayed != 40 || total != 2*rangeEvents || state != store.ReplayRunning {
		t.Fatalf("progress with the destinations waiting: %d of %d, %s; want 40 of %d, running", replayed, total, state, 2*rangeEvents)
	}

	for _, id := range destinations {
		close(sinkOf(id).open)
	}
	check.Eventually(t, 20*time.Second, "the replay done", func() (string, bool) {
		replayed, total, state := progress()
		return fmt.Sprintf("%d of %d, %s", replayed, total, state), state == store.ReplayDone
	})
	if replayed, total, _ := progress(); replayed != 2*rangeEvents || total != 2*rangeEvents {
		t.Fatalf("progress once done: %d of %d, want %d of %d", replayed, total, 2*rangeEvents, 2*rangeEvents)
	}
	for _, id := range destinations {
		if got := ids(sinkOf(id).waitFor(t, "the replayed events", func(r []sinks.Record) bool { return len(r) >= len(delivered) })); !slices.Equal(got, sorted(delivered)) {
			t.Fatalf("destination %s received %d events, want the %d selected, each once", id, len(got), len(delivered))
		}
	}
}
