package check

import (
	"sync"
	"time"
)

// Clock is a clock a test moves by hand, safe for concurrent use: give
// its Now to what takes a clock, and Advance it.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
