package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/retry"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/sinks"
)

// Limits of one Redrive.
const (
	// MaxRedrive is the most dead letters one Redrive sends again; the
	// others stay for the next.
	MaxRedrive = 10000
	// MaxRedriveFailures is the most failures a RedriveReport lists.
	MaxRedriveFailures = 100
	// redriveAttempts is how many times a batch, or its records the
	// destination refused for now, are sent before they are left.
	redriveAttempts = 3
)

// redriveRetry is the wait before each attempt of a redriven batch after
// the first: DefaultRetryInitial, twice as long each time.
var redriveRetry = retry.Policy{Initial: DefaultRetryInitial}

// Classes of RedriveFailure besides those of dead letters and sinks.Class.
const (
	// RedriveNotFound: no dead letter of the destination has this id
	// (redriven already, expired, or another destination's).
	RedriveNotFound = "unknown_id"
	// RedriveUnroutable: the letter's subscription is gone, no longer sends
	// to the destination, or no longer has a source of the event's kind.
	RedriveUnroutable = "unroutable"
	// RedriveFiltered: the subscription's filter now rejects the event.
	RedriveFiltered = "filtered"
	// RedriveRetryable: the destination refused the record for now
	// (throttled) on every attempt.
	RedriveRetryable = "retryable"
)

// Subscriptions finds the subscriptions of dead letters. *store.Store
// implements it.
type Subscriptions interface {
	// GetSubscription returns a subscription, or an error wrapping
	// store.ErrNotFound.
	GetSubscription(ctx context.Context, accountID, id string) (store.Subscription, error)
}

// RedriveFailure is a dead letter a Redrive did not deliver: it stays in
// SLUICE_DLQ as it was.
type RedriveFailure struct {
	Seq                  uint64
	Class, Code, Message string
}

// RedriveReport is what a Redrive did.
type RedriveReport struct {
	// Redriven letters were accepted by the destination and removed.
	Redriven int
	// Failed letters were tried and stay.
	Failed int
	// Remaining is how many dead letters the destination has afterwards:
	// the failed ones, those over MaxRedrive, those left when the
	// destination failed as a whole, and any dead-lettered meanwhile.
	Remaining uint64
	// Failures are the first MaxRedriveFailures failures.
	Failures []RedriveFailure
}

// Redriver sends dead letters to their destination again, after a fix.
type Redriver struct {
	letters *DeadLetters
	subs    Subscriptions
	newSink SinkFactory
	env     *filters.Env
	filters *filters.Cache
	log     *slog.Logger
}

// NewRedriver returns a Redriver of the letters of q, writing through the
// sinks newSink makes (the same factory delivery uses) and selecting with
// the subscriptions' current sources, compiled in env.
func NewRedriver(q *DeadLetters, subs Subscriptions, env *filters.Env, newSink SinkFactory, log *slog.Logger) *Redriver {
	return &Redriver{letters: q, subs: subs, newSink: newSink, env: env, filters: filters.NewCache(env, 256), log: log}
}

// Redrive sends the dead letters of dest at seqs (none: all, oldest first,
// at most MaxRedrive) to dest again. Each is sent as its route delivers
// now: its subscription's current source selects fields and filters, and
// records go in batches to the sink's Limits. A letter the destination
// accepts is removed from SLUICE_DLQ; one that fails again stays unchanged,
// and the report says why. Once a call fails as a whole after its retries,
// the letters not yet tried stay too. It returns an error only when
// JetStream or the sink's construction fails.
func (r *Redriver) Redrive(ctx context.Context, dest store.Destination, seqs []uint64) (RedriveReport, error) {
	sink, err := r.newSink(ctx, dest)
	if err != nil {
		return RedriveReport{}, fmt.Errorf("building the sink of destination %s: %w", dest.ID, err)
	}
	run := &redriveRun{r: r, dest: dest, sink: sink, subscriptions: make(map[string]*redriveRoute)}
	subject := DLQSubject(dest.AccountID, dest.ID)
	if err := r.each(ctx, subject, seqs, run); err != nil {
		return RedriveReport{}, err
	}
	for _, id := range run.order {
		if run.stopped {
			break // the batches left stay in SLUICE_DLQ, untried
		}
		if err := run.flush(ctx, run.subscriptions[id]); err != nil {
			return RedriveReport{}, err
		}
	}
	if run.report.Remaining, err = r.letters.count(ctx, subject); err != nil {
		return RedriveReport{}, err
	}
	return run.report, nil
}

