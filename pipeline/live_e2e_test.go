package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/destinations"
	"github.com/sluicehq/sluice/internal/kinesalitetest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
)

// takeEffect is how soon a change of the configuration must show in
// delivery.
const takeEffect = 2 * time.Second

// flowEvent is an event the flow published: its kind and port, and when
// its publication started.
type flowEvent struct {
	id, kind string
	port     int
	start    time.Time
}

// flow publishes events of two kinds and four ports until stopped.
type flow struct {
	stop chan struct{}
	done chan struct{}

	mu     sync.Mutex
	events []flowEvent
	err    error
}

// startFlow publishes a round of events every 10 ms: HTTP requests on 443
// and 80, TCP connections on 22 and 5432.
func startFlow(e *deliveryEnv) *flow {
	f := &flow{stop: make(chan struct{}), done: make(chan struct{})}
	round := []struct {
		kind string
		port int
	}{{httpKind, 443}, {httpKind, 80}, {tcpKind, 22}, {tcpKind, 5432}}
	go func() {
		defer close(f.done)
		sampler := schemas.NewSampler(11)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-f.stop:
				return
			case <-e.ctx.Done():
				return
			case <-tick.C:
			}
			events := make([]schemas.Event, len(round))
			for i, r := range round {
				ev, err := sampler.Event(r.kind)
				if err == nil {
					ev.AccountID = e.account
					ev.Object, err = withPort(ev.Object, r.port)
				}
				if err != nil {
					f.fail(err)
					return
				}
				events[i] = ev
			}
			start := time.Now()
			for i, res := range e.prod.Publish(e.ctx, events...) {
				if res.Err != nil {
					f.fail(res.Err)
					return
				}
				f.mu.Lock()
				f.events = append(f.events, flowEvent{id: res.EventID, kind: round[i].kind, port: round[i].port, start: start})
				f.mu.Unlock()
			}
		}
	}()
	return f
}

func (f *flow) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// end stops the flow and returns what it published.
func (f *flow) end(t *testing.T) []flowEvent {
	t.Helper()
	close(f.stop)
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		t.Fatalf("publishing: %v", f.err)
	}
	return f.events
}

// withPort sets object.conn.server_port.
func withPort(object json.RawMessage, port int) (json.RawMessage, error) {
	var o map[string]any
	if err := json.Unmarshal(object, &o); err != nil {
		return nil, err
	}
	setPort(port)(0, o)
	return json.Marshal(o)
}

// pause lets the flow run for d.
func pause(ctx context.Context, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}

