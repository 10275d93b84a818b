package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/store"
)

// ReplayStore keeps replay jobs. store.Replays implements it; see its
// methods for the errors each returns.
type ReplayStore interface {
	CreateReplay(ctx context.Context, accountID, subscriptionID string, in store.Replay, count store.RangeCounter) (store.Replay, error)
	GetReplay(ctx context.Context, accountID, id string) (store.Replay, error)
	ListReplays(ctx context.Context, accountID, subscriptionID string) ([]store.Replay, error)
}

// SubscriptionReader reads a subscription, as a replay is as its
// subscription is now. *store.Store implements it.
type SubscriptionReader interface {
	GetSubscription(ctx context.Context, accountID, id string) (store.Subscription, error)
}

// Replayer starts replays: it checks a replay's range against what the
// events stream holds, finds the range's last sequence, and stores the
// job, which every process's reconciler then delivers (see Reconciler).
type Replayer struct {
	stream        jetstream.Stream
	store         ReplayStore
	subscriptions SubscriptionReader
	now           func() time.Time
}

// NewReplayer returns a Replayer of the events of stream, storing jobs in
// replays, reading their subscriptions from subscriptions.
func NewReplayer(stream jetstream.Stream, replays ReplayStore, subscriptions SubscriptionReader) *Replayer {
	return &Replayer{stream: stream, store: replays, subscriptions: subscriptions, now: time.Now}
}

// StartReplay stores a running replay of the subscription's events from
// since to until (the zero time: now), with the number of events of its
// range (see countRange). It returns a *store.ValidationError
// (matching store.ErrInvalid) for a since outside the stream's retention or
// not before until, or an until in the future; an error wrapping
// store.ErrNotFound if the account has no such subscription; or the error
// of the stream or the store.
func (r *Replayer) StartReplay(ctx context.Context, accountID, subscriptionID string, since, until time.Time) (store.Replay, error) {
	now := r.now()
	if until.IsZero() {
		until = now
	}
	if until.After(now) {
		return store.Replay{}, &store.ValidationError{Field: "until", Msg: fmt.Sprintf("%s is in the future; give a time up to now, or leave until out", until.UTC().Format(time.RFC3339))}
	}
	if !since.Before(until) {
		return store.Replay{}, &store.ValidationError{Field: "since", Msg: fmt.Sprintf("%s is not before until (%s); give an earlier since", since.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339))}
	}
	info, err := r.stream.Info(ctx)
	if err != nil {
		return store.Replay{}, fmt.Errorf("reading the events stream: %w", err)
	}
	if err := checkRetained(info, now, since); err != nil {
		return store.Replay{}, err
	}
	end, err := r.lastSeqAt(ctx, info.State, until)
	if err != nil {
		return store.Replay{}, fmt.Errorf("finding the last event before %s: %w", until.UTC().Format(time.RFC3339), err)
	}
	count := func(ctx context.Context, sub store.Subscription) (uint64, error) {
		return r.countRange(ctx, Route{Subscription: sub}.Subjects(), since, end)
	}
	return r.store.CreateReplay(ctx, accountID, subscriptionID, store.Replay{Since: since, Until: until, EndSeq: end}, count)
}

// GetReplay returns a replay of the account, with its state as of now
// (see settled); see store.Replays.GetReplay for the errors.
func (r *Replayer) GetReplay(ctx context.Context, accountID, id string) (store.Replay, error) {
	replay, err := r.store.GetReplay(ctx, accountID, id)
	if err != nil {
		return store.Replay{}, err
	}
	return r.settled(ctx, replay)
}

// ListReplays returns the replays of a subscription of the account,
// newest first, with their states as of now (see settled); see
// store.Replays.ListReplays for the errors.
func (r *Replayer) ListReplays(ctx context.Context, accountID, subscriptionID string) ([]store.Replay, error) {
	replays, err := r.store.ListReplays(ctx, accountID, subscriptionID)
	if err != nil {
		return nil, err
	}
	for i, replay := range replays {
		if replays[i], err = r.settled(ctx, replay); err != nil {
			return nil, err
		}
	}
	return replays, nil
}

