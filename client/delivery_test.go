package client_test

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/sinks"
)

// delivery stands for the delivery side of sluice behind the API: the
// status of destinations, their test writes and their dead letters. Its
// first status and test answer are failures, with every field set; the
// next ones have the fields that may be null unset.
type delivery struct {
	statuses, trials int
	// deleted are the filters and starts of the bulk deletes asked for.
	deleted []deletion
}

type deletion struct {
	filter pipeline.DeadLetterFilter
	after  uint64
}

var (
	failedAt = time.Date(2026, 11, 23, 4, 5, 6, 789_000_000, time.UTC)
	letters  = []pipeline.DeadLetter{
		{Seq: 42, EventID: "ev_2", SubscriptionID: "esb_1", Class: "permanent", Code: "LogEventTooOld", Message: "too <old> & stale",
			Attempts: 3, FirstFailure: failedAt, DeadLetteredAt: failedAt.Add(time.Second), Event: []byte(`{"event_id":"ev_2","object":{"q":"a<b&c"}}`)},
		{Seq: 7, EventID: "ev_1", SubscriptionID: "esb_1", Class: "malformed", Attempts: 1, FirstFailure: failedAt, DeadLetteredAt: failedAt, Event: []byte("not json")},
	}
)

func (d *delivery) DestinationStatus(context.Context, string, string) (pipeline.DestinationStatus, error) {
	d.statuses++
	if d.statuses > 1 {
		return pipeline.DestinationStatus{State: "ok"}, nil
	}
	return pipeline.DestinationStatus{
		State: "failing", LastSuccessAt: failedAt.Add(-time.Hour),
		LastError:     &pipeline.StatusError{Class: "access_denied", Code: "AccessDeniedException", Message: "not <allowed> & co", At: failedAt},
		EventsPending: 3, EventsDeadLettered: 2,
	}, nil
}

func (d *delivery) Write(context.Context, store.Destination, sinks.Record) pipeline.TrialResult {
	d.trials++
	if d.trials > 1 {
		return pipeline.TrialResult{Result: pipeline.TrialDelivered, Duration: 5 * time.Millisecond}
	}
	return pipeline.TrialResult{Result: pipeline.TrialFailed, Class: "access_denied", Code: "AccessDeniedException", Message: "denied", Duration: 12 * time.Millisecond}
}

// List lists the two letters newest first, limit at a time.
func (d *delivery) List(_ context.Context, _, _ string, before uint64, limit int) ([]pipeline.DeadLetter, bool, error) {
	var older []pipeline.DeadLetter
	for _, l := range letters {
		if before == 0 || l.Seq < before {
			older = append(older, l)
		}
	}
	if len(older) > limit {
		return older[:limit], true, nil
	}
	return older, false, nil
}

func (d *delivery) Redrive(context.Context, store.Destination, []uint64) (pipeline.RedriveReport, error) {
	return pipeline.RedriveReport{Redriven: 1, Failed: 1, Remaining: 1, Failures: []pipeline.RedriveFailure{{Seq: 42, Class: "permanent", Code: "LogEventTooOld", Message: "too <old>"}}}, nil
}

// Delete finds letter 42 alone.
func (d *delivery) Delete(_ context.Context, _, _ string, seq uint64) error {
	if seq != 42 {
		return pipeline.ErrDeadLetterNotFound
	}
	return nil
}

// DeleteMatching records the filter and reports one letter deleted; a
// delete from the oldest stops at its bound, after letter 7.
func (d *delivery) DeleteMatching(_ context.Context, _, _ string, f pipeline.DeadLetterFilter, after uint64) (pipeline.DeleteReport, error) {
	d.deleted = append(d.deleted, deletion{filter: f, after: after})
	if after == 0 {
		return pipeline.DeleteReport{Deleted: 1, Remaining: 1, Next: 7}, nil
	}
	return pipeline.DeleteReport{Deleted: 1}, nil
}
