package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// serverSet is the URLs of the sluice processes a pacedPublisher sends to;
// a process started again gets its slot's new URL with set.
type serverSet struct {
	mu   sync.Mutex
	urls []string
}

func newServerSet(urls ...string) *serverSet { return &serverSet{urls: urls} }

func (s *serverSet) get(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.urls[i%len(s.urls)]
}

func (s *serverSet) set(i int, url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.urls[i] = url
}

// pacedPublisher publishes events in batches at a fixed rate, each batch
// to the next process of a serverSet in turn, sending a batch that failed
// again (same ids, so JetStream keeps it once) to the next process until
// one accepts it. A batch that is late (its sending took long) goes out at
// once, so the rate holds on average.
type pacedPublisher struct {
	*publishRun
	servers  *serverSet
	batch    int
	interval time.Duration // between the starts of two batches
	sentAt   []time.Time   // when each batch was first sent, guarded by mu
}

// startPacedPublisher publishes events at perSecond events a second in
// batches of batch. The test's end stops it.
func startPacedPublisher(t *testing.T, servers *serverSet, events []crashEvent, batch, perSecond int) *pacedPublisher {
	t.Helper()
	p := &pacedPublisher{
		publishRun: newPublishRun(events), servers: servers, batch: batch,
		interval: time.Duration(batch) * time.Second / time.Duration(perSecond),
	}
	p.start(t, p.run)
	return p
}

func (p *pacedPublisher) run(ctx context.Context) error {
	start := time.Now()
	target := 0
	for k, from := 0, 0; from < len(p.events); k, from = k+1, from+p.batch {
		due := time.NewTimer(time.Until(start.Add(time.Duration(k) * p.interval)))
		select {
		case <-due.C:
		case <-ctx.Done():
			due.Stop()
			return ctx.Err()
		}
		to := min(from+p.batch, len(p.events))
		p.mu.Lock()
		p.sentAt = append(p.sentAt, time.Now())
		p.mu.Unlock()
		var err error
		if target, err = p.send(ctx, p.events[from:to], target); err != nil {
			return err
		}
		p.mu.Lock()
		p.accepted = to
		p.mu.Unlock()
		target++
	}
	return nil
}

// send sends a batch to the process of slot target, and on a failure worth
// resending to the next one after a short delay, until one accepts it. It
// returns the slot that did.
func (p *pacedPublisher) send(ctx context.Context, batch []crashEvent, target int) (int, error) {
	for {
		err := postEventBatch(ctx, p.client, p.servers.get(target), batch)
		switch {
		case err == nil:
			return target, nil
		case ctx.Err() != nil:
			return target, ctx.Err()
		case !worthResending(err):
			return target, err
		}
		p.mu.Lock()
		p.attempts++
		p.mu.Unlock()
		target++
		retry := time.NewTimer(50 * time.Millisecond)
		select {
		case <-retry.C:
		case <-ctx.Done():
			retry.Stop()
		}
	}
}

// firstSent returns when the batch of event i was first sent, and false
// when it has not been yet.
func (p *pacedPublisher) firstSent(i int) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k := i / p.batch; k < len(p.sentAt) {
		return p.sentAt[k], true
	}
	return time.Time{}, false
}

// waitAcked waits until at least n events are published, failing the test
// when the publisher stops with an error or timeout passes.
func (p *pacedPublisher) waitAcked(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	pollUntil(t, timeout, 10*time.Millisecond, fmt.Sprintf("%d events published", n), func() bool {
		if err := p.failed(); err != nil {
			t.Fatalf("publishing: %v", err)
		}
		return p.acked() >= n
	}, func() string { return fmt.Sprintf("%d published, %d requests sent again", p.acked(), p.resent()) })
}
