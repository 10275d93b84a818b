package pipeline_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/store"
)

// TestDeliverPoisonEventDeadLetteredOnce stores, between ordinary events,
// one event no filter can evaluate, as a version of sluice that did not
// limit field sizes could have stored it: a million-byte server name and
// port 0. Three routes' filters fail on it, two because the server name is
// over its limit (it is not evaluated at all) and one on a division by
// zero. Each route dead-letters it exactly once with the reason and
// acknowledges it; it is never redelivered, and every other event is
// delivered on every route.
func TestDeliverPoisonEventDeadLetteredOnce(t *testing.T) {
	e := startDelivery(t, pipeline.DeliveryConfig{Linger: 20 * time.Millisecond})
	filters := []struct{ filter, reason string }{
		{`ev.conn.server_name.replace('', '` + strings.Repeat("x", 390) + `') != 'x'`, "object.conn.server_name"},
		{`100 / ev.conn.server_port >= 0`, "division by zero"},
		{`ev.conn.server_name.size() < 1000 && ev.conn.server_port > 0`, "limit of 253 bytes"},
	}
	reasons := map[string]string{} // by destination
	for _, f := range filters {
		_, dest := e.route(t, store.Source{Type: httpKind, Filter: f.filter})
		reasons[dest.ID] = f.reason
	}
	ordinary := func(_ int, object map[string]any) {
		object["conn"] = map[string]any{"server_name": "api.example.com", "server_port": 443}
	}
	want := e.publish(t, httpKind, 10, ordinary)
	poison := storeUnchecked(t, e, `{"conn":{"server_name":"`+strings.Repeat("a", 1_000_000)+`","server_port":0}}`)
	want = append(want, e.publish(t, httpKind, 10, ordinary)...)

	got := e.sink.waitFor(t, "every ordinary event on every route", func(r []sinks.Record) bool { return len(r) >= len(filters)*len(want) })
	count := map[string]int{}
	for _, r := range got {
		count[r.ID]++
	}
	for _, id := range want {
		if count[id] != len(filters) {
			t.Errorf("event %s delivered %d times, want once per route (%d)", id, count[id], len(filters))
		}
	}
	if count[poison] != 0 {
		t.Errorf("the poison event was delivered %d times", count[poison])
	}
	waitAllAcked(t, e)

	for c := range e.stream.ListConsumers(e.ctx).Info() {
		if c.NumRedelivered != 0 {
			t.Errorf("consumer %s redelivered %d events", c.Name, c.NumRedelivered)
		}
	}
	dlq, err := e.js.Stream(e.ctx, pipeline.DLQStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := dlq.Info(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(len(filters)) {
		t.Fatalf("%d dead letters, want %d: one per route", info.State.Msgs, len(filters))
	}
	seen := map[string]bool{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		msg, err := dlq.GetMsg(e.ctx, seq)
		if err != nil {
			t.Fatalf("dead letter %d: %v", seq, err)
		}
		dest := msg.Header.Get(pipeline.HeaderDLQDestinationID)
		why := msg.Header.Get(pipeline.HeaderDLQMessage)
		if msg.Header.Get(pipeline.HeaderDLQEventID) != poison || msg.Header.Get(pipeline.HeaderDLQClass) != "filter" {
			t.Errorf("dead letter %d: event %s, class %s; want the poison event, class filter", seq, msg.Header.Get(pipeline.HeaderDLQEventID), msg.Header.Get(pipeline.HeaderDLQClass))
		}
		if !strings.Contains(why, reasons[dest]) {
			t.Errorf("dead letter of destination %s says %q, want it to say %q", dest, why, reasons[dest])
		}
		if seen[dest] {
			t.Errorf("two dead letters for destination %s", dest)
		}
		seen[dest] = true
	}
}

// storeUnchecked stores an http_request_complete.v0 event with the object
// as it is, without the validation the producer and the API apply, and
// returns its id.
func storeUnchecked(t *testing.T, e *deliveryEnv, object string) string {
	t.Helper()
	ev := schemas.Event{
		ID:        schemas.NewID(schemas.PrefixEvent),
		Type:      httpKind,
		Timestamp: time.Now(),
		AccountID: e.account,
		Object:    json.RawMessage(object),
	}
	msg := nats.NewMsg(schemas.EventSubject(ev.AccountID, ev.Type))
	msg.Data = ev.AppendJSON(nil)
	if _, err := e.js.PublishMsg(e.ctx, msg); err != nil {
		t.Fatalf("storing the unchecked event: %v", err)
	}
	return ev.ID
}
