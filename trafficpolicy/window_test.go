package trafficpolicy

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// referenceWindow is the sliding window as SlotDuration documents it,
// written the plain way: every admitted request's time kept, the window
// counted afresh for each request, retry-after found by trying whole
// seconds.
type referenceWindow struct {
	capacity int
	slots    int64
	admitted map[string][]int64
}

func (m *referenceWindow) count(key string, at int64) int {
	n := 0
	for _, t := range m.admitted[key] {
		if t/slotNanos > at/slotNanos-m.slots && t <= at {
			n++
		}
	}
	return n
}

func (m *referenceWindow) take(key string, now int64) (bool, int64) {
	if m.count(key, now) < m.capacity {
		m.admitted[key] = append(m.admitted[key], now)
		return true, 0
	}
	// The first whole second at which the count is under capacity. With
	// no arrival after now, the count only falls as time passes, so a
	// binary search over the seconds up to a window and a slot finds it.
	lo, hi := int64(1), m.slots*int64(SlotDuration/time.Second)+int64(SlotDuration/time.Second)
	for lo < hi {
		mid := (lo + hi) / 2
		if m.count(key, now+mid*int64(time.Second)) < m.capacity {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return false, lo
}

// TestWindowMatchesReference runs random arrivals (times, gaps from
// nanoseconds to past a window, several buckets) through windows of random
// capacities and rates (60s to 300s, and one run in ten up to 24h), and checks every decision and retry-after against
// the reference model, and that no rate/SlotDuration consecutive slots of
// a bucket hold more than capacity admitted requests.
func TestWindowMatchesReference(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 15))
		capacity := 1 + rng.IntN(12)
		if seed%10 == 0 { // now and then a larger one, with many slots to sum
			capacity = 50 + rng.IntN(200)
		}
		rate := time.Duration(6+rng.IntN(25)) * SlotDuration // 60s to 300s
		if seed%10 == 5 {
			// Now and then any rate, up to MaxRate.
			rate = time.Duration(6+rng.IntN(int(MaxRate/SlotDuration)-5)) * SlotDuration
		}
		w := newWindow(uint32(capacity), rate, MaxBuckets)
		ref := &referenceWindow{capacity: capacity, slots: int64(rate / SlotDuration), admitted: map[string][]int64{}}
		now := time.Date(2026, 11, 24, 23, 0, 0, 0, time.UTC).UnixNano() + rng.Int64N(int64(time.Hour))
		keys := []string{"a", "b", "c"}[:1+rng.IntN(3)]
		meanGap := rate / time.Duration(1+rng.IntN(4*capacity))
		for i := range 400 + 4*capacity {
			switch r := rng.IntN(100); {
			case r < 3: // a pause past the window
				now += int64(rate) + rng.Int64N(int64(rate))
			case r < 10: // at once
			default:
				now += rng.Int64N(2 * int64(meanGap))
			}
			key := keys[rng.IntN(len(keys))]
			gotOK, gotRetry := w.take([]byte(key), now)
			wantOK, wantRetry := ref.take(key, now)
			if gotOK != wantOK || gotRetry != wantRetry {
				t.Fatalf("seed %d, capacity %d, rate %v, request %d of %s at %v: admitted %v, retry-after %d; the reference says %v, %d",
					seed, capacity, rate, i, key, time.Unix(0, now).UTC(), gotOK, gotRetry, wantOK, wantRetry)
			}
		}
		for key, times := range ref.admitted {
			perSlot := map[int64]int{}
			for _, at := range times {
				perSlot[at/slotNanos]++
			}
			for first := range perSlot {
				n := 0
				for s := first; s < first+ref.slots; s++ {
					n += perSlot[s]
				}
				if n > capacity {
					t.Fatalf("seed %d: bucket %s admitted %d requests in the %d slots from %d, capacity %d", seed, key, n, ref.slots, first, capacity)
				}
			}
		}
	}
}

// TestWindowRetryAfterIsWhenAdmitted checks that a request sent retry-after
// seconds after a refused one is admitted, and one sent a second earlier
// is not.
func TestWindowRetryAfterIsWhenAdmitted(t *testing.T) {
	w := newWindow(2, time.Minute, 10)
	start := time.Date(2026, 1, 1, 12, 0, 3, 500_000_000, time.UTC).UnixNano()
	w.take([]byte("k"), start)
	w.take([]byte("k"), start)
	ok, retry := w.take([]byte("k"), start+int64(time.Second))
	if ok || retry != 56 { // the slot 12:00:00 leaves at 12:01:00; 12:00:04.5 + 56 s = 12:01:00.5
		t.Fatalf("third request: admitted %v, retry-after %d; want refused, 56", ok, retry)
	}
	later := start + int64(time.Second) + retry*int64(time.Second)
	if ok, _ := w.take([]byte("k"), later-int64(time.Second)); ok {
		t.Fatal("admitted a second before retry-after")
	}
	if ok, _ := w.take([]byte("k"), later); !ok {
		t.Fatal("refused at retry-after")
	}
}