// settled returns the replay done if it has nothing left to deliver
// although the store still has it running: its subscription was deleted,
// or the destinations it had not yet delivered to were taken out of the
// subscription. No worker would mark such a replay done.
func (r *Replayer) settled(ctx context.Context, replay store.Replay) (store.Replay, error) {
	if replay.State != store.ReplayRunning {
		return replay, nil
	}
	sub, err := r.subscriptions.GetSubscription(ctx, replay.AccountID, replay.SubscriptionID)
	var current *store.Subscription
	switch {
	case err == nil:
		current = &sub
	case !errors.Is(err, store.ErrNotFound):
		return store.Replay{}, err
	}
	if replay.Finished(current) {
		replay.State = store.ReplayDone
	}
	return replay, nil
}

// checkRetained returns a *store.ValidationError of since if the stream
// may have dropped events at or after since, saying which boundary it is
// and the earliest since to give. With a retention (MaxAge), that is since
// before it: events expire only once older than the retention, so a since
// within it loses nothing, however quiet the stream was before its oldest
// event (a purge is not told apart from a quiet time, and the replay then
// starts at the oldest event held). With none, it is since before the
// oldest event held once the stream has dropped some (purged, or its
// storage lost).
func checkRetained(info *jetstream.StreamInfo, now, since time.Time) error {
	if maxAge := info.Config.MaxAge; maxAge > 0 {
		retained := now.Add(-maxAge)
		if !since.Before(retained) {
			return nil
		}
		// The boundary moves with the clock: the next whole minute leaves
		// the caller time to send the request again.
		earliest := retained.Truncate(time.Minute).Add(time.Minute)
		return &store.ValidationError{Field: "since", Msg: fmt.Sprintf("%s is too early: the stream keeps events for %s (its retention, sluice serve --retention), so older events are gone; give a since at or after %s",
			since.UTC().Format(time.RFC3339), retentionText(maxAge), earliest.UTC().Format(time.RFC3339))}
	}
	first := info.State.FirstTime
	if info.State.FirstSeq <= 1 || !since.Before(first) {
		return nil
	}
	return &store.ValidationError{Field: "since", Msg: fmt.Sprintf("%s is before the oldest event the stream still holds (stored %s): the events stored before it are gone; give a since at or after %s",
		since.UTC().Format(time.RFC3339), first.UTC().Format(time.RFC3339Nano), first.UTC().Format(time.RFC3339Nano))}
}

// retentionText writes a retention as people do: 72h, 90m, 1h30m; not
// 72h0m0s.
func retentionText(d time.Duration) string {
	text := d.String()
	if d%time.Minute == 0 {
		text = strings.TrimSuffix(text, "0s")
	}
	if d%time.Hour == 0 {
		text = strings.TrimSuffix(text, "0m")
	}
	return text
}

// lastSeqAt returns the sequence of the last event stored at or before t
// (0 if there is none), searching the stream by halves.
func (r *Replayer) lastSeqAt(ctx context.Context, state jetstream.StreamState, t time.Time) (uint64, error) {
	if state.Msgs == 0 || !state.LastTime.After(t) {
		return state.LastSeq, nil
	}
	// The first event at or after a sequence, whatever its subject: the
	// stream may have gaps.
	next := func(seq uint64) (*jetstream.RawStreamMsg, error) {
		return r.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(">"))
	}
	// lo..hi holds the first sequence whose next event is after t; the
	// last event is after t, so hi starts there.
	lo, hi := state.FirstSeq, state.LastSeq
	for lo < hi {
		mid := lo + (hi-lo)/2
		msg, err := next(mid)
		if err != nil {
			return 0, err
		}
		if msg.Time.After(t) {
			hi = mid
		} else {
			lo = msg.Sequence + 1
		}
	}
	msg, err := next(lo)
	if err != nil {
		return 0, err
	}
	return msg.Sequence - 1, nil
}
