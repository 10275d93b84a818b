package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/sluicehq/sluice/internal/defaults"
)

// DLQIndexBucket is the key-value bucket that says which events have a
// letter held in SLUICE_DLQ: one key per event, subscription and
// destination, made with create-only semantics before the letter is
// written, so that an event is dead-lettered once for a route however many
// times it fails (a replay, a redelivery, two workers at once).
const DLQIndexBucket = "SLUICE_DLQ_INDEX"

// letterClaimTimeout is how long a key claimed by a worker that has not
// yet written its letter keeps others from writing it: past it, the worker
// is taken to have died between the claim and the letter.
const letterClaimTimeout = 30 * time.Second

// errLetterBusy says another worker is writing the letter of the event now.
var errLetterBusy = errors.New("another worker is dead-lettering the event")

// EnsureDLQIndex creates the dead-letter index bucket, or updates it,
// keeping keys as long as dead letters are kept (retention, default
// DefaultDLQRetention), with replicas copies (default 1).
func EnsureDLQIndex(ctx context.Context, js jetstream.JetStream, retention time.Duration, replicas int) (jetstream.KeyValue, error) {
	defaults.Positive(&retention, DefaultDLQRetention)
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      DLQIndexBucket,
		Description: "sluice events with a letter held in " + DLQStream + ", by <account_id>.<destination_id>.<subscription_id>.<event sequence>",
		History:     1,
		TTL:         retention,
		Storage:     jetstream.FileStorage,
		Replicas:    max(replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("creating or updating bucket %s: %w", DLQIndexBucket, err)
	}
	return kv, nil
}

// letterKey is the index key of the letter of the event at eventSeq in
// SLUICE_EVENTS for a subscription and destination, or "" when the event's
// sequence is not known (the letter is then not indexed).
func letterKey(accountID, destinationID, subscriptionID string, eventSeq uint64) string {
	if eventSeq == 0 {
		return ""
	}
	return accountID + "." + destinationID + "." + subscriptionID + "." + strconv.FormatUint(eventSeq, 10)
}

// letterIndex reads and writes DLQIndexBucket, and reads SLUICE_DLQ, both
// bound at their first use. It is safe for concurrent use.
type letterIndex struct {
	js     jetstream.JetStream
	mu     sync.Mutex
	kv     jetstream.KeyValue
	stream jetstream.Stream
}

func newLetterIndex(js jetstream.JetStream) *letterIndex { return &letterIndex{js: js} }

func (x *letterIndex) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.kv == nil {
		kv, err := x.js.KeyValue(ctx, DLQIndexBucket)
		if err != nil {
			return nil, fmt.Errorf("bucket %s: %w", DLQIndexBucket, err)
		}
		x.kv = kv
	}
	return x.kv, nil
}

func (x *letterIndex) dlq(ctx context.Context) (jetstream.Stream, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stream == nil {
		stream, err := x.js.Stream(ctx, DLQStream)
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", DLQStream, err)
		}
		x.stream = stream
	}
	return x.stream, nil
}

// claim takes the key of a letter for the caller to write it, returning
// the key's revision. held is true when a letter of the event is held
// already: nothing is to be written. It returns an error wrapping
// errLetterBusy while another worker writes the letter. A key whose letter
// is gone (removed, and the key's removal failed) or whose writer died is
// taken over.
func (x *letterIndex) claim(ctx context.Context, key, subject string) (rev uint64, held bool, err error) {
	kv, err := x.bucket(ctx)
	if err != nil {
		return 0, false, err
	}
	stream, err := x.dlq(ctx)
	if err != nil {
		return 0, false, err
	}
	for range 3 {
		rev, err := kv.Create(ctx, key, nil)
		if err == nil {
			return rev, false, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return 0, false, fmt.Errorf("claiming dead letter key %s: %w", key, err)
		}
		entry, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // removed meanwhile: create it again
		}
		if err != nil {
			return 0, false, fmt.Errorf("reading dead letter key %s: %w", key, err)
		}
		if seq, _ := strconv.ParseUint(string(entry.Value()), 10, 64); seq > 0 {
			ok, err := letterHeld(ctx, stream, subject, seq)
			if err != nil || ok {
				return 0, ok, err
			}
		} else if time.Since(entry.Created()) < letterClaimTimeout {
			return 0, false, fmt.Errorf("%w: key %s claimed at %s", errLetterBusy, key, entry.Created().UTC().Format(time.RFC3339))
		}
		rev, err = kv.Update(ctx, key, nil, entry.Revision())
		if err == nil {
			return rev, false, nil
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) && !errors.Is(err, jetstream.ErrKeyExists) {
			return 0, false, fmt.Errorf("taking over dead letter key %s: %w", key, err)
		}
	}
	return 0, false, fmt.Errorf("%w: key %s keeps changing", errLetterBusy, key)
}

// written records the letter's sequence in SLUICE_DLQ under its claimed key.
func (x *letterIndex) written(ctx context.Context, key string, rev, seq uint64) error {
	kv, err := x.bucket(ctx)
	if err != nil {
		return err
	}
	if _, err := kv.Update(ctx, key, []byte(strconv.FormatUint(seq, 10)), rev); err != nil {
		return fmt.Errorf("recording dead letter %s under key %s: %w", DeadLetterID(seq), key, err)
	}
	return nil
}

// release removes the key of a letter: the claim of a letter that could
// not be written, or the key of one removed from SLUICE_DLQ. A key that is
// gone already is no error.
func (x *letterIndex) release(ctx context.Context, key string) error {
	if key == "" {
		return nil
	}
	kv, err := x.bucket(ctx)
	if err != nil {
		return err
	}
	if err := kv.Purge(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("removing dead letter key %s: %w", key, err)
	}
	return nil
}

// letterHeld reports whether SLUICE_DLQ holds a letter at seq on subject.
func letterHeld(ctx context.Context, stream jetstream.Stream, subject string, seq uint64) (bool, error) {
	msg, err := stream.GetMsg(ctx, seq)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading dead letter %d: %w", seq, err)
	}
	return msg.Subject == subject, nil
}

// forget removes the key of the letter at seq in SLUICE_DLQ, once the
// letter is removed. A key that names another letter, or a claim still
// being written, is left.
func (x *letterIndex) forget(ctx context.Context, key string, seq uint64) error {
	if key == "" {
		return nil
	}
	kv, err := x.bucket(ctx)
	if err != nil {
		return err
	}
	entry, err := kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("reading dead letter key %s: %w", key, err)
	case string(entry.Value()) != strconv.FormatUint(seq, 10):
		return nil
	}
	err = kv.Purge(ctx, key, jetstream.LastRevision(entry.Revision()))
	if err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("removing dead letter key %s: %w", key, err)
	}
	return nil
}
