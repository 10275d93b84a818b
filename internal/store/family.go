package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/schemas"
)

// family declares a kind of resource an account owns, stored as T under
// key(account, id): what its create, get, list, update and delete need to
// know of it. Its methods are the layer every such family's public methods
// call; what sets a family apart is a hook here, not a copy of them.
type family[T any] struct {
	// kind names the family in keys, "destinations": its resources are
	// <kind>.<account_id>.<id> (keys.go), and its creates under way
	// creations.<account_id>.<kind> (see withinLimit).
	kind string
	// prefix starts the ids of its resources, schemas.PrefixDestination.
	prefix string
	// noun names a resource in messages, "destination"; noun+"s" names
	// several.
	noun string
	// meta returns pointers to the id, account and creation time of v,
	// which the store sets at create and nothing changes after.
	meta func(v *T) (id, accountID *string, createdAt *time.Time)
	// input returns the resource a create makes of the caller's in: the
	// fields the caller chooses, deep-copied, the others zero.
	input func(in T) T
	// check normalizes v and returns a *ValidationError (or a
	// *LimitError) for the first field that breaks a rule, or nil. It
	// checks every value written, created or updated.
	check func(ctx context.Context, s *Store, v *T) error
	// limit names the limit of how many resources an account may have,
	// and max reads it from Limits (see withinLimit).
	limit string
	max   func(Limits) int

	// The optional parts and hooks; nil for none.

	// unique indexes a field whose value, ignoring case, no two
	// resources of the account (or, across, of any account) share.
	unique *uniqueIndex[T]
	// rule returns the error of a change from was to v that the family
	// refuses, once v is checked.
	rule func(was, v T) error
	// writes returns more writes for the batch that creates (before is
	// nil) or updates the resource to after: they are stored together
	// or not at all, and a compare-and-swap conflict on any starts over.
	writes func(ctx context.Context, s *Store, before *T, after T) ([]write, error)
	// reserve runs before a create writes v, and returns what undoes it
	// if the write then fails. Its error is returned as it is.
	reserve func(ctx context.Context, s *Store, v T) (undo func(), err error)
	// parent returns a pointer to the id of the resource v belongs to,
	// of another family (a route's edge), which listIn pages by.
	parent func(v *T) *string
	// cascade returns more writes for the batch that deletes v, such as
	// the deletes of the resources that belong to it: they are stored
	// together or not at all, and a compare-and-swap conflict on any
	// starts the delete over.
	cascade func(ctx context.Context, s *Store, v T) ([]write, error)
	// hidden returns what reports whether v, though stored, is gone,
	// such as an application session past its expiry: get, list, update
	// and delete treat it as absent, until something removes it. It is
	// called once per read of one or many resources, so that what it
	// needs to know (the time, the edges alive) is read once; its error
	// ends the read.
	hidden func(ctx context.Context, s *Store) (func(v T) bool, error)
}

// gone returns what returns ErrNotFound for a resource the family hides,
// else nil, for one read (see hidden).
func (f *family[T]) gone(ctx context.Context, s *Store) (func(v T) error, error) {
	if f.hidden == nil {
		return func(T) error { return nil }, nil
	}
	hide, err := f.hidden(ctx, s)
	if err != nil {
		return nil, err
	}
	return func(v T) error {
		if hide(v) {
			return ErrNotFound
		}
		return nil
	}, nil
}

// refusal is an error of a hook that answers the call, such as an
// *InUseError: the layer returns the error it holds as it is, where it
// wraps any other error with what it was doing. It is not a
// compare-and-swap conflict, so it ends a retried attempt.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }

