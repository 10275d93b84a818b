package pipeline_test

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/destinations"
	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
)

// The failing-destination tests (faults_*_e2e_test.go) deliver through the
// AWS emulator, inject its faults, and count events in (published) and out
// (read back from the emulator) by event_id.

// faultEnv is a delivery environment whose every destination writes to an
// AWS emulator.
type faultEnv struct {
	*deliveryEnv
	emu *emulatortest.Emulator
}

// startFaultEnv starts an emulator and a delivery environment writing to it.
func startFaultEnv(t *testing.T, cfg pipeline.DeliveryConfig) *faultEnv {
	t.Helper()
	return startFaultEnvOn(t, cfg, emulatortest.Start(t, emulator.Config{Seed: 1}))
}

// startFaultEnvOn starts a delivery environment writing to emu.
func startFaultEnvOn(t *testing.T, cfg pipeline.DeliveryConfig, emu *emulatortest.Emulator) *faultEnv {
	t.Helper()
	e := startDeliveryTo(t, cfg, destinations.Factory{Endpoint: emu.Endpoint}.New)
	return &faultEnv{deliveryEnv: e, emu: emu}
}

// emulatorTarget is a destination of the emulator: the resource its
// events go to.
type emulatorTarget struct {
	service  emulator.Service
	resource string // stream, delivery stream or log group
	dest     store.Destination
}

func (d emulatorTarget) String() string { return string(d.service) + "/" + d.resource }

// target creates the resource in the emulator and a destination writing to
// it, with the emulator's keys.
func (f *faultEnv) target(t *testing.T, svc emulator.Service, name string) emulatorTarget {
	t.Helper()
	auth := store.AWSAuth{Creds: &store.AWSCreds{AccessKeyID: emulatortest.AccessKeyID, SecretAccessKey: emulatortest.SecretAccessKey}}
	arn := func(resource string) string {
		return fmt.Sprintf("arn:aws:%s:%s:%s:%s", svc, f.emu.Region, emulator.DefaultAccountID, resource)
	}
	var (
		target store.Target
		err    error
	)
	switch svc {
	case emulator.ServiceKinesis:
		err = f.emu.CreateStream(name, 2)
		target.Kinesis = &store.KinesisTarget{Auth: auth, StreamARN: arn("stream/" + name)}
	case emulator.ServiceFirehose:
		err = f.emu.CreateDeliveryStream(name)
		target.Firehose = &store.FirehoseTarget{Auth: auth, DeliveryStreamARN: arn("deliverystream/" + name)}
	case emulator.ServiceLogs:
		err = f.emu.CreateLogGroup(name, 0)
		target.CloudWatchLogs = &store.CloudWatchLogsTarget{Auth: auth, LogGroupARN: arn("log-group:" + name)}
	}
	if err != nil {
		t.Fatal(err)
	}
	dest, err := f.store.CreateDestination(f.ctx, f.account, store.Destination{Target: target})
	if err != nil {
		t.Fatal(err)
	}
	return emulatorTarget{service: svc, resource: name, dest: dest}
}

// allTargets creates a Kinesis stream, a Firehose delivery stream and a
// log group named name, and a destination of each.
func (f *faultEnv) allTargets(t *testing.T, name string) []emulatorTarget {
	t.Helper()
	return []emulatorTarget{
		f.target(t, emulator.ServiceKinesis, name),
		f.target(t, emulator.ServiceFirehose, name),
		f.target(t, emulator.ServiceLogs, name),
	}
}

// received is what a destination holds: each event_id and how many copies,
// and when its first copy arrived.
type received struct {
	copies  map[string]int
	arrival map[string]time.Time
}

func newReceived() received {
	return received{copies: map[string]int{}, arrival: map[string]time.Time{}}
}

// add counts a record of the destination d: an envelope.
func (r received) add(t *testing.T, d emulatorTarget, data []byte, at time.Time) {
	t.Helper()
	head, _, err := schemas.ReadHeader(data)
	if err != nil {
		t.Fatalf("%s holds a record that is no envelope (%v): %.200s", d, err, data)
	}
	r.copies[head.ID]++
	if first, ok := r.arrival[head.ID]; !ok || at.Before(first) {
		r.arrival[head.ID] = at
	}
}

// addLogEvents counts the log events of a log stream of d.
func (r received) addLogEvents(t *testing.T, d emulatorTarget, events []emulator.LogEvent) {
	t.Helper()
	for _, ev := range events {
		r.add(t, d, []byte(ev.Message), time.UnixMilli(ev.IngestionTime))
	}
}

// received reads back every record the target holds; a CloudWatch Logs
// target's from the log stream of the subscription.
func (f *faultEnv) received(t *testing.T, d emulatorTarget, subscriptionID string) received {
	t.Helper()
	r := newReceived()
	switch d.service {
	case emulator.ServiceKinesis:
		records, err := f.emu.KinesisRecords(d.resource)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range records {
			r.add(t, d, rec.Data, rec.Arrival)
		}
	case emulator.ServiceFirehose:
		records, dropped, err := f.emu.FirehoseRecords(d.resource)
		if err != nil {
			t.Fatal(err)
		}
		if dropped > 0 {
			t.Fatalf("%s dropped %d records past its storage bounds", d, dropped)
		}
		for _, rec := range records {
			data, ok := bytes.CutSuffix(rec.Data, []byte("\n"))
			if !ok {
				t.Fatalf("%s holds a record without its newline: %.200s", d, rec.Data)
			}
			r.add(t, d, data, rec.Arrival)
		}
	case emulator.ServiceLogs:
		events, err := f.emu.LogEvents(d.resource, subscriptionID)
		if err != nil {
			t.Fatal(err)
		}
		r.addLogEvents(t, d, events)
	}
	return r
}