// each hands run the letters of subject to redrive, until run stops.
func (r *Redriver) each(ctx context.Context, subject string, seqs []uint64, run *redriveRun) error {
	if len(seqs) > 0 {
		seen := make(map[uint64]bool, min(len(seqs), MaxRedrive))
		for _, seq := range seqs[:min(len(seqs), MaxRedrive)] {
			if seen[seq] {
				continue // sent once, however often it is named
			}
			seen[seq] = true
			d, ok, err := r.letters.get(ctx, subject, seq)
			if err != nil {
				return err
			}
			if !ok {
				run.fail(seq, RedriveNotFound, "", fmt.Sprintf("this destination has no dead letter %s: it was redriven already, expired, or is not this destination's", DeadLetterID(seq)))
				continue
			}
			if err := run.add(ctx, d); err != nil || run.stopped {
				return err
			}
		}
		return nil
	}
	// Letters dead-lettered from now on wait for the next redrive.
	last, ok, err := r.letters.lastUpTo(ctx, subject, 0)
	if err != nil || !ok {
		return err
	}
	for seq, n := uint64(1), 0; seq <= last.Seq && n < MaxRedrive; n++ {
		d, ok, err := r.letters.next(ctx, subject, seq)
		if err != nil {
			return err
		}
		if !ok || d.Seq > last.Seq {
			return nil
		}
		if err := run.add(ctx, d); err != nil || run.stopped {
			return err
		}
		seq = d.Seq + 1
	}
	return nil
}

// redriveRun is the state of one Redrive.
type redriveRun struct {
	r             *Redriver
	dest          store.Destination
	sink          sinks.Sink
	subscriptions map[string]*redriveRoute // by subscription id
	order         []string                 // subscription ids, first seen first
	report        RedriveReport
	// stopped is set once a call failed as a whole: the destination is
	// still broken, and the letters left are not tried.
	stopped bool
}

// redriveRoute is how the letters of one subscription are sent, and its
// batch being filled.
type redriveRoute struct {
	routePlan
	refused *RedriveFailure // why none of its letters can go, if so
	batch   []redriveRecord
	bytes   int
}

type redriveRecord struct {
	seq uint64
	key string // in DLQIndexBucket
	entry
}

func (run *redriveRun) fail(seq uint64, class, code, message string) {
	run.report.Failed++
	if len(run.report.Failures) < MaxRedriveFailures {
		run.report.Failures = append(run.report.Failures, RedriveFailure{Seq: seq, Class: class, Code: code, Message: message})
	}
}

// add selects a letter's record and adds it to its subscription's batch,
// writing the batch first when the record would not fit.
func (run *redriveRun) add(ctx context.Context, d DeadLetter) error {
	route, err := run.route(ctx, d.SubscriptionID)
	if err != nil {
		return err
	}
	if route.refused != nil {
		run.fail(d.Seq, route.refused.Class, "", route.refused.Message)
		return nil
	}
	e, refused := route.record(ctx, d.Event)
	if refused.class != "" {
		run.fail(d.Seq, refused.class, "", refused.text())
		return nil
	}
	limits, size := route.sink.Limits(), e.size
	if len(route.batch)+1 > limits.MaxRecords || route.bytes+size > limits.MaxBatchBytes {
		if err := run.flush(ctx, route); err != nil || run.stopped {
			return err
		}
	}
	key := letterKey(run.dest.AccountID, run.dest.ID, d.SubscriptionID, d.EventSeq)
	route.batch = append(route.batch, redriveRecord{seq: d.Seq, key: key, entry: e})
	route.bytes += size
	return nil
}

// route returns how the letters of a subscription are sent, made at its
// first letter.
func (run *redriveRun) route(ctx context.Context, subscriptionID string) (*redriveRoute, error) {
	if route, ok := run.subscriptions[subscriptionID]; ok {
		return route, nil
	}
	route := &redriveRoute{}
	run.subscriptions[subscriptionID] = route
	run.order = append(run.order, subscriptionID)
	sub, err := run.r.subs.GetSubscription(ctx, run.dest.AccountID, subscriptionID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		route.refused = &RedriveFailure{Class: RedriveUnroutable, Message: fmt.Sprintf("subscription %s no longer exists", subscriptionID)}
		return route, nil
	case err != nil:
		delete(run.subscriptions, subscriptionID)
		run.order = run.order[:len(run.order)-1]
		return nil, fmt.Errorf("reading subscription %s: %w", subscriptionID, err)
	case !slices.Contains(sub.DestinationIDs, run.dest.ID):
		route.refused = &RedriveFailure{Class: RedriveUnroutable, Message: fmt.Sprintf("subscription %s no longer sends to destination %s", subscriptionID, run.dest.ID)}
		return route, nil
	}
	rp, err := newRoutePlan(run.r.env, run.r.filters, nil, sub, run.sink)
	if err != nil {
		route.refused = &RedriveFailure{Class: RedriveUnroutable, Message: fmt.Sprintf("subscription %s: %v", subscriptionID, err)}
		return route, nil
	}
	route.routePlan = rp
	return route, nil
}

