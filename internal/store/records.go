package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/retry"
)

// Read-modify-write of a key retries when another writer changed the key
// between the read and the write (a compare-and-swap conflict), after a
// jittered delay growing from casBaseDelay up to casMaxDelay, at most
// casAttempts times in all.
const (
	casAttempts  = 32
	casBaseDelay = 2 * time.Millisecond
	casMaxDelay  = 200 * time.Millisecond
)

// casRetry draws the delay before a compare-and-swap retry: at least half
// of casBaseDelay, up to casBaseDelay times two to the attempt, at most
// casMaxDelay, so that writers contending for one key spread apart.
var casRetry = retry.Policy{Initial: casBaseDelay, Max: casMaxDelay, Jitter: retry.Full}

// errTooManyConflicts is returned, wrapping ErrConflict, when a key kept
// changing under a read-modify-write for casAttempts attempts.
var errTooManyConflicts = fmt.Errorf("%w: the resource kept changing under concurrent updates; try again", ErrConflict)

// casConflict reports whether err is a compare-and-swap conflict: the key's
// revision was not the one the write expected.
func casConflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch)
}

// waitToRetry waits before attempt (1 for the first retry) of a
// compare-and-swap, or until ctx ends.
func waitToRetry(ctx context.Context, attempt int) error {
	return retry.Sleep(ctx, casRetry.Delay(attempt))
}

// claimKey returns the write that rewrites key as it is, at its revision:
// in the batch of a change that depends on the resource of key (a route
// on its edge, a credential on its owner), it makes a delete of that
// resource meanwhile, a compare-and-swap on the revision it read, and the
// change, one of the two, start over. It returns ErrNotFound if the key
// does not exist or was deleted.
func (s *Store) claimKey(ctx context.Context, key string) (write, error) {
	entry, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return write{}, ErrNotFound
	}
	if err != nil {
		return write{}, fmt.Errorf("reading %s: %w", key, err)
	}
	return claimOf(entry), nil
}

// claimOf returns the write that rewrites entry as it is, at its
// revision (see claimKey).
func claimOf(entry jetstream.KeyValueEntry) write {
	return write{key: entry.Key(), value: entry.Value(), revision: entry.Revision()}
}

// getRecord reads and decodes the value of key, with its revision. It
// returns ErrNotFound if the key does not exist or was deleted.
func getRecord[T any](ctx context.Context, s *Store, key string) (T, uint64, error) {
	var value T
	entry, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return value, 0, ErrNotFound
	}
	if err != nil {
		return value, 0, err
	}
	if err := json.Unmarshal(entry.Value(), &value); err != nil {
		return value, 0, fmt.Errorf("decoding %s: %w", key, err)
	}
	return value, entry.Revision(), nil
}

