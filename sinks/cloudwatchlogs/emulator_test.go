package cloudwatchlogs_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/cloudwatchlogs"
)

// event returns the record of an event at t.
func event(id string, t time.Time) sinks.Record {
	return sinks.Record{ID: id, Data: []byte(`{"event_id":"` + id + `"}`), Timestamp: t}
}

// messages returns the messages a log stream holds, by timestamp.
func messages(t *testing.T, emu *emulatortest.Emulator, group, stream string) []string {
	t.Helper()
	events, err := emu.LogEvents(group, stream)
	if err != nil {
		t.Fatalf("reading log stream %s: %v", stream, err)
	}
	var out []string
	for _, e := range events {
		out = append(out, e.Message)
	}
	return out
}

// TestRejectedEventsEmulator writes events too old, expired, too new and
// fine in one batch, out of order and spanning days: the rejected ones are
// Permanent with their reason, the rest stored.
func TestRejectedEventsEmulator(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	if err := emu.CreateLogGroup("/sluice/kept-3-days", 3); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	batch := []sinks.Record{
		event("fine-now", now),
		event("too-old", now.Add(-15*24*time.Hour)),
		event("too-new", now.Add(3*time.Hour)),
		event("expired", now.Add(-4*24*time.Hour)),
		event("fine-2-days-ago", now.Add(-2*24*time.Hour)),
		event("fine-1-day-ago", now.Add(-25*time.Hour)),
	}
	want := []string{"", cloudwatchlogs.CodeTooOld, cloudwatchlogs.CodeTooNew, cloudwatchlogs.CodeExpired, "", ""}
	results, err := newSink(t, emu, "/sluice/kept-3-days").WithLogStream(stream).Write(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		switch {
		case want[i] == "" && r.Status != sinks.Accepted:
			t.Errorf("%s: %v %s %s, want accepted", batch[i].ID, r.Status, r.Code, r.Message)
		case want[i] != "" && (r.Status != sinks.Permanent || r.Code != want[i] || r.Message == ""):
			t.Errorf("%s: %v %s %q, want permanent %s", batch[i].ID, r.Status, r.Code, r.Message, want[i])
		}
	}
	got := messages(t, emu, "/sluice/kept-3-days", stream)
	wantStored := []string{`{"event_id":"fine-2-days-ago"}`, `{"event_id":"fine-1-day-ago"}`, `{"event_id":"fine-now"}`}
	if fmt.Sprint(got) != fmt.Sprint(wantStored) {
		t.Errorf("stored %q, want %q", got, wantStored)
	}
}

// TestLogStreamDeletedEmulator deletes the log stream between writes: the
// sink creates it again and nothing written after is lost.
func TestLogStreamDeletedEmulator(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	if err := emu.CreateLogGroup("/sluice/events", 0); err != nil {
		t.Fatal(err)
	}
	sink := newSink(t, emu, "/sluice/events").WithLogStream(stream)
	now := time.Now()
	for i := range 3 {
		if i == 2 {
			if err := emu.DeleteLogStream("/sluice/events", stream); err != nil {
				t.Fatal(err)
			}
		}
		results, err := sink.Write(context.Background(), []sinks.Record{event(fmt.Sprintf("ev-%d", i), now)})
		if err != nil || results[0].Status != sinks.Accepted {
			t.Fatalf("write %d = %v, %v", i, results, err)
		}
	}
	if got := messages(t, emu, "/sluice/events", stream); len(got) != 1 || got[0] != `{"event_id":"ev-2"}` {
		t.Errorf("the recreated stream holds %q, want ev-2", got)
	}
}

// TestConcurrentStreamCreationEmulator starts writers of a new log stream
// at once: every one succeeds, and the stream holds every event once.
func TestConcurrentStreamCreationEmulator(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	if err := emu.CreateLogGroup("/sluice/events", 0); err != nil {
		t.Fatal(err)
	}
	group := newSink(t, emu, "/sluice/events")
	const writers = 8
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			<-start
			// Each writer its own sink of the stream, as separate processes.
			results, err := group.WithLogStream(stream).Write(context.Background(), []sinks.Record{event(fmt.Sprintf("writer-%d", w), time.Now())})
			if err != nil || results[0].Status != sinks.Accepted {
				t.Errorf("writer %d: %v, %v", w, results, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if got := messages(t, emu, "/sluice/events", stream); len(got) != writers {
		t.Errorf("the stream holds %d events, want %d", len(got), writers)
	}
}

// TestSubscriptionsEmulator checks that the sinks of two subscriptions of
// one group write to two log streams named after them.
func TestSubscriptionsEmulator(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	if err := emu.CreateLogGroup("/sluice/events", 0); err != nil {
		t.Fatal(err)
	}
	var group sinks.Sink = newSink(t, emu, "/sluice/events")
	for _, sub := range []string{"esb_first", "esb_second"} {
		sink := group.(sinks.SubscriptionSink).ForSubscription(sub)
		if _, err := sink.Write(context.Background(), []sinks.Record{event("for-"+sub, time.Now())}); err != nil {
			t.Fatal(err)
		}
		if got := messages(t, emu, "/sluice/events", sub); len(got) != 1 || got[0] != `{"event_id":"for-`+sub+`"}` {
			t.Errorf("stream %s holds %q", sub, got)
		}
	}
}

// TestDestinationErrorsEmulator checks the class of whole-call failures as
// the emulator answers them, and that a fixed destination works again.
func TestDestinationErrorsEmulator(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	batch := []sinks.Record{event("ev-1", time.Now())}
	sink := newSink(t, emu, "/sluice/events").WithLogStream(stream)

	// No group: not_found, and the sink does not create it.
	_, err := sink.Write(context.Background(), batch)
	var de *sinks.DestinationError
	if !errors.As(err, &de) || de.Class != sinks.ClassNotFound {
		t.Fatalf("Write to a missing group = %v, want not_found", err)
	}
	if _, err := emu.LogStreams("/sluice/events"); !errors.Is(err, emulator.ErrNotFound) {
		t.Fatalf("the group exists after a write: %v", err)
	}
	if err := emu.CreateLogGroup("/sluice/events", 0); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		fault emulator.Fault
		want  sinks.Class
		code  string
	}{
		{"access denied", emulator.Fault{AccessDenied: true}, sinks.ClassAccessDenied, "AccessDeniedException"},
		{"5xx", emulator.Fault{ServerErrors: 1}, sinks.ClassUnavailable, "ServiceUnavailableException"},
		{"throttled", emulator.Fault{ThrottleRequests: 1}, sinks.ClassThrottled, "ThrottlingException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fault.Service, tt.fault.Resource = emulator.ServiceLogs, "/sluice/events"
			if err := emu.SetFault(tt.fault); err != nil {
				t.Fatal(err)
			}
			_, err := sink.Write(context.Background(), batch)
			var de *sinks.DestinationError
			if !errors.As(err, &de) || de.Class != tt.want || de.Code != tt.code {
				t.Errorf("Write = %v, want class %s, code %s", err, tt.want, tt.code)
			}
			emu.ClearFault(emulator.ServiceLogs, "/sluice/events")
			results, err := sink.Write(context.Background(), batch)
			if err != nil || results[0].Status != sinks.Accepted {
				t.Errorf("Write once fixed = %v, %v", results, err)
			}
		})
	}
}
