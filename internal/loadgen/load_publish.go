package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/retry"
)

// pacingTick is how often a paced publisher hands out the batches now due.
const pacingTick = 5 * time.Millisecond

// loadPublisher posts batches of events to POST /events, flat out or at a
// set rate, each event stamped with the time its request is built.
type loadPublisher struct {
	client      *ingestClient
	backlog     *backlog
	token       string
	rate        int // events per second; 0 is flat out
	batch       int
	concurrency int

	published atomic.Uint64 // events of batches handed out: their sequence numbers are below it
	stored    atomic.Uint64 // events the API stored
	refused   atomic.Uint64 // requests the API refused with 503, posted again
}

// run publishes for d, or until ctx ends. It returns the first error of a
// request, or nil when d is over.
func (p *loadPublisher) run(ctx context.Context, d time.Duration) error {
	g, ctx := errgroup.WithContext(ctx)
	batches := make(chan uint64) // the sequence number of a batch's first event
	g.Go(func() error {
		defer close(batches)
		return p.dispatch(ctx, d, batches)
	})
	for range p.concurrency {
		g.Go(func() error {
			for first := range batches {
				if err := p.publishBatch(ctx, first); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// dispatch hands out batches until d is over: as fast as the workers take
// them, or when the rate makes them due. It returns nil when d is over.
func (p *loadPublisher) dispatch(ctx context.Context, d time.Duration, batches chan<- uint64) error {
	start := time.Now()
	end := time.NewTimer(d)
	defer end.Stop()
	tick := time.NewTicker(pacingTick)
	defer tick.Stop()
	var next uint64
	for {
		if p.rate > 0 {
			due := uint64(float64(p.rate) * time.Since(start).Seconds())
			if next+uint64(p.batch) > due {
				select {
				case <-tick.C:
					continue
				case <-end.C:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		select {
		case batches <- next:
			next += uint64(p.batch)
			p.published.Store(next)
		case <-end.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// publishBatch posts the batch of events first to first+batch-1, posting
// it again while the API refuses it as busy or unavailable.
func (p *loadPublisher) publishBatch(ctx context.Context, first uint64) error {
	body := p.body(first, time.Now())
	for {
		retryAfter, err := p.post(ctx, body)
		if err != nil || retryAfter == 0 {
			return err
		}
		p.refused.Add(1)
		if err := retry.Sleep(ctx, retryAfter); err != nil {
			return err
		}
	}
}

// body returns the JSON array of the batch's events, stamped at now to the
// millisecond. Event seq is sample seq%sampleObjects: even ones pass the
// route's filter.
func (p *loadPublisher) body(first uint64, now time.Time) requestBody {
	now = now.Truncate(time.Millisecond)
	b := make([]byte, 0, p.batch*1100+2)
	b = append(b, '[')
	for i := range uint64(p.batch) {
		seq := first + i
		ev := p.backlog.samples[seq%uint64(len(p.backlog.samples))]
		ev.ID = loadEventID(p.token, seq)
		ev.Timestamp = now
		if i > 0 {
			b = append(b, ',')
		}
		b = appendRequestEvent(b, &ev)
	}
	return requestBody{json: append(b, ']'), events: p.batch}
}

// post sends one batch. It returns how long to wait before posting it
// again when the API refuses it with 503, or an error wrapping
// ErrNotStored when the API answers anything but 202 with every event
// stored.
func (p *loadPublisher) post(ctx context.Context, body requestBody) (retryAfter time.Duration, err error) {
	c := p.client
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body.json))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(apiconv.HeaderVersion, apiconv.SupportedVersion)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("reading the response: %w", err)
	}
	switch resp.StatusCode {
	case http.StatusAccepted:
	case http.StatusServiceUnavailable:
		seconds, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if err != nil || seconds < 1 {
			seconds = 1
		}
		return time.Duration(seconds) * time.Second, nil
	default:
		return 0, fmt.Errorf("%w: status %d: %.300s", ErrNotStored, resp.StatusCode, respBody)
	}
	var ingested ingestResponse
	if err := json.Unmarshal(respBody, &ingested); err != nil {
		return 0, fmt.Errorf("decoding the response: %w", err)
	}
	if ingested.Stored != body.events {
		return 0, fmt.Errorf("%w: %d of %d events stored", ErrNotStored, ingested.Stored, body.events)
	}
	p.stored.Add(uint64(body.events))
	return 0, nil
}
