package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DeadLetterIDPrefix starts the id of a dead letter: dl_<sequence in
// SLUICE_DLQ>. Sequences only grow, so sorting by sequence sorts by the time
// the events were dead-lettered.
const DeadLetterIDPrefix = "dl_"

// ErrDeadLetterID is wrapped by ParseDeadLetterID for a malformed id.
var ErrDeadLetterID = errors.New("not a dead letter id")

// DeadLetterID returns the id of the dead letter at seq in SLUICE_DLQ.
func DeadLetterID(seq uint64) string { return DeadLetterIDPrefix + strconv.FormatUint(seq, 10) }

// ParseDeadLetterID returns the SLUICE_DLQ sequence of a dead letter id, or
// an error wrapping ErrDeadLetterID.
func ParseDeadLetterID(id string) (uint64, error) {
	digits, ok := strings.CutPrefix(id, DeadLetterIDPrefix)
	seq, err := strconv.ParseUint(digits, 10, 64)
	if !ok || err != nil || seq == 0 || digits[0] == '+' {
		return 0, fmt.Errorf("%w: %q is not %s followed by a positive whole number", ErrDeadLetterID, id, DeadLetterIDPrefix)
	}
	return seq, nil
}

// DeadLetter is one event a destination could not take, as read back from
// SLUICE_DLQ.
type DeadLetter struct {
	// Seq is its sequence in SLUICE_DLQ; its id is DeadLetterID(Seq).
	Seq     uint64
	EventID string
	// EventSeq is the event's sequence in SLUICE_EVENTS, or 0 for a
	// letter stored before sluice recorded it.
	EventSeq       uint64
	SubscriptionID string
	DestinationID  string
	// Class, Code and Message say why (the Sluice-Error-* headers).
	Class, Code, Message string
	Attempts             uint64
	FirstFailure         time.Time
	// DeadLetteredAt is when SLUICE_DLQ stored it.
	DeadLetteredAt time.Time
	// Event is the event as it was stored in SLUICE_EVENTS.
	Event []byte
}

// ID returns the dead letter's id, dl_<sequence>.
func (d DeadLetter) ID() string { return DeadLetterID(d.Seq) }

// EventJSON returns the stored event as JSON, or nil when the stored bytes
// are not JSON (a dead letter of class malformed).
func (d DeadLetter) EventJSON() json.RawMessage {
	if !json.Valid(d.Event) {
		return nil
	}
	return json.RawMessage(d.Event)
}

// readDeadLetter makes a DeadLetter of its stored parts.
func readDeadLetter(seq uint64, h nats.Header, stored time.Time, data []byte) DeadLetter {
	attempts, _ := strconv.ParseUint(h.Get(HeaderDLQAttempts), 10, 64)
	first, _ := time.Parse(time.RFC3339Nano, h.Get(HeaderDLQFirstFailure))
	eventSeq, _ := strconv.ParseUint(h.Get(HeaderDLQEventSeq), 10, 64)
	return DeadLetter{
		Seq:            seq,
		EventID:        h.Get(HeaderDLQEventID),
		EventSeq:       eventSeq,
		SubscriptionID: h.Get(HeaderDLQSubscriptionID),
		DestinationID:  h.Get(HeaderDLQDestinationID),
		Class:          h.Get(HeaderDLQClass),
		Code:           h.Get(HeaderDLQCode),
		Message:        h.Get(HeaderDLQMessage),
		Attempts:       attempts,
		FirstFailure:   first,
		DeadLetteredAt: stored,
		Event:          data,
	}
}

// DeadLetters reads and removes the dead letters of destinations in
// SLUICE_DLQ. Its methods are safe for concurrent use.
type DeadLetters struct {
	js     jetstream.JetStream
	stream jetstream.Stream // SLUICE_DLQ, made with AllowDirect by EnsureDLQStream
	index  *letterIndex
}

// NewDeadLetters returns the reader of the dead-letter stream dlq, as
// EnsureDLQStream returns it.
func NewDeadLetters(js jetstream.JetStream, dlq jetstream.Stream) *DeadLetters {
	return &DeadLetters{js: js, stream: dlq, index: newLetterIndex(js)}
}

