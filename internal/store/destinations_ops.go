package store

import (
	"context"
	"slices"
	"time"

	"github.com/sluicehq/sluice/internal/resource"
)

// destinations declares event destinations (see family).
var destinations = family[Destination]{
	kind:   "destinations",
	prefix: resource.EventDestinations().Prefix,
	noun:   "destination",
	meta:   func(d *Destination) (*string, *string, *time.Time) { return &d.ID, &d.AccountID, &d.CreatedAt },
	input: func(in Destination) Destination {
		return Destination{Description: in.Description, Metadata: in.Metadata, Format: in.Format, Target: in.Target.clone()}
	},
	check: func(_ context.Context, _ *Store, d *Destination) error { return d.check() },
	limit: LimitDestinations,
	max:   func(l Limits) int { return l.Destinations },
	rule: func(was, d Destination) error {
		return sameTargetType(was.Target.Type(), d.Target.Type())
	},
}

// CreateDestination creates a destination of the account with the
// Description, Metadata, Format and Target of in; the store sets ID,
// AccountID and CreatedAt. The destination returned carries the secret
// access key, if any.
//
// It returns a *ValidationError (matching ErrInvalid) for the first field
// of in that breaks a rule, a *LimitError (matching ErrLimit) if the
// account has Limits.Destinations, or an error wrapping ErrNotFound if the
// account does not exist.
func (s *Store) CreateDestination(ctx context.Context, accountID string, in Destination, opts ...WriteOption) (Destination, error) {
	return destinations.create(ctx, s, accountID, in, opts)
}

// GetDestination returns the destination of the account with the id, with
// its secret access key, if any. It returns an error wrapping ErrNotFound if
// the account has no such destination, including when another account has.
func (s *Store) GetDestination(ctx context.Context, accountID, id string) (Destination, error) {
	return destinations.get(ctx, s, accountID, id)
}

// ListDestinations returns a page of the account's destinations, newest
// first (by id), with their secret access keys, and the BeforeID of the
// next page, "" after the last page.
//
// It returns a *ValidationError (matching ErrInvalid) for a page limit
// outside 1 to MaxPageLimit or a malformed BeforeID, or an error wrapping
// ErrNotFound if accountID is not an account id.
func (s *Store) ListDestinations(ctx context.Context, accountID string, page Page) ([]Destination, string, error) {
	return destinations.list(ctx, s, accountID, page)
}

// UpdateDestination changes the destination of the account with the id:
// it calls fn on the stored destination, checks the result as
// CreateDestination does, and writes it if the destination has not changed
// in the meantime. If it has (another writer came first), it starts over,
// so fn may be called several times, each time on a fresh copy of the
// latest destination; fn must have no other effect. No update is ever lost.
// Changes fn makes to ID, AccountID and CreatedAt are discarded.
//
// It returns the destination written, or the error of fn as it is, a
// *ValidationError (matching ErrInvalid) for the first field that breaks a
// rule, including a change of target type, which is refused, an error
// wrapping ErrNotFound if the account has no such destination, or one
// wrapping ErrConflict if the destination kept changing under concurrent
// updates.
func (s *Store) UpdateDestination(ctx context.Context, accountID, id string, fn func(*Destination) error, opts ...WriteOption) (Destination, error) {
	return destinations.update(ctx, s, accountID, id, fn, opts)
}

// DeleteDestination deletes the destination of the account with the id and
// returns it as it was, with its secret access key, if any.
//
// It returns an *InUseError (matching ErrConflict) naming the
// subscriptions of the account that deliver to it, if any: it is not
// deleted then. It returns an error wrapping ErrNotFound if the account has
// no such destination.
//
// A subscription written at the same time cannot end up naming the deleted
// destination: the delete is a compare-and-swap on the revision of the
// destination read before the subscriptions were, and a subscription that
// starts naming the destination rewrites it after being written (see
// claimDestinations), so one of the two writers sees the other.
func (s *Store) DeleteDestination(ctx context.Context, accountID, id string, opts ...WriteOption) (Destination, error) {
	delivers := func(sub Subscription) bool { return slices.Contains(sub.DestinationIDs, id) }
	return destinations.remove(ctx, s, accountID, id, opts, refuseWhileUsed[Destination](ctx, s, &subscriptions, accountID, delivers, func(ids []string) error {
		return &InUseError{DestinationID: id, Subscriptions: ids}
	}))
}
