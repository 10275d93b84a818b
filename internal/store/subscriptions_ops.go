package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/resource"
)

// subscriptions declares event subscriptions (see family). A subscription
// claims the destinations it starts naming (claimDestinations).
var subscriptions = family[Subscription]{
	kind:   "subscriptions",
	prefix: resource.EventSubscriptions().Prefix,
	noun:   "subscription",
	meta:   func(sub *Subscription) (*string, *string, *time.Time) { return &sub.ID, &sub.AccountID, &sub.CreatedAt },
	input: func(in Subscription) Subscription {
		return Subscription{Description: in.Description, Metadata: in.Metadata, Sources: in.Sources, DestinationIDs: in.DestinationIDs}.clone()
	},
	check: func(ctx context.Context, s *Store, sub *Subscription) error {
		return s.checkSubscription(ctx, sub)
	},
	limit: LimitSubscriptions,
	max:   func(l Limits) int { return l.Subscriptions },
	writes: func(ctx context.Context, s *Store, before *Subscription, after Subscription) ([]write, error) {
		var already []string
		if before != nil {
			already = before.DestinationIDs
		}
		count, err := s.countRoutes(ctx, after)
		if err != nil {
			return nil, err
		}
		claims, err := s.claimDestinations(ctx, after.AccountID, after.DestinationIDs, already)
		return append(claims, count), err
	},
}

// CreateSubscription creates a subscription of the account with the
// Description, Metadata, Sources and DestinationIDs of in; the store sets
// ID, AccountID and CreatedAt, and normalizes the field selections of the
// sources.
//
// It returns a *ValidationError (matching ErrInvalid) for the first field
// of in that breaks a rule, one that also matches ErrNotFound for a
// destination id that names no destination of the account, a *LimitError
// (matching ErrLimit) if the account has Limits.Subscriptions or in has
// more than Limits.SourcesPerSubscription sources, an error
// wrapping ErrNotFound if the account does not exist, or one wrapping
// ErrConflict if a destination it names kept changing under concurrent
// writes while it was claimed (see claimDestinations).
func (s *Store) CreateSubscription(ctx context.Context, accountID string, in Subscription, opts ...WriteOption) (Subscription, error) {
	return subscriptions.create(ctx, s, accountID, in, opts)
}

// GetSubscription returns the subscription of the account with the id. It
// returns an error wrapping ErrNotFound if the account has no such
// subscription, including when another account has.
func (s *Store) GetSubscription(ctx context.Context, accountID, id string) (Subscription, error) {
	return subscriptions.get(ctx, s, accountID, id)
}

// ListSubscriptions returns a page of the account's subscriptions, newest
// first (by id), and the BeforeID of the next page, "" after the last page.
//
// It returns a *ValidationError (matching ErrInvalid) for a page limit
// outside 1 to MaxPageLimit or a malformed BeforeID, or an error wrapping
// ErrNotFound if accountID is not an account id.
func (s *Store) ListSubscriptions(ctx context.Context, accountID string, page Page) ([]Subscription, string, error) {
	return subscriptions.list(ctx, s, accountID, page)
}

// UpdateSubscription changes the subscription of the account with the id:
// it calls fn on the stored subscription, checks the result as
// CreateSubscription does, and writes it if the subscription has not
// changed in the meantime. If it has (another writer came first), it starts
// over, so fn may be called several times, each time on a fresh copy of the
// latest subscription; fn must have no other effect. No update is ever
// lost. Changes fn makes to ID, AccountID and CreatedAt are discarded.
//
// It returns the subscription written, or the error of fn as it is, a
// *ValidationError (matching ErrInvalid) for the first field that breaks a
// rule (also matching ErrNotFound for a destination id that names no
// destination of the account), a *LimitError (matching ErrLimit) for more
// than Limits.SourcesPerSubscription sources, an error wrapping
// ErrNotFound if the account
// has no such subscription, or one wrapping ErrConflict if the
// subscription kept changing under concurrent updates.
func (s *Store) UpdateSubscription(ctx context.Context, accountID, id string, fn func(*Subscription) error, opts ...WriteOption) (Subscription, error) {
	return subscriptions.update(ctx, s, accountID, id, fn, opts)
}

// DeleteSubscription deletes the subscription of the account with the id
// and returns it as it was. It returns an error wrapping ErrNotFound if the
// account has no such subscription.
func (s *Store) DeleteSubscription(ctx context.Context, accountID, id string, opts ...WriteOption) (Subscription, error) {
	return subscriptions.remove(ctx, s, accountID, id, opts, nil)
}

// checkSubscription checks and normalizes sub (Subscription.check), and
// checks that its destinations are destinations of its account.
func (s *Store) checkSubscription(ctx context.Context, sub *Subscription) error {
	env, err := s.filters()
	if err != nil {
		return err
	}
	if err := sub.check(env); err != nil {
		return err
	}
	if len(sub.Sources) > s.limits.SourcesPerSubscription {
		return &LimitError{Limit: LimitSourcesPerSubscription, Max: s.limits.SourcesPerSubscription}
	}
	for j, id := range sub.DestinationIDs {
		_, _, err := getRecord[Destination](ctx, s, destinations.key(sub.AccountID, id))
		if errors.Is(err, ErrNotFound) {
			return noSuchDestination(fmt.Sprintf("destination_ids[%d]", j), id)
		}
		if err != nil {
			return fmt.Errorf("reading destination %s: %w", id, err)
		}
	}
	return nil
}

// claimDestinations returns the writes that rewrite, unchanged, each
// destination of ids that is not among already (which a subscription named
// before), each at the revision read now: written in the subscription's
// batch, they make a DeleteDestination that read a destination before the
// subscription was written fail its compare-and-swap, start over and see
// the subscription; and a destination deleted since it was read here fails
// the batch's compare-and-swap, so that the write starts over and finds it
// gone. It returns the *ValidationError of a destination that no longer
// exists.
func (s *Store) claimDestinations(ctx context.Context, accountID string, ids, already []string) ([]write, error) {
	var claims []write
	for j, id := range ids {
		if slices.Contains(already, id) {
			continue
		}
		key := destinations.key(accountID, id)
		entry, err := s.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil, noSuchDestination(fmt.Sprintf("destination_ids[%d]", j), id)
		}
		if err != nil {
			return nil, fmt.Errorf("claiming destination %s: %w", id, err)
		}
		claims = append(claims, write{key: key, value: entry.Value(), revision: entry.Revision()})
	}
	return claims, nil
}

// undo runs a write that reverts one that must not stand, even if ctx has
// ended. If it fails too (the key changed again, or the bucket is
// unreachable), the subscription keeps naming a destination that was
// deleted at the same time: readers of subscriptions must expect a
// destination id that names nothing, and skip it.
func (s *Store) undo(ctx context.Context, write func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_ = write(ctx)
}
