package client

import (
	"context"
	"time"
)

// WithClock replaces the waits between attempts and the clock that reads
// a Retry-After date, for tests of WithRateLimitRetry that do not sleep.
func WithClock(sleep func(ctx context.Context, d time.Duration) error, now func() time.Time) Option {
	return func(c *Client) { c.sleep, c.now = sleep, now }
}
