package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks"
)

// redriveEnv returns the dead-letter reader and the redriver of the
// environment, writing to its memory sink.
func redriveEnv(t *testing.T, e *deliveryEnv) (*pipeline.DeadLetters, *pipeline.Redriver) {
	t.Helper()
	dlq, err := e.js.Stream(e.ctx, pipeline.DLQStream)
	if err != nil {
		t.Fatal(err)
	}
	env, err := filters.NewEnv(schemas.Default())
	if err != nil {
		t.Fatal(err)
	}
	letters := pipeline.NewDeadLetters(e.js, dlq)
	return letters, pipeline.NewRedriver(letters, e.store, env, func(_ context.Context, _ store.Destination) (sinks.Sink, error) { return e.sink, nil }, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
}

func (s *memorySink) script(fail func(call int, r sinks.Record) (sinks.Result, bool), failAll func(call int) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail, s.failAll = fail, failAll
}

// refusePorts refuses, for good, the records of the server ports given.
func refusePorts(ports ...int) func(int, sinks.Record) (sinks.Result, bool) {
	return func(_ int, r sinks.Record) (sinks.Result, bool) {
		if slices.ContainsFunc(ports, func(p int) bool { return strings.Contains(string(r.Data), fmt.Sprintf(`"server_port":%d`, p)) }) {
			return sinks.Result{Status: sinks.Permanent, Code: "InvalidArgumentException", Message: "refused"}, true
		}
		return sinks.Result{}, false
	}
}

func TestDeadLettersListAndRedrive(t *testing.T) {
	e := startDelivery(t, pipeline.DeliveryConfig{Linger: 20 * time.Millisecond})
	ports := make([]int, 25)
	for i := range ports {
		ports[i] = 8000 + i
	}
	e.sink.script(refusePorts(ports...), nil)
	sub, dest := e.route(t, store.Source{Type: tcpKind, Fields: []string{"conn.server_port"}})
	all := e.publish(t, tcpKind, 25, func(i int, object map[string]any) {
		setPort(8000+i)(i, object)
		object["note"] = "not selected"
	})
	waitAllAcked(t, e)
	letters, redriver := redriveEnv(t, e)

	// Newest first, 10 a page.
	var seen []pipeline.DeadLetter
	before := uint64(0)
	for page := 0; ; page++ {
		got, more, err := letters.List(e.ctx, e.account, dest.ID, before, 10)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, got...)
		if !more {
			break
		}
		before = got[len(got)-1].Seq
		if page > 3 {
			t.Fatal("too many pages")
		}
	}
	if len(seen) != 25 {
		t.Fatalf("listed %d dead letters, want 25", len(seen))
	}
	var eventIDs []string
	for i, d := range seen {
		if i > 0 && d.Seq >= seen[i-1].Seq {
			t.Fatalf("not newest first: %d after %d", d.Seq, seen[i-1].Seq)
		}
		if d.Class != "permanent" || d.Code != "InvalidArgumentException" || d.SubscriptionID != sub.ID || d.DestinationID != dest.ID || d.Attempts == 0 || d.FirstFailure.IsZero() {
			t.Fatalf("dead letter %+v", d)
		}
		var ev map[string]any
		if err := json.Unmarshal(d.EventJSON(), &ev); err != nil || ev["event_id"] != d.EventID {
			t.Fatalf("event of %s: %s", d.ID(), d.Event)
		}
		eventIDs = append(eventIDs, d.EventID)
	}
	if !slices.Equal(sorted(eventIDs), sorted(all)) {
		t.Fatalf("dead letters of %v, want %v", eventIDs, all)
	}
	// Another account sees none.
	if got, _, err := letters.List(e.ctx, "ac_other", dest.ID, 0, 10); err != nil || len(got) != 0 {
		t.Fatalf("another account's list: %v %v", got, err)
	}

	// A broken destination: nothing goes, everything stays.
	e.sink.script(nil, func(int) error {
		return &sinks.DestinationError{Class: sinks.ClassAccessDenied, Code: "AccessDenied", Message: "no"}
	})
	report, err := redriver.Redrive(e.ctx, dest, nil)
	if err != nil {
		t.Fatal(err)
	}
	if report.Redriven != 0 || report.Remaining != 25 || report.Failed == 0 || report.Failures[0].Class != "access_denied" {
		t.Fatalf("redrive to a broken destination: %+v", report)
	}

	// Fixed, but for the 5 still refused.
	stillRefused := refusePorts(8000, 8005, 8010, 8015, 8020)
	e.sink.script(stillRefused, nil)
	e.sink.mu.Lock()
	e.sink.accepted = nil
	e.sink.mu.Unlock()
	one := slices.IndexFunc(seen, func(d pipeline.DeadLetter) bool {
		_, refused := stillRefused(0, sinks.Record{Data: d.Event})
		return !refused
	})
	report, err = redriver.Redrive(e.ctx, dest, []uint64{seen[one].Seq, 9999, seen[one].Seq})
	if err != nil {
		t.Fatal(err)
	}
	if report.Redriven != 1 || report.Failed != 1 || report.Remaining != 24 || report.Failures[0].Class != pipeline.RedriveNotFound {
		t.Fatalf("redrive of two ids: %+v", report)
	}
	report, err = redriver.Redrive(e.ctx, dest, nil)
	if err != nil {
		t.Fatal(err)
	}
	if report.Failed != 5 || report.Remaining != 5 || len(report.Failures) != 5 || report.Failures[0].Class != "permanent" {
		t.Fatalf("redrive after the fix: %+v", report)
	}
	e.sink.mu.Lock()
	got := slices.Clone(e.sink.accepted)
	e.sink.mu.Unlock()
	if len(got) != 20 {
		t.Fatalf("the sink got %d records, want 20", len(got))
	}
	// The subscription's fields apply: the note is not sent.
	for _, r := range got {
		if strings.Contains(string(r.Data), "not selected") || !strings.Contains(string(r.Data), "server_port") {
			t.Fatalf("redriven record without the subscription's selection: %s", r.Data)
		}
	}
	left, more, err := letters.List(e.ctx, e.account, dest.ID, 0, 100)
	if err != nil || more || len(left) != 5 {
		t.Fatalf("left %d dead letters (more %v, %v), want 5", len(left), more, err)
	}
}

