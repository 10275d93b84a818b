package circuitbreaker

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Decision is what the breaker decided for one request, as the
// circuit_breaker.decision of its http_request_complete.v0 says.
type Decision uint8

// The decisions.
const (
	// Invalid: no breaker applies (the module is absent or disabled).
	Invalid Decision = iota
	// Allow: the breaker is closed and the request goes through.
	Allow
	// Block: the breaker is open; the client gets 503.
	Block
	// AllowWhileOpen: the breaker is open and its trip has lasted
	// TrippedDuration: the request goes through as a probe.
	AllowWhileOpen
)

var decisionNames = [...]string{Invalid: "invalid", Allow: "allow", Block: "block", AllowWhileOpen: "allow_while_open"}

// String returns the decision's name in events.
func (d Decision) String() string {
	if int(d) < len(decisionNames) {
		return decisionNames[d]
	}
	return "invalid"
}

// MaxBuckets is the most buckets of a rolling window (spec 2.5).
const MaxBuckets = 128

// Config is a breaker's settings, the module's fields.
type Config struct {
	// TrippedDuration is how long the breaker stays open before it
	// lets a probe through.
	TrippedDuration time.Duration
	// RollingWindow is how long outcomes count, in NumBuckets buckets.
	RollingWindow time.Duration
	NumBuckets    int
	// VolumeThreshold is the fewest requests in the window that can
	// trip the breaker.
	VolumeThreshold uint32
	// ErrorThreshold is the share of failed requests in the window,
	// from 0 to 1, at which the breaker trips.
	ErrorThreshold float64
}

// Validate returns an error naming the first setting out of its range.
func (c Config) Validate() error {
	switch {
	case c.TrippedDuration <= 0:
		return errors.New("tripped_duration must be at least 1 second")
	case c.RollingWindow <= 0:
		return errors.New("rolling_window must be at least 1 second")
	case c.NumBuckets < 1 || c.NumBuckets > MaxBuckets:
		return fmt.Errorf("num_buckets must be from 1 to %d", MaxBuckets)
	case c.RollingWindow/time.Duration(c.NumBuckets) <= 0:
		return errors.New("rolling_window is too short for num_buckets")
	case !(c.ErrorThreshold >= 0 && c.ErrorThreshold <= 1):
		return errors.New("error_threshold_percentage must be from 0 to 1.0")
	}
	return nil
}

// bucket counts the outcomes of one bucket of the window.
type bucket struct {
	epoch         int64 // which bucket of time it counts: t / bucket length
	total, failed uint32
}

// Breaker is one route's circuit breaker in one edge process. Its
// methods are safe for concurrent use.
type Breaker struct {
	cfg       Config
	bucketLen int64 // nanoseconds

	mu sync.Mutex
	// The window, while closed: buckets by epoch modulo their number,
	// and the sums of those still in the window.
	buckets       [MaxBuckets]bucket
	total, failed uint64
	// open says the breaker tripped; openUntil is when it may probe.
	open      bool
	openUntil int64
	// probeSince is when the probe in flight went (0: none). A probe
	// that never reports lets another go after TrippedDuration.
	probeSince int64
}

// New returns a closed breaker; it returns Validate's error for a bad
// Config.
func New(cfg Config) (*Breaker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Breaker{cfg: cfg, bucketLen: int64(cfg.RollingWindow) / int64(cfg.NumBuckets)}, nil
}

// Allow decides for a request at now (Unix nanoseconds): Allow while
// closed; Block while open; AllowWhileOpen for one probe at a time once
// the trip has lasted TrippedDuration. Every request it does not block
// must be reported with Done.
func (b *Breaker) Allow(now int64) Decision {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return Allow
	}
	if now < b.openUntil {
		return Block
	}
	if b.probeSince != 0 && now-b.probeSince < int64(b.cfg.TrippedDuration) {
		return Block
	}
	b.probeSince = now
	return AllowWhileOpen
}

// Done reports the outcome of a request Allow let through, at now. A
// probe's success closes the breaker and its failure opens it for
// another TrippedDuration; a request of the closed breaker counts in the
// window, and trips the breaker when the window holds VolumeThreshold
// requests or more and the share that failed reaches ErrorThreshold.
func (b *Breaker) Done(now int64, d Decision, failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch d {
	case AllowWhileOpen:
		if !b.open {
			return // another probe closed it already
		}
		b.probeSince = 0
		if failed {
			b.openUntil = now + int64(b.cfg.TrippedDuration)
			return
		}
		b.open = false
		b.reset()
	case Allow:
		if b.open {
			return // it tripped while the request was in flight
		}
		b.advance(now)
		i := (now / b.bucketLen) % int64(b.cfg.NumBuckets)
		b.buckets[i].total++
		b.total++
		if failed {
			b.buckets[i].failed++
			b.failed++
		}
		if b.total >= uint64(b.cfg.VolumeThreshold) && float64(b.failed) >= b.cfg.ErrorThreshold*float64(b.total) {
			b.open, b.openUntil, b.probeSince = true, now+int64(b.cfg.TrippedDuration), 0
			b.reset()
		}
	}
}

// advance drops from the sums the buckets that left the window by now,
// and makes the bucket of now current.
func (b *Breaker) advance(now int64) {
	epoch := now / b.bucketLen
	i := epoch % int64(b.cfg.NumBuckets)
	if b.buckets[i].epoch == epoch {
		return
	}
	// Any bucket older than the window goes; a bucket is only ever
	// written at its own epoch, so each old one is found at its slot.
	oldest := epoch - int64(b.cfg.NumBuckets) + 1
	for j := range b.cfg.NumBuckets {
		bk := &b.buckets[j]
		if bk.epoch < oldest && (bk.total != 0 || bk.failed != 0) {
			b.total -= uint64(bk.total)
			b.failed -= uint64(bk.failed)
			bk.total, bk.failed = 0, 0
		}
	}
	b.buckets[i].epoch = epoch
}

// reset empties the window.
func (b *Breaker) reset() {
	b.buckets = [MaxBuckets]bucket{}
	b.total, b.failed = 0, 0
}
