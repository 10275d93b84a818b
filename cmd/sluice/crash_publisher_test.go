package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/schemas"
)

// crashBatch is how many events the crash test's publisher sends in a
// request to POST /events.
const crashBatch = 500

// crashEvent is an event the crash test publishes.
type crashEvent struct {
	id       string
	selected bool   // the subscription's filter passes it
	json     []byte // as sent to POST /events
}

// newCrashEvents returns n HTTP request events with their ids set, so that
// a batch sent again after a failed request keeps them; three in four are
// on port 443, which the subscription selects.
func newCrashEvents(n int) []crashEvent {
	events := make([]crashEvent, n)
	for i := range events {
		id := schemas.NewID("ev_")
		port := 443
		if i%4 == 3 {
			port = 80
		}
		events[i] = crashEvent{id: id, selected: port == 443, json: fmt.Appendf(nil,
			`{"event_id":%q,"event_type":"http_request_complete.v0","object":{"conn":{"client_ip":"203.0.113.%d","server_port":%d},"http":{"request":{"method":"get","url":{"path":"/items/%d"}},"response":{"status_code":200}}}}`,
			id, i%250, port, i)}
	}
	return events
}

// selectedIn counts the events the subscription selects.
func selectedIn(events []crashEvent) int {
	n := 0
	for _, ev := range events {
		if ev.selected {
			n++
		}
	}
	return n
}

// countSelected counts the selected events that are in the stream.
func countSelected(got map[string]int, events []crashEvent) int {
	n := 0
	for _, ev := range events {
		if ev.selected && got[ev.id] > 0 {
			n++
		}
	}
	return n
}

// postEventBatch sends a batch to POST /events and checks that the ids of
// the 202 answer are the events' own.
func postEventBatch(ctx context.Context, client *http.Client, url string, batch []crashEvent) error {
	body := []byte{'['}
	for i, ev := range batch {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, ev.json...)
	}
	body = append(body, ']')
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/events", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+crashToken)
	req.Header.Set("Service-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusAccepted {
		return &ingestRefused{status: resp.StatusCode, body: string(out)}
	}
	var accepted struct {
		EventIDs []string `json:"event_ids"`
	}
	if err := json.Unmarshal(out, &accepted); err != nil {
		return fmt.Errorf("decoding the 202 answer %s: %w", out, err)
	}
	for i, ev := range batch {
		if i >= len(accepted.EventIDs) || accepted.EventIDs[i] != ev.id {
			return fmt.Errorf("the 202 answer's event_ids do not match the ids sent: %s", out)
		}
	}
	return nil
}

// ingestRefused is an answer other than 202 to POST /events.
type ingestRefused struct {
	status int
	body   string
}

func (e *ingestRefused) Error() string { return fmt.Sprintf("POST /events: %d %s", e.status, e.body) }

// worthResending reports whether a failed POST /events may succeed when sent
// again: the server was unreachable or answered 503.
func worthResending(err error) bool {
	var refused *ingestRefused
	if errors.As(err, &refused) {
		return refused.status == http.StatusServiceUnavailable
	}
	return true
}

// currentServer is the URL of the sluice serve currently running.
type currentServer struct {
	mu      sync.Mutex
	url     string
	changed chan struct{} // closed when url changes
}

func newCurrentServer(url string) *currentServer {
	return &currentServer{url: url, changed: make(chan struct{})}
}

func (r *currentServer) get() (string, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.url, r.changed
}

func (r *currentServer) set(url string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.url = url
	close(r.changed)
	r.changed = make(chan struct{})
}

// eventPublisher publishes events in batches, in order, to whichever sluice
// serve runs, sending a batch again (same ids) until it is accepted.
type eventPublisher struct {
	*publishRun
	server  *currentServer
	pauseAt int
	resumed chan struct{}
}

// publishRun is what the tests' publishers share: the events, their HTTP
// client, how far they got and how they ended.
type publishRun struct {
	events []crashEvent
	client *http.Client
	done   chan struct{}
	err    error // set before done closes

	mu       sync.Mutex
	accepted int // events[:accepted] were answered 202
	attempts int // requests that failed and were sent again
}

func newPublishRun(events []crashEvent) *publishRun {
	return &publishRun{
		events: events,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}},
		done:   make(chan struct{}),
	}
}

// start runs run until it returns or the test ends.
func (r *publishRun) start(t *testing.T, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		defer close(r.done)
		r.err = run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
		r.client.CloseIdleConnections()
	})
}

// startPublisher starts publishing; it stops at pauseAt until resume. The
// test's end stops it.
func startPublisher(t *testing.T, server *currentServer, events []crashEvent, pauseAt int) *eventPublisher {
	t.Helper()
	p := &eventPublisher{publishRun: newPublishRun(events), server: server, pauseAt: pauseAt, resumed: make(chan struct{})}
	p.start(t, p.run)
	return p
}

func (p *eventPublisher) run(ctx context.Context) error {
	for start := 0; start < len(p.events); start += crashBatch {
		if start == p.pauseAt {
			select {
			case <-p.resumed:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := p.send(ctx, p.events[start:min(start+crashBatch, len(p.events))]); err != nil {
			return err
		}
		p.mu.Lock()
		p.accepted = min(start+crashBatch, len(p.events))
		p.mu.Unlock()
	}
	return nil
}

// send sends a batch until it is accepted, again at once when another
// server starts, or after a short delay.
func (p *eventPublisher) send(ctx context.Context, batch []crashEvent) error {
	for {
		url, changed := p.server.get()
		err := postEventBatch(ctx, p.client, url, batch)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case !worthResending(err):
			return err
		}
		p.mu.Lock()
		p.attempts++
		p.mu.Unlock()
		retry := time.NewTimer(100 * time.Millisecond)
		select {
		case <-changed:
		case <-retry.C:
		case <-ctx.Done():
		}
		retry.Stop()
	}
}

func (p *eventPublisher) resume() { close(p.resumed) }

// acked returns how many events, from the first, were answered 202.
func (p *publishRun) acked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// resent returns how many requests failed and were sent again.
func (p *publishRun) resent() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.attempts
}

// failed returns the error the publisher stopped with, or nil while it
// runs or when it published everything.
func (p *publishRun) failed() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// wait waits until every event is published.
func (p *publishRun) wait(timeout time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		return fmt.Errorf("not every event published within %s: %d of %d", timeout, p.acked(), len(p.events))
	}
}
