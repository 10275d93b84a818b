package cloudwatchlogs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/sluicehq/sluice/sinks"
)

// maxSpan is the most time between the first and the last event of one
// PutLogEvents call, less a millisecond: AWS refuses a call spanning more
// than 24 hours.
const maxSpan = 24*time.Hour - time.Millisecond

// Codes of the Permanent results of records the sink refuses without
// sending them, and of events CloudWatch Logs rejected
// (rejectedLogEventsInfo). They go to the dead-letter stream with the code
// and a message saying why.
const (
	// CodeInvalidMessage: the record's Data is empty or not UTF-8, which
	// no log event's message may be.
	CodeInvalidMessage = "InvalidMessage"
	// CodeInvalidTimestamp: the record's Timestamp is before 1970, which
	// no log event's may be.
	CodeInvalidTimestamp = "InvalidTimestamp"
	// CodeTooOld: CloudWatch Logs rejected the event as older than 14
	// days (tooOldLogEventEndIndex).
	CodeTooOld = "LogEventTooOld"
	// CodeExpired: CloudWatch Logs rejected the event as older than the
	// log group's retention (expiredLogEventEndIndex).
	CodeExpired = "LogEventExpired"
	// CodeTooNew: CloudWatch Logs rejected the event as more than 2 hours
	// in the future (tooNewLogEventStartIndex).
	CodeTooNew = "LogEventTooNew"
)

// event is a record to send as a log event.
type event struct {
	index     int   // in the records of Write
	timestamp int64 // in milliseconds since 1970
}

