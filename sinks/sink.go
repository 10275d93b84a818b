package sinks

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Record is one event to write: its envelope as delivered.
type Record struct {
	// ID is the event's event_id; Kinesis uses it as the partition key.
	ID string
	// Data is the event's envelope, compact JSON without a trailing
	// newline; a sink adds its own framing (Firehose a newline).
	Data []byte
	// Timestamp is the event's event_timestamp (CloudWatch Logs orders
	// and splits by it).
	Timestamp time.Time
}

// Limits are what one call of a sink's service accepts.
type Limits struct {
	// MaxRecords is the most records in one batch.
	MaxRecords int
	// MaxBatchBytes is the most bytes in one batch, each record counted
	// by Size.
	MaxBatchBytes int
	// MaxRecordBytes is the most bytes of one record, counted by Size. A
	// larger record can never be written: the pipeline dead-letters it
	// without giving it to the sink.
	MaxRecordBytes int
	// RecordOverhead is added to the length of each record's Data by Size:
	// the framing or per-record cost the service counts (26 bytes per
	// CloudWatch Logs event, 1 for Firehose's newline).
	RecordOverhead int
	// CountID adds the length of the record's ID to its Size (Kinesis
	// counts the partition key).
	CountID bool
}

// Size returns the bytes a record counts for against MaxBatchBytes and
// MaxRecordBytes.
func (l Limits) Size(r Record) int {
	n := len(r.Data) + l.RecordOverhead
	if l.CountID {
		n += len(r.ID)
	}
	return n
}

// CodeBatchTooLarge is the Code of the *DestinationError of Tally.Err.
const CodeBatchTooLarge = "BatchTooLarge"

// Tally counts the records of a batch against Limits as a sink encodes
// them, so that a sink refuses a batch beyond its Limits in the pass that
// encodes it, not in one of its own. Limits.Tally returns an empty one.
type Tally struct {
	limits                  Limits
	records, bytes, largest int
}

// Tally returns an empty tally of l.
func (l Limits) Tally() Tally { return Tally{limits: l} }

// Add counts r.
func (t *Tally) Add(r Record) {
	n := t.limits.Size(r)
	t.records++
	t.bytes += n
	t.largest = max(t.largest, n)
}

// Err returns a *DestinationError of ClassInvalid and CodeBatchTooLarge
// when the records counted are more than MaxRecords, or more than
// MaxBatchBytes bytes, or one of them more than MaxRecordBytes: a batch
// the pipeline should not have made, which a sink does not send.
func (t *Tally) Err() error {
	var msg string
	switch l := t.limits; {
	case t.records > l.MaxRecords:
		msg = fmt.Sprintf("%d records, more than the %d of one call", t.records, l.MaxRecords)
	case t.largest > l.MaxRecordBytes:
		msg = fmt.Sprintf("a record of %d bytes, more than the %d of one record", t.largest, l.MaxRecordBytes)
	case t.bytes > l.MaxBatchBytes:
		msg = fmt.Sprintf("%d bytes, more than the %d of one call", t.bytes, l.MaxBatchBytes)
	default:
		return nil
	}
	return &DestinationError{Class: ClassInvalid, Code: CodeBatchTooLarge, Message: msg}
}

// Status is what became of one record of a batch.
type Status int

const (
	// Accepted: the service stored the record.
	Accepted Status = iota
	// Retryable: the record was not stored this time (throttled, an
	// internal failure); the same record may succeed later.
	Retryable
	// Permanent: the record can never be stored as it is (too large,
	// malformed for the service, too old); it goes to the dead-letter
	// stream.
	Permanent
)

func (s Status) String() string {
	switch s {
	case Accepted:
		return "accepted"
	case Retryable:
		return "retryable"
	case Permanent:
		return "permanent"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Result is the outcome of one record of a batch.
type Result struct {
	Status Status
	// Code and Message are the service's error code and message, for a
	// record not accepted ("ProvisionedThroughputExceededException", ...).
	Code, Message string
}

// Sink writes batches of records to one destination. Its methods are safe
// for concurrent use.
type Sink interface {
	// Limits returns what one Write accepts; it does not change.
	Limits() Limits
	// Write writes the batch and returns one Result per record, in order.
	// It returns a *DestinationError instead when the call failed as a
	// whole (no record was stored), and ctx's error when ctx ended before
	// any record was stored; a sink of several calls returns the results
	// of those answered once one is. The batch respects Limits: at most
	// MaxRecords records, none of more than MaxRecordBytes and
	// MaxBatchBytes in all, each counted by Limits.Size: the pipeline
	// refuses a larger record unsent, and a sink refuses no record for its
	// size. A batch beyond Limits, which breaks this contract, fails whole,
	// unsent, with Tally.Err's *DestinationError of ClassInvalid.
	Write(ctx context.Context, records []Record) ([]Result, error)
}

// SubscriptionSink is a Sink whose records go apart for each subscription
// they are delivered for: CloudWatch Logs writes each subscription's events
// to a log stream named after it. The pipeline writes the batches of a
// route through ForSubscription(the route's subscription id), so that the
// routes of one destination share its sink and client.
type SubscriptionSink interface {
	Sink
	// ForSubscription returns the sink of the records of one
	// subscription. It does no I/O.
	ForSubscription(subscriptionID string) Sink
}

// Class is the kind of a failure of a whole call to a destination.
type Class string

// Classes of DestinationError.
const (
	// ClassThrottled: the service refused the call for its rate.
	ClassThrottled Class = "throttled"
	// ClassUnavailable: the service failed (5xx) or could not be reached.
	ClassUnavailable Class = "unavailable"
	// ClassAccessDenied: the credentials are valid but may not write there.
	ClassAccessDenied Class = "access_denied"
	// ClassBadCredentials: the credentials are unknown, expired or wrong,
	// or the role cannot be assumed.
	ClassBadCredentials Class = "bad_credentials"
	// ClassNotFound: the stream, delivery stream or log group does not
	// exist.
	ClassNotFound Class = "not_found"
	// ClassInvalid: the service refused the request as malformed; a bug of
	// the sink, or a limit it did not know.
	ClassInvalid Class = "invalid"
)

// DestinationError is a call that failed as a whole: no record of the batch
// was stored. Every class is worth retrying later (an operator may fix a
// role or create a stream), but only throttling and unavailability soon.
type DestinationError struct {
	Class Class
	// Code and Message are the service's, when it answered.
	Code, Message string
	// Err is the underlying error.
	Err error
}

// Error returns the class, code and message.
func (e *DestinationError) Error() string {
	msg := string(e.Class)
	if e.Code != "" {
		msg += ": " + e.Code
	}
	if e.Message != "" {
		msg += ": " + e.Message
	} else if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns Err.
func (e *DestinationError) Unwrap() error { return e.Err }

// Transient reports whether the failure usually passes within seconds
// (throttling, unavailability), as opposed to needing an operator.
func (e *DestinationError) Transient() bool {
	return e.Class == ClassThrottled || e.Class == ClassUnavailable
}

// ClassOf returns the class of err if it is a *DestinationError, and
// ClassUnavailable otherwise.
func ClassOf(err error) Class {
	var de *DestinationError
	if errors.As(err, &de) {
		return de.Class
	}
	return ClassUnavailable
}
