package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/retry"
	"github.com/sluicehq/sluice/sinks"
)

// DeadLetterClasses are the classes a dead letter can have: the sinks'
// refusals (permanent, too_large) and sluice's own (filter, malformed).
var DeadLetterClasses = []string{dlqTooLarge, dlqPermanent, dlqFilter, dlqMalformed}

// Classes of dead letters that are not a sink's.
const (
	dlqPermanent = "permanent" // the sink refused the record for good
	dlqTooLarge  = "too_large" // over the sink's MaxRecordBytes
	dlqFilter    = "filter"    // the filter could not decide: an error, a bound, a field over its limit
	dlqMalformed = "malformed" // the stored event is not an envelope
)

// pending is an event on its way: its message and the record it became.
type pending struct {
	msg jetstream.Msg
	entry
}

// idleWait bounds a worker's wait for events when it holds no batch: the
// wait ends, and the worker asks again. nats.go's iterator sends its next
// pull request from Next, and on a busy machine it can miss sending one;
// a bounded wait keeps that from stalling a route until the pull expires.
const idleWait = time.Second

// worker delivers the events of one route: it pulls them from the route's
// consumer, selects them, batches them to the sink's limits and writes
// them, up to DeliveryConfig.Concurrency batches at once, acknowledging
// each event once its record is accepted, never before.
type worker struct {
	plan     *atomic.Pointer[plan] // swapped when the route changes
	consumer jetstream.Consumer
	js       jetstream.JetStream // for dead letters
	cfg      DeliveryConfig
	log      *slog.Logger
	// naks counts the batches handed back to JetStream in a row, for the
	// growing delay of the next; a batch delivered resets it.
	naks atomic.Int64

	// inFlight holds a token for each batch being delivered; deliveries
	// counts them, so that the worker can wait for them to end.
	inFlight   chan struct{}
	deliveries sync.WaitGroup
	// paused is signalled by a delivery retried so long that the events
	// pulled ahead of it must be handed back (see pull).
	paused chan struct{}
	// replayed counts the events of a replay's range the worker has
	// settled and not yet recorded (see countReplayed); deliveries add
	// to it.
	replayed atomic.Uint64
	// index says which events have a letter held in SLUICE_DLQ, so that
	// each is dead-lettered once for the route.
	index *letterIndex
	// probe holds a token while a delivery retries a call that failed as
	// a whole (the destination refused it, or could not be reached): that
	// delivery alone probes the destination, and no other batch is
	// dispatched meanwhile, so that a failing destination receives the
	// calls of one backoff, not Concurrency of them.
	probe chan struct{}
	// account is the account of the route.
	account string
	// shares, when not nil, are the process's slots of batches in
	// delivery, divided between accounts: a batch takes one of its
	// account's share before it goes; work, when not nil, the slots of
	// events being filtered and selected, one taken for each event (see
	// fairShares).
	shares, work *fairShares
	// routes, when not nil, counts the routes of the account in the
	// process, which share its prefetch (prefetchBudget); prefetch is the
	// events the worker's iterator keeps pulled ahead.
	routes   *atomic.Int64
	budget   *prefetchBudget
	prefetch int
	// gone, when not nil and set, says the route was removed and its
	// consumer is being deleted with the events it holds: the worker
	// stopping hands none back (release, releasePulled), as no one could
	// get them.
	gone *atomic.Bool
}

func newWorker(p *atomic.Pointer[plan], consumer jetstream.Consumer, js jetstream.JetStream, cfg DeliveryConfig, log *slog.Logger) *worker {
	return &worker{
		plan: p, consumer: consumer, js: js, cfg: cfg, log: log,
		index:    newLetterIndex(js),
		account:  p.Load().route.Subscription.AccountID,
		inFlight: make(chan struct{}, cfg.Concurrency),
		paused:   make(chan struct{}, 1),
		probe:    make(chan struct{}, 1),
	}
}

