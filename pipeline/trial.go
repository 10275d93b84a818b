package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/sinks"
)

// TrialLogStream is the CloudWatch Logs log stream a trial write goes to.
const TrialLogStream = "sluice-test"

// DefaultTrialTimeout bounds a trial write.
const DefaultTrialTimeout = 10 * time.Second

// Results of a trial write.
const (
	TrialDelivered = "delivered"
	TrialFailed    = "failed"
)

// TrialResult is the outcome of writing one record to a destination.
type TrialResult struct {
	Result string // TrialDelivered or TrialFailed
	// Class, Code and Message say why it failed: a sinks.Class, or
	// permanent or retryable for a record refused in a call the
	// destination answered; empty when delivered.
	Class, Code, Message string
	Duration             time.Duration
}

// Trial writes single records to destinations at once, with the sinks
// delivery uses, to check a destination's credentials and target.
type Trial struct {
	newSink SinkFactory
	timeout time.Duration
}

// NewTrial returns a Trial building sinks with newSink, each write bounded
// by timeout (default DefaultTrialTimeout).
func NewTrial(newSink SinkFactory, timeout time.Duration) *Trial {
	defaults.Positive(&timeout, DefaultTrialTimeout)
	return &Trial{newSink: newSink, timeout: timeout}
}

// Write writes rec to the destination once, without retries; a
// CloudWatch Logs destination gets it in the log stream TrialLogStream.
// Every failure is in the result: the sink that cannot be built, the call,
// the record refused, the timeout.
func (t *Trial) Write(ctx context.Context, d store.Destination, rec sinks.Record) TrialResult {
	start := time.Now()
	result := t.write(ctx, d, rec)
	result.Duration = time.Since(start)
	return result
}

func (t *Trial) write(ctx context.Context, d store.Destination, rec sinks.Record) TrialResult {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	sink, err := t.newSink(ctx, d)
	if err != nil {
		return TrialResult{Result: TrialFailed, Class: string(sinks.ClassInvalid), Message: err.Error()}
	}
	if s, ok := sink.(sinks.SubscriptionSink); ok {
		sink = s.ForSubscription(TrialLogStream)
	}
	out := write(ctx, sink, []entry{{record: rec, size: sink.Limits().Size(rec)}}, entryOf)
	err = out.err
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return TrialResult{Result: TrialFailed, Class: string(sinks.ClassUnavailable), Message: fmt.Sprintf("the destination did not answer within %s", t.timeout)}
	case err != nil:
		res := TrialResult{Result: TrialFailed, Class: string(sinks.ClassOf(err)), Message: err.Error()}
		var de *sinks.DestinationError
		if errors.As(err, &de) {
			res.Code = de.Code
			if de.Message != "" {
				res.Message = de.Message
			}
		}
		return res
	case len(out.accepted) != 1:
		r := out.verdicts[0]
		return TrialResult{Result: TrialFailed, Class: r.Status.String(), Code: r.Code, Message: r.Message}
	}
	return TrialResult{Result: TrialDelivered}
}
