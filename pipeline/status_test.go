package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/sinks"
)

// syncBuffer is a log buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// statusEnv is a delivery environment whose process records its status.
type statusEnv struct {
	*deliveryEnv
	reader  *pipeline.StatusReader
	reg     *prometheus.Registry
	logs    *syncBuffer
	account string
}

const testFailingAfter = time.Second

func startStatusEnv(t *testing.T) *statusEnv {
	t.Helper()
	reg := prometheus.NewRegistry()
	metrics, err := pipeline.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	sink := newMemorySink()
	var recorder *pipeline.StatusRecorder
	logs := &syncBuffer{}
	cfg := pipeline.DeliveryConfig{
		Linger: 20 * time.Millisecond, RetryInitial: 20 * time.Millisecond, RetryMax: 50 * time.Millisecond,
		RetryBudget: 200 * time.Millisecond, NakDelayMax: 100 * time.Millisecond, Metrics: metrics,
	}
	e := newDeliveryEnv(t)
	e.sink = sink
	kv, err := pipeline.EnsureStatusBucket(e.ctx, e.js, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	recorder = pipeline.NewStatusRecorder(kv, pipeline.StatusConfig{FailingAfter: testFailingAfter, Flush: 20 * time.Millisecond, Metrics: metrics}, slog.New(slog.NewJSONHandler(logs, nil)))
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = recorder.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	cfg.Status = recorder
	e.startProcess(t, cfg, func(context.Context, store.Destination) (sinks.Sink, error) { return sink, nil })
	return &statusEnv{deliveryEnv: e, reader: pipeline.NewStatusReader(e.js, kv, testFailingAfter), reg: reg, logs: logs, account: e.account}
}

// waitStatus polls the destination's status until ok accepts it, for at
// most 10 s.
func (e *statusEnv) waitStatus(t *testing.T, destinationID, what string, ok func(pipeline.DestinationStatus) bool) pipeline.DestinationStatus {
	t.Helper()
	var st pipeline.DestinationStatus
	check.Eventually(t, 10*time.Second, "the status "+what, func() (string, bool) {
		var err error
		if st, err = e.reader.DestinationStatus(e.ctx, e.account, destinationID); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%+v (last error %+v)", st, st.LastError), ok(st)
	})
	return st
}

// TestStatusStates takes a destination from ok through retrying and
// failing back to ok with a sink that fails whole calls for a while, and
// counts its pending and dead-lettered events.
func TestStatusStates(t *testing.T) {
	e := startStatusEnv(t)
	// A destination that was never written to is ok, with nothing known.
	_, quiet := e.route(t, store.Source{Type: tcpKind})
	if st := e.waitStatus(t, quiet.ID, "empty", func(pipeline.DestinationStatus) bool { return true }); st.State != pipeline.StateOK || !st.LastSuccessAt.IsZero() || st.LastError != nil {
		t.Fatalf("status of an unused destination: %+v", st)
	}
	// The second route is the one this test delivers to.
	_, dest := e.routeOfKind(t, httpKind)
	e.publish(t, httpKind, 10, nil)
	e.waitStatus(t, dest.ID, "ok after a success", func(st pipeline.DestinationStatus) bool {
		return st.State == pipeline.StateOK && !st.LastSuccessAt.IsZero() && st.EventsPending == 0
	})

	e.sink.mu.Lock()
	e.sink.failAll = func(int) error {
		return &sinks.DestinationError{Class: sinks.ClassAccessDenied, Code: "AccessDeniedException", Message: "not allowed"}
	}
	e.sink.mu.Unlock()
	began := time.Now()
	e.publish(t, httpKind, 5, nil)
	st := e.waitStatus(t, dest.ID, "retrying", func(st pipeline.DestinationStatus) bool { return st.State == pipeline.StateRetrying })
	if time.Since(began) < testFailingAfter {
		if st.LastError == nil || st.LastError.Class != "access_denied" || st.LastError.Code != "AccessDeniedException" || st.LastError.Message != "not allowed" {
			t.Fatalf("last error while retrying: %+v", st.LastError)
		}
		if st.EventsPending != 5 {
			t.Errorf("events pending %d, want 5", st.EventsPending)
		}
	}
	e.waitStatus(t, dest.ID, "failing", func(st pipeline.DestinationStatus) bool { return st.State == pipeline.StateFailing })
	waitFor(t, "the failing gauge", func() bool {
		return testutil.ToFloat64(gauge(t, e.reg, e.account, dest.ID)) == 1
	})
	if n := strings.Count(e.logs.String(), `"msg":"destination failing"`); n != 1 {
		t.Errorf("destination failing logged %d times, want once: %s", n, e.logs.String())
	}
	if !strings.Contains(e.logs.String(), `"class":"access_denied","code":"AccessDeniedException"`) {
		t.Errorf("the failing line lacks class and code: %s", e.logs.String())
	}

	e.sink.mu.Lock()
	e.sink.failAll = nil
	e.sink.fail = func(_ int, r sinks.Record) (sinks.Result, bool) {
		if strings.Contains(string(r.Data), "refuse-me") {
			return sinks.Result{Status: sinks.Permanent, Code: "InvalidArgumentException", Message: "no"}, true
		}
		return sinks.Result{}, false
	}
	e.sink.mu.Unlock()
	e.waitStatus(t, dest.ID, "ok again", func(st pipeline.DestinationStatus) bool {
		return st.State == pipeline.StateOK && st.EventsPending == 0
	})
	waitFor(t, "the failing gauge back to 0", func() bool {
		return testutil.ToFloat64(gauge(t, e.reg, e.account, dest.ID)) == 0
	})
	e.publish(t, httpKind, 3, func(i int, object map[string]any) {
		if i == 1 {
			object["note"] = "refuse-me"
		}
	})
	st = e.waitStatus(t, dest.ID, "one dead letter", func(st pipeline.DestinationStatus) bool {
		return st.EventsDeadLettered == 1 && st.EventsPending == 0 && st.LastError != nil && st.LastError.Class == "permanent"
	})
	if st.State != pipeline.StateOK || st.LastError.Code != "InvalidArgumentException" {
		t.Errorf("after a dead letter: %+v, last error %+v", st, st.LastError)
	}
	if st, err := e.reader.DestinationStatus(e.ctx, e.account, quiet.ID); err != nil || st.EventsDeadLettered != 0 {
		t.Errorf("the other destination: %+v, %v", st, err)
	}
}

// routeOfKind is route with one source of the kind.
func (e *statusEnv) routeOfKind(t *testing.T, kind string) (store.Subscription, store.Destination) {
	t.Helper()
	return e.route(t, store.Source{Type: kind})
}

func gauge(t *testing.T, reg *prometheus.Registry, accountID, destinationID string) prometheus.Collector {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_destination_failing"})
	for _, f := range families {
		if f.GetName() != "sluice_destination_failing" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["account_id"] == accountID && labels["destination_id"] == destinationID {
				g.Set(m.GetGauge().GetValue())
			}
		}
	}
	return g
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	check.Eventually(t, 10*time.Second, what, func() (bool, bool) { done := ok(); return done, done })
}

