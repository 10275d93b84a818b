package loadgen

import (
	"context"
	"fmt"
	"math/bits"
	"strconv"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks"
)

// Event ids of the load benchmark: "ev_", a token of the run, then the
// event's sequence number in seqDigits decimal digits, so that the sink's
// side can tell which event a record is without a map of every id.
const (
	runTokenLen = 27 - seqDigits
	seqDigits   = 16
)

// loadEventID returns the event_id of event seq of the run.
func loadEventID(token string, seq uint64) string {
	b := make([]byte, 0, len(schemas.PrefixEvent)+27)
	b = append(b, schemas.PrefixEvent...)
	b = append(b, token...)
	var digits [seqDigits]byte
	n := strconv.AppendUint(digits[:0], seq, 10)
	for range seqDigits - len(n) {
		b = append(b, '0')
	}
	return string(append(b, n...))
}

// seqOf returns the sequence number of an event id of the run, and false
// for an id that is not one.
func seqOf(token, id string) (uint64, bool) {
	if len(id) != len(schemas.PrefixEvent)+27 || id[len(schemas.PrefixEvent):len(schemas.PrefixEvent)+runTokenLen] != token {
		return 0, false
	}
	seq, err := strconv.ParseUint(id[len(id)-seqDigits:], 10, 64)
	return seq, err == nil
}

// newRunToken returns the run's part of its event ids: the leading
// characters of a fresh KSUID (its time and the start of its random
// part), so that two runs never share an id and every id is a KSUID that
// parses (a KSUID's leading characters bound its value).
func newRunToken() string {
	id := schemas.NewID(schemas.PrefixEvent)
	return id[len(schemas.PrefixEvent) : len(schemas.PrefixEvent)+runTokenLen]
}

// maxLatencyMillis is the highest latency the histograms tell apart;
// higher ones count in the last bucket (the maximum is kept exactly).
const maxLatencyMillis = 60_000

// latencyHistogram counts latencies by the millisecond: event_timestamp
// has millisecond precision, so finer buckets would tell nothing more.
type latencyHistogram struct {
	counts [maxLatencyMillis + 1]uint64
	n      uint64
	max    time.Duration
}

func (h *latencyHistogram) add(d time.Duration) {
	ms := max(0, min(d.Milliseconds(), maxLatencyMillis))
	h.counts[ms]++
	h.n++
	h.max = max(h.max, d)
}

// quantile returns the latency below which a share q of those counted
// fall, to the millisecond; zero when none were counted.
func (h *latencyHistogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n-1)) + 1
	var seen uint64
	for ms, c := range h.counts {
		if seen += c; seen >= rank {
			return time.Duration(ms) * time.Millisecond
		}
	}
	return h.max
}

// latencies returns the percentiles of the histogram.
func (h *latencyHistogram) latencies() Latencies {
	return Latencies{
		P50Millis: millis(h.quantile(0.50)),
		P95Millis: millis(h.quantile(0.95)),
		P99Millis: millis(h.quantile(0.99)),
		MaxMillis: millis(h.max),
	}
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// deliveryRecorder records what the sink accepted: each event once, by its
// sequence number in a bitmap (an eighth of a byte an event), duplicates,
// and the latency from event_timestamp to acceptance, overall and since the
// last interval.
type deliveryRecorder struct {
	token string

	mu         sync.Mutex
	seen       []uint64 // bit seq is set once event seq was accepted
	records    uint64   // records accepted, duplicates included
	distinct   uint64   // events accepted at least once
	duplicates uint64   // records of events accepted before
	unexpected uint64   // records of events the filter does not pass, or not of the run
	last       time.Time
	total      latencyHistogram
	interval   latencyHistogram
}

func newDeliveryRecorder(token string) *deliveryRecorder {
	return &deliveryRecorder{token: token}
}

// accepted records the records the sink accepted at time at.
func (r *deliveryRecorder) accepted(records []sinks.Record, results []sinks.Result, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, rec := range records {
		if i < len(results) && results[i].Status != sinks.Accepted {
			continue
		}
		r.records++
		r.last = at
		seq, ok := seqOf(r.token, rec.ID)
		if !ok || seq%2 != 0 {
			r.unexpected++
			continue
		}
		word, bit := seq/64, uint64(1)<<(seq%64)
		if word >= uint64(len(r.seen)) {
			r.seen = append(r.seen, make([]uint64, int(word)+1)...) // at least doubles
		}
		if r.seen[word]&bit != 0 {
			r.duplicates++
			continue
		}
		r.seen[word] |= bit
		r.distinct++
		latency := at.Sub(rec.Timestamp)
		r.total.add(latency)
		r.interval.add(latency)
	}
}

// recorderState is what the recorder has counted so far.
type recorderState struct {
	records, distinct, duplicates, unexpected uint64
	last                                      time.Time
}

func (r *deliveryRecorder) state() recorderState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return recorderState{r.records, r.distinct, r.duplicates, r.unexpected, r.last}
}

// takeInterval returns the latencies since the last call, and starts a
// new interval.
func (r *deliveryRecorder) takeInterval() Latencies {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.interval.latencies()
	r.interval = latencyHistogram{}
	return l
}

// totalLatencies returns the latencies of every event accepted.
func (r *deliveryRecorder) totalLatencies() Latencies {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total.latencies()
}

// missing returns how many of the passing events of the first published
// events (the even ones) were never accepted.
func (r *deliveryRecorder) missing(published uint64) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var got uint64
	for w, word := range r.seen {
		if uint64(w)*64 >= published {
			break
		}
		if end := uint64(w+1) * 64; end > published {
			word &= (uint64(1) << (published - uint64(w)*64)) - 1
		}
		got += uint64(bits.OnesCount64(word))
	}
	return uint64(passing(int(published))) - got
}

// recordingSink passes every batch to the sink it wraps, and tells the
// recorder which records it accepted, when the write returned.
type recordingSink struct {
	sink     sinks.Sink
	recorder *deliveryRecorder
}

func (s recordingSink) Limits() sinks.Limits { return s.sink.Limits() }

func (s recordingSink) Write(ctx context.Context, records []sinks.Record) ([]sinks.Result, error) {
	results, err := s.sink.Write(ctx, records)
	if err == nil {
		s.recorder.accepted(records, results, time.Now())
	}
	return results, err
}

// recordingFactory returns a SinkFactory making newSink's sinks, each
// wrapped to tell the recorder what it accepts.
func recordingFactory(newSink func(context.Context, store.Destination) (sinks.Sink, error), r *deliveryRecorder) func(context.Context, store.Destination) (sinks.Sink, error) {
	return func(ctx context.Context, d store.Destination) (sinks.Sink, error) {
		s, err := newSink(ctx, d)
		if err != nil {
			return nil, fmt.Errorf("making the sink of destination %s: %w", d.ID, err)
		}
		return recordingSink{sink: s, recorder: r}, nil
	}
}
