package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// heldLetters are the events of a route's subscription with a letter held
// in SLUICE_DLQ for its destination, by their sequence in SLUICE_EVENTS
// (or, for letters stored before sluice recorded it, by event id). A
// replay's worker reads them when it first dead-letters an event for what
// the event holds (no envelope, or a filter that cannot decide), and
// adds those it dead-letters, so that replaying a range does not
// dead-letter again the events the live route, or an earlier replay, did.
// It is safe for concurrent use; its zero value has read nothing.
type heldLetters struct {
	mu   sync.Mutex
	read bool
	seqs map[uint64]bool
	ids  map[string]bool
}

// heldReadWait bounds the wait for each letter while they are read.
const heldReadWait = 5 * time.Second

// has reports whether a letter of the event at seq in SLUICE_EVENTS
// (with eventID, "" if it has none) is held for the route, reading the
// letters the first time.
func (h *heldLetters) has(ctx context.Context, js jetstream.JetStream, route Route, seq uint64, eventID string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.read {
		if err := h.readLetters(ctx, js, route); err != nil {
			return false, err
		}
		h.read = true
	}
	return (seq > 0 && h.seqs[seq]) || (eventID != "" && h.ids[eventID]), nil
}

// add records a letter stored of the event at seq, once the letters are read.
func (h *heldLetters) add(seq uint64, eventID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.read {
		h.note(strconv.FormatUint(seq, 10), eventID)
	}
}

// note records a letter of an event: by its sequence when the letter has
// one, else by its id.
func (h *heldLetters) note(seq, eventID string) {
	if n, err := strconv.ParseUint(seq, 10, 64); err == nil && n > 0 {
		h.seqs[n] = true
	} else if eventID != "" {
		h.ids[eventID] = true
	}
}

// readLetters reads the headers of the letters of the route's destination
// and notes those of its subscription. It reads every letter of the
// destination once, in an ordered consumer of their headers alone.
func (h *heldLetters) readLetters(ctx context.Context, js jetstream.JetStream, route Route) error {
	subject := DLQSubject(route.Subscription.AccountID, route.Destination.ID)
	stream, err := js.Stream(ctx, DLQStream)
	if err != nil {
		return fmt.Errorf("reading the dead letters of %s: %w", subject, err)
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return fmt.Errorf("reading the dead letters of %s: %w", subject, err)
	}
	h.seqs, h.ids = map[uint64]bool{}, map[string]bool{}
	if info.State.Subjects[subject] == 0 {
		return nil
	}
	c, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}, HeadersOnly: true})
	if err != nil {
		return fmt.Errorf("reading the dead letters of %s: %w", subject, err)
	}
	for {
		msg, err := c.Next(jetstream.FetchMaxWait(heldReadWait))
		if err != nil {
			return fmt.Errorf("reading the dead letters of %s: %w", subject, err)
		}
		hdr := msg.Headers()
		if hdr.Get(HeaderDLQSubscriptionID) == route.Subscription.ID {
			h.note(hdr.Get(HeaderDLQEventSeq), hdr.Get(HeaderDLQEventID))
		}
		meta, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("reading the dead letters of %s: %w", subject, err)
		}
		if meta.NumPending == 0 {
			return nil
		}
	}
}
