package sessionservice

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/sluicehq/sluice/appsession"
)

// slots bounds the requests the service answers at once, in all and for
// each account, and runs each in a goroutine of its own: a subscription
// hands its messages to one callback at a time, so that without them a
// slow request (a record that evicts a session, reading all of the
// account's) would hold every request after it on its subject, of every
// account. A request waits for one of the process's slots; one of an
// account that holds its share is refused at once, so that one account's
// requests, however many, leave slots to the others.
type slots struct {
	all        chan struct{} // a value per request under way
	perAccount int

	mu      sync.Mutex
	held    map[string]int // by account; accounts with requests under way only
	stopped bool
	running sync.WaitGroup
}

func newSlots(max, perAccount int) *slots {
	return &slots{all: make(chan struct{}, max), perAccount: perAccount, held: map[string]int{}}
}

// slotRefusal says why run did not start a request.
type slotRefusal int

const (
	started slotRefusal = iota
	// accountBusy: the account has its share of requests under way.
	accountBusy
	// stopping: ctx ended, or stop was called.
	stopping
)

// run runs answer in a goroutine of its own once the account has a slot,
// waiting for one of the process's until ctx ends; the slot is freed when
// answer returns. It returns why it did not run it, or started.
func (s *slots) run(ctx context.Context, account string, answer func()) slotRefusal {
	s.mu.Lock()
	switch {
	case s.stopped:
		s.mu.Unlock()
		return stopping
	case s.held[account] >= s.perAccount:
		s.mu.Unlock()
		return accountBusy
	}
	s.held[account]++
	s.running.Add(1)
	s.mu.Unlock()
	select {
	case s.all <- struct{}{}:
	case <-ctx.Done():
		s.release(account)
		return stopping
	}
	go func() {
		defer func() {
			<-s.all
			s.release(account)
		}()
		answer()
	}()
	return started
}

// release frees the account's slot and ends its request.
func (s *slots) release(account string) {
	s.mu.Lock()
	if s.held[account]--; s.held[account] <= 0 {
		delete(s.held, account)
	}
	s.mu.Unlock()
	s.running.Done()
}

// stop refuses the requests that come from now on, and waits for those
// under way to end.
func (s *slots) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.running.Wait()
}

// requestAccount returns the account_id of a request, "" if it has none
// or is not JSON: such requests share one share, and are refused by their
// handler.
func requestAccount(data []byte) string {
	if len(data) > appsession.MaxRequest {
		return ""
	}
	var req struct {
		AccountID string `json:"account_id"`
	}
	_ = json.Unmarshal(data, &req)
	return req.AccountID
}
