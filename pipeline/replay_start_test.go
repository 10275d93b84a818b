package pipeline_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/store"
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
	replayer := pipeline.NewReplayer(e.stream, e.store)
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

	for _, c := range []struct {
		name         string
		since, until time.Time
		want         uint64
	}{
		{"until now", start, time.Time{}, all.State.LastSeq},
		{"until between", start, first.State.LastTime, first.State.LastSeq},
		{"until before every event", start.Add(-time.Minute), start, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := replayer.StartReplay(e.ctx, e.account, sub.ID, c.since, c.until)
			if err != nil {
				t.Fatal(err)
			}
			if r.EndSeq != c.want || r.State != store.ReplayRunning || r.Until.IsZero() {
				t.Fatalf("replay %+v, want end_seq %d", r, c.want)
			}
		})
	}
	for _, c := range []struct {
		name         string
		since, until time.Time
		field        string
	}{
		{"until in the future", start, time.Now().Add(time.Hour), "until"},
		{"since after until", time.Now(), start, "since"},
		{"since before the retention", time.Now().Add(-pipeline.DefaultRetention - time.Hour), time.Time{}, "since"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := replayer.StartReplay(e.ctx, e.account, sub.ID, c.since, c.until)
			var invalid *store.ValidationError
			if !errors.As(err, &invalid) || invalid.Field != c.field {
				t.Fatalf("error %v, want a validation error of %s", err, c.field)
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
	if err != nil || len(list) != 4 {
		t.Fatalf("ListReplays = %d replays, %v; want 4", len(list), err)
	}
	for _, got := range list {
		if got.State != store.ReplayDone {
			t.Fatalf("replay %s of a deleted subscription is %s", got.ID, got.State)
		}
	}
}
