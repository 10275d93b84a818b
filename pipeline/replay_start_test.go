package pipeline_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
)

// TestReplayerRange checks a replay's range against the stream and finds
// its last sequence: that of the last event stored at or before until.
func TestReplayerRange(t *testing.T) {
	e := newDeliveryEnv(t)
	dest, err := e.store.CreateDestination(e.ctx, e.account, store.Destination{Target: store.Target{Kinesis: &store.KinesisTarget{
		Auth:      store.AWSAuth{Role: &store.AWSRole{RoleARN: "arn:aws:iam::123456789012:role/r"}},
		StreamARN: "arn:aws:kinesis:us-east-1:123456789012:stream/s",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := e.store.CreateSubscription(e.ctx, e.account, store.Subscription{Sources: []store.Source{{Type: httpKind}}, DestinationIDs: []string{dest.ID}})
	if err != nil {
		t.Fatal(err)
	}
	replayer := pipeline.NewReplayer(e.stream, e.store.Replays(), e.store)
	start := time.Now().Add(-time.Minute)

	e.publish(t, httpKind, 7, nil)
	first, err := e.stream.Info(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.publish(t, tcpKind, 5, nil)
	all, err := e.stream.Info(e.ctx)
	if err != nil {
		t.Fatal(err)
	}

	// The range holds the events of the subscription's sources: the 7
	// of its kind, not the 5 of another.
	for _, c := range []struct {
		name         string
		since, until time.Time
		want         uint64
		wantEvents   uint64
	}{
		{"until now", start, time.Time{}, all.State.LastSeq, 7},
		{"until between", start, first.State.LastTime, first.State.LastSeq, 7},
		{"until before every event", start.Add(-time.Minute), start, 0, 0},
		{"since after the events of its sources", first.State.LastTime.Add(time.Nanosecond), time.Time{}, all.State.LastSeq, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := replayer.StartReplay(e.ctx, e.account, sub.ID, c.since, c.until)
			if err != nil {
				t.Fatal(err)
			}
			if r.EndSeq != c.want || r.State != store.ReplayRunning || r.Until.IsZero() {
				t.Fatalf("replay %+v, want end_seq %d", r, c.want)
			}
			if r.RangeEvents != c.wantEvents || r.EventsTotal != c.wantEvents {
				t.Fatalf("replay of %d events, %d in all; want %d to its one destination", r.RangeEvents, r.EventsTotal, c.wantEvents)
			}
		})
	}
	consumers := e.stream.ListConsumers(e.ctx)
	for info := range consumers.Info() {
		if info.Name != pipeline.ConsumerName(sub.ID, dest.ID) {
			t.Errorf("consumer %s (%s) left behind", info.Name, info.Config.Description)
		}
	}
	if err := consumers.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name         string
		since, until time.Time
		field        string
		says         []string // what the message says
	}{
		{"until in the future", start, time.Now().Add(time.Hour), "until", nil},
		{"since after until", time.Now(), start, "since", nil},
		{"since before the retention", time.Now().Add(-pipeline.DefaultRetention - time.Hour), time.Time{}, "since", []string{
			"too early", "the stream keeps events for 72h (its retention, sluice serve --retention), so older events are gone",
			"; give a since at or after ",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := replayer.StartReplay(e.ctx, e.account, sub.ID, c.since, c.until)
			var invalid *store.ValidationError
			if !errors.As(err, &invalid) || invalid.Field != c.field {
				t.Fatalf("error %v, want a validation error of %s", err, c.field)
			}
			for _, want := range c.says {
				if !strings.Contains(invalid.Msg, want) {
					t.Fatalf("message %q does not say %q", invalid.Msg, want)
				}
			}
			if strings.Contains(invalid.Msg, "oldest event") {
				t.Fatalf("message %q calls the retention the oldest event the stream holds", invalid.Msg)
			}
			if _, after, ok := strings.Cut(invalid.Msg, "give a since at or after "); ok && c.field == "since" {
				// The earliest since to give: the retention's boundary,
				// rounded up to the minute.
				earliest, err := time.Parse(time.RFC3339, after)
				boundary := time.Now().Add(-pipeline.DefaultRetention)
				if err != nil || earliest.Before(boundary) || earliest.After(boundary.Add(2*time.Minute)) {
					t.Fatalf("message %q gives %q as the earliest since, want a time just after %s", invalid.Msg, after, boundary.UTC().Format(time.RFC3339))
				}
			}
		})
	}
	if _, err := replayer.StartReplay(e.ctx, e.account, dest.ID, start, time.Time{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("replay of no subscription: error %v, want ErrNotFound", err)
	}

	// A replay whose subscription is deleted has nothing left to deliver:
	// it reads done, though no worker marked it so.
	r, err := replayer.StartReplay(e.ctx, e.account, sub.ID, start, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := replayer.GetReplay(e.ctx, e.account, r.ID); err != nil || got.State != store.ReplayRunning {
		t.Fatalf("GetReplay = %+v, %v; want running", got, err)
	}
	if _, err := e.store.DeleteSubscription(e.ctx, e.account, sub.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := replayer.GetReplay(e.ctx, e.account, r.ID); err != nil || got.State != store.ReplayDone {
		t.Fatalf("GetReplay after the subscription's deletion = %+v, %v; want done", got, err)
	}
	list, err := replayer.ListReplays(e.ctx, e.account, sub.ID)
	if err != nil || len(list) != 5 {
		t.Fatalf("ListReplays = %d replays, %v; want 5", len(list), err)
	}
	for _, got := range list {
		if got.State != store.ReplayDone {
			t.Fatalf("replay %s of a deleted subscription is %s", got.ID, got.State)
		}
	}
}

// TestReplayerRangeAfterEventsWereLost checks the boundary of a replay's
// since once the stream has dropped events: within the stream's retention
// any since is taken (events expire only once older than it, so the time
// before the oldest event held is a quiet one, or a purge no replay can
// undo), starting at the oldest event held; a stream kept without a
// retention refuses a since before its oldest event, saying so.
func TestReplayerRangeAfterEventsWereLost(t *testing.T) {
	e := newDeliveryEnv(t)
	sub, err := e.store.CreateSubscription(e.ctx, e.account, store.Subscription{Sources: []store.Source{{Type: httpKind}}})
	if err != nil {
		t.Fatal(err)
	}
	replayer := pipeline.NewReplayer(e.stream, e.store.Replays(), e.store)
	start := time.Now().Add(-time.Minute)
	e.publish(t, httpKind, 5, nil)
	if err := e.stream.Purge(e.ctx, jetstream.WithPurgeSequence(4)); err != nil {
		t.Fatalf("purging the first 3 events: %v", err)
	}
	info, err := e.stream.Info(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replayer.StartReplay(e.ctx, e.account, sub.ID, start, time.Time{}); err != nil {
		t.Fatalf("a replay since %v, within the retention though before the oldest event held: %v", start, err)
	}

	// An hour of quiet before the oldest event held, within a retention.
	now := info.State.FirstTime.Add(time.Hour)
	quiet := *info
	if err := pipeline.CheckRetained(&quiet, now, now.Add(-2*time.Hour)); err != nil {
		t.Errorf("since 2 h ago, the oldest event held 1 h old, retention %v: %v", quiet.Config.MaxAge, err)
	}
	if err := pipeline.CheckRetained(&quiet, now, now.Add(-quiet.Config.MaxAge-time.Hour)); err == nil {
		t.Errorf("since before the retention: no error")
	}

	// Without a retention, only a purge (or lost storage) drops events.
	kept := *info
	kept.Config.MaxAge = 0
	err = pipeline.CheckRetained(&kept, now, start)
	var invalid *store.ValidationError
	if !errors.As(err, &invalid) || invalid.Field != "since" {
		t.Fatalf("error %v, want a validation error of since", err)
	}
	first := info.State.FirstTime.UTC().Format(time.RFC3339Nano)
	for _, want := range []string{
		"before the oldest event the stream still holds (stored " + first + ")",
		"the events stored before it are gone",
		"give a since at or after " + first,
	} {
		if !strings.Contains(invalid.Msg, want) {
			t.Fatalf("message %q does not say %q", invalid.Msg, want)
		}
	}
	if err := pipeline.CheckRetained(&kept, now, info.State.FirstTime); err != nil {
		t.Errorf("since the oldest event held, without a retention: %v", err)
	}
}

// TestReplayerCountsRangeWhileEventsCome counts the events of a replay's
// range while events of its kind keep being stored: the count is that of
// the range, or too high by at most the events stored while it was
// counted, never too low; and it counts them once per destination.
func TestReplayerCountsRangeWhileEventsCome(t *testing.T) {
	e := newDeliveryEnv(t)
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
	sub, err := e.store.CreateSubscription(e.ctx, e.account, store.Subscription{Sources: []store.Source{{Type: httpKind}}, DestinationIDs: destinations})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Minute)
	const inRange = 20
	e.publish(t, httpKind, inRange, nil)
	info, err := e.stream.Info(e.ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Events of the kind keep coming, past the range, while it is counted.
	var published atomic.Int64
	stop, stopped := make(chan struct{}), make(chan error, 1)
	go func() {
		subject := schemas.EventSubject(e.account, httpKind)
		for i := 0; ; i++ {
			select {
			case <-stop:
				stopped <- nil
				return
			default:
			}
			msg := nats.NewMsg(subject)
			msg.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("later-%d", i))
			msg.Data = []byte("{}")
			if _, err := e.js.PublishMsg(e.ctx, msg); err != nil {
				stopped <- err
				return
			}
			published.Add(1)
		}
	}()
	defer func() {
		close(stop)
		if err := <-stopped; err != nil {
			t.Errorf("publishing meanwhile: %v", err)
		}
	}()
	check.Eventually(t, 5*time.Second, "events stored past the range", func() (int64, bool) {
		return published.Load(), published.Load() > 10
	})

	replayer := pipeline.NewReplayer(e.stream, e.store.Replays(), e.store)
	before := uint64(published.Load())
	r, err := replayer.StartReplay(e.ctx, e.account, sub.ID, start, info.State.LastTime)
	meanwhile := uint64(published.Load()) - before
	if err != nil {
		t.Fatal(err)
	}
	if r.EndSeq != info.State.LastSeq {
		t.Fatalf("end_seq %d, want %d", r.EndSeq, info.State.LastSeq)
	}
	if r.RangeEvents < inRange || r.RangeEvents > inRange+meanwhile {
		t.Fatalf("range of %d events, want %d, or up to %d more stored while it was counted", r.RangeEvents, inRange, meanwhile)
	}
	if r.EventsTotal != 2*r.RangeEvents {
		t.Fatalf("events_total %d, want twice the range's %d: one for each destination", r.EventsTotal, r.RangeEvents)
	}
	t.Logf("range of %d events counted %d, %d events stored meanwhile", inRange, r.RangeEvents, meanwhile)
}
