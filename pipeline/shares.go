package pipeline

import (
	"context"
	"sync"
)

// DefaultDeliverySlots is DeliveryConfig.DeliverySlots by default.
const DefaultDeliverySlots = 256

// deliveryShares divides a process's batches in delivery between the
// accounts with work: an account alone may have every slot, and while
// others have batches waiting or in delivery, each may hold at most its
// share, the slots over the number of such accounts (rounded up). An
// account's many routes then cannot hold the slots, nor the CPU and memory
// of their batches, while another account waits: a route that gets no
// slot stops pulling, and its events wait in JetStream.
type deliveryShares struct {
	slots int

	mu       sync.Mutex
	inFlight map[string]int // by account, batches in delivery
	waiting  map[string]int // by account, batches waiting for a slot
	total    int
	// changed is closed, and replaced, whenever a slot is released or an
	// account starts or stops waiting.
	changed chan struct{}
}

func newDeliveryShares(slots int) *deliveryShares {
	return &deliveryShares{slots: slots, inFlight: make(map[string]int), waiting: make(map[string]int), changed: make(chan struct{})}
}

// share is the most slots an account may hold now; mu is held.
func (s *deliveryShares) share() int {
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
func (s *deliveryShares) acquire(ctx context.Context, account string, stop <-chan struct{}) bool {
	s.mu.Lock()
	waited := false
	for {
		if s.total < s.slots && s.inFlight[account] < s.share() {
			s.take(account, waited)
			s.mu.Unlock()
			return true
		}
		if !waited {
			waited = true
			s.waiting[account]++
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

// take gives the account a slot; mu is held.
func (s *deliveryShares) take(account string, waited bool) {
	s.inFlight[account]++
	s.total++
	if waited {
		s.unwait(account)
	}
}

func (s *deliveryShares) unwait(account string) {
	if s.waiting[account]--; s.waiting[account] == 0 {
		delete(s.waiting, account)
		s.signal() // the shares of the others grow
	}
}

// giveUp ends the wait of a batch that took no slot.
func (s *deliveryShares) giveUp(account string) {
	s.mu.Lock()
	s.unwait(account)
	s.mu.Unlock()
}

// release returns a slot of the account.
func (s *deliveryShares) release(account string) {
	s.mu.Lock()
	if s.inFlight[account]--; s.inFlight[account] == 0 {
		delete(s.inFlight, account)
	}
	s.total--
	s.signal()
	s.mu.Unlock()
}

// signal wakes every waiter to look again; mu is held.
func (s *deliveryShares) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}
