package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/sluicehq/sluice/internal/apiconv"
)

// Limits and retry policy of ingestClient.
const (
	ingestRetryInitial   = 250 * time.Millisecond // first wait before a retry
	ingestRetryMax       = 10 * time.Second       // longest wait between retries
	ingestRequestTimeout = time.Minute            // one request, body and reply included; capped by ingestRetryFor
	ingestMinAttempt     = 5 * time.Second        // no retry starts with less of ingestRetryFor left
	ingestUnreachableFor = 3 * time.Second        // how long a batch retries a sluice that never answered
	ingestMaxRetryAfter  = 30 * time.Second       // longest Retry-After honoured
	ingestMaxReplyBytes  = 8 << 20                // event_ids of 10,000 events fit
	ingestErrorsShown    = 5                      // invalid events an error lists
)

// ingestRetryFor is the most time one batch may take, from its first
// request to the end of its last, waits and request timeouts included: a
// request still running then is abandoned. It must stay under the stream's
// duplicate window (pipeline.DuplicateWindow, 2 minutes), with room for
// the API to finish a request it received late. JetStream drops an event
// sent again only while it remembers the event's id: an event stored by an
// earlier attempt (a 503 may come after part of a batch was stored) and
// sent again after the window would be stored twice.
const ingestRetryFor = 90 * time.Second

// ingestClient sends batches of NDJSON events to POST /events. A batch that
// the API could not store (503, or 502, 504 or 429 from a proxy) or that did
// not reach it is sent again, the same bytes with the same event ids, after
// a jittered exponential backoff: the stream stores each event once. Until
// the API has answered once, a batch that cannot connect is given up after
// unreachableFor: nobody is there, or not at this address. It is safe for
// concurrent use.
type ingestClient struct {
	http           *http.Client
	endpoint       string // URL of POST /events
	apiKey         string
	newBackOff     func() backoff.BackOff
	retryFor       time.Duration // ingestRetryFor
	minAttempt     time.Duration // ingestMinAttempt
	unreachableFor time.Duration // ingestUnreachableFor
	answered       atomic.Bool   // whether the API (or a proxy) has answered a request
	// retrying, if set, is called before each retry with the error and the
	// wait. It may be called from several goroutines at once.
	retrying func(err error, wait time.Duration)
}

// ingestReply is the body of a 202 from POST /events.
type ingestReply struct {
	EventIDs   []string `json:"event_ids"`
	Stored     int      `json:"stored"`
	Duplicates int      `json:"duplicates"`
}

// newIngestClient returns a client of the API at apiURL keeping up to conns
// connections open.
func newIngestClient(apiURL, apiKey string, conns int) *ingestClient {
	var transport http.RoundTripper
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.MaxIdleConnsPerHost = conns
		transport = t
	}
	return &ingestClient{
		http:     &http.Client{Transport: transport, Timeout: ingestRequestTimeout},
		endpoint: strings.TrimSuffix(apiURL, "/") + "/events",
		apiKey:   apiKey,
		newBackOff: func() backoff.BackOff {
			return backoff.NewExponentialBackOff(
				backoff.WithInitialInterval(ingestRetryInitial),
				backoff.WithMaxInterval(ingestRetryMax),
				backoff.WithMaxElapsedTime(ingestRetryFor))
		},
		retryFor:       ingestRetryFor,
		minAttempt:     ingestMinAttempt,
		unreachableFor: ingestUnreachableFor,
	}
}

