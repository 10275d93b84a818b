package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Kinds of ConfigChange.
const (
	ConfigDestination  = "destination"
	ConfigSubscription = "subscription"
	ConfigReplay       = "replay"
)

// ConfigChange is one change of a destination or subscription, or the
// marker that the initial state has been delivered (Synced).
type ConfigChange struct {
	// Kind is ConfigDestination, ConfigSubscription or ConfigReplay; ""
	// on the Synced marker.
	Kind string
	// AccountID and ID name the resource changed.
	AccountID, ID string
	// Deleted reports that the resource was deleted; Destination and
	// Subscription are nil then.
	Deleted bool
	// Destination is the destination as it is now, with its secret access
	// key, if Kind is ConfigDestination and it was not deleted.
	Destination *Destination
	// Subscription is the subscription as it is now, if Kind is
	// ConfigSubscription and it was not deleted.
	Subscription *Subscription
	// Replay is the replay as it is now, if Kind is ConfigReplay and it
	// was not deleted.
	Replay *Replay
	// Revision is the revision of the change in the bucket; revisions grow
	// with every change of any key.
	Revision uint64
	// At is when the change was stored, by the NATS server's clock (the
	// clock of the events' timestamps in the stream).
	At time.Time
	// Synced marks the change that follows the initial state: every
	// destination and subscription that existed when the watch started has
	// been delivered before it. It comes once; its other fields are zero.
	Synced bool
	// Err is set if the stored value could not be decoded; the change then
	// carries Kind, AccountID, ID and Revision only. A reconciler treats the
	// resource as broken, and reports it.
	Err error
}

// watchBuffer is how many changes wait for the consumer of a watch.
const watchBuffer = 64

// WatchConfig watches every destination, subscription and replay of every
// account.
// The channel delivers the current state first, one change per existing
// resource (deleted ones are left out), then a change with Synced set, then
// every change as it happens, usually within milliseconds and in the order
// of the bucket, in every process watching. A change may repeat the value
// the resource already had: writes that protect against concurrent deletes
// rewrite a destination unchanged.
//
// The watch runs in a goroutine that the caller owns through ctx: when ctx
// ends, the goroutine stops the watcher and closes the channel. It also
// closes the channel if the connection's subscription is closed (the
// connection closed or the bucket was removed); the caller then watches
// again, which delivers the whole state again. The caller must keep
// receiving until the channel is closed, or end ctx.
//
// It returns an error if the watch cannot start.
func (s *Store) WatchConfig(ctx context.Context) (<-chan ConfigChange, error) {
	watcher, err := s.kv.WatchFiltered(ctx, []string{allDestinations, allSubscriptions, allReplays})
	if err != nil {
		return nil, fmt.Errorf("watching destinations and subscriptions: %w", err)
	}
	synced := false
	return runWatch(ctx, watcher, func(entry jetstream.KeyValueEntry) (ConfigChange, bool) {
		return nextChange(entry, &synced)
	}), nil
}

// runWatch delivers on the channel it returns the change next makes of
// each entry of the watcher (none when next returns false), in a goroutine
// that the caller owns through ctx: when ctx ends, or the watcher closes
// its channel, the goroutine stops the watcher and closes the channel.
func runWatch[C any](ctx context.Context, watcher jetstream.KeyWatcher, next func(jetstream.KeyValueEntry) (C, bool)) <-chan C {
	changes := make(chan C, watchBuffer)
	go func() {
		forwardChanges(ctx, watcher.Updates(), changes, next)
		close(changes)
		_ = watcher.Stop()
		// The watcher may be blocked handing over an entry: take it, and
		// any other, until the watcher closes its channel.
		for range watcher.Updates() {
		}
	}()
	return changes
}

// forwardChanges turns the entries of a watcher into changes until ctx ends
// or updates is closed.
func forwardChanges[C any](ctx context.Context, updates <-chan jetstream.KeyValueEntry, changes chan<- C, next func(jetstream.KeyValueEntry) (C, bool)) {
	for {
		select {
		case <-ctx.Done():
			return
		case entry, ok := <-updates:
			if !ok {
				return
			}
			change, deliver := next(entry)
			if !deliver {
				continue
			}
			select {
			case <-ctx.Done():
				return
			case changes <- change:
			}
		}
	}
}

// nextChange returns the change to deliver for an entry of the watcher, and
// false if there is none: the entry is not that of a destination or
// subscription, or is the delete marker of one deleted before the watch
// started. A nil entry marks the end of the initial state: the first is
// delivered as the Synced change.
func nextChange(entry jetstream.KeyValueEntry, synced *bool) (ConfigChange, bool) {
	if entry == nil {
		if *synced {
			return ConfigChange{}, false
		}
		*synced = true
		return ConfigChange{Synced: true}, true
	}
	change, known := decodeChange(entry)
	if !known || (!*synced && change.Deleted) {
		return ConfigChange{}, false
	}
	return change, true
}

// decodeChange returns the change an entry of the bucket reports, and false
// if its key is not that of a destination or subscription.
func decodeChange(entry jetstream.KeyValueEntry) (ConfigChange, bool) {
	kind, accountID, id, ok := parseConfigKey(entry.Key())
	if !ok {
		return ConfigChange{}, false
	}
	change := ConfigChange{Kind: kind, AccountID: accountID, ID: id, Revision: entry.Revision(), At: entry.Created()}
	if op := entry.Operation(); op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge {
		change.Deleted = true
		return change, true
	}
	var err error
	switch kind {
	case ConfigDestination:
		change.Destination = new(Destination)
		err = json.Unmarshal(entry.Value(), change.Destination)
	case ConfigReplay:
		change.Replay = new(Replay)
		err = json.Unmarshal(entry.Value(), change.Replay)
	default:
		change.Subscription = new(Subscription)
		err = json.Unmarshal(entry.Value(), change.Subscription)
	}
	if err != nil {
		change.Destination, change.Subscription, change.Replay = nil, nil, nil
		change.Err = fmt.Errorf("decoding %s: %w", entry.Key(), err)
	}
	return change, true
}

// parseConfigKey splits the key of a destination or subscription
// ("destinations.<account_id>.<id>").
func parseConfigKey(key string) (kind, accountID, id string, ok bool) {
	parts := strings.Split(key, ".")
	if len(parts) != 3 {
		return "", "", "", false
	}
	switch parts[0] {
	case "destinations":
		kind = ConfigDestination
	case "subscriptions":
		kind = ConfigSubscription
	case "replays":
		kind = ConfigReplay
	default:
		return "", "", "", false
	}
	return kind, parts[1], parts[2], true
}
