package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/filters"
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
	routes := []struct{ filter, reason string }{
		{`ev.conn.server_name.replace('', '` + strings.Repeat("x", 390) + `') != 'x'`, "object.conn.server_name"},
		{`100 / ev.conn.server_port >= 0`, "division by zero"},
		{`ev.conn.server_name.size() < 1000 && ev.conn.server_port > 0`, "limit of 253 bytes"},
	}
	reasons := map[string]string{} // by destination
	for _, f := range routes {
		_, dest := e.route(t, store.Source{Type: httpKind, Filter: f.filter})
		reasons[dest.ID] = f.reason
	}
	ordinary := func(_ int, object map[string]any) {
		object["conn"] = map[string]any{"server_name": "api.example.com", "server_port": 443}
	}
	want := e.publish(t, httpKind, 10, ordinary)
	poison := storeUnchecked(t, e, `{"conn":{"server_name":"`+strings.Repeat("a", 1_000_000)+`","server_port":0}}`)
	want = append(want, e.publish(t, httpKind, 10, ordinary)...)

	got := e.sink.waitFor(t, "every ordinary event on every route", func(r []sinks.Record) bool { return len(r) >= len(routes)*len(want) })
	count := map[string]int{}
	for _, r := range got {
		count[r.ID]++
	}
	for _, id := range want {
		if count[id] != len(routes) {
			t.Errorf("event %s delivered %d times, want once per route (%d)", id, count[id], len(routes))
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
	if info.State.Msgs != uint64(len(routes)) {
		t.Fatalf("%d dead letters, want %d: one per route", info.State.Msgs, len(routes))
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

// TestSelectRefusesOverLongField gives a selector a stored event whose
// field the filter reads is longer than the catalogue allows: it is not
// evaluated, and the error names the field and its limit. A source that
// does not read the field takes the event as usual.
func TestSelectRefusesOverLongField(t *testing.T) {
	env, cache := selEnv(t)
	data := selEnvelope(selHTTP, `{"conn":{"server_name":"`+strings.Repeat("a", 254)+`","server_port":443}}`)
	s := selNew(t, env, cache, store.Source{Type: selHTTP, Filter: `ev.conn.server_name != ""`})
	_, keep, err := s.Select(context.Background(), data, nil)
	if keep || !errors.Is(err, filters.ErrFieldTooLong) || errors.Is(err, pipeline.ErrMalformedEvent) {
		t.Fatalf("Select = %v, %v; want ErrFieldTooLong", keep, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "object.conn.server_name") || !strings.Contains(msg, "limit of 253 bytes") {
		t.Errorf("error %q does not name the field and its limit", msg)
	}
	other := selNew(t, env, cache, store.Source{Type: selHTTP, Filter: `ev.conn.server_port == 443`})
	if _, keep, err := other.Select(context.Background(), data, nil); !keep || err != nil {
		t.Errorf("a filter on another field: Select = %v, %v; want the event kept", keep, err)
	}
}