// send posts an NDJSON batch, retrying while the API is unavailable, until
// it is accepted, ctx ends or the batch has taken retryFor (unreachableFor
// while the API has never answered and cannot be connected to). It returns
// an *ingestError when the API refused the batch or stayed unavailable, and
// says when it gave up for lack of time, after how long.
func (c *ingestClient) send(ctx context.Context, body []byte) (ingestReply, error) {
	start := time.Now()
	// Every request runs under the batch's deadline, so that the last one
	// cannot outlast retryFor by its own timeout.
	batchCtx, cancel := context.WithTimeout(ctx, c.retryFor)
	defer cancel()
	deadline, _ := batchCtx.Deadline()
	wait := &retryAfterBackOff{BackOff: c.newBackOff(), deadline: deadline.Add(-c.minAttempt)}
	var last error // the last answer worth reporting, not the deadline's
	attempt := func() (ingestReply, error) {
		reply, err := c.post(batchCtx, body)
		wait.floor = 0
		var refused *ingestError
		if errors.As(err, &refused) {
			wait.floor = refused.retryAfter
		}
		if err != nil && batchCtx.Err() == nil {
			last = err
		}
		if elapsed := time.Since(start); err != nil && elapsed >= c.unreachableFor && !c.answered.Load() && isDialError(err) {
			return reply, backoff.Permanent(fmt.Errorf("no sluice answered at %s in %s: %w; %s", c.endpoint, roundElapsed(elapsed), unwrapURLError(err), apiURLHint))
		}
		return reply, err
	}
	var notify backoff.Notify
	if c.retrying != nil {
		notify = c.retrying
	}
	reply, err := backoff.RetryNotifyWithData(attempt, backoff.WithContext(wait, ctx), notify)
	if err == nil || ctx.Err() != nil || !(wait.exhausted || batchCtx.Err() != nil) {
		return reply, err
	}
	if batchCtx.Err() != nil { // the last request was cut off
		err = errors.New("no reply in time")
		if last != nil {
			err = fmt.Errorf("%w; then no reply in time", last)
		}
	}
	return reply, fmt.Errorf("giving up on a batch after %s of the %s a batch may take, so that sending it again cannot store its events twice: %w", roundElapsed(time.Since(start)), c.retryFor, err)
}

// roundElapsed rounds a measured duration for messages: to a tenth of a
// second.
func roundElapsed(d time.Duration) time.Duration {
	return d.Round(100 * time.Millisecond)
}

// isDialError reports whether err is a failure to connect: refused, no
// route, or a name that does not resolve.
func isDialError(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// unwrapURLError returns the error inside a *url.Error, whose text repeats
// the method and URL, or err itself.
func unwrapURLError(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err
	}
	return err
}

// post sends the batch once. Errors worth retrying are returned as they
// are; the others are wrapped in backoff.Permanent.
func (c *ingestClient) post(ctx context.Context, body []byte) (ingestReply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return ingestReply{}, backoff.Permanent(fmt.Errorf("building the request: %w", err))
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	req.Header.Set(apiconv.HeaderVersion, apiconv.SupportedVersion)
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ingestReply{}, backoff.Permanent(ctx.Err())
		}
		return ingestReply{}, fmt.Errorf("sending events to %s: %w", c.endpoint, err)
	}
	defer resp.Body.Close()
	c.answered.Store(true)
	raw, err := io.ReadAll(io.LimitReader(resp.Body, ingestMaxReplyBytes))
	if err != nil {
		// The events may be stored or not: sending them again is safe.
		return ingestReply{}, fmt.Errorf("reading the reply of %s: %w", c.endpoint, err)
	}
	if resp.StatusCode == http.StatusAccepted {
		var reply ingestReply
		if err := json.Unmarshal(raw, &reply); err != nil {
			return ingestReply{}, backoff.Permanent(fmt.Errorf("the reply of %s is not sluice's: %w", c.endpoint, err))
		}
		return reply, nil
	}
	refused := newIngestError(resp, raw)
	if refused.retryable() {
		return ingestReply{}, refused
	}
	return ingestReply{}, backoff.Permanent(refused)
}

// ingestError is an error reply of the API, or of a proxy in front of it.
type ingestError struct {
	Status      int
	Code        string // such as ERR_SLUICE_301; "" when the reply is not the API's
	Msg         string
	OperationID string
	Events      []ingestEventError // details.errors: the invalid events

	retryAfter time.Duration
	origins    []int            // origin of each event of the batch
	describe   func(int) string // says where an origin is
}

