package localapi

import (
	"encoding/json"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
)

// newFakeClock returns a clock tests move by hand.
func newFakeClock() *check.Clock { return check.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) }

func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-6*math.Max(1, math.Abs(want))
}

func TestMeter(t *testing.T) {
	t.Run("counts and gauge", func(t *testing.T) {
		m := NewMeter(newFakeClock().Now)
		for range 3 {
			m.ConnOpened()
		}
		m.ConnClosed(time.Second)
		m.HTTPDone(time.Millisecond)
		m.HTTPDone(time.Millisecond)
		s := m.Snapshot()
		if s.Conns.Count != 3 || s.Conns.Gauge != 2 || s.HTTP.Count != 2 {
			t.Fatalf("counts: %+v", s)
		}
	})

	t.Run("rates decay as EWMAs", func(t *testing.T) {
		clock := newFakeClock()
		m := NewMeter(clock.Now)
		for range 60 {
			m.HTTPDone(time.Millisecond)
		}
		if s := m.Snapshot(); s.HTTP.Rate1 != 0 {
			t.Fatalf("rate before the first tick = %v, want 0", s.HTTP.Rate1)
		}
		clock.Advance(tickInterval)
		s := m.Snapshot()
		for _, r := range []float64{s.HTTP.Rate1, s.HTTP.Rate5, s.HTTP.Rate15} {
			if !near(r, 12) {
				t.Fatalf("rates after the first tick: %+v, want 12/s each", s.HTTP)
			}
		}
		// A minute idle: twelve ticks of nothing, read lazily at once.
		clock.Advance(time.Minute)
		s = m.Snapshot()
		for i, minutes := range []float64{1, 5, 15} {
			want := 12 * math.Exp(-1/minutes)
			got := []float64{s.HTTP.Rate1, s.HTTP.Rate5, s.HTTP.Rate15}[i]
			if !near(got, want) {
				t.Errorf("rate%v after a minute idle = %v, want %v", minutes, got, want)
			}
		}
		if s.Conns.Rate1 != 0 {
			t.Errorf("conns rate1 = %v, want 0", s.Conns.Rate1)
		}
	})

	t.Run("percentiles", func(t *testing.T) {
		m := NewMeter(newFakeClock().Now)
		for i := 1; i <= 100; i++ {
			m.HTTPDone(time.Duration(i) * time.Millisecond)
			m.ConnClosed(time.Duration(i) * time.Second)
		}
		s := m.Snapshot()
		if want := 50.5 * float64(time.Millisecond); !near(s.HTTP.P50, want) {
			t.Errorf("http p50 = %v, want %v", s.HTTP.P50, want)
		}
		if want := 99.99 * float64(time.Millisecond); !near(s.HTTP.P99, want) {
			t.Errorf("http p99 = %v, want %v", s.HTTP.P99, want)
		}
		if want := 90.9 * float64(time.Second); !near(s.Conns.P90, want) {
			t.Errorf("conns p90 = %v, want %v", s.Conns.P90, want)
		}
	})

	t.Run("bounded sample", func(t *testing.T) {
		m := NewMeter(nil)
		for range 3 * reservoirSize {
			m.HTTPDone(time.Millisecond)
		}
		if n := len(m.httpTimes.values); n != reservoirSize {
			t.Fatalf("sample holds %d, want %d", n, reservoirSize)
		}
		if p := m.Snapshot().HTTP.P95; p != float64(time.Millisecond) {
			t.Fatalf("p95 = %v", p)
		}
	})

	t.Run("json", func(t *testing.T) {
		var m *Meter
		b, err := json.Marshal(m.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]map[string]float64
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		for group, keys := range map[string][]string{
			"conns": {"count", "gauge", "rate1", "rate5", "rate15", "p50", "p90", "p95", "p99"},
			"http":  {"count", "rate1", "rate5", "rate15", "p50", "p90", "p95", "p99"},
		} {
			if len(got[group]) != len(keys) {
				t.Errorf("%s has %v, want the keys %v", group, got[group], keys)
			}
			for _, k := range keys {
				if _, ok := got[group][k]; !ok {
					t.Errorf("%s.%s missing in %s", group, k, b)
				}
			}
		}
	})

	t.Run("concurrent use", func(t *testing.T) {
		m := NewMeter(nil)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 1000 {
					m.ConnOpened()
					m.HTTPDone(time.Microsecond)
					m.ConnClosed(time.Millisecond)
					_ = m.Snapshot()
				}
			})
		}
		wg.Wait()
		if s := m.Snapshot(); s.Conns.Count != 8000 || s.Conns.Gauge != 0 || s.HTTP.Count != 8000 {
			t.Fatalf("after concurrent use: %+v", s)
		}
	})
}