// Write puts the records to the sink's log stream, one log event each
// (message the record's Data, timestamp its Timestamp in milliseconds), and
// returns one result per record, in the records' order. It sorts the events
// by timestamp, as CloudWatch Logs requires, and makes one PutLogEvents call
// for each run of events spanning less than 24 hours, in order; usually
// one. A missing log stream is created (a concurrent writer creating it too
// is fine) and the call made again; a missing log group is not created.
//
// An event CloudWatch Logs rejects (too old, expired, too new) is
// Permanent, with CodeTooOld, CodeExpired or CodeTooNew and a message
// saying why. A record CloudWatch Logs would refuse the whole call for (a
// message that is empty or not UTF-8, a timestamp before 1970) is
// Permanent and not sent.
//
// Write returns a *sinks.DestinationError when the first call failed as a
// whole; when a later call fails, its events and the unsent ones are
// Retryable with the failure's code, and the results of the calls made
// stand, also when the later call failed because ctx ended: the pipeline
// settles what was stored rather than sending it again. It returns ctx's
// error when ctx ended before the first call was answered. A batch beyond
// Limits fails whole, unsent, with ClassInvalid.
func (s *Sink) Write(ctx context.Context, records []sinks.Record) ([]sinks.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	results := make([]sinks.Result, len(records))
	if s.streamErr != nil {
		return nil, &sinks.DestinationError{Class: sinks.ClassInvalid, Code: "InvalidLogStream", Message: s.streamErr.Error(), Err: s.streamErr}
	}
	tally := limits.Tally()
	events := make([]event, 0, len(records))
	for i, r := range records {
		tally.Add(r)
		if refused, ok := refuse(r); ok {
			results[i] = refused
			continue
		}
		events = append(events, event{index: i, timestamp: r.Timestamp.UnixMilli()})
	}
	if err := tally.Err(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(events, func(a, b event) int {
		return cmp.Compare(a.timestamp, b.timestamp)
	})
	body := s.bodies.Get()
	defer s.bodies.Put(body)
	for first, run := range spans(events) {
		*body = s.encode((*body)[:0], records, run)
		rejected, err := s.putLogEvents(ctx, *body)
		switch {
		case err != nil && first == 0:
			return nil, err
		case err != nil:
			failed := failedResult(err)
			for _, e := range events[first:] {
				results[e.index] = failed
			}
			return results, nil
		}
		runResults(results, records, run, rejected)
	}
	return results, nil
}

// spans yields the runs of events, sorted, each spanning less than 24
// hours, with the index in events of each run's first.
func spans(events []event) iter.Seq2[int, []event] {
	return func(yield func(int, []event) bool) {
		start := 0
		for i := range events {
			if time.Duration(events[i].timestamp-events[start].timestamp)*time.Millisecond > maxSpan {
				if !yield(start, events[start:i]) {
					return
				}
				start = i
			}
		}
		if start < len(events) {
			yield(start, events[start:])
		}
	}
}

// refuse returns the Permanent result of a record that CloudWatch Logs
// would refuse the whole call for, and false for a record to send.
func refuse(r sinks.Record) (sinks.Result, bool) {
	switch {
	case len(r.Data) == 0 || !utf8.Valid(r.Data):
		return sinks.Result{Status: sinks.Permanent, Code: CodeInvalidMessage, Message: "a log event's message is 1 byte or more of UTF-8"}, true
	case r.Timestamp.UnixMilli() < 0:
		return sinks.Result{
			Status:  sinks.Permanent,
			Code:    CodeInvalidTimestamp,
			Message: fmt.Sprintf("timestamp %s is before 1970, which no log event's may be", r.Timestamp.UTC().Format(time.RFC3339Nano)),
		}, true
	}
	return sinks.Result{}, false
}

// runResults sets the results of the events of a run PutLogEvents
// accepted, from its rejections: events [0, tooOldLogEventEndIndex) are too
// old, then those up to expiredLogEventEndIndex expired (an event both is
// too old), and those from tooNewLogEventStartIndex on too new; all others
// are accepted.
func runResults(results []sinks.Result, records []sinks.Record, run []event, rejected *types.RejectedLogEventsInfo) {
	expiredEnd, tooOldEnd, tooNewStart := 0, 0, len(run)
	if rejected != nil {
		expiredEnd = clamp(rejected.ExpiredLogEventEndIndex, 0, len(run))
		tooOldEnd = clamp(rejected.TooOldLogEventEndIndex, 0, len(run))
		tooNewStart = clamp(rejected.TooNewLogEventStartIndex, len(run), len(run))
	}
	for i, e := range run {
		if i >= tooOldEnd && i >= expiredEnd && i < tooNewStart {
			results[e.index] = sinks.Result{Status: sinks.Accepted}
			continue
		}
		at := records[e.index].Timestamp.UTC().Format(time.RFC3339Nano)
		switch {
		case i < tooOldEnd:
			results[e.index] = sinks.Result{Status: sinks.Permanent, Code: CodeTooOld,
				Message: fmt.Sprintf("CloudWatch Logs rejected the event of %s as older than 14 days", at)}
		case i < expiredEnd:
			results[e.index] = sinks.Result{Status: sinks.Permanent, Code: CodeExpired,
				Message: fmt.Sprintf("CloudWatch Logs rejected the event of %s as older than the log group's retention", at)}
		default:
			results[e.index] = sinks.Result{Status: sinks.Permanent, Code: CodeTooNew,
				Message: fmt.Sprintf("CloudWatch Logs rejected the event of %s as more than 2 hours in the future", at)}
		}
	}
}

// clamp returns *index kept within [0, n], or otherwise when index is nil.
func clamp(index *int32, otherwise, n int) int {
	if index == nil {
		return otherwise
	}
	return min(max(int(*index), 0), n)
}

// failedResult returns the result of the events of a call that failed as a
// whole after an earlier call of the same Write succeeded.
func failedResult(err error) sinks.Result {
	r := sinks.Result{Status: sinks.Retryable, Code: string(sinks.ClassOf(err)), Message: err.Error()}
	var de *sinks.DestinationError
	if errors.As(err, &de) && de.Code != "" {
		r.Code = de.Code
	}
	return r
}
