package pipeline

import (
	"context"
	"runtime"
	"runtime/metrics"
	"time"
)

// DefaultYieldLatency is the scheduling latency (DeliveryConfig.YieldLatency)
// past which delivery gives up slots: a goroutine of the process that
// waits longer than this to run, at the 99th percentile, means the
// process has more work than CPUs.
const DefaultYieldLatency = 10 * time.Millisecond

const (
	// governEvery is how often the governor reads the latencies.
	governEvery = 100 * time.Millisecond
	// governMinRuns is the fewest goroutine runs in a window whose
	// latencies say anything; a quieter window narrows nothing.
	governMinRuns = 20
	// schedLatencies is the runtime's histogram of the time goroutines
	// spent ready to run before running.
	schedLatencies = "/sched/latencies:seconds"
)

// governor gives the process's management API, ingest and edge the CPU
// when delivery would take it all. Delivery is the one work of a process
// that can grow without a request waiting on it: an account's hundred
// routes keep every CPU busy encoding, writing and acknowledging, and a
// request of another account, which needs a handful of goroutines to run
// in turn (its connection, the NATS client's reader, the server's), waits
// behind them in the run queue, some hundreds of milliseconds on two
// CPUs. Fair shares divide delivery between accounts; the governor divides
// the CPU between delivery and the rest.
//
// Every governEvery it reads the Go scheduler's latencies of the window:
// past the target at the 99th percentile, it halves the delivery slots in
// use (down to least); under half the target, it widens them by a quarter
// (up to the configured DeliverySlots). Batches in delivery finish; new
// ones wait for a slot, their events in JetStream. The slots never go
// below least, so delivery always goes on, only at the rate the CPUs can
// give it beside everything else.
type governor struct {
	slots       *fairShares
	most, least int
	target      time.Duration
	// read returns the scheduler's latencies so far (cumulative).
	read func() *metrics.Float64Histogram
	// set, when not nil, is told the number of slots after each step.
	set func(int)

	prev  []uint64 // the counts of the last read
	limit int
}

func newGovernor(slots *fairShares, most int, target time.Duration) *governor {
	sample := []metrics.Sample{{Name: schedLatencies}}
	return &governor{
		slots: slots, most: most, least: min(most, 2*runtime.GOMAXPROCS(0)), target: target, limit: most,
		read: func() *metrics.Float64Histogram {
			metrics.Read(sample)
			return sample[0].Value.Float64Histogram()
		},
	}
}

// run governs until ctx ends, then gives the slots back their full number.
func (g *governor) run(ctx context.Context) {
	tick := time.NewTicker(governEvery)
	defer tick.Stop()
	defer g.slots.setSlots(g.most)
	g.prev = append(g.prev[:0], g.read().Counts...)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			g.step()
		}
	}
}

// step reads the latencies since the last step and sets the slots.
func (g *governor) step() {
	h := g.read()
	latency, runs := quantileSince(h, g.prev, 0.99)
	g.prev = append(g.prev[:0], h.Counts...)
	switch {
	case runs >= governMinRuns && latency > g.target:
		g.limit = max(g.least, g.limit/2)
	case latency < g.target/2 && g.limit < g.most:
		g.limit = min(g.most, g.limit+max(1, g.limit/4))
	}
	g.slots.setSlots(g.limit)
	if g.set != nil {
		g.set(g.limit)
	}
}

// quantileSince returns the q quantile of the observations h has over
// those counted in prev (h's counts at an earlier read; nil for none), as
// the upper bound of its bucket, and how many observations there were.
func quantileSince(h *metrics.Float64Histogram, prev []uint64, q float64) (time.Duration, uint64) {
	var total uint64
	for i, c := range h.Counts {
		total += c - at(prev, i)
	}
	if total == 0 {
		return 0, 0
	}
	want := uint64(q * float64(total))
	var seen uint64
	for i, c := range h.Counts {
		if seen += c - at(prev, i); seen > want || seen == total {
			bound := h.Buckets[i+1]
			if bound > float64(time.Hour/time.Second) { // +Inf: the bucket's lower bound
				bound = h.Buckets[i]
			}
			return time.Duration(bound * float64(time.Second)), total
		}
	}
	return 0, total
}

func at(counts []uint64, i int) uint64 {
	if i < len(counts) {
		return counts[i]
	}
	return 0
}
