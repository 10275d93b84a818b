package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks"
)

// TestReplayDeadLettersOnce stores, between ordinary events, two events
// that are no envelope (neither has an id) and one whose names appear
// twice, which the route's filter cannot decide: the live route
// dead-letters each once. Two replays over the same range then deliver
// the ordinary events again and dead-letter none of the three again: a
// letter is held for each already. The dead-letter stream's duplicate
// window is made 100 ms, so that it is the letters held, not the window,
// that keep them from being stored twice, as they must be for a replay
// made long after the letters.
func TestReplayDeadLettersOnce(t *testing.T) {
	e := newDeliveryEnv(t)
	dlq, err := e.js.Stream(e.ctx, pipeline.DLQStream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := dlq.CachedInfo().Config
	cfg.Duplicates = 100 * time.Millisecond // the least JetStream takes
	if _, err := e.js.UpdateStream(e.ctx, cfg); err != nil {
		t.Fatal(err)
	}
	e.sink = newMemorySink()
	e.startProcess(t, pipeline.DeliveryConfig{Linger: 20 * time.Millisecond, Replays: e.store.Replays()},
		func(context.Context, store.Destination) (sinks.Sink, error) { return e.sink, nil })
	sub, _ := e.route(t, store.Source{Type: httpKind, Filter: "ev.conn.server_port > 0"})

	info, err := e.stream.Info(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	since := info.State.LastTime.Add(time.Nanosecond)
	if since.Before(time.Now().Add(-time.Hour)) {
		since = time.Now().Add(-time.Second)
	}
	ordinary := e.publish(t, httpKind, 10, setPort(443))
	for _, data := range []string{"no envelope", `{"object":{}}`} {
		msg := nats.NewMsg(schemas.EventSubject(e.account, httpKind))
		msg.Header.Set(jetstream.MsgIDHeader, schemas.NewID(schemas.PrefixEvent)) // as any publisher of events
		msg.Data = []byte(data)
		if _, err := e.js.PublishMsg(e.ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	storeUnchecked(t, e, `{"conn":{"server_port":443,"server_port":0}}`)
	ordinary = append(ordinary, e.publish(t, httpKind, 10, setPort(443))...)
	e.sink.waitFor(t, "the ordinary events", func(r []sinks.Record) bool { return len(r) >= len(ordinary) })
	waitAllAcked(t, e)
	wantLetters(t, e, dlq, 3)

	if info, err = e.stream.Info(e.ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		replay, err := e.store.Replays().CreateReplay(e.ctx, e.account, sub.ID, store.Replay{Since: since, Until: time.Now(), EndSeq: info.State.LastSeq}, nil)
		if err != nil {
			t.Fatal(err)
		}
		check.Eventually(t, 20*time.Second, "the replay done", func() (string, bool) {
			r, err := e.store.Replays().GetReplay(e.ctx, e.account, replay.ID)
			if err != nil {
				t.Fatal(err)
			}
			return r.State, r.State == store.ReplayDone
		})
		e.sink.waitFor(t, "the replayed events", func(r []sinks.Record) bool { return len(r) >= (i+2)*len(ordinary) })
		wantLetters(t, e, dlq, 3)
	}
}

// wantLetters fails the test unless the dead-letter stream holds want
// letters, one of each event.
func wantLetters(t *testing.T, e *deliveryEnv, dlq jetstream.Stream, want uint64) {
	t.Helper()
	info, err := dlq.Info(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != want {
		t.Fatalf("%d dead letters, want %d: one of each event the route cannot deliver", info.State.Msgs, want)
	}
}