// refuseWhileUsed returns the guard of a delete (see remove) that refuses
// it while resources of the account in the family users use the resource
// deleted, as uses reports: the guard returns the error inUse makes of
// their ids, sorted, as a refusal.
func refuseWhileUsed[D, U any](ctx context.Context, s *Store, users *family[U], accountID string, uses func(U) bool, inUse func(ids []string) error) func(D) error {
	return func(D) error {
		all, err := listRecords[U](ctx, s, users.filter(accountID))
		if err != nil {
			return fmt.Errorf("listing %ss: %w", users.noun, err)
		}
		var ids []string
		for _, u := range all {
			if uses(u) {
				id, _, _ := users.meta(&u)
				ids = append(ids, *id)
			}
		}
		if len(ids) == 0 {
			return nil
		}
		slices.Sort(ids)
		return refusal{inUse(ids)}
	}
}

// key returns the key of the resource id of the account.
func (f *family[T]) key(accountID, id string) string {
	return f.kind + "." + accountID + "." + id
}

// filter returns the filter matching every resource of the account.
func (f *family[T]) filter(accountID string) string {
	return f.kind + "." + accountID + ".*"
}

// ownedID returns an error wrapping ErrNotFound unless accountID is an
// account id and id one of the family's (see checkOwnedID).
func (f *family[T]) ownedID(accountID, id string) error {
	if err := checkOwnedID(accountID, f.prefix, id); err != nil {
		return fmt.Errorf("%s %q: %w", f.noun, id, err)
	}
	return nil
}

// create creates the resource the family's input makes of in, owned by the
// account, with the audit event opts ask for, and returns it as stored.
//
// It returns the error of check as it is, an error wrapping ErrNotFound if
// the account does not exist, a *LimitError (matching ErrLimit) if the
// account has as many as the family's limit, the error of a refusing hook
// or of reserve as it is, or an error saying what failed.
func (f *family[T]) create(ctx context.Context, s *Store, accountID string, in T, opts []WriteOption) (T, error) {
	var zero T
	v := f.input(in)
	id, account, createdAt := f.meta(&v)
	*id, *createdAt = s.newID(f.prefix)
	*account = accountID
	if err := f.check(ctx, s, &v); err != nil {
		return zero, err
	}
	if _, err := s.GetAccount(ctx, accountID); err != nil {
		return zero, fmt.Errorf("creating %s: %w", f.noun, err)
	}
	counted := counted{kind: f.kind, limit: f.limit, max: f.max, ids: keyIDs(f.filter)}
	err := s.withinLimit(ctx, accountID, counted, *id, func() error {
		return f.insert(ctx, s, v, newWriteOptions(opts))
	})
	if err != nil {
		return zero, err
	}
	return v, nil
}

// insert writes the new resource v, with its index key and the family's
// writes, in one batch; on a compare-and-swap conflict it starts over.
func (f *family[T]) insert(ctx context.Context, s *Store, v T, o writeOptions) error {
	id, accountID, _ := f.meta(&v)
	value, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s %s: %w", f.noun, *id, err)
	}
	var undo func()
	if f.reserve != nil {
		if undo, err = f.reserve(ctx, s, v); err != nil {
			return err
		}
	}
	err = retryConflicts(ctx, func() error {
		writes := []write{{key: f.key(*accountID, *id), value: value}}
		if f.unique != nil {
			claim, err := f.claim(ctx, s, *accountID, *id, v)
			if err != nil {
				return err
			}
			writes = append(writes, claim)
		}
		if f.writes != nil {
			more, err := f.writes(ctx, s, nil, v)
			if err != nil {
				return err
			}
			writes = append(writes, more...)
		}
		_, err := s.commit(ctx, o, v, writes...)
		return err
	})
	if err != nil {
		if undo != nil {
			undo()
		}
		return passOrWrap(err, nil, "creating "+f.noun+" "+*id)
	}
	return nil
}

// get returns the resource of the account with the id. It returns an
// error wrapping ErrNotFound if the account has no such resource,
// including when another account has.
func (f *family[T]) get(ctx context.Context, s *Store, accountID, id string) (T, error) {
	var zero T
	if err := f.ownedID(accountID, id); err != nil {
		return zero, err
	}
	gone, err := f.gone(ctx, s)
	if err != nil {
		return zero, fmt.Errorf("reading %s %s: %w", f.noun, id, err)
	}
	v, _, err := getRecord[T](ctx, s, f.key(accountID, id))
	if err == nil {
		err = gone(v)
	}
	if err != nil {
		return zero, fmt.Errorf("reading %s %s: %w", f.noun, id, err)
	}
	return v, nil
}