// listRecords reads and decodes the current value of every key matching
// filter.
func listRecords[T any](ctx context.Context, s *Store, filter string) ([]T, error) {
	entries, err := s.entries(ctx, filter)
	if err != nil {
		return nil, err
	}
	values := make([]T, 0, len(entries))
	var errs []error
	for _, entry := range entries {
		var value T
		if err := json.Unmarshal(entry.Value(), &value); err != nil {
			errs = append(errs, fmt.Errorf("decoding %s: %w", entry.Key(), err))
			continue
		}
		values = append(values, value)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return values, nil
}

// retryConflicts runs try until it returns anything but a
// compare-and-swap conflict, waiting before each new attempt. It returns the
// error of the last attempt, the error of ctx, or errTooManyConflicts after
// casAttempts conflicts.
func retryConflicts(ctx context.Context, try func() error) error {
	for attempt := range casAttempts {
		if attempt > 0 {
			if err := waitToRetry(ctx, attempt); err != nil {
				return err
			}
		}
		if err := try(); !casConflict(err) {
			return err
		}
	}
	return errTooManyConflicts
}

// revision is a value as read or written, with the revision of its key.
type revision[T any] struct {
	value    T
	raw      []byte
	revision uint64
}

// modify reads the value of key, lets change modify it and writes it back
// if the key has not changed since the read (compare-and-swap). On a
// conflict it starts over from a fresh read, so change may run several
// times, each time on a fresh value; it must not have other effects. It
// writes nothing if change leaves the value as it was.
//
// The write carries the audit event o asks for, and the writes extra
// returns for the values before and after the change (nil: none), in one
// atomic batch; a conflict on any of them starts over too, and extra's
// error is returned as it is.
//
// It returns the value before and after the change, or the error of change
// as it is, ErrNotFound if the key does not exist, or an error wrapping
// ErrConflict after casAttempts conflicts.
func modify[T any](ctx context.Context, s *Store, key string, change func(*T) error, o writeOptions, extra func(before, after T) ([]write, error)) (before, after revision[T], err error) {
	err = retryConflicts(ctx, func() error {
		entry, err := s.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		before = revision[T]{raw: entry.Value(), revision: entry.Revision()}
		if err := json.Unmarshal(before.raw, &before.value); err != nil {
			return fmt.Errorf("decoding %s: %w", key, err)
		}
		// Decoded a second time, so that change cannot reach before's
		// slices and pointers.
		after = revision[T]{}
		if err := json.Unmarshal(before.raw, &after.value); err != nil {
			return fmt.Errorf("decoding %s: %w", key, err)
		}
		if err := change(&after.value); err != nil {
			return err
		}
		if after.raw, err = json.Marshal(after.value); err != nil {
			return fmt.Errorf("encoding %s: %w", key, err)
		}
		if bytes.Equal(after.raw, before.raw) {
			after.revision = before.revision
			return nil
		}
		writes := []write{{key: key, value: after.raw, revision: before.revision}}
		if extra != nil {
			more, err := extra(before.value, after.value)
			if err != nil {
				return err
			}
			writes = append(writes, more...)
		}
		revisions, err := s.commit(ctx, o, after.value, writes...)
		if err != nil {
			return err
		}
		after.revision = revisions[0]
		return nil
	})
	return before, after, err
}

// putRecordAt writes value at key if the key is still at revision rev (0:
// if it does not exist), or returns an error wrapping
// jetstream.ErrKeyRevisionMismatch, as a compare-and-swap of a record
// read with getRecord.
func putRecordAt[T any](ctx context.Context, s *Store, key string, value T, rev uint64) error {
	data, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", key, err)
	}
	if rev == 0 {
		_, err = s.kv.Create(ctx, key, data)
		if errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("%s was created meanwhile: %w", key, jetstream.ErrKeyRevisionMismatch)
		}
		return err
	}
	_, err = s.kv.Update(ctx, key, data, rev)
	return err
}

// pendingList is the value of a key listing the operations of a kind under
// way (creationClaims, keyDeletions): each adds its entry with a
// compare-and-swap before it acts, and drops it (dropPending) after.
type pendingList[E any] struct {
	Pending []E `json:"pending"`
}

// writePending writes list at key if the key is still at revision rev (0:
// if it does not exist), or returns an error wrapping
// jetstream.ErrKeyRevisionMismatch. An empty list is written as [].
func writePending[E any](ctx context.Context, s *Store, key string, list pendingList[E], rev uint64) error {
	if list.Pending == nil {
		list.Pending = []E{}
	}
	return putRecordAt(ctx, s, key, list, rev)
}

// dropPending removes the entries of the list at key that mine matches,
// even if ctx has ended (see undo); it writes nothing if none does.
func dropPending[E any](ctx context.Context, s *Store, key string, mine func(E) bool) {
	s.undo(ctx, func(ctx context.Context) error {
		return retryConflicts(ctx, func() error {
			list, rev, err := getRecord[pendingList[E]](ctx, s, key)
			if err != nil {
				return err
			}
			n := len(list.Pending)
			list.Pending = slices.DeleteFunc(list.Pending, mine)
			if len(list.Pending) == n {
				return nil
			}
			return writePending(ctx, s, key, list, rev)
		})
	})
}
