package pipeline

import (
	"context"
	"testing"
	"time"
)

// acquireAsync starts an acquire of a slot of the account and returns
// what tells when it got one.
func acquireAsync(t *testing.T, s *fairShares, account string) <-chan bool {
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
	s := newFairShares(slots)
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

// TestFairSharesTakeTurns: with one slot (a process of one CPU filtering)
// held by B, ten of B's acquires and three of A's waiting, the slot goes
// to A and B in turn while both wait, whichever waiter runs first; then
// B's get it one after another.
func TestFairSharesTakeTurns(t *testing.T) {
	s := newFairShares(1)
	if !s.acquire(t.Context(), "B", nil) {
		t.Fatal("B alone got no slot")
	}
	got := make(chan string, 13)
	start := func(account string, n int) {
		for range n {
			go func() {
				if s.acquire(t.Context(), account, nil) {
					got <- account
				}
			}()
		}
		waitFor(t, account+"'s acquires waiting", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.waiting[account] == n })
	}
	start("B", 10)
	start("A", 3)
	holder, order := "B", ""
	for range 13 {
		s.release(holder)
		select {
		case holder = <-got:
			order += holder
		case <-time.After(5 * time.Second):
			t.Fatalf("no waiting acquire got the slot %s freed (so far %s)", holder, order)
		}
	}
	s.release(holder)
	if want := "BABABABBBBBBB"; order != want {
		t.Fatalf("the slot went to %s, want %s: the accounts in turn while both wait", order, want)
	}
	if s.held("A")+s.held("B") != 0 {
		t.Fatal("slots held after every acquire released")
	}
}

// TestPrefetchBudgetDividesAnAccounts: an account's routes share its
// prefetch, each within [minRoutePrefetch, Prefetch]; another account's
// routes do not count; a route that leaves gives its part back.
func TestPrefetchBudgetDividesAnAccounts(t *testing.T) {
	b := newPrefetchBudget(20_000, 1000)
	first, leaveFirst := b.join("B")
	if got := b.prefetch(first.Load()); got != 1000 {
		t.Fatalf("one route's prefetch = %d, want the most, 1000", got)
	}
	var leaves []func()
	for range 99 {
		_, leave := b.join("B")
		leaves = append(leaves, leave)
	}
	other, leaveOther := b.join("A")
	defer leaveOther()
	if got := b.prefetch(first.Load()); got != 200 {
		t.Fatalf("each of 100 routes' prefetch = %d, want 20,000 / 100 = 200", got)
	}
	if got := b.prefetch(other.Load()); got != 1000 {
		t.Fatalf("A's one route's prefetch = %d with B's 100, want 1000", got)
	}
	for range 1000 {
		_, leave := b.join("B")
		leaves = append(leaves, leave)
	}
	if got := b.prefetch(first.Load()); got != minRoutePrefetch {
		t.Fatalf("each of 1,100 routes' prefetch = %d, want the least, %d", got, minRoutePrefetch)
	}
	for _, leave := range leaves {
		leave()
	}
	if got := b.prefetch(first.Load()); got != 1000 {
		t.Fatalf("the last route's prefetch = %d, want 1000", got)
	}
	leaveFirst()
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.routes["B"]; ok {
		t.Fatal("B's count outlives its routes")
	}
}