// list returns a page of the account's resources, newest first (by id),
// and the BeforeID of the next page, "" after the last page.
//
// It returns a *ValidationError (matching ErrInvalid) for a page limit
// outside 1 to MaxPageLimit or a malformed BeforeID, an error wrapping
// ErrNotFound if accountID is not an account id, or the error of the
// page's Match as it is. The account's resources are read in full, then
// sorted, cut after BeforeID and matched.
func (f *family[T]) list(ctx context.Context, s *Store, accountID string, page Page) ([]T, string, error) {
	return f.listWhere(ctx, s, accountID, page, nil)
}

// listWhere is list of the resources keep returns true for (nil: all).
func (f *family[T]) listWhere(ctx context.Context, s *Store, accountID string, page Page, keep func(v *T) bool) ([]T, string, error) {
	page, err := page.resolve(f.prefix)
	if err != nil {
		return nil, "", err
	}
	if err := schemas.CheckID(schemas.PrefixAccount, accountID); err != nil {
		return nil, "", fmt.Errorf("account %q: %w", accountID, ErrNotFound)
	}
	gone, err := f.gone(ctx, s)
	if err != nil {
		return nil, "", fmt.Errorf("listing %ss: %w", f.noun, err)
	}
	all, err := listRecords[T](ctx, s, f.filter(accountID))
	if err != nil {
		return nil, "", fmt.Errorf("listing %ss: %w", f.noun, err)
	}
	all = slices.DeleteFunc(all, func(v T) bool { return gone(v) != nil || keep != nil && !keep(&v) })
	return paginate(all, func(v T) string {
		id, _, _ := f.meta(&v)
		return *id
	}, page)
}

// listIn returns a page of the account's resources that belong to the
// resource parentID (see family.parent), newest first, as list does: the
// family's other resources are skipped, as if they were not there.
func (f *family[T]) listIn(ctx context.Context, s *Store, accountID, parentID string, page Page) ([]T, string, error) {
	return f.listWhere(ctx, s, accountID, page, func(v *T) bool { return *f.parent(v) == parentID })
}

// update changes the resource of the account with the id: it calls fn on
// the stored resource, checks the result as create does (check, then
// rule), and writes it, with the moves of its index key and the family's
// writes, if the resource has not changed in the meantime. If it has
// (another writer came first), it starts over, so fn may be called
// several times, each time on a fresh copy of the latest resource; fn
// must have no other effect. No update is ever lost. Changes fn makes to
// the id, account and creation time are discarded.
//
// It returns the resource written, or the error of fn, check or rule or
// of a refusing hook as it is, an error wrapping ErrNotFound if the
// account has no such resource, or one wrapping ErrConflict if the
// resource kept changing under concurrent updates.
func (f *family[T]) update(ctx context.Context, s *Store, accountID, id string, fn func(*T) error, opts []WriteOption) (T, error) {
	var zero T
	if err := f.ownedID(accountID, id); err != nil {
		return zero, err
	}
	var fnErr error
	_, after, err := modify(ctx, s, f.key(accountID, id), func(v *T) error {
		gone, err := f.gone(ctx, s)
		if err != nil {
			return err
		}
		if err := gone(*v); err != nil {
			return err
		}
		was := *v
		id, account, createdAt := f.meta(v)
		keepID, keepAccount, keepCreated := *id, *account, *createdAt
		if fnErr = fn(v); fnErr != nil {
			return fnErr
		}
		*id, *account, *createdAt = keepID, keepAccount, keepCreated
		if err := f.check(ctx, s, v); err != nil {
			return err
		}
		if f.rule != nil {
			return f.rule(was, *v)
		}
		return nil
	}, newWriteOptions(opts), f.moved(ctx, s, accountID, id))
	if err != nil {
		return zero, passOrWrap(err, fnErr, "updating "+f.noun+" "+id)
	}
	return after.value, nil
}

