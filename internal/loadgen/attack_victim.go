package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/internal/tail"
	"github.com/sluicehq/sluice/schemas"
)

// victimConcurrency bounds A's requests in flight: past it a batch that is
// due is not sent, and counted as such, rather than piling up.
const victimConcurrency = 64

// phaseFigures collects account A's figures during one phase.
type phaseFigures struct {
	mu        sync.Mutex
	ingest    latencyHistogram
	delivery  latencyHistogram
	codes     map[int]int
	requests  int
	notSent   int // batches due while victimConcurrency requests were in flight
	acked     int // events A got 202 for
	delivered int
}

func newPhaseFigures() *phaseFigures { return &phaseFigures{codes: map[int]int{}} }

// victim is account A: it publishes at a steady rate, each event's send
// time kept, and follows its destination to see them delivered.
type victim struct {
	api   *apiClient
	token string // the run's part of A's event ids
	rate  int
	batch int

	samples []schemas.Event // cycled through, each sent with its own id and time

	phase atomic.Pointer[phaseFigures] // the phase events are sent in; nil between phases

	mu        sync.Mutex
	sentAt    []time.Time     // by sequence number
	sentIn    []*phaseFigures // by sequence number
	acked     []bool          // by sequence number
	delivered []bool          // by sequence number
	audit     []deliveredAudit

	inFlight sync.WaitGroup
}

// deliveredAudit is an audit event A's destination received.
type deliveredAudit struct {
	kind string
	data []byte
}

func newVictim(api *apiClient, rate, batch int) *victim {
	s := schemas.NewSampler(sampleSeed)
	samples := make([]schemas.Event, 100)
	for i := range samples {
		samples[i] = s.HTTPRequest1KB()
	}
	return &victim{api: api, token: newRunToken(), rate: rate, batch: batch, samples: samples}
}

// publish sends a batch every batch/rate seconds until ctx ends, then
// waits for the requests in flight.
func (v *victim) publish(ctx context.Context) {
	defer v.inFlight.Wait()
	every := time.Duration(float64(time.Second) * float64(v.batch) / float64(v.rate))
	tick := time.NewTicker(every)
	defer tick.Stop()
	slots := make(chan struct{}, victimConcurrency)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		phase := v.phase.Load()
		select {
		case slots <- struct{}{}:
		default:
			if phase != nil {
				phase.mu.Lock()
				phase.notSent++
				phase.mu.Unlock()
			}
			continue
		}
		body, first := v.nextBatch(phase)
		v.inFlight.Add(1)
		go func() {
			defer v.inFlight.Done()
			defer func() { <-slots }()
			// A's requests outlive ctx by their own timeout: the last
			// ones sent are measured like the others.
			a := v.api.do(context.WithoutCancel(ctx), "POST", "/events", body, nil)
			v.record(phase, first, a)
		}()
	}
}

// nextBatch builds the next batch, stamped now, and keeps its events'
// send times; it returns the body and the first event's sequence number.
func (v *victim) nextBatch(phase *phaseFigures) ([]byte, uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	first := uint64(len(v.sentAt))
	now := time.Now()
	b := make([]byte, 0, v.batch*1100)
	b = append(b, '[')
	for i := range v.batch {
		seq := first + uint64(i)
		ev := v.samples[seq%uint64(len(v.samples))]
		ev.ID = loadEventID(v.token, seq)
		ev.Timestamp = now
		if i > 0 {
			b = append(b, ',')
		}
		b = appendRequestEvent(b, &ev)
		v.sentAt = append(v.sentAt, now)
		v.sentIn = append(v.sentIn, phase)
		v.acked = append(v.acked, false)
		v.delivered = append(v.delivered, false)
	}
	return append(b, ']'), first
}

// record counts the answer to the batch from first.
func (v *victim) record(phase *phaseFigures, first uint64, a answer) {
	if a.status == 202 {
		v.mu.Lock()
		for i := range v.batch {
			v.acked[first+uint64(i)] = true
		}
		v.mu.Unlock()
	}
	if phase == nil {
		return
	}
	phase.mu.Lock()
	defer phase.mu.Unlock()
	phase.requests++
	phase.codes[a.status]++
	if a.status != 0 {
		phase.ingest.add(a.took)
	}
	if a.status == 202 {
		phase.acked += v.batch
	}
}

// lastAcked returns the id of the latest event A got 202 for, or "".
func (v *victim) lastAcked() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	for seq := len(v.acked) - 1; seq >= 0; seq-- {
		if v.acked[seq] {
			return loadEventID(v.token, uint64(seq))
		}
	}
	return ""
}

// follow reads A's destination until ctx ends, counting each of A's
// events the first time it arrives and keeping the audit events.
func (v *victim) follow(ctx context.Context, reader tail.Reader) error {
	return reader.Read(ctx, func(rec tail.Record) error {
		var env struct {
			ID   string `json:"event_id"`
			Type string `json:"event_type"`
		}
		if err := json.Unmarshal(rec.Data, &env); err != nil {
			return fmt.Errorf("a record of A's destination is not an event: %w", err)
		}
		seq, ok := seqOf(v.token, env.ID)
		if !ok {
			if env.Type != "http_request_complete.v0" {
				v.mu.Lock()
				v.audit = append(v.audit, deliveredAudit{kind: env.Type, data: rec.Data})
				v.mu.Unlock()
			}
			return nil
		}
		v.mu.Lock()
		if seq >= uint64(len(v.delivered)) || v.delivered[seq] {
			v.mu.Unlock()
			return nil
		}
		v.delivered[seq] = true
		sent, phase := v.sentAt[seq], v.sentIn[seq]
		v.mu.Unlock()
		if phase != nil {
			phase.mu.Lock()
			phase.delivered++
			phase.delivery.add(rec.Time.Sub(sent))
			phase.mu.Unlock()
		}
		return nil
	})
}

// counts returns how many events A got 202 for, how many of those were
// delivered, and how many delivered events there are in all.
func (v *victim) counts() (acked, ackedDelivered, delivered int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for seq, a := range v.acked {
		if a {
			acked++
			if v.delivered[seq] {
				ackedDelivered++
			}
		}
		if v.delivered[seq] {
			delivered++
		}
	}
	return acked, ackedDelivered, delivered
}

// missingIn returns the events A got 202 for in the phase and that were
// not delivered.
func (v *victim) missingIn(phase *phaseFigures) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for seq, p := range v.sentIn {
		if p == phase && v.acked[seq] && !v.delivered[seq] {
			n++
		}
	}
	return n
}

// audits returns the audit events delivered so far.
func (v *victim) audits() []deliveredAudit {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]deliveredAudit(nil), v.audit...)
}
