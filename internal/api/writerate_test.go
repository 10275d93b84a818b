package api

import (
	"testing"
	"time"
)

func TestWriteRateBucketsPerAccount(t *testing.T) {
	w := newWriteRate(2, 3) // 3 at once, then one every 500 ms
	now := time.Unix(1_800_000_000, 0)
	for i := range 3 {
		if ok, _ := w.take("ac_b", now); !ok {
			t.Fatalf("change %d of the burst refused", i+1)
		}
	}
	ok, wait := w.take("ac_b", now)
	if ok || wait <= 0 || wait > 500*time.Millisecond {
		t.Fatalf("change past the burst: ok %v, wait %v; want refused with a wait of at most 500ms", ok, wait)
	}
	if ok, _ := w.take("ac_a", now); !ok {
		t.Fatal("another account's change refused while B is past its rate")
	}
	if ok, _ := w.take("ac_b", now.Add(wait)); !ok {
		t.Fatalf("B's change refused after the wait it was told (%v)", wait)
	}
}

func TestWriteRateForgetsFullBuckets(t *testing.T) {
	w := newWriteRate(1, 2)
	now := time.Unix(1_800_000_000, 0)
	w.take("ac_a", now)
	w.take("ac_b", now)
	w.take("ac_b", now)
	// A minute and a half on, both buckets are full again: the next
	// change's sweep forgets them, and keeps only the one it fills.
	later := now.Add(writeRateSweep + 30*time.Second)
	w.take("ac_c", later)
	if len(w.accounts) != 1 {
		t.Fatalf("%d buckets kept after a sweep, want 1 (only ac_c's)", len(w.accounts))
	}
}

func TestWriteRateUnbounded(t *testing.T) {
	w := newWriteRate(-1, 0)
	for range 1000 {
		if ok, _ := w.take("ac_a", time.Now()); !ok {
			t.Fatal("a change refused with the rate unbounded")
		}
	}
}