// run delivers until ctx ends (then it returns nil, having handed the
// events it held back to JetStream at once) or the consumer goes away. It
// returns once every delivery it started has ended.
func (w *worker) run(ctx context.Context) error {
	if w.plan.Load().route.Replay != nil && w.cfg.Replays != nil {
		// The replay is tracked until every delivery has ended.
		stop, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			w.trackReplay(ctx, stop)
		}()
		defer func() {
			close(stop)
			<-stopped
		}()
	}
	defer w.deliveries.Wait()
	// A destination's target type cannot change, so neither can its limits.
	batch := NewBatch(w.plan.Load().sink.Limits(), w.cfg.Linger, func(p pending) int { return p.size })
	for {
		err := w.pull(ctx, batch)
		if errors.Is(err, errRepull) {
			continue
		}
		if !errors.Is(err, errPaused) {
			return err
		}
		// Pull again once the deliveries that paused pulling are done.
		w.deliveries.Wait()
		if ctx.Err() != nil {
			return nil
		}
	}
}

// errPaused ends pull when a delivery was retried so long that the events
// pulled ahead of it were handed back; pulling starts again after it.
var errPaused = errors.New("pulling paused while a delivery is retried")

// errRepull ends pull when nothing came for DeliveryConfig.RepullAfter, so
// that run makes new pull requests (see pull).
var errRepull = errors.New("nothing pulled for a while; pulling anew")

// pull pulls events into batches and hands them to deliveries until ctx
// ends, pulling fails (then it returns the error), or a delivery is
// retried long enough to pause pulling (errPaused).
//
// A worker that receives nothing for DeliveryConfig.RepullAfter (10 s)
// ends its iterator and makes a new one, with new pull requests, because
// a pull request that no server answers silences the route for good on
// nats.go v1.55. Its iterator asks for more only when its pull requests
// are answered (events, a 408 timeout, a 409 Leadership Change), after a
// reconnect, or after missed heartbeats, and it checks heartbeats only
// inside one Next: the check is armed (2 × 15 s) when Next starts and
// disarmed when it returns, so a Next bounded by idleWait never sees it.
// When the NATS node leading the consumer dies, its pull requests die
// with it, and the new leader answers only those its followers still
// track: they track them by reply subject and forget the subject when
// any request of it is filled, while the iterator keeps two or more
// requests open on one inbox. A process connected to the dead node pulls
// again as soon as it reconnects, before the consumer has a new leader,
// and that request is lost too. TestClusterRouteStallsWithoutRepull
// (cmd/sluice, make upstream-test) shows the route silent for good
// without the repull; TestClusterLosesNothing, delivering within seconds
// with it. No upstream issue found reports this (nats-io/nats.go#2063 is
// a 409 that Consume does not act on; #2135, a reconnect between two Next
// calls, is fixed in v1.55).
//
// The events pulled ahead wait in the iterator, not in progress: a
// delivery retried for long would keep them there past AckWait, and
// JetStream would hand them out again while this worker still holds them,
// so both copies would be delivered. Such a delivery pauses pulling, and
// pull hands them back at once, with the open batch.
func (w *worker) pull(ctx context.Context, batch *Batch[pending]) error {
	w.prefetch = w.targetPrefetch()
	it, err := w.consumer.Messages(jetstream.PullMaxMessages(w.prefetch))
	if err != nil {
		return fmt.Errorf("pulling: %w", err)
	}
	defer it.Stop()
	// Ending ctx drains the iterator: it pulls no more, and Next returns
	// the events already pulled, then ErrMsgIteratorClosed.
	drainOnCancel := context.AfterFunc(ctx, it.Drain)
	defer drainOnCancel()
	handBack := func() {
		it.Drain()
		w.release(batch.Take())
		w.releasePulled(it)
	}
	lastEvent := time.Now()
	for {
		select {
		case <-w.paused:
			handBack()
			return errPaused
		default:
		}
		if w.prefetchChanged() {
			// The account's routes here changed: pull anew with the
			// route's new part of its prefetch, keeping the open batch.
			it.Drain()
			w.releasePulled(it)
			return errRepull
		}
		wait := idleWait
		if deadline, ok := batch.Deadline(); ok {
			// The batch goes at the linger of its first record.
			wait = max(time.Until(deadline), time.Microsecond)
		}
		msg, err := it.Next(jetstream.NextMaxWait(wait))
		// One reading of the clock an event: it dates the event, starts
		// the linger of a batch it opens, and tells whether the batch is
		// due; a dispatch that waited for a slot reads it again.
		now := time.Now()
		switch {
		case ctx.Err() != nil:
			if err == nil {
				w.release([]pending{{msg: msg}})
			}
			handBack()
			return nil
		case err == nil:
			lastEvent = now
			if p, ok := w.prepare(ctx, msg); ok && !batch.Add(now, p) {
				if !w.dispatch(ctx, batch.Take()) {
					w.release([]pending{p})
					handBack()
					return errPaused
				}
				now = time.Now()
				if !batch.Add(now, p) && !w.dispatch(ctx, []pending{p}) {
					// It fits no batch: it goes alone, for the write path
					// to refuse it.
					handBack()
					return errPaused
				}
			}
		case errors.Is(err, nats.ErrTimeout), errors.Is(err, jetstream.ErrNoHeartbeat):
			// The linger ended, or nothing came: the batch goes below if
			// it is due, and the next Next pulls again.
			if w.cfg.RepullAfter > 0 && now.Sub(lastEvent) >= w.cfg.RepullAfter {
				it.Drain()
				w.releasePulled(it)
				if batch.Ready(now) && !w.dispatch(ctx, batch.Take()) {
					return errPaused
				}
				return errRepull
			}
		default:
			w.release(batch.Take())
			return fmt.Errorf("pulling: %w", err)
		}
		if batch.Ready(now) && !w.dispatch(ctx, batch.Take()) {
			handBack()
			return errPaused
		}
	}
}