func TestParseDeadLetterID(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want uint64
		ok   bool
	}{
		{"dl_1", 1, true},
		{"dl_18446744073709551615", 1<<64 - 1, true},
		{"dl_0", 0, false},
		{"dl_", 0, false},
		{"dl_+1", 0, false},
		{"dl_-1", 0, false},
		{"ed_1", 0, false},
		{"dl_1x", 0, false},
		{"dl_18446744073709551616", 0, false},
	} {
		t.Run(tt.id, func(t *testing.T) {
			got, err := pipeline.ParseDeadLetterID(tt.id)
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("ParseDeadLetterID(%q) = %d, %v", tt.id, got, err)
			}
			if err != nil && !errors.Is(err, pipeline.ErrDeadLetterID) {
				t.Fatalf("error %v does not wrap ErrDeadLetterID", err)
			}
			if err == nil && pipeline.DeadLetterID(got) != tt.id {
				t.Fatalf("DeadLetterID(%d) = %s", got, pipeline.DeadLetterID(got))
			}
		})
	}
}

// TestRedriveRemovesWhatTheSinkAcceptedAsItStops ends the redrive's
// context while the sink writes: the letters the sink accepted are removed
// all the same, so that a later redrive does not deliver them again.
func TestRedriveRemovesWhatTheSinkAcceptedAsItStops(t *testing.T) {
	e := startDelivery(t, pipeline.DeliveryConfig{Linger: 20 * time.Millisecond})
	e.sink.script(refusePorts(8000, 8001, 8002), nil)
	_, dest := e.route(t, store.Source{Type: tcpKind})
	e.publish(t, tcpKind, 3, func(i int, object map[string]any) { setPort(8000+i)(i, object) })
	letters, redriver := redriveEnv(t, e)
	// Waiting for the letters, not for the consumer to have nothing
	// pending (see TestRedriveTooLargeWhenTheCallFails).
	check.Eventually(t, 10*time.Second, "the three events dead-lettered", func() (int, bool) {
		list, _, err := letters.List(e.ctx, e.account, dest.ID, 0, 100)
		return len(list), err == nil && len(list) == 3
	})
	waitAllAcked(t, e)

	ctx, stop := context.WithCancel(e.ctx)
	defer stop()
	e.sink.script(nil, func(int) error {
		stop() // the records are accepted as the redrive is stopped
		return nil
	})
	if _, err := redriver.Redrive(ctx, dest, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Redrive stopped as it wrote = %v, want context.Canceled", err)
	}
	e.sink.mu.Lock()
	accepted := len(e.sink.accepted)
	e.sink.mu.Unlock()
	if accepted != 3 {
		t.Fatalf("the sink accepted %d records, want 3", accepted)
	}
	left, _, err := letters.List(e.ctx, e.account, dest.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("%d dead letters the sink accepted are left, to be delivered again", len(left))
	}
}

// TestRedriveTooLargeWhenTheCallFails redrives a letter too large for the
// destination in a batch whose call fails as a whole: it is reported
// too_large, as it was not sent, not with the class of the call.
func TestRedriveTooLargeWhenTheCallFails(t *testing.T) {
	e := startDelivery(t, pipeline.DeliveryConfig{Linger: 20 * time.Millisecond})
	e.sink.script(refusePorts(8000, 8001), nil)
	_, dest := e.route(t, store.Source{Type: tcpKind})
	e.publish(t, tcpKind, 2, func(i int, object map[string]any) {
		setPort(8000+i)(i, object)
		if i == 0 {
			object["pad"] = strings.Repeat("x", 2000)
		}
	})
	letters, redriver := redriveEnv(t, e)
	// Waiting for the letters, not for the consumer to have nothing
	// pending: just after a publish, JetStream may report a consumer with
	// nothing pending that has yet to count the new events.
	list := check.Eventually(t, 10*time.Second, "both events dead-lettered", func() ([]pipeline.DeadLetter, bool) {
		list, _, err := letters.List(e.ctx, e.account, dest.ID, 0, 100)
		return list, err == nil && len(list) == 2
	})
	waitAllAcked(t, e)
	small, large := min(len(list[0].Event), len(list[1].Event)), max(len(list[0].Event), len(list[1].Event))
	e.sink.mu.Lock()
	e.sink.limits.MaxRecordBytes = (small + large) / 2
	e.sink.mu.Unlock()
	e.sink.script(nil, func(int) error {
		return &sinks.DestinationError{Class: sinks.ClassAccessDenied, Code: "AccessDeniedException", Message: "denied"}
	})
	report, err := redriver.Redrive(e.ctx, dest, nil)
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]int{}
	for _, f := range report.Failures {
		classes[f.Class]++
	}
	if report.Failed != 2 || classes["too_large"] != 1 || classes["access_denied"] != 1 {
		t.Fatalf("redrive report %+v; want one too_large and one access_denied", report)
	}
}
