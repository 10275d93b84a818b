package circuitbreaker

import (
	"math/rand/v2"
	"testing"
	"time"
)

// model is the breaker as the package documents it, written plainly: the
// outcomes of the closed breaker kept one by one, the window's counted
// by their bucket.
type model struct {
	cfg        Config
	bucketLen  int64
	outcomes   []outcome
	open       bool
	openUntil  int64
	probeSince int64
}

type outcome struct {
	at     int64
	failed bool
}

func (m *model) allow(now int64) Decision {
	switch {
	case !m.open:
		return Allow
	case now < m.openUntil:
		return Block
	case m.probeSince != 0 && now-m.probeSince < int64(m.cfg.TrippedDuration):
		return Block
	}
	m.probeSince = now
	return AllowWhileOpen
}

func (m *model) done(now int64, d Decision, failed bool) {
	switch d {
	case AllowWhileOpen:
		if !m.open {
			return
		}
		m.probeSince = 0
		if failed {
			m.openUntil = now + int64(m.cfg.TrippedDuration)
			return
		}
		m.open, m.outcomes = false, nil
	case Allow:
		if m.open {
			return
		}
		m.outcomes = append(m.outcomes, outcome{now, failed})
		oldest := now/m.bucketLen - int64(m.cfg.NumBuckets) + 1
		var total, bad int
		for _, o := range m.outcomes {
			if o.at/m.bucketLen >= oldest {
				total++
				if o.failed {
					bad++
				}
			}
		}
		if total >= int(m.cfg.VolumeThreshold) && float64(bad) >= m.cfg.ErrorThreshold*float64(total) {
			m.open, m.openUntil, m.probeSince, m.outcomes = true, now+int64(m.cfg.TrippedDuration), 0, nil
		}
	}
}

// TestBreakerFollowsTheModel drives the breaker and the model with the
// same random sequences of requests (several in flight, outcomes in any
// order, time moving by steps short and long) and compares every
// decision; each of the transitions (closed → open, open → probe, probe
// → closed, probe → open, a stale probe replaced) must occur.
func TestBreakerFollowsTheModel(t *testing.T) {
	seen := map[string]int{}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		cfg := Config{
			TrippedDuration: time.Duration(1+rng.IntN(5)) * time.Second,
			RollingWindow:   time.Duration(1+rng.IntN(10)) * time.Second,
			NumBuckets:      1 + rng.IntN(MaxBuckets),
			VolumeThreshold: uint32(rng.IntN(8)),
			ErrorThreshold:  []float64{0, 0.25, 0.5, 0.75, 1}[rng.IntN(5)],
		}
		if cfg.RollingWindow/time.Duration(cfg.NumBuckets) <= 0 {
			continue
		}
		b, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := &model{cfg: cfg, bucketLen: int64(cfg.RollingWindow) / int64(cfg.NumBuckets)}
		failRate := rng.Float64()
		now := int64(1_700_000_000) * int64(time.Second)
		type inFlight struct {
			d      Decision
			failed bool
		}
		var flight []inFlight
		for step := range 2000 {
			switch r := rng.IntN(10); {
			case r < 2:
				now += rng.Int64N(int64(50 * time.Millisecond))
			case r < 3:
				now += rng.Int64N(int64(3 * cfg.TrippedDuration))
			case r < 7 || len(flight) == 0:
				got, want := b.Allow(now), m.allow(now)
				if got != want {
					t.Fatalf("seed %d step %d %+v: Allow %v, the model says %v", seed, step, cfg, got, want)
				}
				if got != Block {
					flight = append(flight, inFlight{got, rng.Float64() < failRate})
				}
				seen[got.String()]++
			default:
				i := rng.IntN(len(flight))
				f := flight[i]
				flight = append(flight[:i], flight[i+1:]...)
				wasOpen := m.open
				b.Done(now, f.d, f.failed)
				m.done(now, f.d, f.failed)
				switch {
				case !wasOpen && m.open:
					seen["trip"]++
				case f.d == AllowWhileOpen && wasOpen && !m.open:
					seen["probe closes"]++
				case f.d == AllowWhileOpen && wasOpen && f.failed:
					seen["probe reopens"]++
				}
			}
		}
	}
	for _, s := range []string{"allow", "block", "allow_while_open", "trip", "probe closes", "probe reopens"} {
		if seen[s] == 0 {
			t.Errorf("no %q in any sequence: the sequences do not cover it", s)
		}
	}
}

