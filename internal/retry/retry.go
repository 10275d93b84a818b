package retry

import (
	"context"
	"math"
	"math/rand/v2"
	"time"
)

// Sleep waits d, or until ctx ends. It returns ctx.Err() when ctx ended
// first, nil once d has passed, and nil at once when d <= 0.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// Jitter says how a Policy randomizes its delays.
type Jitter int

const (
	// NoJitter waits exactly the delay: for one waiter alone, such as a
	// supervisor restarting its worker.
	NoJitter Jitter = iota
	// Spread draws each delay uniformly from half to one and a half times
	// it, so that waiters that failed together do not retry together.
	Spread
	// Full draws each delay uniformly from half of Initial up to the
	// delay, so that writers contending for one key spread over the whole
	// window, none waiting less than half of Initial.
	Full
)

// Policy is an exponential backoff: the delay before retry n (0 for the
// first) is Initial times Multiplier to the n, at most Max, randomized as
// Jitter says. Its zero Multiplier is 2, its zero Max no cap.
type Policy struct {
	Initial    time.Duration
	Max        time.Duration
	Multiplier float64
	Jitter     Jitter
}

// Delay returns the delay before retry n, 0 for the first. Before jitter,
// it is never above Max, even when Initial is.
func (p Policy) Delay(n int) time.Duration {
	d := p.Initial
	for i := 0; i < n && (p.Max <= 0 || d < p.Max) && d < math.MaxInt64/4; i++ {
		d = p.Next(d)
	}
	if p.Max > 0 {
		d = min(d, p.Max) // an Initial above Max too
	}
	switch p.Jitter {
	case Spread:
		d = d/2 + rand.N(d+1)
	case Full:
		if d > 0 {
			d = p.Initial/2 + rand.N(d)
		}
	}
	return d
}

// Next returns the delay that follows d, not randomized: d times
// Multiplier, at most Max. It serves a caller whose delay does not start
// from Initial, such as one adapted to how long the last attempt took.
func (p Policy) Next(d time.Duration) time.Duration {
	m := p.Multiplier
	if m == 0 {
		m = 2
	}
	next := time.Duration(float64(d) * m)
	if p.Max > 0 {
		next = min(next, p.Max)
	}
	return next
}
