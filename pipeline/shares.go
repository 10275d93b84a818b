package pipeline

import (
	"context"
	"sync"
	"sync/atomic"
)

// Defaults of the process's shares (DeliveryConfig).
const (
	DefaultDeliverySlots   = 256
	DefaultAccountPrefetch = 20 * DefaultPrefetch
	// minRoutePrefetch is the fewest events a route keeps pulled ahead,
	// however many routes its account has.
	minRoutePrefetch = 32
)

// fairShares divides a process's slots of some work between the accounts
// with such work: an account alone may have every slot, and while others
// have work waiting or under way, each may hold at most its share, the
// slots over the number of such accounts (rounded up). A process has two:
// the batches in delivery (DeliveryConfig.DeliverySlots), so that an
// account's many routes cannot hold the slots, nor the memory of their
// batches, while another account waits (a route that gets no slot stops
// pulling, and its events wait in JetStream); and the events being
// filtered and selected (DeliveryConfig.WorkSlots, as many as the
// process has CPUs), so that an account's many routes cannot take the
// CPU from another's one.
type fairShares struct {
	slots int

	mu       sync.Mutex
	inFlight map[string]int // by account, slots held
	waiting  map[string]int // by account, acquires waiting for a slot
	// since orders the accounts waiting: the number of the wait that made
	// the account one, from next.
	since map[string]uint64
	next  uint64
	total int
	// changed is closed, and replaced, whenever a slot is released or an
	// account starts or stops waiting.
	changed chan struct{}
}

func newFairShares(slots int) *fairShares {
	return &fairShares{slots: slots, inFlight: make(map[string]int), waiting: make(map[string]int), since: make(map[string]uint64), changed: make(chan struct{})}
}

// share is the most slots an account may hold now; mu is held.
func (s *fairShares) share() int {
	active := len(s.inFlight)
	for account := range s.waiting {
		if s.inFlight[account] == 0 {
			active++
		}
	}
	return (s.slots + max(active, 1) - 1) / max(active, 1)
}

// acquire takes a slot for a batch of the account. It returns false,
// having taken none, if ctx ends or stop is signalled first.
func (s *fairShares) acquire(ctx context.Context, account string, stop <-chan struct{}) bool {
	s.mu.Lock()
	waited := false
	for {
		if s.total < s.slots && s.inFlight[account] < s.share() && !s.yields(account, waited) {
			s.take(account, waited)
			s.mu.Unlock()
			return true
		}
		if !waited {
			waited = true
			if s.waiting[account]++; s.waiting[account] == 1 {
				s.since[account] = s.next
				s.next++
			}
			s.signal()
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-stop:
			s.giveUp(account)
			return false
		case <-ctx.Done():
			s.giveUp(account)
			return false
		}
		s.mu.Lock()
	}
}

// yields reports whether the account must leave a free slot to another
// account that waits for one and may take it: one that holds fewer
// slots, or as many and has waited longer. An acquire that has not waited
// yields to any such account holding no more. Slots then go round the
// waiting accounts, however many acquires each has waiting (an account's
// hundred routes against another's one); mu is held.
func (s *fairShares) yields(account string, waited bool) bool {
	if len(s.waiting) == 0 || (waited && len(s.waiting) == 1) {
		return false
	}
	share, mine := s.share(), s.inFlight[account]
	for other, since := range s.since {
		if other == account || s.inFlight[other] >= share {
			continue
		}
		held := s.inFlight[other]
		if held < mine || (held == mine && (!waited || since < s.since[account])) {
			return true
		}
	}
	return false
}

// take gives the account a slot; mu is held.
func (s *fairShares) take(account string, waited bool) {
	s.inFlight[account]++
	s.total++
	if waited {
		s.unwait(account)
		if _, ok := s.since[account]; ok {
			// Its other acquires wait behind the accounts waiting now.
			s.since[account] = s.next
			s.next++
		}
	}
}

func (s *fairShares) unwait(account string) {
	if s.waiting[account]--; s.waiting[account] == 0 {
		delete(s.waiting, account)
		delete(s.since, account)
		s.signal() // the shares of the others grow
	}
}

// giveUp ends the wait of a batch that took no slot.
func (s *fairShares) giveUp(account string) {
	s.mu.Lock()
	s.unwait(account)
	s.mu.Unlock()
}

// release returns a slot of the account.
func (s *fairShares) release(account string) {
	s.mu.Lock()
	if s.inFlight[account]--; s.inFlight[account] == 0 {
		delete(s.inFlight, account)
	}
	s.total--
	if len(s.waiting) > 0 {
		s.signal() // no one else looks at changed
	}
	s.mu.Unlock()
}

// setSlots changes the number of slots: batches holding slots over it keep
// them until they are done, and no acquire takes one meanwhile.
func (s *fairShares) setSlots(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n == s.slots {
		return
	}
	s.slots = n
	s.signal()
}

// signal wakes every waiter to look again; mu is held.
func (s *fairShares) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// prefetchBudget divides the events an account's routes keep pulled ahead
// in a process (DeliveryConfig.AccountPrefetch) between its routes: each
// route keeps at most the budget over the account's routes, and never
// fewer than minRoutePrefetch nor more than DeliveryConfig.Prefetch. An
// account's memory of events pulled ahead is then bounded whatever its
// number of routes.
type prefetchBudget struct {
	budget, most int

	mu     sync.Mutex
	routes map[string]*atomic.Int64 // by account, its routes running here
}

func newPrefetchBudget(budget, most int) *prefetchBudget {
	return &prefetchBudget{budget: budget, most: most, routes: make(map[string]*atomic.Int64)}
}

// join counts a route of the account running here, until leave is called,
// and returns the count the route reads its prefetch from.
func (b *prefetchBudget) join(account string) (routes *atomic.Int64, leave func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.routes[account]
	if !ok {
		n = new(atomic.Int64)
		b.routes[account] = n
	}
	n.Add(1)
	return n, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if n.Add(-1) == 0 {
			delete(b.routes, account)
		}
	}
}

// prefetch is the events a route keeps pulled ahead while its account has
// routes routes here.
func (b *prefetchBudget) prefetch(routes int64) int {
	return min(b.most, max(minRoutePrefetch, b.budget/int(max(routes, 1))))
}
