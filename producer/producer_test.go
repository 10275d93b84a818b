package producer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// streamEnv is a real in-process NATS server with the events stream.
type streamEnv struct {
	nc     *nats.Conn
	stream jetstream.Stream
}

func newStreamEnv(t *testing.T) *streamEnv {
	t.Helper()
	nc, js := natstest.Connect(t, natstest.Start(t))
	stream, err := pipeline.EnsureStream(t.Context(), js, pipeline.StreamConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return &streamEnv{nc: nc, stream: stream}
}

// newProducer returns a Producer on nc.
func newProducer(t *testing.T, nc *nats.Conn, cfg producer.Config) *producer.Producer {
	t.Helper()
	p, err := producer.New(nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// stored returns the number of messages in the stream.
func (e *streamEnv) stored(t *testing.T) uint64 {
	t.Helper()
	info, err := e.stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// sampleEvents returns n events of mixed kinds for the accounts, each with
// its own id. Sampling is slow under the race detector, so the objects
// repeat: a pool of sampled events is reused with new ids. Half the events
// are http_request_complete.v0 of a typical size (HTTPRequest1KB).
func sampleEvents(t *testing.T, n int, accounts ...string) []schemas.Event {
	t.Helper()
	// The other traffic kind, and audit kinds with lists of strings and
	// maps (the kinds with secrets or lists of objects are sluice's own,
	// which the producer refuses).
	kinds := []string{"tcp_connection_closed.v0", "certificate_authority_created.v0", "ip_policy_rule_updated.v0", "ssh_host_certificate_updated.v0"}
	s := schemas.NewSampler(7)
	var pool []schemas.Event
	for range 8 {
		for _, kind := range kinds {
			ev, err := s.Event(kind)
			if err != nil {
				t.Fatal(err)
			}
			pool = append(pool, s.HTTPRequest1KB(), ev)
		}
	}
	events := make([]schemas.Event, n)
	for i := range events {
		ev := pool[i%len(pool)]
		ev.ID = schemas.NewID(schemas.PrefixEvent)
		ev.AccountID = accounts[i%len(accounts)]
		events[i] = ev
	}
	return events
}

// checkStream reads the whole stream with an ordered consumer and checks
// that it holds exactly the events, each once, on its subject, with its
// account id and event id as Nats-Msg-Id.
func checkStream(t *testing.T, stream jetstream.Stream, events []schemas.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	want := make(map[string]*schemas.Event, len(events))
	for i := range events {
		want[events[i].ID] = &events[i]
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[string]bool, len(events))
	for len(seen) < len(events) {
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d events before the deadline", len(seen), len(events))
		}
		batch, err := cons.FetchNoWait(5000)
		if err != nil {
			t.Fatal(err)
		}
		for msg := range batch.Messages() {
			msgID := msg.Headers().Get(jetstream.MsgIDHeader)
			_, id, _ := strings.Cut(msgID, ":")
			ev, ok := want[id]
			switch {
			case !ok:
				t.Fatalf("the stream holds an unexpected event %q", msgID)
			case seen[id]:
				t.Fatalf("the stream holds event %s twice", id)
			case msg.Subject() != schemas.EventSubject(ev.AccountID, ev.Type):
				t.Fatalf("event %s is on %s, want %s", id, msg.Subject(), schemas.EventSubject(ev.AccountID, ev.Type))
			case msgID != schemas.MsgID(ev.AccountID, ev.ID):
				t.Fatalf("event %s: Nats-Msg-Id %q, want account_id:event_id", id, msgID)
			case !bytes.HasPrefix(msg.Data(), []byte(`{"event_id":"`+id+`"`)):
				t.Fatalf("event %s: Nats-Msg-Id differs from event_id in %.80s", id, msg.Data())
			}
			seen[id] = true
		}
		if err := batch.Error(); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(seen); n != len(events) {
		t.Fatalf("the stream holds %d of the %d events", n, len(events))
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(len(events)) {
		t.Fatalf("the stream holds %d messages, want %d", info.State.Msgs, len(events))
	}
}

// TestPublishStoresEachEventOnce publishes 30,000 events, most with
// PublishAsync and a chunk with Publish, and reads the stream back. Then it
// publishes every fifth event again, both ways: each is a duplicate and
// nothing more is stored. The 27,000 published with PublishAsync fill the
// 4,096 acknowledgements in flight (Config.MaxPending) six times over,
// from four publishers at once, and the 5,400 duplicates more than once:
// more took minutes under the race detector and proved nothing more, as
// would publishing all of them again.
func TestPublishStoresEachEventOnce(t *testing.T) {
	const total, chunk, resend = 30_000, 3_000, 5
	if testing.Short() {
		t.Skip("publishes 30,000 events")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	env := newStreamEnv(t)
	p := newProducer(t, env.nc, producer.Config{})
	accounts := []string{schemas.NewID(schemas.PrefixAccount), schemas.NewID(schemas.PrefixAccount), schemas.NewID(schemas.PrefixAccount)}
	events := sampleEvents(t, total, accounts...)
	var again []schemas.Event
	for i := 0; i < total; i += resend {
		again = append(again, events[i])
	}

	rounds := []struct {
		name      string
		events    []schemas.Event
		duplicate bool
	}{
		{"first", events, false},
		{"again", again, true},
	}
	for _, round := range rounds {
		evs := round.events
		split := len(evs) - len(evs)/(total/chunk)
		results := publishAll(ctx, t, p, evs[:split])
		results = append(results, p.Publish(ctx, evs[split:]...)...)
		for i, res := range results {
			switch {
			case res.Err != nil:
				t.Fatalf("%s: event %d: %v", round.name, i, res.Err)
			case res.EventID != evs[i].ID:
				t.Fatalf("%s: event %d: result for %s, want %s", round.name, i, res.EventID, evs[i].ID)
			case res.Duplicate != round.duplicate:
				t.Fatalf("%s: event %d: duplicate %t, want %t", round.name, i, res.Duplicate, round.duplicate)
			}
		}
		if n := env.stored(t); n != total {
			t.Fatalf("%s: the stream holds %d events, want %d", round.name, n, total)
		}
		if !round.duplicate {
			checkStream(t, env.stream, events)
		}
	}
}

// TestEventIDsAreUniquePerAccount publishes an event of account A, then
// one of account B with the same event_id, within the duplicate window:
// both are stored, each on its account's subject; the same event of A
// again, with Publish, PublishAsync or PublishEncoded, is a duplicate.
func TestEventIDsAreUniquePerAccount(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	env := newStreamEnv(t)
	p := newProducer(t, env.nc, producer.Config{})
	a, b := schemas.NewID(schemas.PrefixAccount), schemas.NewID(schemas.PrefixAccount)
	evA := sampleEvents(t, 1, a)[0]
	evB := evA
	evB.AccountID = b

	for _, step := range []struct {
		name      string
		publish   func(schemas.Event) producer.Result
		ev        schemas.Event
		duplicate bool
	}{
		{"A", func(ev schemas.Event) producer.Result { return p.Publish(ctx, ev)[0] }, evA, false},
		{"B, same id", func(ev schemas.Event) producer.Result { return p.Publish(ctx, ev)[0] }, evB, false},
		{"A again", func(ev schemas.Event) producer.Result { return p.Publish(ctx, ev)[0] }, evA, true},
		{"A again, async", func(ev schemas.Event) producer.Result {
			f, err := p.PublishAsync(ctx, ev)
			if err != nil {
				t.Fatal(err)
			}
			return f.Wait(ctx)
		}, evA, true},
		{"B again, encoded", func(ev schemas.Event) producer.Result {
			enc, err := schemas.Default().Encode(ev)
			if err != nil {
				t.Fatal(err)
			}
			return p.PublishEncoded(ctx, []schemas.Encoded{enc})[0]
		}, evB, true},
	} {
		res := step.publish(step.ev)
		if res.Err != nil || res.EventID != evA.ID || res.Duplicate != step.duplicate {
			t.Fatalf("%s: %+v, want event %s stored with duplicate %t", step.name, res, evA.ID, step.duplicate)
		}
	}
	for _, account := range []string{a, b} {
		subject := schemas.EventSubject(account, evA.Type)
		msg, err := env.stream.GetLastMsgForSubject(ctx, subject)
		if err != nil {
			t.Fatalf("account %s: no event on %s: %v", account, subject, err)
		}
		if !bytes.HasPrefix(msg.Data, []byte(`{"event_id":"`+evA.ID+`"`)) || !bytes.Contains(msg.Data, []byte(`"account_id":"`+account+`"`)) {
			t.Fatalf("account %s: stored %.200s", account, msg.Data)
		}
	}
	if n := env.stored(t); n != 2 {
		t.Fatalf("the stream holds %d events, want 2", n)
	}
}

// publishAll publishes the events with PublishAsync from a few goroutines,
// each starting its share of the events and then waiting for each, and
// returns the results in the order of the events.
func publishAll(ctx context.Context, t *testing.T, p *producer.Producer, events []schemas.Event) []producer.Result {
	t.Helper()
	const workers = 4
	results := make([]producer.Result, len(events))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			futures := make([]*producer.Future, 0, len(events)/workers+1)
			for i := w; i < len(events); i += workers {
				f, err := p.PublishAsync(ctx, events[i])
				if err != nil {
					results[i] = producer.Result{EventID: events[i].ID, Err: err}
				}
				futures = append(futures, f)
			}
			for j, f := range futures {
				if f != nil {
					results[w+j*workers] = f.Wait(ctx)
				}
			}
		})
	}
	wg.Wait()
	return results
}

// TestPublishReportsEachInvalidEvent publishes a batch mixing valid and
// invalid events: each invalid one gets its own error, and only the valid
// ones are stored.
func TestPublishReportsEachInvalidEvent(t *testing.T) {
	env := newStreamEnv(t)
	p := newProducer(t, env.nc, producer.Config{})
	account := schemas.NewID(schemas.PrefixAccount)
	valid := sampleEvents(t, 3, account)
	base := valid[0]
	base.Type, base.Principal = "tcp_connection_closed.v0", nil
	base.Object = json.RawMessage(`{"conn":{"client_ip":"192.0.2.1"}}`)

	tests := []struct {
		name  string
		edit  func(*schemas.Event) // nil: the event is valid
		check func(*testing.T, error)
	}{
		{name: "valid http_request_complete.v0"},
		{
			name: "unknown kind",
			edit: func(ev *schemas.Event) { ev.Type = "no_such_kind.v0" },
			check: func(t *testing.T, err error) {
				if !errors.Is(err, schemas.ErrUnknownKind) {
					t.Errorf("error %v does not wrap ErrUnknownKind", err)
				}
			},
		},
		{name: "valid tcp_connection_closed.v0"},
		{
			name:  "wrong field type",
			edit:  func(ev *schemas.Event) { ev.Object = json.RawMessage(`{"conn":{"client_ip":42}}`) },
			check: fieldError("object.conn.client_ip"),
		},
		{
			name: "filterable field over its limit",
			edit: func(ev *schemas.Event) {
				ev.Object = json.RawMessage(`{"conn":{"server_name":"` + strings.Repeat("a", 1_000_000) + `"}}`)
			},
			check: fieldError("object.conn.server_name"),
		},
		{
			name:  "bad account id",
			edit:  func(ev *schemas.Event) { ev.AccountID = "ac_nope" },
			check: fieldError("account_id"),
		},
		{
			name:  "bad event id",
			edit:  func(ev *schemas.Event) { ev.ID = "ev_7" },
			check: fieldError("event_id"),
		},
		{name: "valid http_request_complete.v0 again"},
	}
	events := make([]schemas.Event, len(tests))
	var want []schemas.Event
	for i, tt := range tests {
		if tt.edit == nil {
			events[i] = valid[len(want)]
			want = append(want, events[i])
			continue
		}
		events[i] = base
		events[i].ID = schemas.NewID(schemas.PrefixEvent)
		tt.edit(&events[i])
	}

	results := p.Publish(t.Context(), events...)
	if len(results) != len(events) {
		t.Fatalf("%d results for %d events", len(results), len(events))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := results[i].Err
			if tt.check == nil {
				if err != nil || results[i].Duplicate || results[i].EventID != events[i].ID {
					t.Fatalf("valid event: result %+v", results[i])
				}
				return
			}
			if err == nil {
				t.Fatal("invalid event: no error")
			}
			if errors.Is(err, producer.ErrNotStored) {
				t.Errorf("a validation error wraps ErrNotStored: %v", err)
			}
			tt.check(t, err)
		})
	}
	checkStream(t, env.stream, want)
}

// fieldError checks that an error is a *schemas.FieldError at the path.
func fieldError(path string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var fe *schemas.FieldError
		if !errors.As(err, &fe) {
			t.Fatalf("error %v (%T) is not a *schemas.FieldError", err, err)
		}
		if fe.Path != path {
			t.Errorf("field error at %q, want %q: %v", fe.Path, path, err)
		}
	}
}

