package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks"
)

// sampleEvent returns the stored form of a sampled 1 KB event.
func sampleEvent(s *schemas.Sampler) []byte {
	ev := s.HTTPRequest1KB()
	return ev.AppendJSON(nil)
}

// heavyFilter is a filter of 16 matches, as in issue 23's attack.
func heavyFilter() string {
	var b bytes.Buffer
	for i := range 16 {
		if i > 0 {
			b.WriteString(" || ")
		}
		fmt.Fprintf(&b, `ev.conn.server_name.matches("^x%d[.][a-z]+[0-9]+[.]example$")`, i)
	}
	return b.String()
}

// memoDeliverer returns a deliverer whose plans write to answeringSink,
// with no JetStream.
func memoDeliverer(t testing.TB) *Deliverer {
	t.Helper()
	env, err := filters.NewEnv(schemas.Default())
	if err != nil {
		t.Fatal(err)
	}
	newSink := func(context.Context, store.Destination) (sinks.Sink, error) { return answeringSink{}, nil }
	return NewDeliverer(nil, nil, env, newSink, DeliveryConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// fanOutPlans returns the plans of the n routes of one subscription with
// src, one per destination.
func fanOutPlans(t testing.TB, d *Deliverer, n int, src store.Source) []*plan {
	t.Helper()
	sub := store.Subscription{ID: "es_fanout", AccountID: "ac_b", Sources: []store.Source{src}}
	plans := make([]*plan, n)
	for i := range plans {
		dest := store.Destination{ID: fmt.Sprintf("ed_%d", i), AccountID: "ac_b"}
		p, err := d.plan(t.Context(), Route{Subscription: sub, Destination: dest})
		if err != nil {
			t.Fatal(err)
		}
		plans[i] = p
	}
	return plans
}

// TestFilterRunsOncePerSubscription: the 50 routes of a subscription
// naming 50 destinations, recording one event at once, run its filter
// once between them, and each gets the same record; another event, or the
// subscription's source changed, is filtered again.
func TestFilterRunsOncePerSubscription(t *testing.T) {
	const routes = 50
	d := memoDeliverer(t)
	src := store.Source{Type: "http_request_complete.v0", Filter: "!(" + heavyFilter() + ")"}
	plans := fanOutPlans(t, d, routes, src)
	data := sampleEvent(schemas.NewSampler(1))
	records := make([]entry, routes)
	var wg sync.WaitGroup
	for i, p := range plans {
		wg.Go(func() {
			e, refused := p.record(t.Context(), data)
			if refused.class != "" {
				t.Errorf("route %d refused the event: %s", i, refused.text())
			}
			records[i] = e
		})
	}
	wg.Wait()
	if n := d.memo.selections.Load(); n != 1 {
		t.Fatalf("%d routes of one subscription selected one event %d times, want once", routes, n)
	}
	for i, e := range records {
		if !bytes.Equal(e.record.Data, data) || e.record.ID != records[0].record.ID {
			t.Fatalf("route %d made record %q, want the event", i, e.record.Data)
		}
	}
	other := sampleEvent(schemas.NewSampler(2))
	for _, p := range plans {
		p.record(t.Context(), other)
	}
	changed := src
	changed.Filter = heavyFilter()
	for _, p := range fanOutPlans(t, d, 2, changed) {
		if _, refused := p.record(t.Context(), data); refused.class != RedriveFiltered {
			t.Fatalf("the changed filter's verdict: %q, want the event filtered out", refused.class)
		}
	}
	if n := d.memo.selections.Load(); n != 3 {
		t.Fatalf("selections after another event and a changed source: %d, want 3", n)
	}
}

// BenchmarkFanOutRecord measures the CPU per event of a subscription of
// 16 matches naming 50 destinations: what its 50 routes spend making their
// records of one event.
func BenchmarkFanOutRecord(b *testing.B) {
	d := memoDeliverer(b)
	plans := fanOutPlans(b, d, 50, store.Source{Type: "http_request_complete.v0", Filter: "!(" + heavyFilter() + ")"})
	sampler := schemas.NewSampler(1)
	events := make([][]byte, 64)
	for i := range events {
		events[i] = sampleEvent(sampler)
	}
	ctx := b.Context()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		data := events[i%len(events)]
		i++
		for _, p := range plans {
			if _, refused := p.record(ctx, data); refused.class != "" {
				b.Fatal(refused.text())
			}
		}
	}
}
