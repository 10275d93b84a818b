package localapi

import "sync/atomic"

// Kinds of an Event.
const (
	// EventCapture is a new capture.
	EventCapture = "capture"
	// EventClear is the store's clearing.
	EventClear = "clear"
)

// Event is a change of the Captures, as a subscriber gets it.
type Event struct {
	// Kind is EventCapture or EventClear.
	Kind string
	// Capture is the new capture without its raw bytes (EventCapture).
	Capture *Capture
}

// Subscription is a subscriber's feed of a Captures' changes. The store
// never waits for a subscriber: when one falls behind by more than its
// buffer, events are dropped for it and Missed says so, to re-read the
// store.
type Subscription struct {
	// C receives the events.
	C      <-chan Event
	events chan Event
	missed atomic.Bool
	store  *Captures
}

// Subscribe returns a feed of the store's changes from now on; Cancel it
// when done.
func (s *Captures) Subscribe() *Subscription {
	events := make(chan Event, subscriptionBuffer)
	sub := &Subscription{C: events, events: events, store: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs[sub] = struct{}{}
	return sub
}

// Missed reports whether events were dropped since it last said so; the
// subscriber then re-reads the store. Calling it after each event
// received is enough: events are dropped only while C holds a full
// buffer, so there is always an event to receive after a drop.
func (sub *Subscription) Missed() bool {
	return sub.missed.Swap(false)
}

// Cancel ends the subscription. C is not closed.
func (sub *Subscription) Cancel() {
	sub.store.mu.Lock()
	defer sub.store.mu.Unlock()
	delete(sub.store.subs, sub)
}

// publish gives ev to each subscriber that has room for it; s.mu held.
func (s *Captures) publish(ev Event) {
	for sub := range s.subs {
		select {
		case sub.events <- ev:
		default:
			sub.missed.Store(true)
		}
	}
}
