package pipeline_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/sinks"
)

// metricSum returns the sum of the values of the series of the metric
// whose labels include labels (a histogram's sample count), and how many
// series matched.
func metricSum(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) (float64, int) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	sum, n := 0.0, 0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			n++
			switch {
			case m.Counter != nil:
				sum += m.GetCounter().GetValue()
			case m.Gauge != nil:
				sum += m.GetGauge().GetValue()
			case m.Histogram != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum, n
}

// waitMetric waits until the sum of the metric's matching series satisfies
// ok, for at most 10 s, and returns it.
func waitMetric(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string, what string, ok func(float64) bool) float64 {
	t.Helper()
	return check.Eventually(t, 10*time.Second, fmt.Sprintf("%s%v %s", name, labels, what), func() (float64, bool) {
		got, _ := metricSum(t, reg, name, labels)
		return got, ok(got)
	})
}

func equal(want float64) func(float64) bool { return func(got float64) bool { return got == want } }
func atLeast(want float64) func(float64) bool {
	return func(got float64) bool { return got >= want }
}

// TestDeliverMetrics delivers events a filter partly leaves out through a
// sink that fails a whole call, refuses records once and one for good, and
// checks what the metrics count.
func TestDeliverMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	metrics, err := pipeline.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	sink := newMemorySink()
	e := startDeliveryTo(t, pipeline.DeliveryConfig{Linger: 20 * time.Millisecond, RetryInitial: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond, Metrics: metrics},
		func(context.Context, store.Destination) (sinks.Sink, error) { return sink, nil })
	e.sink = sink
	sink.failAll = func(call int) error {
		if call == 1 {
			return &sinks.DestinationError{Class: sinks.ClassThrottled, Code: "ThrottlingException"}
		}
		return nil
	}
	sink.fail = func(call int, r sinks.Record) (sinks.Result, bool) {
		switch {
		case call == 2:
			return sinks.Result{Status: sinks.Retryable, Code: "ProvisionedThroughputExceededException"}, true
		case strings.Contains(string(r.Data), "refuse-me"):
			return sinks.Result{Status: sinks.Permanent, Code: "InvalidArgumentException", Message: "no"}, true
		}
		return sinks.Result{}, false
	}
	reg.MustRegister(e.deliverer.PendingCollector(0), pipeline.StreamCollector(e.js, 0))
	sub, dest := e.route(t, store.Source{Type: httpKind, Filter: "ev.conn.server_port == 443"})

	kept := e.publish(t, httpKind, 30, func(i int, object map[string]any) {
		setPort(443)(i, object)
		if i == 5 {
			object["note"] = "refuse-me"
		}
	})
	e.publish(t, httpKind, 10, setPort(80))
	sink.waitFor(t, "the deliverable events", func(r []sinks.Record) bool { return len(r) >= len(kept)-1 })
	waitAllAcked(t, e)

	route := map[string]string{"account_id": e.account, "subscription_id": sub.ID, "destination_id": dest.ID}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for rk, rv := range route {
			m[rk] = rv
		}
		return m
	}
	waitMetric(t, reg, "sluice_delivery_delivered_events_total", route, "29", equal(29))
	waitMetric(t, reg, "sluice_delivery_filtered_events_total", route, "10", equal(10))
	waitMetric(t, reg, "sluice_delivery_dead_lettered_events_total", with("class", "permanent"), "1", equal(1))
	waitMetric(t, reg, "sluice_delivery_failed_records_total", with("class", "permanent"), "1", equal(1))
	waitMetric(t, reg, "sluice_delivery_failed_records_total", with("class", "throttled"), "at least 1", atLeast(1))
	waitMetric(t, reg, "sluice_delivery_failed_records_total", with("class", "retryable"), "at least 1", atLeast(1))
	waitMetric(t, reg, "sluice_delivery_retried_records_total", route, "at least 2", atLeast(2))
	waitMetric(t, reg, "sluice_delivery_latency_seconds", route, "29 observations", equal(29))

	sink.mu.Lock()
	calls := sink.calls
	sink.mu.Unlock()
	waitMetric(t, reg, "sluice_delivery_write_records", map[string]string{"destination_type": "kinesis"}, "one per call", equal(float64(calls)))
	waitMetric(t, reg, "sluice_delivery_write_bytes", map[string]string{"destination_type": "kinesis"}, "one per call", equal(float64(calls)))
	waitMetric(t, reg, "sluice_delivery_write_duration_seconds", map[string]string{"destination_type": "kinesis", "outcome": "failed"}, "1", equal(1))
	waitMetric(t, reg, "sluice_delivery_write_duration_seconds", map[string]string{"destination_type": "kinesis", "outcome": "partial"}, "at least 1", atLeast(1))

	// Scraped from JetStream: the route's consumer is drained, and the
	// streams hold the 40 events and the dead letter.
	if got, n := metricSum(t, reg, "sluice_route_pending_events", route); n != 1 || got != 0 {
		t.Errorf("sluice_route_pending_events: %d series summing to %v, want one at 0", n, got)
	}
	if got, _ := metricSum(t, reg, "sluice_stream_messages", map[string]string{"stream": pipeline.EventsStream}); got != 40 {
		t.Errorf("sluice_stream_messages of %s: %v, want 40", pipeline.EventsStream, got)
	}
	if got, _ := metricSum(t, reg, "sluice_stream_messages", map[string]string{"stream": pipeline.DLQStream}); got != 1 {
		t.Errorf("sluice_stream_messages of %s: %v, want 1", pipeline.DLQStream, got)
	}
	if got, _ := metricSum(t, reg, "sluice_stream_bytes", map[string]string{"stream": pipeline.EventsStream}); got <= 0 {
		t.Errorf("sluice_stream_bytes of %s: %v, want some", pipeline.EventsStream, got)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("metrics lint: %v %+v", err, problems)
	}

	// The route removed: its series go with it.
	if _, err := e.store.DeleteSubscription(e.ctx, e.account, sub.ID); err != nil {
		t.Fatal(err)
	}
	check.Eventually(t, 10*time.Second, "no delivered or pending series of a removed route", func() (string, bool) {
		_, n := metricSum(t, reg, "sluice_delivery_delivered_events_total", nil)
		_, pending := metricSum(t, reg, "sluice_route_pending_events", nil)
		return fmt.Sprintf("%d delivered and %d pending series", n, pending), n == 0 && pending == 0
	})
}
