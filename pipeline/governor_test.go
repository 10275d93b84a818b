package pipeline

import (
	"runtime/metrics"
	"testing"
	"time"
)

// schedHistogram is a histogram of scheduling latencies as the runtime
// gives them: buckets in seconds, the last unbounded.
func schedHistogram(counts ...uint64) *metrics.Float64Histogram {
	return &metrics.Float64Histogram{
		Counts:  counts,
		Buckets: []float64{0, 0.001, 0.005, 0.02, 0.1, posInf()},
	}
}

func posInf() float64 { inf := 1.0; return inf / 0 }

func TestQuantileSince(t *testing.T) {
	h := schedHistogram(100, 10, 5, 2, 1)
	if q, n := quantileSince(h, nil, 0.99); n != 118 || q != 100*time.Millisecond {
		t.Fatalf("p99 of everything: %s of %d, want 100ms of 118", q, n)
	}
	// Since a read that had seen all but three runs of 15 ms.
	if q, n := quantileSince(h, []uint64{100, 10, 2, 2, 1}, 0.99); n != 3 || q != 20*time.Millisecond {
		t.Fatalf("p99 since: %s of %d, want 20ms of 3", q, n)
	}
	// The unbounded bucket answers with its lower bound.
	if q, _ := quantileSince(schedHistogram(0, 0, 0, 0, 5), nil, 0.5); q != 100*time.Millisecond {
		t.Fatalf("p50 in the last bucket: %s, want 100ms", q)
	}
	if q, n := quantileSince(h, h.Counts, 0.99); q != 0 || n != 0 {
		t.Fatalf("nothing since: %s of %d", q, n)
	}
}

// TestGovernorYieldsTheCPU: runs waiting over the target halve the
// delivery slots down to the least, a quiet window narrows nothing, and
// short waits widen them back to the most by a quarter at a time.
func TestGovernorYieldsTheCPU(t *testing.T) {
	slots := newFairShares(64)
	var counts []uint64
	g := &governor{slots: slots, most: 64, least: 4, target: 10 * time.Millisecond, limit: 64,
		read: func() *metrics.Float64Histogram { return schedHistogram(counts...) }}
	var set []int
	g.set = func(n int) { set = append(set, n) }
	counts = []uint64{0, 0, 0, 0, 0}
	g.prev = append(g.prev[:0], counts...)
	step := func(fast, slow uint64) int {
		c := append([]uint64(nil), counts...)
		c[0] += fast // under 1 ms
		c[4] += slow // 20 to 100 ms
		counts = c
		g.step()
		slots.mu.Lock()
		defer slots.mu.Unlock()
		return slots.slots
	}
	if n := step(100, 10); n != 32 {
		t.Fatalf("slots after a window of slow runs: %d, want 32", n)
	}
	for range 4 {
		step(100, 10)
	}
	if n := step(100, 10); n != 4 {
		t.Fatalf("slots after many slow windows: %d, want the least, 4", n)
	}
	// Ten runs, all slow: too few to tell anything; nothing narrows, and
	// as the p99 is over half the target nothing widens either.
	if n := step(0, 10); n != 4 {
		t.Fatalf("slots after a window of ten runs: %d, want 4", n)
	}
	want := []int{5, 6, 7, 8, 10, 12, 15, 18, 22, 27, 33, 41, 51, 63, 64, 64}
	for i, w := range want {
		if n := step(1000, 0); n != w {
			t.Fatalf("slots after %d fast windows: %d, want %d (%v)", i+1, n, w, want)
		}
	}
	if len(set) != 6+1+len(want) || set[len(set)-1] != 64 {
		t.Fatalf("the slots reported: %v", set)
	}
}

// TestFairSharesNarrowed: narrowed slots admit no acquire until the
// batches holding slots are under the new number; widened, the waiting
// acquires go at once.
func TestFairSharesNarrowed(t *testing.T) {
	s := newFairShares(4)
	for range 3 {
		if !s.acquire(t.Context(), "A", nil) {
			t.Fatal("no slot")
		}
	}
	s.setSlots(2)
	got := acquireAsync(t, s, "A")
	waitFor(t, "the acquire waiting", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.waiting["A"] == 1 })
	s.release("A") // 2 held, of 2
	select {
	case <-got:
		t.Fatal("an acquire took a slot with the narrowed slots all held")
	case <-time.After(50 * time.Millisecond): // showing that nothing happens
	}
	s.setSlots(4)
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting acquire took no slot when the slots were widened")
	}
}
