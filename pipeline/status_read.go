package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/internal/kvread"
)

// States of a destination.
const (
	StateOK       = "ok"       // the last write succeeded
	StateRetrying = "retrying" // writes fail, for less than FailingAfter
	StateFailing  = "failing"  // calls fail as a whole, for FailingAfter or longer
)

// DestinationStatus is the delivery status of a destination, merged from
// the records of every process that writes to it.
type DestinationStatus struct {
	State         string
	LastSuccessAt time.Time    // zero: never, or not within the records' TTL
	LastError     *StatusError // nil: none
	// EventsPending are the events of the destination's routes not yet
	// acknowledged: not handed out, or being delivered.
	EventsPending uint64
	// EventsDeadLettered are the destination's dead letters in SLUICE_DLQ.
	EventsDeadLettered uint64
}

// StatusReader reads the delivery status of destinations: the records of
// the status bucket, the route consumers of the events stream and the
// dead-letter stream.
type StatusReader struct {
	js           jetstream.JetStream
	kv           jetstream.KeyValue
	failingAfter time.Duration
}

// NewStatusReader returns a reader of the status bucket kv, judging a
// destination failing after failingAfter (default DefaultFailingAfter).
func NewStatusReader(js jetstream.JetStream, kv jetstream.KeyValue, failingAfter time.Duration) *StatusReader {
	defaults.Positive(&failingAfter, DefaultFailingAfter)
	return &StatusReader{js: js, kv: kv, failingAfter: failingAfter}
}

// DestinationStatus returns the status of a destination of an account. It
// returns the error of JetStream when it cannot read it.
func (r *StatusReader) DestinationStatus(ctx context.Context, accountID, destinationID string) (DestinationStatus, error) {
	records, err := r.records(ctx, accountID, destinationID)
	if err != nil {
		return DestinationStatus{}, err
	}
	status := MergeStatus(records, time.Now(), r.failingAfter)
	if status.EventsPending, err = r.pending(ctx, destinationID); err != nil {
		return DestinationStatus{}, err
	}
	if status.EventsDeadLettered, err = r.deadLettered(ctx, accountID, destinationID); err != nil {
		return DestinationStatus{}, err
	}
	return status, nil
}

// records returns every process's record of the destination. It reads
// them with batched direct gets (package kvread), making no consumer: the
// status is a management read any account can repeat at will.
func (r *StatusReader) records(ctx context.Context, accountID, destinationID string) ([]StatusRecord, error) {
	entries, err := kvread.Current(ctx, r.js.Conn(), r.kv.Bucket(), accountID+"."+destinationID+".*")
	if err != nil {
		return nil, fmt.Errorf("reading delivery status: %w", err)
	}
	var records []StatusRecord
	for _, entry := range entries {
		var rec StatusRecord
		if json.Unmarshal(entry.Value(), &rec) == nil {
			records = append(records, rec)
		}
	}
	return records, nil
}

// pending sums the pending and unacknowledged events of the destination's
// route consumers.
func (r *StatusReader) pending(ctx context.Context, destinationID string) (uint64, error) {
	stream, err := r.js.Stream(ctx, EventsStream)
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", EventsStream, err)
	}
	var sum uint64
	consumers := stream.ListConsumers(ctx)
	for info := range consumers.Info() {
		if isRouteConsumer(info.Name) && strings.HasSuffix(info.Name, "_"+destinationID) {
			sum += info.NumPending + uint64(info.NumAckPending)
		}
	}
	if err := consumers.Err(); err != nil {
		return 0, fmt.Errorf("listing the consumers of %s: %w", EventsStream, err)
	}
	return sum, nil
}

// deadLettered counts the destination's messages in the dead-letter
// stream.
func (r *StatusReader) deadLettered(ctx context.Context, accountID, destinationID string) (uint64, error) {
	stream, err := r.js.Stream(ctx, DLQStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", DLQStream, err)
	}
	subject := DLQSubject(accountID, destinationID)
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", DLQStream, err)
	}
	return info.State.Subjects[subject], nil
}

// MergeStatus merges the records of the processes writing to a
// destination, at now: the latest success, the latest error, and a state
// from the latest write of any process. A destination whose latest write
// failed as a whole is failing once calls have failed as a whole since
// failingAfter before now, counting from the latest success of any
// process; with no record, it is ok.
func MergeStatus(records []StatusRecord, now time.Time, failingAfter time.Duration) DestinationStatus {
	status := DestinationStatus{State: StateOK}
	var latest StatusRecord
	for _, rec := range records {
		if rec.LastSuccessAt.After(status.LastSuccessAt) {
			status.LastSuccessAt = rec.LastSuccessAt
		}
		if rec.LastError != nil && (status.LastError == nil || rec.LastError.At.After(status.LastError.At)) {
			e := *rec.LastError
			status.LastError = &e
		}
		if rec.LastWriteAt.After(latest.LastWriteAt) {
			latest = rec
		}
	}
	switch latest.LastOutcome {
	case OutcomePartial:
		status.State = StateRetrying
	case OutcomeFailed:
		status.State = StateRetrying
		// The run of failures began at the earliest of those still
		// failing, but not before the latest success.
		var since time.Time
		for _, rec := range records {
			if rec.LastOutcome == OutcomeFailed && !rec.FailingSince.IsZero() && (since.IsZero() || rec.FailingSince.Before(since)) {
				since = rec.FailingSince
			}
		}
		if status.LastSuccessAt.After(since) {
			since = status.LastSuccessAt
		}
		if now.Sub(since) >= failingAfter {
			status.State = StateFailing
		}
	}
	return status
}
