package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// slowDeletes is a stream whose consumer deletes take long: each waits
// until consumerDeletes of them are under way at once, or a deadline.
type slowDeletes struct {
	jetstream.Stream // nil: only DeleteConsumer is called

	mu      sync.Mutex
	inside  int
	most    int
	full    chan struct{}
	opened  bool
	deleted []string
}

func (s *slowDeletes) DeleteConsumer(ctx context.Context, name string) error {
	s.mu.Lock()
	s.inside++
	s.most = max(s.most, s.inside)
	if s.inside == consumerDeletes && s.most == consumerDeletes && !s.opened {
		s.opened = true
		close(s.full)
	}
	s.mu.Unlock()
	select {
	case <-s.full:
	case <-time.After(200 * time.Millisecond): // one at a time, fifty take 10 s
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inside--
	if name == "gone" {
		return jetstream.ErrConsumerNotFound
	}
	if name == "failing" {
		return errors.New("no answer")
	}
	s.deleted = append(s.deleted, name)
	return nil
}

// TestConsumersDeletedTogether: the consumers of a subscription's fifty
// removed routes are deleted consumerDeletes at a time, not one after
// the other, each slow call holding up the next change for seconds; a
// consumer already gone counts as deleted, a failed delete is reported.
func TestConsumersDeletedTogether(t *testing.T) {
	stream := &slowDeletes{full: make(chan struct{})}
	r := NewReconciler(stream, nil, ReconcilerConfig{}, slog.New(slog.DiscardHandler), nil)
	names := []string{"gone", "failing"}
	for i := range 48 {
		names = append(names, string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	start := time.Now()
	deleted, err := r.deleteConsumers(t.Context(), names)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("deleting 50 consumers took %s: they were not deleted together (at most %d at once)", took, stream.most)
	}
	if stream.most != consumerDeletes {
		t.Fatalf("at most %d deletes at once, want %d", stream.most, consumerDeletes)
	}
	if err == nil || len(deleted) != 49 || slices.Contains(deleted, "failing") || !slices.Contains(deleted, "gone") {
		t.Fatalf("deleted %d (%v), error %v: want all but the failing one, and its error", len(deleted), deleted, err)
	}
}
