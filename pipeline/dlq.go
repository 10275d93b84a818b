package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/sluicehq/sluice/internal/defaults"
)

// DLQStream is the stream of events that can never be delivered to a
// destination (docs/architecture.md#streams).
const DLQStream = "SLUICE_DLQ"

// DLQSubjectPrefix starts the subject of every dead letter:
// sluice.dlq.<account_id>.<destination_id>.
const DLQSubjectPrefix = "sluice.dlq."

// DefaultDLQRetention is how long dead letters are kept by default.
const DefaultDLQRetention = 14 * 24 * time.Hour

// Headers of a dead letter, saying why the event was not delivered.
const (
	HeaderDLQClass          = "Sluice-Error-Class"     // permanent, or a sinks.Class
	HeaderDLQCode           = "Sluice-Error-Code"      // the service's error code
	HeaderDLQMessage        = "Sluice-Error-Message"   // the service's message
	HeaderDLQAttempts       = "Sluice-Attempts"        // deliveries tried
	HeaderDLQFirstFailure   = "Sluice-First-Failure"   // RFC 3339
	HeaderDLQSubscriptionID = "Sluice-Subscription-Id" // the route's subscription
	HeaderDLQDestinationID  = "Sluice-Destination-Id"  // the route's destination
	HeaderDLQEventID        = "Sluice-Event-Id"        // the event's event_id
	HeaderDLQEventSeq       = "Sluice-Event-Seq"       // the event's sequence in SLUICE_EVENTS
)

// DLQSubject is the subject of the dead letters of a destination.
func DLQSubject(accountID, destinationID string) string {
	return DLQSubjectPrefix + accountID + "." + destinationID
}

// EnsureDLQStream creates the dead-letter stream and its index bucket
// (EnsureDLQIndex), or updates them, keeping dead letters for retention
// (default DefaultDLQRetention) with replicas copies (default 1).
func EnsureDLQStream(ctx context.Context, js jetstream.JetStream, retention time.Duration, replicas int) (jetstream.Stream, error) {
	defaults.Positive(&retention, DefaultDLQRetention)
	defaults.Positive(&replicas, 1)
	stream, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        DLQStream,
		Description: "sluice events that could not be delivered, on " + DLQSubjectPrefix + "<account_id>.<destination_id>, with headers saying why",
		Subjects:    []string{DLQSubjectPrefix + ">"},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		Storage:     jetstream.FileStorage,
		MaxAge:      retention,
		Duplicates:  DuplicateWindow,
		Replicas:    replicas,
		// Direct gets read dead letters newest first (DeadLetters.List).
		AllowDirect: true,
	})
	if err != nil {
		return nil, fmt.Errorf("creating or updating stream %s: %w", DLQStream, err)
	}
	if _, err := EnsureDLQIndex(ctx, js, retention, replicas); err != nil {
		return nil, err
	}
	return stream, nil
}

// deadLetter is why one event of a route is dead-lettered.
type deadLetter struct {
	route        Route
	eventID      string
	eventSeq     uint64 // in SLUICE_EVENTS; 0: not known
	class        string
	code, msg    string
	attempts     uint64
	firstFailure time.Time
}

// message is the dead letter as stored: the event as stored in the events
// stream, with headers saying why. Its Nats-Msg-Id makes a retried write
// (the ack of the first was lost) store it once: it names the stored
// event, by its sequence in SLUICE_EVENTS (an event that is no envelope
// has no id, and two such must not be taken for one), and the
// subscription and destination, not the route, so that a replay's route
// and the live one do not both store a letter of an event within the
// duplicate window. Past the window, the index says it (see letterIndex).
func (d deadLetter) message(data []byte) *nats.Msg {
	msg := nats.NewMsg(DLQSubject(d.route.Subscription.AccountID, d.route.Destination.ID))
	msg.Data = data
	event := d.eventID
	if d.eventSeq > 0 {
		event = strconv.FormatUint(d.eventSeq, 10)
		msg.Header.Set(HeaderDLQEventSeq, event)
	}
	msg.Header.Set(jetstream.MsgIDHeader, ConsumerName(d.route.Subscription.ID, d.route.Destination.ID)+"."+event)
	msg.Header.Set(HeaderDLQClass, d.class)
	if d.code != "" {
		msg.Header.Set(HeaderDLQCode, d.code)
	}
	if d.msg != "" {
		msg.Header.Set(HeaderDLQMessage, d.msg)
	}
	msg.Header.Set(HeaderDLQAttempts, strconv.FormatUint(d.attempts, 10))
	msg.Header.Set(HeaderDLQFirstFailure, d.firstFailure.UTC().Format(time.RFC3339Nano))
	msg.Header.Set(HeaderDLQSubscriptionID, d.route.Subscription.ID)
	msg.Header.Set(HeaderDLQDestinationID, d.route.Destination.ID)
	msg.Header.Set(HeaderDLQEventID, d.eventID)
	return msg
}
