package pipeline_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks"
)

// TestDeliverPoisonEventDeadLetteredOnce stores, between ordinary events,
// one event no filter can evaluate, as a version of sluice that did not
// limit field sizes could have stored it: a million-byte server name and
// port 0. Three routes' filters fail on it, two because the server name is
// over its limit (it is not evaluated at all) and one on a division by
// zero. A second one, published past the producer, gives conn.server_name
// and conn.server_port twice, a third conn itself twice, which the filters
// would read differently from a reader downstream. Each route dead-letters
// each of them exactly once with the reason and acknowledges it; none is
// ever redelivered, and every other event is delivered on every route.
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
	twice := map[string]bool{
		storeUnchecked(t, e, `{"conn":{"server_name":"allowed.example.com","server_port":443,"server_name":"internal.example.org","server_port":80}}`):          true,
		storeUnchecked(t, e, `{"conn":{"server_name":"allowed.example.com","server_port":443},"conn":{"server_name":"internal.example.org","server_port":80}}`): true,
	}
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
	for id := range twice {
		if count[id] != 0 {
			t.Errorf("event %s, with names given twice, was delivered %d times", id, count[id])
		}
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
	if want := uint64(len(routes) * (1 + len(twice))); info.State.Msgs != want {
		t.Fatalf("%d dead letters, want %d: one per route and poison event", info.State.Msgs, want)
	}
	seen := map[string]bool{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		msg, err := dlq.GetMsg(e.ctx, seq)
		if err != nil {
			t.Fatalf("dead letter %d: %v", seq, err)
		}
		dest := msg.Header.Get(pipeline.HeaderDLQDestinationID)
		why := msg.Header.Get(pipeline.HeaderDLQMessage)
		id := msg.Header.Get(pipeline.HeaderDLQEventID)
		if (id != poison && !twice[id]) || msg.Header.Get(pipeline.HeaderDLQClass) != "filter" {
			t.Errorf("dead letter %d: event %s, class %s; want a poison event, class filter", seq, id, msg.Header.Get(pipeline.HeaderDLQClass))
		}
		reason := reasons[dest]
		if twice[id] {
			reason = "appears twice"
		}
		if !strings.Contains(why, reason) {
			t.Errorf("dead letter of event %s for destination %s says %q, want it to say %q", id, dest, why, reason)
		}
		if seen[dest+" "+id] {
			t.Errorf("two dead letters of event %s for destination %s", id, dest)
		}
		seen[dest+" "+id] = true
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
	msg.Header.Set(jetstream.MsgIDHeader, schemas.MsgID(ev.AccountID, ev.ID))
	msg.Data = ev.AppendJSON(nil)
	if _, err := e.js.PublishMsg(e.ctx, msg); err != nil {
		t.Fatalf("storing the unchecked event: %v", err)
	}
	return ev.ID
}
