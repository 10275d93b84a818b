package api_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// fakeStorage is an apiconv.Storage whose state the test sets.
type fakeStorage struct {
	mu     sync.Mutex
	err    error
	failed chan struct{}
}

func newFakeStorage() *fakeStorage { return &fakeStorage{failed: make(chan struct{})} }

func (f *fakeStorage) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *fakeStorage) Failed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

// fail makes the storage refuse writes.
func (f *fakeStorage) fail() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = errors.New("JetStream's storage is full")
	close(f.failed)
}

// stuckPublisher never answers, as JetStream does not when its store has
// failed a write; it tells started when a publish is waiting.
type stuckPublisher struct{ started chan struct{} }

func (p stuckPublisher) PublishEncoded(ctx context.Context, events []schemas.Encoded) []producer.Result {
	p.started <- struct{}{}
	<-ctx.Done()
	results := make([]producer.Result, len(events))
	for i, ev := range events {
		results[i] = producer.Result{EventID: ev.ID, Err: errors.Join(producer.ErrNotStored, ctx.Err())}
	}
	return results
}

const storageTestEvent = `[{"event_type":"http_request_complete.v0","object":{"conn":{"server_port":443}}}]`

// TestStorageFullRefusesWritesAtOnce checks that while the store refuses
// writes, ingest and management writes are answered at once with 503
// ERR_SLUICE_110 and Retry-After, reads go on, and nothing is stored.
func TestStorageFullRefusesWritesAtOnce(t *testing.T) {
	storage := newFakeStorage()
	e := newTestEnv(t, apitest.WithDeps(func(deps *api.Deps, _ jetstream.JetStream) { deps.Storage = storage }))
	resp, out := e.post(t, []byte(storageTestEvent), nil)
	apitest.WantStatus(t, resp, out, http.StatusAccepted)

	storage.fail()
	resp, out = e.post(t, []byte(storageTestEvent), nil)
	apitest.WantStatus(t, resp, out, http.StatusServiceUnavailable)
	if got := apitest.DecodeError(t, out); got.ErrorCode != "ERR_SLUICE_110" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("POST /events on a full store: %s, Retry-After %q", out, resp.Header.Get("Retry-After"))
	}
	resp, out = e.call(t, e.token, http.MethodPost, "/event_destinations", credsBody)
	apitest.WantStatus(t, resp, out, http.StatusServiceUnavailable)
	if got := apitest.DecodeError(t, out); got.ErrorCode != "ERR_SLUICE_110" {
		t.Errorf("POST /event_destinations on a full store: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/event_destinations", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if events := e.storedEvents(t, e.account); len(events) != 1 {
		t.Errorf("%d events stored, want the one sent before the store was full", len(events))
	}
	if pending, err := e.store.Outbox().PendingAudits(t.Context()); err != nil || len(pending) != 0 {
		t.Errorf("pending audit events: %v, %v", pending, err)
	}
}

// TestStorageFullEndsWritesInFlight checks that a publish JetStream will
// never answer is given up as soon as the store is known to refuse writes,
// and answered 503 ERR_SLUICE_110 rather than after the ack timeout.
func TestStorageFullEndsWritesInFlight(t *testing.T) {
	storage := newFakeStorage()
	started := make(chan struct{}, 1)
	e := newTestEnv(t,
		apitest.WithDeps(func(deps *api.Deps, _ jetstream.JetStream) { deps.Storage = storage }),
		apitest.WithPublisher(func(api.Publisher) api.Publisher { return stuckPublisher{started: started} }))
	go func() {
		<-started
		storage.fail()
	}()
	start := time.Now()
	resp, out := e.post(t, []byte(storageTestEvent), nil)
	apitest.WantStatus(t, resp, out, http.StatusServiceUnavailable)
	if got := apitest.DecodeError(t, out); got.ErrorCode != "ERR_SLUICE_110" || got.Details["event_ids"] == "" {
		t.Errorf("POST /events when the store fails under it: %s", out)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("answered after %s", took)
	}
}
