package pipeline

import (
	"context"
	"testing"
	"time"
)

// acquireAsync starts an acquire of a slot of the account and returns
// what tells when it got one.
func acquireAsync(t *testing.T, s *deliveryShares, account string) <-chan bool {
	t.Helper()
	got := make(chan bool, 1)
	go func() { got <- s.acquire(t.Context(), account, nil) }()
	return got
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5 s", what)
		}
		time.Sleep(time.Millisecond) // polling a condition with a deadline, not synchronising on time
	}
}

// TestDeliverySharesAreFair: account B, alone, may hold every slot; with
// ten more of B's batches waiting, account A's one batch gets the first
// slot B frees, and B holds no more than its share while A has work.
func TestDeliverySharesAreFair(t *testing.T) {
	const slots = 4
	s := newDeliveryShares(slots)
	for range slots {
		if !s.acquire(t.Context(), "B", nil) {
			t.Fatal("B alone got no slot")
		}
	}
	gotB := make(chan bool, 10)
	for range 10 {
		go func() { gotB <- s.acquire(t.Context(), "B", nil) }()
	}
	waitFor(t, "B's batches waiting", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.waiting["B"] == 10 })
	gotA := acquireAsync(t, s, "A")
	waitFor(t, "A waiting", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.waiting["A"] == 1 })

	s.release("B")
	select {
	case <-gotA:
	case <-time.After(5 * time.Second):
		t.Fatal("A got no slot when B freed one, with ten of B's batches waiting")
	}
	// B frees slots down to its share (2 of 4): a slot freed while B
	// holds its share goes to none of B's waiting batches; the next one
	// freed, below its share, goes to one of them.
	s.release("B")
	s.mu.Lock()
	s.signal() // the waiting batches look again, as at any release
	s.mu.Unlock()
	if held := s.held("B"); held != 2 {
		t.Fatalf("B holds %d slots after freeing down to its share, want 2", held)
	}
	s.release("B")
	waitFor(t, "B back to its share", func() bool { return s.held("B") == 2 })
	s.mu.Lock()
	total := s.total
	s.mu.Unlock()
	if b := s.held("B"); b > slots/2 || total != 3 {
		t.Fatalf("B holds %d slots (total %d) while A has work, want its share of %d", b, total, slots/2)
	}
	// A done: B may take every slot again.
	s.release("A")
	waitFor(t, "B with every slot", func() bool { return s.held("B") == slots })
	// A wait that ends frees its place.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if s.acquire(ctx, "C", nil) {
		t.Fatal("acquire with ctx ended took a slot")
	}
	s.release("B") // the last of B's first four; three waiting batches hold the others
	for range 10 {
		select {
		case <-gotB:
			s.release("B")
		case <-time.After(5 * time.Second):
			t.Fatal("a waiting batch of B never got a slot")
		}
	}
}