// ingestEventError is one invalid event of a batch.
type ingestEventError struct {
	Index int    `json:"index"`
	Error string `json:"error"`
}

func newIngestError(resp *http.Response, raw []byte) *ingestError {
	var body struct {
		ErrorCode string `json:"error_code"`
		Msg       string `json:"msg"`
		Details   struct {
			OperationID string `json:"operation_id"`
			Errors      string `json:"errors"` // the JSON text of the invalid events
		} `json:"details"`
	}
	e := &ingestError{Status: resp.StatusCode, retryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	if err := json.Unmarshal(raw, &body); err == nil && body.ErrorCode != "" {
		e.Code, e.Msg = body.ErrorCode, body.Msg
		e.OperationID = body.Details.OperationID
		if body.Details.Errors != "" {
			_ = json.Unmarshal([]byte(body.Details.Errors), &e.Events) // left empty if not a list: msg says what is wrong
		}
		return e
	}
	e.Msg = http.StatusText(resp.StatusCode)
	if text := strings.TrimSpace(string(raw)); text != "" {
		e.Msg = strings.ToValidUTF8(text[:min(len(text), 200)], "")
	}
	return e
}

// retryable reports whether sending the same batch again may succeed.
func (e *ingestError) retryable() bool {
	switch e.Status {
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return true
	}
	return false
}

// locate tells the error where the batch's events came from, so that it
// names them by their origin rather than by their index in the batch.
func (e *ingestError) locate(origins []int, describe func(int) string) {
	e.origins, e.describe = origins, describe
}

func (e *ingestError) Error() string {
	var b strings.Builder
	if e.Code != "" {
		fmt.Fprintf(&b, "%s (HTTP %d): %s", e.Code, e.Status, e.Msg)
	} else {
		fmt.Fprintf(&b, "HTTP %d: %s", e.Status, e.Msg)
	}
	for i, ev := range e.Events {
		if i == ingestErrorsShown {
			fmt.Fprintf(&b, "\n  and %d more", len(e.Events)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s: %s", e.where(ev.Index), ev.Error)
	}
	if e.OperationID != "" {
		fmt.Fprintf(&b, "\n  (operation id %s)", e.OperationID)
	}
	return b.String()
}

// where names the event of the batch at index i.
func (e *ingestError) where(i int) string {
	if e.describe != nil && i >= 0 && i < len(e.origins) {
		return e.describe(e.origins[i])
	}
	return fmt.Sprintf("event %d of the batch", i)
}

// retryAfter parses a Retry-After header: seconds or an HTTP date. It
// returns 0 when there is none, and at most ingestMaxRetryAfter.
func retryAfter(header string) time.Duration {
	if header == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.Atoi(header); err == nil {
		d = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(header); err == nil {
		d = time.Until(at)
	}
	return max(0, min(d, ingestMaxRetryAfter))
}

// retryAfterBackOff waits at least as long as the API's last Retry-After
// asked (floor), with up to a fifth more as jitter, so that clients told
// the same delay do not all come back at once. It stops, and says so in
// exhausted, when the wrapped backoff stops or a wait would end after
// deadline.
type retryAfterBackOff struct {
	backoff.BackOff
	floor     time.Duration
	deadline  time.Time // latest start of a retry; zero: none
	exhausted bool
}

// NextBackOff returns the wrapped backoff's next wait, raised to the floor,
// or backoff.Stop.
func (b *retryAfterBackOff) NextBackOff() time.Duration {
	next := b.BackOff.NextBackOff()
	if next != backoff.Stop && next < b.floor {
		next = b.floor + rand.N(b.floor/5+1)
	}
	if next == backoff.Stop || (!b.deadline.IsZero() && time.Now().Add(next).After(b.deadline)) {
		b.exhausted = true
		return backoff.Stop
	}
	return next
}
