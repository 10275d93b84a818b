package pipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/sinks"
)

// refusingEnv is a route whose destination refuses one event of ten for
// good and finds another too large, both dead-lettered by the live
// route; the dead-letter stream's duplicate window is 100 ms, so that it
// is the index, not the window, that keeps a letter from being written
// twice.
type refusingEnv struct {
	*deliveryEnv
	sub    store.Subscription
	dest   store.Destination
	events []string // ids; events[3] is refused, events[7] too large
	since  time.Time
	status *pipeline.StatusReader
	// replays counts the replays made.
	replays int
}

func newRefusingEnv(t *testing.T) *refusingEnv {
	t.Helper()
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
	e.sink.limits.MaxRecordBytes = 1500
	e.sink.fail = func(_ int, r sinks.Record) (sinks.Result, bool) {
		if strings.Contains(string(r.Data), "refuse-me") {
			return sinks.Result{Status: sinks.Permanent, Code: "InvalidArgumentException", Message: "no"}, true
		}
		return sinks.Result{}, false
	}
	e.startProcess(t, pipeline.DeliveryConfig{Linger: 20 * time.Millisecond, Replays: e.store.Replays()},
		func(context.Context, store.Destination) (sinks.Sink, error) { return e.sink, nil })
	kv, err := pipeline.EnsureStatusBucket(e.ctx, e.js, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := &refusingEnv{deliveryEnv: e, since: time.Now().Add(-time.Second), status: pipeline.NewStatusReader(e.js, kv, time.Minute)}
	r.sub, r.dest = e.route(t, store.Source{Type: tcpKind})
	r.events = e.publish(t, tcpKind, 10, func(i int, object map[string]any) {
		switch i {
		case 3:
			object["note"] = "refuse-me"
		case 7:
			object["note"] = strings.Repeat("x", 2000)
		}
	})
	e.sink.waitFor(t, "the deliverable events", func(rs []sinks.Record) bool { return len(rs) >= len(r.events)-2 })
	waitAllAcked(t, e)
	r.wantHeld(t, "dead-lettered live", 2)
	return r
}

// replay replays the events and waits until it is done and the
// deliverable ones are delivered again.
func (r *refusingEnv) replay(t *testing.T) {
	t.Helper()
	info, err := r.stream.Info(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	replay, err := r.store.Replays().CreateReplay(r.ctx, r.account, r.sub.ID, store.Replay{Since: r.since, Until: time.Now(), EndSeq: info.State.LastSeq}, nil)
	if err != nil {
		t.Fatal(err)
	}
	check.Eventually(t, 20*time.Second, "the replay done", func() (string, bool) {
		got, err := r.store.Replays().GetReplay(r.ctx, r.account, replay.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.State, got.State == store.ReplayDone
	})
	r.replays++
	want := (r.replays + 1) * (len(r.events) - 2)
	r.sink.waitFor(t, "the replayed events", func(rs []sinks.Record) bool { return len(rs) >= want })
}

// wantHeld fails the test unless the destination's status counts want
// dead letters.
func (r *refusingEnv) wantHeld(t *testing.T, what string, want uint64) {
	t.Helper()
	st, err := r.status.DestinationStatus(r.ctx, r.account, r.dest.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.EventsDeadLettered != want {
		t.Fatalf("%s: events_dead_lettered %d, want %d", what, st.EventsDeadLettered, want)
	}
}

// TestReplayRefailsDeadLetteredOnce replays, twice, a range in which the
// destination refuses an event for good and finds another too large: it
// refuses them again, and no second letter of either is written (issue
// 29: the same event became dl_1, dl_3 and dl_4), nor counted in
// events_dead_lettered.
func TestReplayRefailsDeadLetteredOnce(t *testing.T) {
	r := newRefusingEnv(t)
	for range 2 {
		r.replay(t)
		r.wantHeld(t, "after a replay that failed them again", 2)
	}
}
