package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/retry"
)

func TestSleepWaits(t *testing.T) {
	start := time.Now()
	if err := retry.Sleep(t.Context(), 20*time.Millisecond); err != nil {
		t.Fatalf("Sleep = %v, want nil", err)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Fatalf("Sleep returned after %v, want at least 20ms", waited)
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(10*time.Millisecond, cancel)
	start := time.Now()
	if err := retry.Sleep(ctx, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep = %v, want context.Canceled", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("Sleep returned after %v, long after its context ended", waited)
	}
}

func TestSleepNotPositive(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, d := range []time.Duration{0, -time.Second} {
		if err := retry.Sleep(ctx, d); err != nil {
			t.Fatalf("Sleep(%v) = %v, want nil at once", d, err)
		}
	}
}

func TestDelayNoJitter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy retry.Policy
		want   []time.Duration
	}{
		{"doubling, capped", retry.Policy{Initial: 100 * time.Millisecond, Max: 500 * time.Millisecond},
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}},
		{"no cap", retry.Policy{Initial: time.Second},
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}},
		{"multiplier", retry.Policy{Initial: time.Second, Max: 3 * time.Second, Multiplier: 1.5},
			[]time.Duration{time.Second, 1500 * time.Millisecond, 2250 * time.Millisecond, 3 * time.Second}},
		// As the worker's delay of a NAK: RetryMax above NakDelayMax.
		{"initial above the cap", retry.Policy{Initial: 2 * time.Minute, Max: time.Minute},
			[]time.Duration{time.Minute, time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for n, want := range tc.want {
				if got := tc.policy.Delay(n); got != want {
					t.Errorf("Delay(%d) = %v, want %v", n, got, want)
				}
			}
		})
	}
}

func TestDelayDoesNotOverflow(t *testing.T) {
	p := retry.Policy{Initial: time.Second}
	if d := p.Delay(1000); d <= 0 {
		t.Fatalf("Delay(1000) = %v, want a positive delay", d)
	}
	p.Max = time.Hour
	if d := p.Delay(1 << 30); d != time.Hour {
		t.Fatalf("Delay(1<<30) = %v, want the cap %v", d, time.Hour)
	}
}

func TestDelaySpread(t *testing.T) {
	p := retry.Policy{Initial: 100 * time.Millisecond, Max: time.Second, Jitter: retry.Spread}
	for n, base := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second} {
		lo, hi := base, base
		for range 1000 {
			d := p.Delay(n)
			if d < base/2 || d > base*3/2 {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", n, d, base/2, base*3/2)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		if lo > base*6/10 || hi < base*14/10 {
			t.Fatalf("Delay(%d) spread over [%v, %v] only in 1000 draws, want about [%v, %v]", n, lo, hi, base/2, base*3/2)
		}
	}
}

func TestDelayFull(t *testing.T) {
	p := retry.Policy{Initial: 2 * time.Millisecond, Max: 200 * time.Millisecond, Jitter: retry.Full}
	for n, ceiling := range []time.Duration{2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond} {
		hi := time.Duration(0)
		for range 1000 {
			d := p.Delay(n)
			if d < time.Millisecond || d >= time.Millisecond+ceiling {
				t.Fatalf("Delay(%d) = %v, want within [1ms, %v)", n, d, time.Millisecond+ceiling)
			}
			hi = max(hi, d)
		}
		if hi < time.Millisecond+ceiling*9/10 {
			t.Fatalf("Delay(%d) reached %v at most in 1000 draws, want near %v", n, hi, time.Millisecond+ceiling)
		}
	}
	if d := p.Delay(20); d >= 201*time.Millisecond {
		t.Fatalf("Delay(20) = %v, want under the cap plus the floor", d)
	}
}

func TestNext(t *testing.T) {
	p := retry.Policy{Max: time.Minute}
	if got := p.Next(20 * time.Second); got != 40*time.Second {
		t.Fatalf("Next(20s) = %v, want 40s", got)
	}
	if got := p.Next(40 * time.Second); got != time.Minute {
		t.Fatalf("Next(40s) = %v, want the cap 1m", got)
	}
}
