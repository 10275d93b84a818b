package pipeline_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks"
)

// TestDeliverIgnoresReflectedAcknowledgements plays issue 23's reflected
// acknowledgement: a NATS client allowed to publish events publishes one
// of its own account with, as its reply subject, an event subject of
// another account. JetStream stores the event, then sends its
// acknowledgement to the reply subject, where the stream stores it too: a
// message on the other account's subject that no publisher of events
// wrote, without a Nats-Msg-Id. The other account's route neither
// delivers it nor dead-letters it, and delivers its own events as usual.
func TestDeliverIgnoresReflectedAcknowledgements(t *testing.T) {
	e := startDelivery(t, pipeline.DeliveryConfig{Linger: 20 * time.Millisecond})
	e.route(t, store.Source{Type: httpKind})
	dlq, err := e.js.Stream(e.ctx, pipeline.DLQStream)
	if err != nil {
		t.Fatal(err)
	}
	before, err := e.stream.Info(e.ctx)
	if err != nil {
		t.Fatal(err)
	}

	attacker := schemas.NewID(schemas.PrefixAccount)
	own := schemas.Event{ID: schemas.NewID(schemas.PrefixEvent), Type: httpKind, Timestamp: time.Now(), AccountID: attacker, Object: []byte(`{}`)}
	msg := nats.NewMsg(schemas.EventSubject(attacker, httpKind))
	msg.Reply = schemas.EventSubject(e.account, httpKind)
	msg.Header.Set(jetstream.MsgIDHeader, schemas.MsgID(attacker, own.ID))
	msg.Data = own.AppendJSON(nil)
	if err := e.js.Conn().PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	// The event and its reflected acknowledgement are both stored.
	check.Eventually(t, 10*time.Second, "the event and its reflected acknowledgement stored", func() (uint64, bool) {
		info, err := e.stream.Info(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		stored := info.State.Msgs - before.State.Msgs
		return stored, stored >= 2
	})

	want := e.publish(t, httpKind, 5, nil)
	got := e.sink.waitFor(t, "the account's own events", func(r []sinks.Record) bool { return len(r) >= len(want) })
	waitAllAcked(t, e)
	if len(got) != len(want) {
		t.Errorf("%d records delivered, want the account's %d events only", len(got), len(want))
	}
	wantLetters(t, e, dlq, 0)
}