// TestStatusMergesProcesses reads the records two processes wrote: the
// latest success and error of either, and the state of the latest write.
func TestStatusMergesProcesses(t *testing.T) {
	e := startDelivery(t, pipeline.DeliveryConfig{})
	kv, err := pipeline.EnsureStatusBucket(e.ctx, e.js, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	a := pipeline.StatusRecord{
		LastSuccessAt: now.Add(-time.Minute),
		LastError:     &pipeline.StatusError{Class: "throttled", Code: "ThrottlingException", At: now.Add(-2 * time.Minute)},
		LastWriteAt:   now.Add(-time.Minute), LastOutcome: pipeline.OutcomeOK,
	}
	b := pipeline.StatusRecord{
		LastSuccessAt: now.Add(-3 * time.Minute),
		LastError:     &pipeline.StatusError{Class: "not_found", Code: "ResourceNotFoundException", At: now.Add(-time.Second)},
		LastWriteAt:   now.Add(-time.Second), LastOutcome: pipeline.OutcomeFailed, FailingSince: now.Add(-10 * time.Minute),
	}
	for id, rec := range map[string]pipeline.StatusRecord{"a": a, "b": b} {
		data, _ := json.Marshal(rec)
		if _, err := kv.Put(e.ctx, e.account+".ed_x."+id, data); err != nil {
			t.Fatal(err)
		}
	}
	// Another destination's record is not merged.
	if _, err := kv.Put(e.ctx, e.account+".ed_y.a", []byte(`{"last_success_at":"2030-01-01T00:00:00Z"}`)); err != nil {
		t.Fatal(err)
	}
	st, err := pipeline.NewStatusReader(e.js, kv, 5*time.Minute).DestinationStatus(e.ctx, e.account, "ed_x")
	if err != nil {
		t.Fatal(err)
	}
	// b fails since 10 minutes, but a succeeded a minute ago: retrying.
	if st.State != pipeline.StateRetrying || !st.LastSuccessAt.Equal(a.LastSuccessAt) || st.LastError == nil || st.LastError.Code != "ResourceNotFoundException" {
		t.Fatalf("merged %+v, last error %+v", st, st.LastError)
	}
}

// TestMergeStatus decides the state of merged records.
func TestMergeStatus(t *testing.T) {
	now := time.Now()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	failed := func(since, at time.Duration) pipeline.StatusRecord {
		return pipeline.StatusRecord{LastWriteAt: ago(at), LastOutcome: pipeline.OutcomeFailed, FailingSince: ago(since), LastError: &pipeline.StatusError{Class: "unavailable", At: ago(at)}}
	}
	ok := func(at time.Duration) pipeline.StatusRecord {
		return pipeline.StatusRecord{LastWriteAt: ago(at), LastOutcome: pipeline.OutcomeOK, LastSuccessAt: ago(at)}
	}
	for _, tc := range []struct {
		name    string
		records []pipeline.StatusRecord
		want    string
	}{
		{"none", nil, pipeline.StateOK},
		{"ok", []pipeline.StatusRecord{ok(time.Second)}, pipeline.StateOK},
		{"partial", []pipeline.StatusRecord{{LastWriteAt: now, LastOutcome: pipeline.OutcomePartial}}, pipeline.StateRetrying},
		{"failing briefly", []pipeline.StatusRecord{failed(time.Minute, time.Second)}, pipeline.StateRetrying},
		{"failing long", []pipeline.StatusRecord{failed(6*time.Minute, time.Second)}, pipeline.StateFailing},
		{"another process recovered last", []pipeline.StatusRecord{failed(6*time.Minute, time.Minute), ok(time.Second)}, pipeline.StateOK},
		{"both failing long", []pipeline.StatusRecord{failed(6*time.Minute, time.Second), failed(7*time.Minute, 2*time.Second)}, pipeline.StateFailing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pipeline.MergeStatus(tc.records, now, 5*time.Minute).State; got != tc.want {
				t.Fatalf("state %s, want %s", got, tc.want)
			}
		})
	}
}