// TestWindowBound checks that past the bound the bucket whose last
// admitted request is the oldest goes, and that expired buckets go first.
func TestWindowBound(t *testing.T) {
	const bound = 100
	w := newWindow(1, time.Minute, bound)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	for i := range 1000 {
		w.take(fmt.Appendf(nil, "key-%d", i), now)
	}
	// A shard with no bucket to forget takes one past the bound.
	if n := w.len(); n > bound+windowShards-1 {
		t.Fatalf("%d buckets held, bound %d", n, bound)
	}
	// The newest key of its shard is still counted: refused.
	if ok, _ := w.take([]byte("key-999"), now); ok {
		t.Fatal("the newest bucket was forgotten")
	}

	w = newWindow(1, time.Minute, 1000)
	for i := range 100 {
		w.take(fmt.Appendf(nil, "old-%d", i), now)
	}
	later := now + int64(2*time.Minute)
	for i := range 100 {
		w.take(fmt.Appendf(nil, "new-%d", i), later)
	}
	if n := w.len(); n > 100+windowShards {
		t.Fatalf("%d buckets held after the first 100 expired; want about 100", n)
	}
}

// TestWindowLoad floods one bucket at ten times its capacity for an hour
// of a fake clock and checks that each rate admits capacity requests.
func TestWindowLoad(t *testing.T) {
	const capacity, rate, windows = 1000, time.Minute, 60
	w := newWindow(capacity, rate, 10)
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	gap := int64(rate) / (10 * capacity)
	var admitted [windows]int
	for i := range int64(10 * capacity * windows) {
		now := start + i*gap
		if ok, _ := w.take([]byte("flood"), now); ok {
			admitted[(now-start)/int64(rate)]++
		}
	}
	total := 0
	for i, n := range admitted {
		total += n
		if n != capacity {
			t.Errorf("window %d admitted %d, want %d", i, n, capacity)
		}
	}
	t.Logf("sent %d requests at 10x capacity over %d windows of %v: admitted %d, %.4f of capacity per window",
		10*capacity*windows, windows, rate, total, float64(total)/float64(capacity*windows))
}

// TestWindowClockBack checks that a wall clock going back counts in the
// bucket's newest slot, and never admits past capacity.
func TestWindowClockBack(t *testing.T) {
	w := newWindow(2, time.Minute, 10)
	now := time.Date(2026, 1, 1, 12, 0, 30, 0, time.UTC).UnixNano()
	w.take([]byte("k"), now)
	back := now - int64(5*time.Minute)
	if ok, _ := w.take([]byte("k"), back); !ok {
		t.Fatal("the second request, with the clock back, was refused")
	}
	if ok, retry := w.take([]byte("k"), back); ok || retry < 60 {
		t.Fatalf("the third, with the clock back: admitted %v, retry-after %d; want refused, at least 60", ok, retry)
	}
	if ok, _ := w.take([]byte("k"), now+int64(time.Minute)); !ok {
		t.Fatal("refused a minute after, when both left the window")
	}
}

// TestWindowLongKeys checks that a key longer than maxKeyBytes, such as a
// header a hostile client made large, is held as its digest, so that a
// bucket's memory does not grow with the request, and that long keys
// differing only in their last byte are still buckets of their own.
func TestWindowLongKeys(t *testing.T) {
	w := newWindow(1, time.Minute, 1000)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	long := func(i int) []byte { return fmt.Appendf(bytes.Repeat([]byte("x"), 64<<10), "%03d", i) }
	for i := range 100 {
		if ok, _ := w.take(long(i), now); !ok {
			t.Fatalf("long key %d refused: it is a bucket of its own", i)
		}
	}
	if ok, _ := w.take(long(7), now); ok {
		t.Fatal("long key 7 admitted twice at capacity 1")
	}
	if ok, _ := w.take([]byte("short"), now); !ok {
		t.Fatal("a short key refused")
	}
	held := 0
	for i := range w.shards {
		for key := range w.shards[i].index {
			held++
			if len(key) > maxKeyBytes {
				t.Fatalf("a bucket holds a key of %d bytes, past %d", len(key), maxKeyBytes)
			}
		}
	}
	if held != 101 {
		t.Fatalf("%d buckets held, want 101", held)
	}
}