// TestPublishWithoutStream publishes to a server that has no stream: every
// event comes back not stored, without waiting for the context to end.
func TestPublishWithoutStream(t *testing.T) {
	nc, _ := natstest.Connect(t, natstest.Start(t))
	p := newProducer(t, nc, producer.Config{AckTimeout: 500 * time.Millisecond})
	events := sampleEvents(t, 20, schemas.NewID(schemas.PrefixAccount))
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()

	tests := []struct {
		name    string
		publish func() []producer.Result
	}{
		{"Publish", func() []producer.Result { return p.Publish(ctx, events...) }},
		{"PublishAsync", func() []producer.Result { return publishAll(ctx, t, p, events) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results := tt.publish()
			if ctx.Err() != nil {
				t.Fatal("publishing waited until the context ended")
			}
			for i, res := range results {
				if !errors.Is(res.Err, producer.ErrNotStored) {
					t.Fatalf("event %d: error %v does not wrap ErrNotStored", i, res.Err)
				}
				if res.EventID != events[i].ID {
					t.Fatalf("event %d: result for %s, want %s", i, res.EventID, events[i].ID)
				}
			}
		})
	}
}

// TestPublishCancelled publishes with a context that is cancelled while no
// acknowledgement can come (a subscriber swallows every event, so JetStream
// never answers): the calls return at once with errors wrapping
// ErrNotStored and context.Canceled.
func TestPublishCancelled(t *testing.T) {
	nc, _ := natstest.Connect(t, natstest.Start(t))
	sub, err := nc.Subscribe(schemas.SubjectPrefix+">", func(*nats.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	events := sampleEvents(t, 3, schemas.NewID(schemas.PrefixAccount))

	tests := []struct {
		name    string
		pending int // acknowledgements in flight before the call: 1 fills MaxPending
		publish func(context.Context, *producer.Producer) producer.Result
	}{
		{
			name: "Wait",
			publish: func(ctx context.Context, p *producer.Producer) producer.Result {
				f, err := p.PublishAsync(context.Background(), events[0])
				if err != nil {
					return producer.Result{Err: err}
				}
				return f.Wait(ctx)
			},
		},
		{
			name:    "PublishAsync with every slot taken",
			pending: 1,
			publish: func(ctx context.Context, p *producer.Producer) producer.Result {
				f, err := p.PublishAsync(ctx, events[1])
				if err != nil {
					return producer.Result{Err: err}
				}
				return f.Wait(context.Background())
			},
		},
		{
			name:    "Publish with every slot taken",
			pending: 1,
			publish: func(ctx context.Context, p *producer.Producer) producer.Result {
				return p.Publish(ctx, events[1])[0]
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProducer(t, nc, producer.Config{MaxPending: 1, AckTimeout: time.Hour})
			for range tt.pending {
				if _, err := p.PublishAsync(t.Context(), events[2]); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			done := make(chan producer.Result, 1)
			go func() { done <- tt.publish(ctx, p) }()
			var res producer.Result
			select {
			case res = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("publishing with a cancelled context did not return")
			}
			if !errors.Is(res.Err, producer.ErrNotStored) || !errors.Is(res.Err, context.Canceled) {
				t.Fatalf("error %v does not wrap ErrNotStored and context.Canceled", res.Err)
			}
		})
	}
}

// TestPublishEncodedCancelledPublishesNothing publishes with a context that
// has already ended: nothing reaches the stream, and every result wraps
// ErrNotStored and context.Canceled.
func TestPublishEncodedCancelledPublishesNothing(t *testing.T) {
	env := newStreamEnv(t)
	p := newProducer(t, env.nc, producer.Config{})
	events := sampleEvents(t, 10, schemas.NewID(schemas.PrefixAccount))
	encoded := make([]schemas.Encoded, len(events))
	for i, ev := range events {
		enc, err := schemas.Default().Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		encoded[i] = enc
	}
	before := env.stored(t)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	results := p.PublishEncoded(ctx, encoded)

	if len(results) != len(events) {
		t.Fatalf("%d results for %d events", len(results), len(events))
	}
	for i, res := range results {
		if !errors.Is(res.Err, producer.ErrNotStored) || !errors.Is(res.Err, context.Canceled) {
			t.Fatalf("event %d: error %v does not wrap ErrNotStored and context.Canceled", i, res.Err)
		}
		if res.EventID != events[i].ID {
			t.Fatalf("event %d: result for %s, want %s", i, res.EventID, events[i].ID)
		}
	}
	// Flush makes the server read anything published before it, so a
	// publish that had gone out would have reached the stream.
	if err := env.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if after := env.stored(t); after != before {
		t.Fatalf("the stream holds %d events after a cancelled publish, want %d", after, before)
	}
}

// TestPublishRefusesKindsOnlySluiceEmits publishes an event of each kind
// sluice emits about its own resources, with Publish, PublishAsync and
// PublishEncoded of an Encoded built by hand: each is refused with
// schemas.ErrEmittedBySluice and nothing is stored. The same event made by
// schemas.Catalogue.EncodeBySluice, as sluice's management API makes its
// audit events, is stored.
func TestPublishRefusesKindsOnlySluiceEmits(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	env := newStreamEnv(t)
	p := newProducer(t, env.nc, producer.Config{})
	cat := schemas.Default()
	account := schemas.NewID(schemas.PrefixAccount)
	s := schemas.NewSampler(9)
	own := 0
	for _, k := range cat.Kinds() {
		if !k.EmittedBySluice {
			continue
		}
		own++
		ev, err := s.Event(k.Name)
		if err != nil {
			t.Fatal(err)
		}
		ev.AccountID = account
		refused := func(how string, err error) {
			t.Helper()
			if !errors.Is(err, schemas.ErrEmittedBySluice) || !strings.Contains(err.Error(), "emitted by sluice itself") {
				t.Errorf("%s of %s: error %v, want one wrapping schemas.ErrEmittedBySluice", how, k.Name, err)
			}
		}
		refused("Publish", p.Publish(ctx, ev)[0].Err)
		_, err = p.PublishAsync(ctx, ev)
		refused("PublishAsync", err)
		bySluice, err := cat.EncodeBySluice(ev)
		if err != nil {
			t.Fatal(err)
		}
		forged := schemas.Encoded{ID: bySluice.ID, Type: bySluice.Type, AccountID: bySluice.AccountID, Data: bySluice.Data}
		refused("PublishEncoded", p.PublishEncoded(ctx, []schemas.Encoded{forged})[0].Err)
		if n := env.stored(t); n != uint64(own-1) {
			t.Fatalf("after %s the stream holds %d events, want %d", k.Name, n, own-1)
		}
		if res := p.PublishEncoded(ctx, []schemas.Encoded{bySluice})[0]; res.Err != nil || res.Duplicate {
			t.Fatalf("sluice's own %s: %+v, want it stored", k.Name, res)
		}
	}
	if own == 0 {
		t.Fatal("the catalogue marks no kind as emitted by sluice")
	}
}