// targetPrefetch is the events the worker should keep pulled ahead now:
// its part of its account's prefetch (prefetchBudget).
func (w *worker) targetPrefetch() int {
	if w.routes == nil {
		return w.cfg.Prefetch
	}
	return w.budget.prefetch(w.routes.Load())
}

// prefetchChanged reports whether the worker's part of its account's
// prefetch is now half or twice what it pulls with, or further.
func (w *worker) prefetchChanged() bool {
	if w.routes == nil {
		return false
	}
	t := w.targetPrefetch()
	return t <= w.prefetch/2 || t >= 2*w.prefetch
}

// dispatch starts the delivery of a batch once no delivery is probing a
// failing destination, fewer than Concurrency are under way and the
// route's account has a slot within its share (fairShares). It returns
// false, having handed the batch back, when pulling was paused, or ctx
// ended, while it waited.
func (w *worker) dispatch(ctx context.Context, batch []pending) bool {
	if len(batch) == 0 {
		return true
	}
	select {
	case w.probe <- struct{}{}:
		<-w.probe
	case <-w.paused:
		w.release(batch)
		return false
	case <-ctx.Done():
		w.release(batch)
		return false
	}
	select {
	case w.inFlight <- struct{}{}:
	case <-w.paused:
		w.release(batch)
		return false
	case <-ctx.Done():
		w.release(batch)
		return false
	}
	account := w.account
	if w.shares != nil && !w.shares.acquire(ctx, account, w.paused) {
		<-w.inFlight
		w.release(batch)
		return false
	}
	w.deliveries.Add(1)
	go func() {
		defer w.deliveries.Done()
		defer func() { <-w.inFlight }()
		if w.shares != nil {
			defer w.shares.release(account)
		}
		w.deliver(ctx, batch)
	}()
	return true
}

// pause asks pull to hand back the events pulled ahead.
func (w *worker) pause() {
	select {
	case w.paused <- struct{}{}:
	default:
	}
}