// flush writes the batch of a route, retrying the records the destination
// refused for now, removes the letters it accepted from SLUICE_DLQ, and
// reports the others. A call that fails as a whole on its last attempt
// stops the run.
func (run *redriveRun) flush(ctx context.Context, route *redriveRoute) error {
	batch := route.batch
	route.batch, route.bytes = nil, 0
	for attempt := 1; len(batch) > 0; attempt++ {
		out := write(ctx, route.sink, batch, redriveEntry)
		if out.err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		last := attempt == redriveAttempts
		if out.err != nil {
			var de *sinks.DestinationError
			if !errors.As(out.err, &de) || !de.Transient() || last {
				code, message := "", out.err.Error()
				if de != nil {
					code, message = de.Code, de.Message
				}
				for _, i := range out.permanent {
					v := out.verdicts[i]
					run.fail(batch[i].seq, v.class, v.Code, v.Message)
				}
				for _, i := range out.retry {
					run.fail(batch[i].seq, string(sinks.ClassOf(out.err)), code, message)
				}
				run.stopped = true
				return nil
			}
		} else {
			for _, i := range out.accepted {
				run.accepted(ctx, batch[i])
			}
			for _, i := range out.permanent {
				v := out.verdicts[i]
				run.fail(batch[i].seq, v.class, v.Code, v.Message)
			}
			again := make([]redriveRecord, 0, len(out.retry))
			for _, i := range out.retry {
				if v := out.verdicts[i]; last {
					run.fail(batch[i].seq, RedriveRetryable, v.Code, v.Message)
				} else {
					again = append(again, batch[i])
				}
			}
			batch = again
			if len(batch) == 0 || ctx.Err() != nil {
				// Stopped as the sink answered: the letters it accepted
				// are removed above, and the others stay.
				return ctx.Err()
			}
		}
		if err := retry.Sleep(ctx, redriveRetry.Delay(attempt-1)); err != nil {
			return err
		}
	}
	return nil
}

// redriveEntry is the entryOf of write for a redrive's batch.
func redriveEntry(r redriveRecord) entry { return r.entry }

// accepted removes a delivered letter from SLUICE_DLQ, and its index key.
// When that fails the letter stays, and a later redrive delivers it again:
// at least once.
func (run *redriveRun) accepted(ctx context.Context, rec redriveRecord) {
	run.report.Redriven++
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := run.r.letters.stream.DeleteMsg(ctx, rec.seq); err != nil {
		run.r.log.Warn("a redriven dead letter could not be removed; a later redrive sends it again", "destination_id", run.dest.ID, "dead_letter_id", DeadLetterID(rec.seq), "error", err)
		return
	}
	if err := run.r.letters.index.forget(ctx, rec.key, rec.seq); err != nil {
		run.r.log.Warn("the index key of a redriven dead letter could not be removed; the next dead letter of the event replaces it", "destination_id", run.dest.ID, "dead_letter_id", DeadLetterID(rec.seq), "error", err)
	}
}

// List returns the dead letters of a destination as DeadLetters.List
// does, so that one Redriver serves both calls of the API.
func (r *Redriver) List(ctx context.Context, accountID, destinationID string, before uint64, limit int) ([]DeadLetter, bool, error) {
	return r.letters.List(ctx, accountID, destinationID, before, limit)
}

// Delete removes a dead letter as DeadLetters.Delete does.
func (r *Redriver) Delete(ctx context.Context, accountID, destinationID string, seq uint64) error {
	return r.letters.Delete(ctx, accountID, destinationID, seq)
}

// DeleteMatching removes dead letters as DeadLetters.DeleteMatching does.
func (r *Redriver) DeleteMatching(ctx context.Context, accountID, destinationID string, f DeadLetterFilter, after uint64) (DeleteReport, error) {
	return r.letters.DeleteMatching(ctx, accountID, destinationID, f, after)
}
