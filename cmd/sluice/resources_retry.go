package main

import (
	"fmt"
	"io"
	"time"

	"github.com/sluicehq/sluice/client"
)

// Bounds of the retries of a request the API refused with 429 Too Many
// Requests (docs/cli.md, Errors): a command sends it at most
// rateLimitAttempts times, waiting what each refusal's Retry-After asks,
// at most rateLimitMaxWait a time, so about two minutes in all at worst.
const (
	rateLimitAttempts = 5
	rateLimitMaxWait  = 30 * time.Second
)

// rateLimitRetry is how every command of the API retries a 429: the API
// refused before acting, so sending the request again, a create's POST
// included, cannot act twice. The first wait is quiet, as a busy account
// is refused now and then; a request refused again is said once on
// stderr, so that a long wait does not look like a hang.
func rateLimitRetry(stderr io.Writer) client.RateLimitRetry {
	return client.RateLimitRetry{
		Attempts: rateLimitAttempts,
		MaxWait:  rateLimitMaxWait,
		Waiting: func(attempt int, wait time.Duration, refusal *client.Error) {
			if attempt != 2 {
				return
			}
			code := refusal.Code
			if code == "" {
				code = "HTTP 429"
			}
			fmt.Fprintf(stderr, "sluice: rate limited (%s): retrying %s %s in %s, attempt %d of %d\n",
				code, refusal.Method, refusal.URL, wait, attempt+1, rateLimitAttempts)
		},
	}
}