// prepare turns a message into the record the route delivers. It returns
// false for a message it has dealt with already: acknowledged (the filter
// rejected it) or dead-lettered.
func (w *worker) prepare(ctx context.Context, msg jetstream.Msg) (pending, bool) {
	p := w.plan.Load()
	if w.pastReplay(p, msg) {
		w.acked(opAck, msg.Ack())
		return pending{}, false
	}
	if !published(msg) {
		w.ack(msg)
		p.metrics.foreignMessage()
		return pending{}, false
	}
	e, refused := w.record(ctx, p, msg.Data())
	switch {
	case refused.class == "":
		return pending{msg: msg, entry: e}, true
	case refused.class == RedriveUnroutable:
		// Not a kind of the route's sources: the consumer's subjects were
		// changed after it was pulled. Another worker of the new version
		// gets it if it is selected there; here it is not.
		w.ack(msg)
	case refused.class == RedriveFiltered:
		w.ack(msg)
		p.metrics.filteredOut()
	case refused.class == dlqFilter && ctx.Err() != nil:
		// Stopping: the filter was interrupted, it did not fail.
		w.acked(opNak, msg.Nak())
	default:
		// The event is no envelope, or the filter could not decide (it
		// failed, ran out of its bounds or panicked): dead-lettered once
		// with the reason and terminated, never redelivered.
		w.deadLetter(ctx, msg, e.record.ID, refused.class, "", refused.text())
	}
	return pending{}, false
}

// record runs the plan on an event within a work slot of the route's
// account, taken for the event alone: filtering is the CPU of delivery,
// and an account's many routes wait for their share of it rather than
// take it from another account's. A refusal of class dlqFilter with ctx
// ended is a stop, not a failure.
func (w *worker) record(ctx context.Context, p *plan, data []byte) (entry, refusal) {
	if w.work != nil {
		if !w.work.acquire(ctx, w.account, nil) {
			return entry{}, refusal{class: dlqFilter, message: "stopping"}
		}
		defer w.work.release(w.account)
	}
	return p.record(ctx, data)
}

// published reports whether msg was stored by a publisher of events,
// which sets Nats-Msg-Id on every event (package producer, and so ingest
// and the audit relay). A message without one is no event of any account:
// a NATS client that may publish events can make JetStream store its
// acknowledgement (a small JSON of the stream and sequence) on any event
// subject by giving that subject as the reply subject of a publish, as
// subject permissions cannot forbid. Such a message is acknowledged and
// counted, neither delivered nor dead-lettered into the account whose
// subject it took.
func published(msg jetstream.Msg) bool {
	return msg.Headers().Get(jetstream.MsgIDHeader) != ""
}

// deliver writes a batch until every record is accepted or dead-lettered,
// or the retry budget is spent: the events not delivered then go back to
// JetStream with a delay. It acknowledges each event whose record the sink
// accepted. Once it has retried for a third of AckWait, it keeps the
// batch's events in progress, and pauses pulling.
func (w *worker) deliver(ctx context.Context, batch []pending) {
	if len(batch) == 0 {
		return
	}
	policy := deliveryRetry(w.cfg)
	start, lastProgress := time.Now(), time.Now()
	probing := false
	for attempt := 1; ; attempt++ {
		p := w.plan.Load()
		if attempt > 1 {
			p.metrics.retry(len(batch))
		}
		out := write(ctx, p.sink, batch, pendingEntry)
		if out.err != nil && ctx.Err() != nil {
			w.release(batch)
			return
		}
		if out.err != nil {
			err := out.err
			p.metrics.wrote(out.sent, out.bytes, out.took, writeFailed)
			p.metrics.callFailed(sinks.ClassOf(err), len(batch))
			p.status.callFailed(time.Now(), err)
			w.log.Warn("writing a batch failed", "destination_id", p.route.Destination.ID, "class", sinks.ClassOf(err), "records", len(batch), "attempt", attempt, "error", err)
			if !probing {
				select {
				case w.probe <- struct{}{}:
					probing = true
					defer func() { <-w.probe }()
				default:
					// Another delivery probes the destination: this
					// batch waits in JetStream instead of adding calls.
					w.giveBack(batch)
					return
				}
			}
		} else {
			batch = w.settle(ctx, p, batch, out)
			if out.sent > 0 {
				outcome := writeOK
				if len(batch) > 0 {
					outcome = writePartial
				}
				p.metrics.wrote(out.sent, out.bytes, out.took, outcome)
			}
			if len(batch) == 0 {
				w.naks.Store(0)
				return
			}
		}
		if ctx.Err() != nil {
			// Stopping as the sink answered: what it accepted is
			// acknowledged above, and the rest goes back at once.
			w.release(batch)
			return
		}
		if time.Since(start) >= w.cfg.RetryBudget {
			w.giveBack(batch)
			return
		}
		if time.Since(lastProgress) >= w.cfg.AckWait/3 {
			w.pause()
			for _, p := range batch {
				w.acked(opInProgress, p.msg.InProgress())
			}
			lastProgress = time.Now()
		}
		if retry.Sleep(ctx, policy.Delay(attempt-1)) != nil {
			w.release(batch)
			return
		}
	}
}

