package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/defaults"
)

// RateLimitRetry is how a Client retries a request the API refused with
// 429 Too Many Requests, as WithRateLimitRetry sets it. A 429 means that
// the API did not act on the request (it refuses before it reads the
// body), so sending the same request again is safe for every method,
// POST included: it cannot create a resource twice.
type RateLimitRetry struct {
	// Attempts bounds the requests of one call, the first included; 1 or
	// less means no retry.
	Attempts int
	// MaxWait caps each wait; 0 or less means DefaultMaxRateLimitWait.
	MaxWait time.Duration
	// Waiting, when set, is called before each wait with the number of
	// requests the call has made (1 before the first wait), how long it
	// will wait, and the 429 that made it wait: to tell a person why
	// nothing seems to happen.
	Waiting func(attempt int, wait time.Duration, refusal *Error)
}

const (
	// DefaultMaxRateLimitWait caps each wait of a RateLimitRetry whose
	// MaxWait is not set.
	DefaultMaxRateLimitWait = 30 * time.Second
	// firstWaitWithoutRetryAfter is the wait after a 429 that says
	// nothing of when to come back; it doubles at each attempt.
	firstWaitWithoutRetryAfter = time.Second
)

// WithRateLimitRetry has the Client send a request the API refused with
// 429 again, up to r.Attempts requests in all, after the wait the reply's
// Retry-After asks (seconds or an HTTP date), capped at r.MaxWait; a 429
// without Retry-After waits 1s, then 2s, 4s, ... within the same cap. The
// wait ends with the call's context. Without this option a Client does
// not retry.
func WithRateLimitRetry(r RateLimitRetry) Option {
	defaults.Positive(&r.MaxWait, DefaultMaxRateLimitWait)
	return func(c *Client) { c.retry = r }
}

// exchangeRetrying is exchange, sent again after a 429 as c.retry says.
func (c *Client) exchangeRetrying(ctx context.Context, method, target string, body []byte) ([]byte, http.Header, string, error) {
	for attempt := 1; ; attempt++ {
		raw, header, endpoint, err := c.exchange(ctx, method, target, body)
		var refusal *Error
		if !errors.As(err, &refusal) || refusal.Status != http.StatusTooManyRequests {
			return raw, header, endpoint, err
		}
		if attempt >= c.retry.Attempts {
			if attempt == 1 {
				return nil, nil, endpoint, err
			}
			return nil, nil, endpoint, fmt.Errorf("still rate limited after %d attempts: %w", attempt, err)
		}
		wait := c.retry.wait(attempt, refusal)
		if c.retry.Waiting != nil {
			c.retry.Waiting(attempt, wait, refusal)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, nil, endpoint, fmt.Errorf("%s %s: waiting %s to retry after a 429: %w", method, endpoint, wait, err)
		}
	}
}

// wait returns how long to wait after the attempt-th request got the 429
// refusal: its Retry-After, or a doubling wait without one, capped at
// MaxWait.
func (r RateLimitRetry) wait(attempt int, refusal *Error) time.Duration {
	wait := refusal.retryAfter
	if !refusal.hasRetryAfter {
		wait = firstWaitWithoutRetryAfter << min(attempt-1, 16)
	}
	return max(0, min(wait, r.MaxWait))
}

// sleepContext waits for d, or until ctx ends, and then returns its
// cause.
func sleepContext(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-timer.C:
		return nil
	}
}

// parseRetryAfter returns the wait a Retry-After header asks, as seconds
// or an HTTP date after now, and whether it is one; a date in the past
// asks for no wait.
func parseRetryAfter(header string, now time.Time) (time.Duration, bool) {
	header = strings.TrimSpace(header)
	if header == "" {
		return 0, false
	}
	if secs, err := strconv.ParseUint(header, 10, 32); err == nil {
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(header); err == nil {
		return max(0, at.Sub(now)), true
	}
	return 0, false
}