// moved returns the extra writes of an update of the resource id, for
// modify: the move of its index key and the family's writes; nil if the
// family has neither.
func (f *family[T]) moved(ctx context.Context, s *Store, accountID, id string) func(before, after T) ([]write, error) {
	if f.unique == nil && f.writes == nil {
		return nil
	}
	return func(before, after T) ([]write, error) {
		var writes []write
		if f.unique != nil {
			move, err := f.move(ctx, s, accountID, id, before, after)
			if err != nil {
				return nil, err
			}
			writes = append(writes, move...)
		}
		if f.writes != nil {
			more, err := f.writes(ctx, s, &before, after)
			if err != nil {
				return nil, err
			}
			writes = append(writes, more...)
		}
		return writes, nil
	}
}

// remove deletes the resource of the account with the id, its index key
// and the family's cascade, in one batch, and returns it as it was. guard (nil: none) is called on the
// resource read before each attempt to delete it; its error ends the
// delete, which then writes nothing. A delete is a compare-and-swap on the
// revision read before guard ran: a write meanwhile makes it start over.
//
// It returns the error of a refusing guard as it is, an error wrapping
// ErrNotFound if the account has no such resource, or one saying what
// failed.
func (f *family[T]) remove(ctx context.Context, s *Store, accountID, id string, opts []WriteOption, guard func(T) error) (T, error) {
	var zero T
	if err := f.ownedID(accountID, id); err != nil {
		return zero, err
	}
	key := f.key(accountID, id)
	var deleted T
	err := retryConflicts(ctx, func() error {
		gone, err := f.gone(ctx, s)
		if err != nil {
			return err
		}
		v, rev, err := getRecord[T](ctx, s, key)
		if err == nil {
			err = gone(v)
		}
		if err != nil {
			return err
		}
		if guard != nil {
			if err := guard(v); err != nil {
				return err
			}
		}
		writes := []write{{key: key, del: true, revision: rev}}
		if f.unique != nil {
			release, err := f.release(ctx, s, accountID, v)
			if err != nil {
				return err
			}
			writes = append(writes, release...)
		}
		if f.cascade != nil {
			more, err := f.cascade(ctx, s, v)
			if err != nil {
				return err
			}
			writes = append(writes, more...)
		}
		deleted = v
		_, err = s.commit(ctx, newWriteOptions(opts), v, writes...)
		return err
	})
	if err != nil {
		return zero, passOrWrap(err, nil, "deleting "+f.noun+" "+id)
	}
	return deleted, nil
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
// function, or a *ValidationError, the error a refusal holds if it is one,
// and otherwise wraps it with what was being done.
func passOrWrap(err, fnErr error, doing string) error {
	var (
		invalid *ValidationError
		refused refusal
	)
	switch {
	case fnErr != nil && err == fnErr, errors.As(err, &invalid):
		return err
	case errors.As(err, &refused):
		return refused.err
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// uniqueIndex is an index of a field of a family's resources whose value,
// ignoring case (foldName), no two resources of one account share. Its key
// for a value holds the id of the resource that has it (uniqueEntry), and
// is written, moved and removed in the batch that writes the resource, so
// that of two writes of one value at once, from any processes, one fails
// its compare-and-swap, starts over and finds the value taken.
type uniqueIndex[T any] struct {
	// field is the JSON name of the field, "name".
	field string
	// value returns the field of v.
	value func(v T) string
	// key is the index key of a value within the account (keys.go); any
	// two values equal ignoring case have one key. An index across
	// accounts ignores accountID.
	key func(accountID, value string) string
	// across makes the value unique across all accounts, such as the
	// domain of an agent ingress, which only one account can own: key
	// ignores the account, and a *TakenError says so, without naming the
	// account that has the value.
	across bool
}

// uniqueEntry is the value of an index key of a uniqueIndex.
type uniqueEntry struct {
	ID string `json:"id"`
}

// claim returns the write that creates the index key of v's value for the
// resource id, at the revision that finds the key free, or a refusal
// holding a *TakenError if another resource has the value.
func (f *family[T]) claim(ctx context.Context, s *Store, accountID, id string, v T) (write, error) {
	value := f.unique.value(v)
	key := f.unique.key(accountID, value)
	rev, free, err := s.freeRevision(ctx, key)
	if err != nil {
		return write{}, err
	}
	if !free {
		return write{}, refusal{&TakenError{Field: f.unique.field, Value: value, Resource: f.noun, Across: f.unique.across}}
	}
	entry, err := json.Marshal(uniqueEntry{ID: id})
	if err != nil {
		return write{}, fmt.Errorf("encoding %s: %w", key, err)
	}
	return write{key: key, value: entry, revision: rev}, nil
}

// move returns the writes that move the index key of the resource id from
// its value before to its value after, none if the two are equal ignoring
// case, or a refusal holding a *TakenError if another resource has the
// value after.
func (f *family[T]) move(ctx context.Context, s *Store, accountID, id string, before, after T) ([]write, error) {
	if f.unique.key(accountID, f.unique.value(before)) == f.unique.key(accountID, f.unique.value(after)) {
		return nil, nil
	}
	claim, err := f.claim(ctx, s, accountID, id, after)
	if err != nil {
		return nil, err
	}
	release, err := f.release(ctx, s, accountID, before)
	if err != nil {
		return nil, err
	}
	return append(release, claim), nil
}

// release returns the write that deletes the index key of v's value, at
// the revision of the key's last message read now. It deletes even a key
// that reads as free (never written, or deleted): the read may come from a
// replica that lags behind, and a write expecting the revision that read
// gave fails its compare-and-swap when it was stale, so that the attempt
// starts over rather than leaving the index key behind, which would keep
// the value taken for good.
func (f *family[T]) release(ctx context.Context, s *Store, accountID string, v T) ([]write, error) {
	key := f.unique.key(accountID, f.unique.value(v))
	rev, _, err := s.freeRevision(ctx, key)
	if err != nil {
		return nil, err
	}
	return []write{{key: key, del: true, revision: rev}}, nil
}

// freeRevision returns the revision a write that creates key must expect,
// and whether the key is free: never written (revision 0) or deleted (the
// revision of its delete marker, which a batch's compare-and-swap checks,
// unlike the key-value API's Create).
func (s *Store) freeRevision(ctx context.Context, key string) (uint64, bool, error) {
	msg, err := s.stream.GetLastMsgForSubject(ctx, kvSubject(key))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, true, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("reading %s: %w", key, err)
	}
	switch msg.Header.Get(headerKVOperation) {
	case kvDelete, kvPurge:
		return msg.Sequence, true, nil
	}
	return msg.Sequence, false, nil
}

// TakenError is a create or a change refused because another resource of
// the account (or, Across, of any account) has the value of a field that
// is unique, ignoring case. It matches ErrConflict.
type TakenError struct {
	// Field is the JSON name of the field, "name".
	Field string
	// Value is the value asked for.
	Value string
	// Resource names the kind of resource, "bot user".
	Resource string
	// Across is true when the value is unique across all accounts: the
	// resource that has it may be another account's.
	Across bool
}

// Error names the field, the value and what to do.
func (e *TakenError) Error() string {
	if e.Across {
		return fmt.Sprintf("%s %q is taken by another %s, of this account or of another: choose another %s", e.Field, e.Value, e.Resource, e.Field)
	}
	return fmt.Sprintf("%s %q is taken by another %s of the account: choose another %s", e.Field, e.Value, e.Resource, e.Field)
}

// Is reports whether target is ErrConflict.
func (e *TakenError) Is(target error) bool { return target == ErrConflict }