// deliveryRetry is the wait between attempts to deliver a batch: from
// RetryInitial, half as long again each time up to RetryMax, spread from
// half to one and a half times that, so that workers failing together do
// not retry together.
func deliveryRetry(cfg DeliveryConfig) retry.Policy {
	return retry.Policy{Initial: cfg.RetryInitial, Max: cfg.RetryMax, Multiplier: 1.5, Jitter: retry.Spread}
}

// pendingEntry is the entryOf of write for a worker's batch.
func pendingEntry(p pending) entry { return p.entry }

// settle acknowledges the accepted records of a written batch,
// dead-letters the permanent failures (unless ctx ended: then they are
// returned too) and returns the events to send again, counting each in the
// plan's metrics and recording the destination's answer in its status. A
// record refused unsent (too large) is no answer of the destination: it
// is dead-lettered, and counted as such only.
func (w *worker) settle(ctx context.Context, pl *plan, batch []pending, out written) []pending {
	now := time.Now()
	for _, i := range out.accepted {
		w.ack(batch[i].msg)
		pl.metrics.accepted(now, batch[i].record.Timestamp)
	}
	retry := make([]pending, 0, len(out.retry))
	refusedBySink := 0
	for _, i := range out.permanent {
		p, v := batch[i], out.verdicts[i]
		if v.class == dlqPermanent {
			refusedBySink++
		}
		if ctx.Err() != nil {
			// Stopping: no dead letter can be stored now; the worker
			// that gets the event again refuses it again.
			retry = append(retry, p)
			continue
		}
		w.deadLetter(ctx, p.msg, p.record.ID, v.class, v.Code, v.Message)
	}
	for _, i := range out.retry {
		retry = append(retry, batch[i])
	}
	pl.metrics.settled(len(out.accepted), len(out.retry), refusedBySink)
	if out.sent > 0 {
		pl.status.answered(now, len(out.accepted), out.lastRefused(), len(out.retry) > 0)
	}
	return retry
}

// ack acknowledges an event the worker is done with: delivered, or left
// out.
func (w *worker) ack(msg jetstream.Msg) {
	if err := msg.Ack(); err != nil {
		w.acked(opAck, err)
		return
	}
	w.countReplayed(msg)
}

// term terminates the message of an event dead-lettered.
func (w *worker) term(msg jetstream.Msg) {
	if err := msg.Term(); err != nil {
		w.acked(opTerm, err)
		return
	}
	w.countReplayed(msg)
}

// acked counts an acknowledgement of operation op that failed with err:
// JetStream hands the event out again after AckWait, so nothing is lost,
// but the event is delivered twice (ack, term) or later (nak).
func (w *worker) acked(op string, err error) {
	if err != nil {
		w.cfg.Metrics.ackFailed(op)
		w.log.Debug("acknowledging an event failed", "operation", op, "error", err)
	}
}

// giveBack hands events JetStream will deliver again after a delay growing
// with the batches given back in a row.
func (w *worker) giveBack(batch []pending) {
	delay := retry.Policy{Initial: w.cfg.RetryMax, Max: w.cfg.NakDelayMax}.Delay(int(w.naks.Add(1) - 1))
	w.log.Warn("delivery keeps failing; the events go back to JetStream", "destination_id", w.plan.Load().route.Destination.ID, "events", len(batch), "retry_in", delay)
	for _, p := range batch {
		w.acked(opNak, p.msg.NakWithDelay(delay))
	}
}

// release hands events back to JetStream at once, for a worker that stops:
// the worker that replaces it, here or in another process, gets them.
func (w *worker) release(batch []pending) {
	if w.dropped() {
		return
	}
	for _, p := range batch {
		w.acked(opNak, p.msg.Nak())
	}
}

