package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// MaxDeleteScan is the most dead letters one DeleteMatching examines; the
// others wait for the next call, which continues after the last examined.
const MaxDeleteScan = 10000

// ErrDeadLetterNotFound is returned by Delete for a letter the destination
// does not have: deleted, redriven or expired already, or another
// destination's.
var ErrDeadLetterNotFound = errors.New("no such dead letter")

// DeadLetterFilter picks dead letters by what their headers say; an empty
// field picks any letter.
type DeadLetterFilter struct {
	SubscriptionID string
	Class          string
	EventID        string
}

func (f DeadLetterFilter) matches(d DeadLetter) bool {
	return (f.SubscriptionID == "" || f.SubscriptionID == d.SubscriptionID) &&
		(f.Class == "" || f.Class == d.Class) &&
		(f.EventID == "" || f.EventID == d.EventID)
}

// DeleteReport is what a DeleteMatching did.
type DeleteReport struct {
	// Deleted letters matched the filter and were removed.
	Deleted int
	// Remaining is how many dead letters the destination has afterwards.
	Remaining uint64
	// Next, when not 0, is the sequence of the last letter examined: the
	// call stopped at MaxDeleteScan letters, and the next continues after
	// it.
	Next uint64
}

// Delete removes the dead letter of a destination at seq, and its index
// key, so that the event may be dead-lettered again. It returns
// ErrDeadLetterNotFound when the destination has no letter at seq.
func (q *DeadLetters) Delete(ctx context.Context, accountID, destinationID string, seq uint64) error {
	subject := DLQSubject(accountID, destinationID)
	d, ok, err := q.get(ctx, subject, seq)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: %s of destination %s", ErrDeadLetterNotFound, DeadLetterID(seq), destinationID)
	}
	return q.remove(ctx, accountID, d)
}

// remove removes a letter read from SLUICE_DLQ, then its index key.
func (q *DeadLetters) remove(ctx context.Context, accountID string, d DeadLetter) error {
	if err := q.stream.DeleteMsg(ctx, d.Seq); err != nil {
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return fmt.Errorf("%w: %s of destination %s", ErrDeadLetterNotFound, d.ID(), d.DestinationID)
		}
		return fmt.Errorf("deleting dead letter %s: %w", d.ID(), err)
	}
	// The letter is gone, so the delete succeeded whatever becomes of its
	// key: a key left behind (the bucket unreachable a moment) names a
	// letter that is gone, which the next claim of the event reads and
	// takes over, so its removal is best effort and its error not the
	// caller's.
	_ = q.index.forget(ctx, letterKey(accountID, d.DestinationID, d.SubscriptionID, d.EventSeq), d.Seq)
	return nil
}

// DeleteMatching removes the dead letters of a destination that f picks,
// oldest first from the one after sequence after (0: the oldest), up to
// the newest when it starts. It examines at most MaxDeleteScan letters,
// reading one at a time, so its time is bounded and its memory does not
// grow with the letters stored.
func (q *DeadLetters) DeleteMatching(ctx context.Context, accountID, destinationID string, f DeadLetterFilter, after uint64) (DeleteReport, error) {
	subject := DLQSubject(accountID, destinationID)
	var report DeleteReport
	last, ok, err := q.lastUpTo(ctx, subject, 0)
	if err != nil {
		return DeleteReport{}, err
	}
	for seq, n := after+1, 0; ok && seq <= last.Seq; n++ {
		if n == MaxDeleteScan {
			report.Next = seq - 1
			break
		}
		d, found, err := q.next(ctx, subject, seq)
		if err != nil {
			return DeleteReport{}, err
		}
		if !found || d.Seq > last.Seq {
			break
		}
		seq = d.Seq + 1
		if !f.matches(d) {
			continue
		}
		switch err := q.remove(ctx, accountID, d); {
		case errors.Is(err, ErrDeadLetterNotFound):
			// removed meanwhile, by a redrive or another delete
		case err != nil:
			return DeleteReport{}, err
		default:
			report.Deleted++
		}
	}
	if report.Remaining, err = q.count(ctx, subject); err != nil {
		return DeleteReport{}, err
	}
	return report, nil
}
