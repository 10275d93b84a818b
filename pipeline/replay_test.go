package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
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
	e.startProcess(t, pipeline.DeliveryConfig{Linger: 20 * time.Millisecond, Replays: e.store},
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
	replay, err := e.store.CreateReplay(e.ctx, e.account, sub.ID, store.Replay{Since: since, Until: time.Now(), EndSeq: info.State.LastSeq})
	if err != nil {
		t.Fatal(err)
	}
	after := e.publish(t, httpKind, 25, setPort(443)) // live, past the replay's range

	check.Eventually(t, 20*time.Second, "the replay done", func() (string, bool) {
		r, err := e.store.GetReplay(e.ctx, e.account, replay.ID)
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