// putOperation is the operation that writes the target's records.
func putOperation(svc emulator.Service) string {
	switch svc {
	case emulator.ServiceKinesis:
		return "PutRecords"
	case emulator.ServiceFirehose:
		return "PutRecordBatch"
	}
	return "PutLogEvents"
}

// puts returns the counters of the target's put operation.
func (f *faultEnv) puts(d emulatorTarget) emulator.OperationCounters {
	return f.emu.Counters(d.service, d.resource).ByOperation[putOperation(d.service)]
}

// waitAccepted waits until the emulator has accepted at least n records of
// the target, for at most within, polling its counters.
func (f *faultEnv) waitAccepted(t *testing.T, d emulatorTarget, n int64, within time.Duration) {
	t.Helper()
	check.Eventually(t, within, fmt.Sprintf("%s to accept %d records", d, n), func() (string, bool) {
		got := f.puts(d).RecordsAccepted
		return fmt.Sprintf("%d records accepted", got), got >= n
	})
}

// tally compares the events published with the records a destination
// holds.
type tally struct {
	in, out    int // events published; records held
	missing    int // events published and not held
	duplicates int // records held beyond the first of their event
	unexpected int // records of no event published
}

func (c tally) String() string {
	return fmt.Sprintf("in %d, out %d, missing %d, duplicates %d, unexpected %d", c.in, c.out, c.missing, c.duplicates, c.unexpected)
}

// count tallies the held records against the ids published.
func count(published []string, held received) tally {
	c := tally{in: len(published)}
	want := make(map[string]bool, len(published))
	for _, id := range published {
		want[id] = true
		if held.copies[id] == 0 {
			c.missing++
		}
	}
	for id, n := range held.copies {
		c.out += n
		c.duplicates += n - 1
		if !want[id] {
			c.unexpected += n
		}
	}
	return c
}

// publishNow publishes n sampled events of the kind, stamped now (the
// sampler's own times are not: CloudWatch Logs refuses events more than 2
// hours away from now), edited by edit when not nil, and returns their ids.
func (f *faultEnv) publishNow(t *testing.T, kind string, n int, edit func(i int, ev *schemas.Event)) []string {
	t.Helper()
	sampler := schemas.NewSampler(uint64(n))
	ids := make([]string, 0, n)
	const chunk = 1000
	for start := 0; start < n; start += chunk {
		events := make([]schemas.Event, min(chunk, n-start))
		for j := range events {
			ev, err := sampler.Event(kind)
			if err != nil {
				t.Fatal(err)
			}
			ev.ID, ev.AccountID, ev.Timestamp = "", f.account, time.Now()
			if edit != nil {
				edit(start+j, &ev)
			}
			events[j] = ev
		}
		for _, res := range f.prod.Publish(f.ctx, events...) {
			if res.Err != nil {
				t.Fatalf("publishing: %v", res.Err)
			}
			ids = append(ids, res.EventID)
		}
	}
	return ids
}

// published is an event a pacedPublisher published, and when.
type published struct {
	id string
	at time.Time
}

// pacedPublisher publishes a few events of a kind at a steady pace until
// stopped.
type pacedPublisher struct {
	stop chan struct{}
	done chan struct{}

	mu     sync.Mutex
	events []published
	err    error
}

// startPublishing publishes perTick events of the kind, stamped now, every
// tick, until stop.
func (f *faultEnv) startPublishing(kind string, perTick int, tick time.Duration) *pacedPublisher {
	p := &pacedPublisher{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		sampler := schemas.NewSampler(13)
		ticker := time.NewTicker(tick)
		defer ticker.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-f.ctx.Done():
				return
			case <-ticker.C:
			}
			events := make([]schemas.Event, perTick)
			for i := range events {
				ev, err := sampler.Event(kind)
				if err != nil {
					p.fail(err)
					return
				}
				ev.ID, ev.AccountID, ev.Timestamp = "", f.account, time.Now()
				events[i] = ev
			}
			at := time.Now()
			for _, res := range f.prod.Publish(f.ctx, events...) {
				if res.Err != nil {
					p.fail(res.Err)
					return
				}
				p.mu.Lock()
				p.events = append(p.events, published{id: res.EventID, at: at})
				p.mu.Unlock()
			}
		}
	}()
	return p
}

func (p *pacedPublisher) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.err = err
}

// end stops publishing and returns every event published.
func (p *pacedPublisher) end(t *testing.T) []published {
	t.Helper()
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		t.Fatalf("publishing: %v", p.err)
	}
	return slices.Clone(p.events)
}

// idsOf returns the ids of published events.
func idsOf(events []published) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = ev.id
	}
	return out
}