// List returns the dead letters of a destination, newest first: at most
// limit of those whose sequence is below before (0: from the newest), and
// whether older ones remain. It makes one direct get per letter, so its
// time and memory grow with limit, not with the letters stored.
func (q *DeadLetters) List(ctx context.Context, accountID, destinationID string, before uint64, limit int) ([]DeadLetter, bool, error) {
	subject := DLQSubject(accountID, destinationID)
	var out []DeadLetter
	upTo := uint64(0) // the first lookup: the newest
	if before > 0 {
		if before == 1 {
			return nil, false, nil
		}
		upTo = before - 1
	}
	for len(out) <= limit {
		d, ok, err := q.lastUpTo(ctx, subject, upTo)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			break
		}
		out = append(out, d)
		if d.Seq == 1 {
			break
		}
		upTo = d.Seq - 1
	}
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

// directGetRequest is the JetStream direct get request of the last message
// of a subject at or below a sequence (JSApiMsgGetRequest's multi_last and
// up_to_seq), which the nats.go API does not offer.
type directGetRequest struct {
	MultiLast []string `json:"multi_last"`
	UpToSeq   uint64   `json:"up_to_seq,omitempty"`
	Batch     int      `json:"batch"`
}

// lastUpTo returns the last message of subject with a sequence at most upTo
// (0: the newest), and false when there is none.
func (q *DeadLetters) lastUpTo(ctx context.Context, subject string, upTo uint64) (DeadLetter, bool, error) {
	nc := q.js.Conn()
	req, err := json.Marshal(directGetRequest{MultiLast: []string{subject}, UpToSeq: upTo, Batch: 1})
	if err != nil {
		return DeadLetter{}, false, err
	}
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return DeadLetter{}, false, fmt.Errorf("reading dead letters: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.PublishRequest("$JS.API.DIRECT.GET."+DLQStream, inbox, req); err != nil {
		return DeadLetter{}, false, fmt.Errorf("reading dead letters: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var (
		found DeadLetter
		ok    bool
	)
	for {
		msg, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return DeadLetter{}, false, fmt.Errorf("reading dead letters of %s: %w", subject, err)
		}
		switch status := msg.Header.Get("Status"); status {
		case "":
		case "204": // end of the batch
			return found, ok, nil
		case "404":
			return DeadLetter{}, false, nil
		default:
			return DeadLetter{}, false, fmt.Errorf("reading dead letters of %s: status %s %s", subject, status, msg.Header.Get("Description"))
		}
		seq, err := strconv.ParseUint(msg.Header.Get(jetstream.SequenceHeader), 10, 64)
		if err != nil {
			return DeadLetter{}, false, fmt.Errorf("reading dead letters of %s: bad %s header: %w", subject, jetstream.SequenceHeader, err)
		}
		stored, _ := time.Parse(time.RFC3339Nano, msg.Header.Get(jetstream.TimeStampHeaer))
		found, ok = readDeadLetter(seq, msg.Header, stored, msg.Data), true
	}
}

// get returns the dead letter at seq if it is one of subject's, and false
// when there is none such.
func (q *DeadLetters) get(ctx context.Context, subject string, seq uint64) (DeadLetter, bool, error) {
	msg, err := q.stream.GetMsg(ctx, seq)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return DeadLetter{}, false, nil
	case err != nil:
		return DeadLetter{}, false, fmt.Errorf("reading dead letter %d: %w", seq, err)
	case msg.Subject != subject:
		return DeadLetter{}, false, nil
	}
	return readDeadLetter(msg.Sequence, msg.Header, msg.Time, msg.Data), true, nil
}

// next returns the first dead letter of subject at or after seq, and false
// when there is none.
func (q *DeadLetters) next(ctx context.Context, subject string, seq uint64) (DeadLetter, bool, error) {
	msg, err := q.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return DeadLetter{}, false, nil
	case err != nil:
		return DeadLetter{}, false, fmt.Errorf("reading dead letters of %s from %d: %w", subject, seq, err)
	}
	return readDeadLetter(msg.Sequence, msg.Header, msg.Time, msg.Data), true, nil
}

// count returns how many dead letters subject has.
func (q *DeadLetters) count(ctx context.Context, subject string) (uint64, error) {
	info, err := q.stream.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return 0, fmt.Errorf("counting dead letters of %s: %w", subject, err)
	}
	return info.State.Subjects[subject], nil
}
