package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sluicehq/sluice/schemas"
)

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
	id, createdAt := s.newID(schemas.PrefixDestination)
	d := Destination{
		ID:          id,
		AccountID:   accountID,
		CreatedAt:   createdAt,
		Description: in.Description,
		Metadata:    in.Metadata,
		Format:      in.Format,
		Target:      in.Target.clone(),
	}
	if err := d.check(); err != nil {
		return Destination{}, err
	}
	if _, err := s.GetAccount(ctx, accountID); err != nil {
		return Destination{}, fmt.Errorf("creating destination: %w", err)
	}
	err := s.withinLimit(ctx, accountID, countedDestinations, d.ID, func() error {
		if err := s.create(ctx, newWriteOptions(opts), destinationKey(accountID, d.ID), d); err != nil {
			return fmt.Errorf("creating destination %s: %w", d.ID, err)
		}
		return nil
	})
	if err != nil {
		return Destination{}, err
	}
	return d, nil
}

// GetDestination returns the destination of the account with the id, with
// its secret access key, if any. It returns an error wrapping ErrNotFound if
// the account has no such destination, including when another account has.
func (s *Store) GetDestination(ctx context.Context, accountID, id string) (Destination, error) {
	if err := checkOwnedID(accountID, schemas.PrefixDestination, id); err != nil {
		return Destination{}, fmt.Errorf("destination %q: %w", id, err)
	}
	d, _, err := getRecord[Destination](ctx, s, destinationKey(accountID, id))
	if err != nil {
		return Destination{}, fmt.Errorf("reading destination %s: %w", id, err)
	}
	return d, nil
}

// ListDestinations returns a page of the account's destinations, newest
// first (by id), with their secret access keys, and the BeforeID of the
// next page, "" after the last page.
//
// It returns a *ValidationError (matching ErrInvalid) for a page limit
// outside 1 to MaxPageLimit or a malformed BeforeID, or an error wrapping
// ErrNotFound if accountID is not an account id.
func (s *Store) ListDestinations(ctx context.Context, accountID string, page Page) ([]Destination, string, error) {
	page, err := page.resolve(schemas.PrefixDestination)
	if err != nil {
		return nil, "", err
	}
	if err := schemas.CheckID(schemas.PrefixAccount, accountID); err != nil {
		return nil, "", fmt.Errorf("account %q: %w", accountID, ErrNotFound)
	}
	all, err := listRecords[Destination](ctx, s, accountDestinations(accountID))
	if err != nil {
		return nil, "", fmt.Errorf("listing destinations: %w", err)
	}
	items, next := paginate(all, func(d Destination) string { return d.ID }, page)
	return items, next, nil
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
	if err := checkOwnedID(accountID, schemas.PrefixDestination, id); err != nil {
		return Destination{}, fmt.Errorf("destination %q: %w", id, err)
	}
	var fnErr error
	_, after, err := modify(ctx, s, destinationKey(accountID, id), func(d *Destination) error {
		was, keepID, keepAccount, keepCreated := d.Target.Type(), d.ID, d.AccountID, d.CreatedAt
		if fnErr = fn(d); fnErr != nil {
			return fnErr
		}
		d.ID, d.AccountID, d.CreatedAt = keepID, keepAccount, keepCreated
		if err := d.check(); err != nil {
			return err
		}
		return sameTargetType(was, d.Target.Type())
	}, newWriteOptions(opts), nil)
	if err != nil {
		return Destination{}, passOrWrap(err, fnErr, "updating destination "+id)
	}
	return after.value, nil
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
	if err := checkOwnedID(accountID, schemas.PrefixDestination, id); err != nil {
		return Destination{}, fmt.Errorf("destination %q: %w", id, err)
	}
	key := destinationKey(accountID, id)
	var deleted Destination
	err := retryConflicts(ctx, func() error {
		d, rev, err := getRecord[Destination](ctx, s, key)
		if err != nil {
			return err
		}
		users, err := s.subscriptionsUsing(ctx, accountID, id)
		if err != nil {
			return err
		}
		if len(users) > 0 {
			return &InUseError{DestinationID: id, Subscriptions: users}
		}
		deleted = d
		_, err = s.commit(ctx, newWriteOptions(opts), d, write{key: key, del: true, revision: rev})
		return err
	})
	var inUse *InUseError
	if errors.As(err, &inUse) {
		return Destination{}, inUse
	}
	if err != nil {
		return Destination{}, fmt.Errorf("deleting destination %s: %w", id, err)
	}
	return deleted, nil
}

// subscriptionsUsing returns the ids of the account's subscriptions that
// deliver to the destination, sorted.
func (s *Store) subscriptionsUsing(ctx context.Context, accountID, destinationID string) ([]string, error) {
	subs, err := listRecords[Subscription](ctx, s, accountSubscriptions(accountID))
	if err != nil {
		return nil, fmt.Errorf("listing subscriptions: %w", err)
	}
	var users []string
	for _, sub := range subs {
		if slices.Contains(sub.DestinationIDs, destinationID) {
			users = append(users, sub.ID)
		}
	}
	slices.Sort(users)
	return users, nil
}

// checkOwnedID returns ErrNotFound unless accountID is an account id and id
// one of the prefix: anything else names no resource, and must not reach a
// key filter.
func checkOwnedID(accountID, prefix, id string) error {
	if schemas.CheckID(schemas.PrefixAccount, accountID) != nil || schemas.CheckID(prefix, id) != nil {
		return ErrNotFound
	}
	return nil
}

// passOrWrap returns err as it is if it is fnErr, the error of a caller's
// function, or a *ValidationError, and otherwise wraps it with what was
// being done.
func passOrWrap(err, fnErr error, doing string) error {
	var invalid *ValidationError
	if (fnErr != nil && err == fnErr) || errors.As(err, &invalid) {
		return err
	}
	return fmt.Errorf("%s: %w", doing, err)
}