// TestDeliverLiveChangesToKinesis changes the configuration four times
// while events flow into kinesalite: a filter changed, a source added, a
// destination added, a subscription deleted. Each change must show in
// delivery within 2 s, and no event that every configuration since its
// publication selects may be lost.
func TestDeliverLiveChangesToKinesis(t *testing.T) {
	if testing.Short() {
		t.Skip("runs events through kinesalite for about 15 s")
	}
	kl := kinesalitetest.Start(t)
	for _, kv := range kl.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	e := startDeliveryTo(t, pipeline.DeliveryConfig{Linger: 50 * time.Millisecond}, destinations.New)
	a, b := kinesisDestination(t, e, kl, "live-a"), kinesisDestination(t, e, kl, "live-b")
	// sub1: HTTPS requests, the conn group only, to a.
	sub1 := e.subscribe(t, []string{a.ID}, store.Source{Type: httpKind, Filter: "ev.conn.server_port == 443", Fields: []string{"conn"}})
	// sub2: every TCP connection to b.
	sub2 := e.subscribe(t, []string{b.ID}, store.Source{Type: tcpKind})
	// sub3: SSH connections to a.
	sub3 := e.subscribe(t, []string{a.ID}, store.Source{Type: tcpKind, Filter: "ev.conn.server_port == 22"})

	var c store.Destination
	// selects says whether the configuration after the first epoch changes
	// sends an event of the kind and port to a destination.
	selects := func(epoch int, dest string, kind string, port int) bool {
		http, tcp := kind == httpKind, kind == tcpKind
		switch dest {
		case a.ID:
			return http && port == map[bool]int{true: 443, false: 80}[epoch < 1] || tcp && port == 22 && epoch < 4
		case b.ID:
			return tcp || http && epoch >= 2
		case c.ID:
			return epoch >= 3 && (tcp || http)
		}
		return false
	}
	changes := []struct {
		what string
		do   func() error
	}{
		{"sub1's filter changed to port 80", func() error {
			_, err := e.store.UpdateSubscription(e.ctx, e.account, sub1.ID, func(s *store.Subscription) error {
				s.Sources[0].Filter = "ev.conn.server_port == 80"
				return nil
			})
			return err
		}},
		{"HTTP requests added to sub2's sources", func() error {
			_, err := e.store.UpdateSubscription(e.ctx, e.account, sub2.ID, func(s *store.Subscription) error {
				s.Sources = append(s.Sources, store.Source{Type: httpKind})
				return nil
			})
			return err
		}},
		{"destination c added to sub2", func() error {
			c = kinesisDestination(t, e, kl, "live-c")
			_, err := e.store.UpdateSubscription(e.ctx, e.account, sub2.ID, func(s *store.Subscription) error {
				s.DestinationIDs = append(s.DestinationIDs, c.ID)
				return nil
			})
			return err
		}},
		{"sub3 deleted", func() error {
			_, err := e.store.DeleteSubscription(e.ctx, e.account, sub3.ID)
			return err
		}},
	}

	const phase = 2500 * time.Millisecond
	f := startFlow(e)
	at := make([]time.Time, len(changes)) // when each change was made
	for i, ch := range changes {
		pause(e.ctx, phase)
		if err := ch.do(); err != nil {
			f.end(t)
			t.Fatalf("%s: %v", ch.what, err)
		}
		at[i] = time.Now()
		t.Logf("%s", ch.what)
	}
	pause(e.ctx, phase)
	published := f.end(t)
	waitAllAckedWithin(t, e, time.Minute)

	// epoch is the number of changes made before the event's publication
	// started.
	epoch := func(ev flowEvent) int {
		n := 0
		for _, ts := range at {
			if !ev.start.Before(ts) {
				n++
			}
		}
		return n
	}
	for _, d := range []store.Destination{a, b, c} {
		got := map[string]int{}
		for _, r := range kl.ReadAll(t, d.Target.Kinesis.StreamARN) {
			got[r.PartitionKey]++
			if strings.Contains(string(r.Data), `"event_type":"`+httpKind) && d.ID == a.ID {
				checkDelivered(t, r, []string{"conn"})
			}
		}
		var selected, missing, unwanted, duplicates int
		for _, ev := range published {
			k := epoch(ev)
			// Selected by every configuration since it was published: it
			// must arrive, unless the change that selected it is younger
			// than takeEffect at its publication.
			always := true
			for j := k; j <= len(changes); j++ {
				always = always && selects(j, d.ID, ev.kind, ev.port)
			}
			settled := k == 0 || ev.start.Sub(at[k-1]) >= takeEffect
			if always && (settled || selects(k-1, d.ID, ev.kind, ev.port)) {
				selected++
				if got[ev.id] == 0 {
					missing++
					t.Errorf("%s: %s %s:%d published in epoch %d is missing", d.ID, ev.id, ev.kind, ev.port, k)
				}
			}
			// Selected by no configuration since it was published, and
			// published takeEffect after the last change: it must not.
			never := true
			for j := k; j <= len(changes); j++ {
				never = never && !selects(j, d.ID, ev.kind, ev.port)
			}
			if never && settled && got[ev.id] > 0 {
				unwanted++
				t.Errorf("%s: %s %s:%d published %v after change %d was delivered", d.ID, ev.id, ev.kind, ev.port, ev.start.Sub(at[k-1]).Round(time.Millisecond), k)
			}
			duplicates += max(got[ev.id]-1, 0)
		}
		t.Logf("%s: %d published, %d records, %d certainly selected, %d missing, %d delivered against the configuration, %d duplicates",
			d.ID, len(published), sum(got), selected, missing, unwanted, duplicates)
		if duplicates > 0 {
			t.Errorf("%s: %d duplicates in a run without failures", d.ID, duplicates)
		}
		if selected == 0 {
			t.Errorf("%s: no event was certainly selected; the test checks nothing", d.ID)
		}
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// kinesisDestination creates a stream in kinesalite and a destination
// writing to it.
func kinesisDestination(t *testing.T, e *deliveryEnv, kl *kinesalitetest.Server, name string) store.Destination {
	t.Helper()
	d, err := e.store.CreateDestination(e.ctx, e.account, store.Destination{Target: store.Target{Kinesis: &store.KinesisTarget{
		Auth:      store.AWSAuth{Creds: &store.AWSCreds{AccessKeyID: kinesalitetest.AccessKeyID, SecretAccessKey: kinesalitetest.SecretAccessKey}},
		StreamARN: kl.CreateStream(t, name, 2),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// subscribe creates a subscription and waits for the consumers of its
// routes.
func (e *deliveryEnv) subscribe(t *testing.T, destinationIDs []string, sources ...store.Source) store.Subscription {
	t.Helper()
	sub, err := e.store.CreateSubscription(e.ctx, e.account, store.Subscription{Sources: sources, DestinationIDs: destinationIDs})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range destinationIDs {
		e.waitConsumer(t, pipeline.ConsumerName(sub.ID, id))
	}
	return sub
}
