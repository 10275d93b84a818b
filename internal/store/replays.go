package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/schemas"
)

// PrefixReplay starts the id of every replay.
const PrefixReplay = "rpl_"

// States of a Replay.
const (
	// ReplayRunning is the state of a replay whose events are still being
	// delivered again.
	ReplayRunning = "running"
	// ReplayDone is the state of a replay that delivered every event of
	// its range to every destination of its subscription.
	ReplayDone = "done"
)

// Replay is a job that delivers the stored events of a subscription again,
// from Since to EndSeq, to each destination of the subscription, through
// consumers of its own, alongside the subscription's live delivery.
type Replay struct {
	ID             string `json:"id"`
	AccountID      string `json:"account_id"`
	SubscriptionID string `json:"subscription_id"`
	// Since is the time of the first event to deliver again.
	Since time.Time `json:"since"`
	// Until is the time of the last event to deliver again.
	Until time.Time `json:"until"`
	// EndSeq is the stream sequence of the last event of the range: the
	// stream's last sequence at or before Until when the replay was made.
	// Events stored after it are not delivered again.
	EndSeq uint64 `json:"end_seq"`
	// State is ReplayRunning or ReplayDone.
	State string `json:"state"`
	// DeliveredTo are the destinations that have received the whole range
	// again, sorted; the replay is done once every destination of its
	// subscription has.
	DeliveredTo []string `json:"delivered_to,omitempty"`
	// RangeEvents is how many events the range holds: those of the
	// subscription's sources stored from Since to EndSeq, counted when the
	// replay was made. Each destination receives them again.
	RangeEvents uint64 `json:"range_events"`
	// EventsTotal is how many events the replay delivers, counting an
	// event once for each destination: RangeEvents times the destinations
	// the subscription had when the replay was made.
	EventsTotal uint64 `json:"events_total"`
	// Replayed counts, by destination, the events of the range the
	// replay's workers have settled there (delivered, left out by the
	// filter, or dead-lettered), as the workers report them (AddReplayed);
	// RangeEvents once the destination has the whole range (FinishReplay).
	Replayed  map[string]uint64 `json:"replayed,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
}

// Progress returns how many of the replay's events have been replayed,
// and of how many, counting an event once for each destination. While it
// runs, replayed is at most total: workers may report an event twice (it
// was handed out again), and total may count a few events stored while
// the range was counted (see pipeline.Replayer.StartReplay). Once it is
// done, both are what was replayed, so that the final figures agree even
// when destinations were taken out of the subscription or added to it
// meanwhile.
func (r Replay) Progress() (replayed, total uint64) {
	for _, n := range r.Replayed {
		replayed += n
	}
	if r.State == ReplayDone {
		return replayed, replayed
	}
	return min(replayed, r.EventsTotal), r.EventsTotal
}

// replayKey is the key of a replay: replays.<account_id>.<replay_id>.
func replayKey(accountID, replayID string) string { return "replays." + accountID + "." + replayID }

// allReplays matches the key of every replay.
const allReplays = "replays.>"

// Replays are the replays of subscriptions the store keeps: what each
// replays, and how far its delivery has come. The API starts and shows
// them; the pipeline delivers them and records its progress.
type Replays struct{ store *Store }

// Replays returns the store's replays.
func (s *Store) Replays() Replays { return Replays{s} }

// RangeCounter counts the events of a replay's range, given the
// subscription as it is when the replay is made (see CreateReplay).
type RangeCounter func(ctx context.Context, sub Subscription) (uint64, error)

// CreateReplay creates a running replay of a subscription of the account
// with the Since, Until and EndSeq of in; the store sets ID, AccountID,
// State, RangeEvents, EventsTotal (RangeEvents times the subscription's
// destinations) and CreatedAt. RangeEvents is what count returns, called
// once the account is known to be within its limit of running replays, so
// that a replay over the limit costs no count; with a nil count, it is
// in's. The caller checks that the range is one the stream holds.
//
// It returns a *ValidationError (matching ErrInvalid) if Until is before
// Since, a *LimitError (matching ErrLimit) if the account has
// Limits.RunningReplays running, an error wrapping ErrNotFound if the
// account has no such subscription, or the error of count.
func (rs Replays) CreateReplay(ctx context.Context, accountID, subscriptionID string, in Replay, count RangeCounter) (Replay, error) {
	if in.Since.IsZero() || in.Until.Before(in.Since) {
		return Replay{}, &ValidationError{Field: "until", Msg: "must not be before since"}
	}
	sub, err := rs.store.GetSubscription(ctx, accountID, subscriptionID)
	if err != nil {
		return Replay{}, fmt.Errorf("creating replay: %w", err)
	}
	id, createdAt := rs.store.newID(PrefixReplay)
	r := Replay{
		ID:             id,
		AccountID:      accountID,
		SubscriptionID: subscriptionID,
		Since:          in.Since.UTC(),
		Until:          in.Until.UTC(),
		EndSeq:         in.EndSeq,
		RangeEvents:    in.RangeEvents,
		State:          ReplayRunning,
		CreatedAt:      createdAt,
	}
	err = rs.store.withinLimit(ctx, accountID, countedReplays, r.ID, func() error {
		if count != nil {
			n, err := count(ctx, sub)
			if err != nil {
				return err
			}
			r.RangeEvents = n
		}
		r.EventsTotal = r.RangeEvents * uint64(len(sub.DestinationIDs))
		if err := rs.store.createJSON(ctx, replayKey(accountID, r.ID), r); err != nil {
			return fmt.Errorf("creating replay %s: %w", r.ID, err)
		}
		return nil
	})
	if err != nil {
		return Replay{}, err
	}
	return r, nil
}

// GetReplay returns the replay of the account with the id. It returns an
// error wrapping ErrNotFound if the account has no such replay, including
// when another account has.
func (rs Replays) GetReplay(ctx context.Context, accountID, id string) (Replay, error) {
	if err := checkOwnedID(accountID, PrefixReplay, id); err != nil {
		return Replay{}, fmt.Errorf("replay %q: %w", id, err)
	}
	r, _, err := getRecord[Replay](ctx, rs.store, replayKey(accountID, id))
	if err != nil {
		return Replay{}, fmt.Errorf("reading replay %s: %w", id, err)
	}
	return r, nil
}

// ListReplays returns the replays of a subscription of the account, newest
// first. It returns an error wrapping ErrNotFound if accountID is not an
// account id.
func (rs Replays) ListReplays(ctx context.Context, accountID, subscriptionID string) ([]Replay, error) {
	if err := schemas.CheckID(schemas.PrefixAccount, accountID); err != nil {
		return nil, fmt.Errorf("account %q: %w", accountID, ErrNotFound)
	}
	all, err := listRecords[Replay](ctx, rs.store, "replays."+accountID+".*")
	if err != nil {
		return nil, fmt.Errorf("listing replays: %w", err)
	}
	replays := slices.DeleteFunc(all, func(r Replay) bool { return r.SubscriptionID != subscriptionID })
	slices.SortFunc(replays, func(a, b Replay) int { return strings.Compare(b.ID, a.ID) })
	return replays, nil
}

// FinishReplay records that a replay has delivered its whole range to a
// destination, its count of events replayed there becoming RangeEvents,
// and marks it done once every destination of its subscription (or none,
// the subscription deleted) has it. Recording it again changes nothing,
// so every process delivering the replay may call it. It returns an error wrapping ErrNotFound if the replay does not
// exist, or one wrapping ErrConflict if it kept changing under concurrent
// writes.
func (rs Replays) FinishReplay(ctx context.Context, accountID, id, destinationID string) error {
	if err := checkOwnedID(accountID, PrefixReplay, id); err != nil {
		return fmt.Errorf("replay %q: %w", id, err)
	}
	_, _, err := modify(ctx, rs.store, replayKey(accountID, id), func(r *Replay) error {
		if !slices.Contains(r.DeliveredTo, destinationID) {
			r.DeliveredTo = append(r.DeliveredTo, destinationID)
			slices.Sort(r.DeliveredTo)
		}
		r.setReplayed(destinationID, r.RangeEvents)
		var pending []string
		sub, err := rs.store.GetSubscription(ctx, accountID, r.SubscriptionID)
		switch {
		case err == nil:
			pending = slices.DeleteFunc(sub.DestinationIDs, func(id string) bool { return slices.Contains(r.DeliveredTo, id) })
		case !errors.Is(err, ErrNotFound):
			return err
		}
		if len(pending) == 0 {
			r.State = ReplayDone
		}
		return nil
	}, writeOptions{}, nil)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("finishing replay %s: %w", id, err)
	}
	if err != nil {
		return fmt.Errorf("replay %s: %w", id, err)
	}
	return nil
}

// AddReplayed adds n events of the range to those a replay has replayed
// to a destination; a destination that has the whole range already
// (FinishReplay) keeps its count. Every process delivering the replay
// adds what it settled. It returns an error wrapping ErrNotFound if the
// replay does not exist, or one wrapping ErrConflict if it kept changing
// under concurrent writes.
func (rs Replays) AddReplayed(ctx context.Context, accountID, id, destinationID string, n uint64) error {
	if err := checkOwnedID(accountID, PrefixReplay, id); err != nil {
		return fmt.Errorf("replay %q: %w", id, err)
	}
	_, _, err := modify(ctx, rs.store, replayKey(accountID, id), func(r *Replay) error {
		if n > 0 && !slices.Contains(r.DeliveredTo, destinationID) {
			r.setReplayed(destinationID, r.Replayed[destinationID]+n)
		}
		return nil
	}, writeOptions{}, nil)
	if err != nil {
		return fmt.Errorf("counting the events of replay %s: %w", id, err)
	}
	return nil
}

// setReplayed sets the events replayed to a destination.
func (r *Replay) setReplayed(destinationID string, n uint64) {
	if r.Replayed == nil {
		r.Replayed = make(map[string]uint64)
	}
	r.Replayed[destinationID] = n
}

// Finished reports whether the replay has nothing left to deliver, given
// its subscription as it is now (nil: deleted): it is done, or its
// subscription is gone, or every destination the subscription still has
// got the whole range. No worker marks a replay done whose subscription
// or remaining destinations were taken away, so this is how such a replay
// is told apart from one still running.
func (r Replay) Finished(sub *Subscription) bool {
	if r.State != ReplayRunning || sub == nil {
		return true
	}
	for _, id := range sub.DestinationIDs {
		if !slices.Contains(r.DeliveredTo, id) {
			return false
		}
	}
	return true
}
