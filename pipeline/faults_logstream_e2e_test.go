package pipeline_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
)

// deleteLogStreamTarget is the X-Amz-Target of DeleteLogStream.
const deleteLogStreamTarget = "Logs_20140328.DeleteLogStream"

// callGate holds an emulator's calls back while a test reads a log stream
// and deletes it, so that the events read are exactly those deleted: no
// put lands between the read and the deletion.
type callGate struct {
	mu   sync.RWMutex
	next http.Handler
}

func (g *callGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Amz-Target") != deleteLogStreamTarget {
		g.mu.RLock()
		defer g.mu.RUnlock()
	}
	g.next.ServeHTTP(w, r)
}

// startGatedEmulator starts an emulator serving behind a callGate.
func startGatedEmulator(t *testing.T) (*emulatortest.Emulator, *callGate) {
	t.Helper()
	srv, err := emulator.New(emulator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	gate := &callGate{next: srv.Handler()}
	ts := httptest.NewServer(gate)
	t.Cleanup(ts.Close)
	return &emulatortest.Emulator{Server: srv, Endpoint: ts.URL, Region: emulator.DefaultRegion}, gate
}

// deleteLogStream reads the events of a log stream and deletes it, through
// the CloudWatch Logs API, with no put in between, and returns the events.
func (f *faultEnv) deleteLogStream(t *testing.T, gate *callGate, group, stream string) []emulator.LogEvent {
	t.Helper()
	gate.mu.Lock()
	defer gate.mu.Unlock()
	events, err := f.emu.LogEvents(group, stream)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.emu.LogsClient().DeleteLogStream(f.ctx, &cloudwatchlogs.DeleteLogStreamInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream)}); err != nil {
		t.Fatalf("DeleteLogStream: %v", err)
	}
	return events
}

// waitLogEvents waits until the log stream exists and holds an event, for
// at most within.
func (f *faultEnv) waitLogEvents(t *testing.T, group, stream string, within time.Duration) {
	t.Helper()
	check.Eventually(t, within, fmt.Sprintf("an event in log stream %s of %s", stream, group), func() (string, bool) {
		events, err := f.emu.LogEvents(group, stream)
		if err != nil {
			return err.Error(), false
		}
		return fmt.Sprintf("%d events", len(events)), len(events) > 0
	})
}

// TestFaultsLogStreamDeleted deletes a subscription's log stream three
// times while its events flow: each time it is created again, and every
// event is either in a deleted stream (read just before its deletion) or
// in the last one, once.
func TestFaultsLogStreamDeleted(t *testing.T) {
	if testing.Short() {
		t.Skip("delivers through the emulator for a few seconds")
	}
	t.Parallel()
	emu, gate := startGatedEmulator(t)
	f := startFaultEnvOn(t, pipeline.DeliveryConfig{}, emu)
	logs := f.target(t, emulator.ServiceLogs, "deleted")
	sub := f.subscribe(t, []string{logs.dest.ID}, store.Source{Type: tcpKind})
	group, stream := logs.resource, sub.ID

	pub := f.startPublishing(tcpKind, 5, 20*time.Millisecond) // 250 events a second
	got := newReceived()
	const deletions = 3
	for range deletions {
		// The stream holds events (it was created, or created again),
		// and events go on flowing: delete it.
		f.waitLogEvents(t, group, stream, 10*time.Second)
		got.addLogEvents(t, logs, f.deleteLogStream(t, gate, group, stream))
		pause(f.ctx, time.Second) // events flow on for a second
	}
	f.waitLogEvents(t, group, stream, 10*time.Second)
	events := pub.end(t)
	ids := idsOf(events)

	f.waitAccepted(t, logs, int64(len(ids)), 30*time.Second)
	waitAllAckedWithin(t, f.deliveryEnv, 30*time.Second)
	last, err := f.emu.LogEvents(group, stream)
	if err != nil {
		t.Fatalf("the log stream was not created again: %v", err)
	}
	got.addLogEvents(t, logs, last)
	c := count(ids, got)
	counters := f.emu.Counters(emulator.ServiceLogs, group).ByOperation
	t.Logf("%s: %v (%d in the %d deleted streams, %d in the last); CreateLogStream: %d calls; PutLogEvents: %d calls, %d refused, %d events accepted",
		logs, c, c.out-len(last), deletions, len(last), counters["CreateLogStream"].Calls,
		counters["PutLogEvents"].Calls, counters["PutLogEvents"].Errors, counters["PutLogEvents"].RecordsAccepted)
	if c.missing > 0 || c.duplicates > 0 || c.unexpected > 0 {
		t.Errorf("%s: %v: want every event once", logs, c)
	}
	if created := counters["CreateLogStream"].Calls; created < 1+deletions {
		t.Errorf("%d CreateLogStream calls, want one for the stream and one after each of the %d deletions", created, deletions)
	}
	if accepted := counters["PutLogEvents"].RecordsAccepted; accepted != int64(c.out) {
		t.Errorf("the emulator accepted %d events, and the streams held %d", accepted, c.out)
	}
}