// TestBreakerTransitions walks one breaker through its states.
func TestBreakerTransitions(t *testing.T) {
	b, err := New(Config{TrippedDuration: 5 * time.Second, RollingWindow: 10 * time.Second, NumBuckets: 10, VolumeThreshold: 4, ErrorThreshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	sec := int64(time.Second)
	now := 1000 * sec
	for i, failed := range []bool{true, false, true} {
		if d := b.Allow(now); d != Allow {
			t.Fatalf("request %d: %v", i, d)
		}
		b.Done(now, Allow, failed)
	}
	// Three requests, two failed: under the volume threshold.
	if d := b.Allow(now); d != Allow {
		t.Fatalf("under the volume: %v", d)
	}
	b.Done(now, Allow, false) // 4 requests, 2 failed: 50% trips it
	if d := b.Allow(now + sec); d != Block {
		t.Fatalf("after the trip: %v, want block", d)
	}
	if d := b.Allow(now + 5*sec); d != AllowWhileOpen {
		t.Fatalf("after tripped_duration: %v, want allow_while_open", d)
	}
	if d := b.Allow(now + 5*sec); d != Block {
		t.Fatalf("while a probe is in flight: %v, want block", d)
	}
	b.Done(now+5*sec, AllowWhileOpen, true)
	if d := b.Allow(now + 9*sec); d != Block {
		t.Fatalf("after a failed probe: %v, want block for another tripped_duration", d)
	}
	p := b.Allow(now + 10*sec)
	b.Done(now+10*sec, p, false)
	if p != AllowWhileOpen || b.Allow(now+10*sec) != Allow {
		t.Fatalf("a probe that succeeds closes the breaker: probe %v", p)
	}
	// Failures older than the window do not count.
	b.Done(now+10*sec, Allow, true)
	b.Done(now+10*sec, Allow, true)
	for i := range 3 {
		b.Done(now+21*sec+int64(i), Allow, false)
	}
	if d := b.Allow(now + 21*sec); d != Allow {
		t.Fatalf("old failures counted: %v", d)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{TrippedDuration: time.Second, RollingWindow: time.Second, NumBuckets: 10, ErrorThreshold: 0.5}
	for name, edit := range map[string]func(*Config){
		"no tripped duration": func(c *Config) { c.TrippedDuration = 0 },
		"no window":           func(c *Config) { c.RollingWindow = 0 },
		"129 buckets":         func(c *Config) { c.NumBuckets = 129 },
		"0 buckets":           func(c *Config) { c.NumBuckets = 0 },
		"threshold 50":        func(c *Config) { c.ErrorThreshold = 50 },
	} {
		c := ok
		edit(&c)
		if c.Validate() == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkDecision is the breaker's cost per request: Allow, then Done.
func BenchmarkDecision(b *testing.B) {
	br, err := New(Config{TrippedDuration: 10 * time.Second, RollingWindow: 10 * time.Second, NumBuckets: 100, VolumeThreshold: 1 << 30, ErrorThreshold: 0.5})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UnixNano()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		t := now + int64(i)*int64(time.Microsecond)
		d := br.Allow(t)
		br.Done(t, d, i%10 == 0)
	}
}

// BenchmarkDecisionParallel is the same with every core deciding.
func BenchmarkDecisionParallel(b *testing.B) {
	br, err := New(Config{TrippedDuration: 10 * time.Second, RollingWindow: 10 * time.Second, NumBuckets: 100, VolumeThreshold: 1 << 30, ErrorThreshold: 0.5})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			t := time.Now().UnixNano()
			d := br.Allow(t)
			br.Done(t, d, i%10 == 0)
			i++
		}
	})
}
