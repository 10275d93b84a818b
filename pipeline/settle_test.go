package pipeline

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sluicehq/sluice/sinks"
)

// settledMsg is a message that records how it was settled.
type settledMsg struct {
	jetstream.Msg // nil: any other method panics
	err           error

	mu    sync.Mutex
	calls []string
}

func (m *settledMsg) record(call string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, call)
	return m.err
}

func (m *settledMsg) Ack() error                       { return m.record("ack") }
func (m *settledMsg) Nak() error                       { return m.record("nak") }
func (m *settledMsg) NakWithDelay(time.Duration) error { return m.record("nak") }
func (m *settledMsg) Term() error                      { return m.record("term") }
func (m *settledMsg) InProgress() error                { return m.record("in_progress") }
func (m *settledMsg) Data() []byte                     { return []byte(`{}`) }
func (m *settledMsg) Metadata() (*jetstream.MsgMetadata, error) {
	return nil, errors.New("no metadata")
}

func (m *settledMsg) settled() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.calls)
}

// answeringSink answers each Write with results, having run during.
type answeringSink struct {
	results []sinks.Result
	during  func()
}

func (s answeringSink) Limits() sinks.Limits {
	return sinks.Limits{MaxRecords: 500, MaxBatchBytes: 5 << 20, MaxRecordBytes: 1 << 20}
}

func (s answeringSink) Write(_ context.Context, records []sinks.Record) ([]sinks.Result, error) {
	s.during()
	return s.results[:len(records)], nil
}

// testWorker returns a worker delivering to sink, with no consumer and no
// JetStream: dead letters cannot be stored.
func testWorker(t *testing.T, sink sinks.Sink, m *Metrics) *worker {
	t.Helper()
	cfg := DeliveryConfig{Metrics: m}
	cfg.setDefaults()
	p := new(atomic.Pointer[plan])
	p.Store(&plan{routePlan: routePlan{sink: sink}, metrics: m.forRoute(Route{})})
	return newWorker(p, nil, nil, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func testBatch(msgs ...*settledMsg) []pending {
	batch := make([]pending, len(msgs))
	for i, m := range msgs {
		batch[i] = pending{msg: m, entry: entry{record: sinks.Record{ID: "ev_" + string(rune('a'+i)), Data: []byte(`{}`)}, size: 2}}
	}
	return batch
}

// A batch the sink accepted while the worker was being stopped is
// acknowledged, not handed back to be delivered a second time; the records
// the sink did not accept are handed back.
func TestDeliverSettlesWhatTheSinkAcceptedAsItStops(t *testing.T) {
	accepted := sinks.Result{Status: sinks.Accepted}
	for _, tc := range []struct {
		name    string
		results []sinks.Result
		want    [][]string
	}{
		{"all accepted", []sinks.Result{accepted, accepted}, [][]string{{"ack"}, {"ack"}}},
		{"one retryable", []sinks.Result{accepted, {Status: sinks.Retryable, Code: "Throttled"}}, [][]string{{"ack"}, {"nak"}}},
		{"one permanent", []sinks.Result{{Status: sinks.Permanent, Code: "Invalid"}, accepted}, [][]string{{"nak"}, {"ack"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, stop := context.WithCancel(t.Context())
			defer stop()
			w := testWorker(t, answeringSink{results: tc.results, during: stop}, nil)
			msgs := []*settledMsg{{}, {}}
			w.deliver(ctx, testBatch(msgs...))
			for i, m := range msgs {
				if got := m.settled(); !slices.Equal(got, tc.want[i]) {
					t.Errorf("event %d settled with %v, want %v", i, got, tc.want[i])
				}
			}
		})
	}
}

// An acknowledgement that fails is counted, by operation, rather than
// dropped unseen.
func TestDeliverCountsFailedAcknowledgements(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("nats: connection closed")
	w := testWorker(t, answeringSink{
		results: []sinks.Result{{Status: sinks.Accepted}, {Status: sinks.Accepted}},
		during:  func() {},
	}, m)
	msgs := []*settledMsg{{err: refused}, {err: refused}}
	w.deliver(t.Context(), testBatch(msgs...))
	w.release(testBatch(&settledMsg{err: refused}))
	for op, want := range map[string]float64{opAck: 2, opNak: 1, opTerm: 0} {
		if got := testutil.ToFloat64(m.settleErrors.WithLabelValues(op)); got != want {
			t.Errorf("sluice_delivery_ack_errors_total{operation=%q} = %v, want %v", op, got, want)
		}
	}
}

// letterJS stores dead letters nowhere, and counts them.
type letterJS struct {
	jetstream.JetStream // nil: any other method panics
	letters             atomic.Int64
}

func (j *letterJS) PublishMsg(context.Context, *nats.Msg, ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	j.letters.Add(1)
	return &jetstream.PubAck{}, nil
}

// A record too large for the destination is dead-lettered without being
// sent, and is no answer of the destination: it neither counts as a record
// the destination refused nor ends the failing state of its status.
func TestDeliverTooLargeIsNoAnswerOfTheDestination(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int64
	sink := answeringSink{results: []sinks.Result{{Status: sinks.Accepted}}, during: func() { sent.Add(1) }}
	w := testWorker(t, sink, m)
	js := &letterJS{}
	w.js = js
	status := NewStatusRecorder(nil, StatusConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil))).forDestination("ac_1", "ed_1")
	w.plan.Load().status = status
	failedAt := time.Now()
	status.callFailed(failedAt, &sinks.DestinationError{Class: sinks.ClassUnavailable})

	msg := &settledMsg{}
	batch := testBatch(msg)
	batch[0].size = sink.Limits().MaxRecordBytes + 1
	w.deliver(t.Context(), batch)

	if got := msg.settled(); !slices.Equal(got, []string{"term"}) || js.letters.Load() != 1 || sent.Load() != 0 {
		t.Fatalf("settled %v with %d dead letters and %d calls; want term, 1 and 0", got, js.letters.Load(), sent.Load())
	}
	if got := testutil.ToFloat64(m.deadLettered.WithLabelValues("", "", "", dlqTooLarge)); got != 1 {
		t.Errorf("dead-lettered too_large = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.failed.WithLabelValues("", "", "", sinks.Permanent.String())); got != 0 {
		t.Errorf("failed permanent = %v, want 0: the destination refused nothing", got)
	}
	status.mu.Lock()
	defer status.mu.Unlock()
	if !status.record.FailingSince.Equal(failedAt) || status.record.LastOutcome != OutcomeFailed {
		t.Errorf("status %+v; want still failing since %v", status.record, failedAt)
	}
}