// releasePulled hands back the events a drained iterator still holds, so
// that they need not wait out AckWait.
func (w *worker) releasePulled(it jetstream.MessagesContext) {
	for !w.dropped() {
		msg, err := it.Next(jetstream.NextMaxWait(time.Second))
		if err != nil {
			return
		}
		w.acked(opNak, msg.Nak())
	}
}

// dropped reports whether the route was removed: the events the worker
// holds go with its consumer.
func (w *worker) dropped() bool { return w.gone != nil && w.gone.Load() }

// deadLetter stores an event that can never be delivered in the
// dead-letter stream with the reason, then terminates its message. If the
// dead letter cannot be stored, the message is handed back to be tried
// again later: an event is never dropped.
func (w *worker) deadLetter(ctx context.Context, msg jetstream.Msg, eventID, class, code, message string) {
	attempts, seq := uint64(1), uint64(0)
	if meta, err := msg.Metadata(); err == nil {
		attempts, seq = meta.NumDelivered, meta.Sequence.Stream
	}
	p := w.plan.Load()
	route := p.route
	subject := DLQSubject(route.Subscription.AccountID, route.Destination.ID)
	key := letterKey(route.Subscription.AccountID, route.Destination.ID, route.Subscription.ID, seq)
	var rev uint64
	if key != "" {
		var (
			held bool
			err  error
		)
		rev, held, err = w.index.claim(ctx, key, subject)
		if err != nil {
			w.log.Warn("the dead letter of the event cannot be claimed now; the event will be tried again", "event_id", eventID, "class", class, "error", err)
			w.acked(opNak, msg.NakWithDelay(w.cfg.RetryMax))
			return
		}
		if held {
			w.log.Info("event not dead-lettered again: a letter of it is held", "event_id", eventID, "event_seq", seq, "class", class)
			w.term(msg)
			return
		}
	}
	letter := deadLetter{route: route, eventID: eventID, eventSeq: seq, class: class, code: code, msg: message, attempts: attempts, firstFailure: time.Now()}
	ack, err := w.storeLetter(ctx, letter, msg.Data(), subject, rev)
	if err != nil {
		w.log.Error("storing a dead letter failed; the event will be tried again", "event_id", eventID, "class", class, "error", err)
		if err := w.index.release(context.WithoutCancel(ctx), key); err != nil {
			w.log.Warn("releasing the claim of a dead letter failed; it lapses by itself", "event_id", eventID, "error", err)
		}
		w.acked(opNak, msg.NakWithDelay(w.cfg.RetryMax))
		return
	}
	if key != "" {
		if err := w.index.written(ctx, key, rev, ack.Sequence); err != nil {
			w.log.Warn("indexing a dead letter failed; its claim lapses, and the event may be dead-lettered again", "event_id", eventID, "dead_letter_id", DeadLetterID(ack.Sequence), "error", err)
		}
	}
	w.log.Warn("event dead-lettered", "event_id", eventID, "destination_id", route.Destination.ID, "class", class, "code", code, "reason", message)
	w.term(msg)
	p.metrics.deadLetter(class)
}

// storeLetter writes a dead letter to SLUICE_DLQ. A letter JetStream takes
// for a duplicate (its Nats-Msg-Id written within the duplicate window)
// whose original is gone, deleted meanwhile, is written again under the
// id and the revision of its claim (rev), so that the event has a letter.
func (w *worker) storeLetter(ctx context.Context, letter deadLetter, data []byte, subject string, rev uint64) (*jetstream.PubAck, error) {
	msg := letter.message(data)
	ack, err := w.js.PublishMsg(ctx, msg)
	if err != nil || !ack.Duplicate || rev == 0 {
		return ack, err
	}
	stream, err := w.index.dlq(ctx)
	if err != nil {
		return nil, err
	}
	if held, err := letterHeld(ctx, stream, subject, ack.Sequence); err != nil || held {
		return ack, err
	}
	msg.Header.Set(jetstream.MsgIDHeader, msg.Header.Get(jetstream.MsgIDHeader)+"."+strconv.FormatUint(rev, 10))
	return w.js.PublishMsg(ctx, msg)
}
