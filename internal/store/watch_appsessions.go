package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// AppSessionEnd is an application session that ended: revoked through
// the API, ended, evicted by a newer login, or removed past its expiry.
type AppSessionEnd struct {
	AccountID, ID string
}

// WatchAppSessionEnds reports every application session of every account
// that ends from now on, usually within milliseconds, until ctx ends:
// what lets every edge log a user out at the next request. It reads the
// keys of the changes only (the watch is MetaOnly), so that the records
// and refreshes of sessions, which every edge would otherwise receive
// whole, cost little. One watch serves a whole edge process.
//
// As with WatchEdge, the channel closes when ctx ends or the connection's
// subscription is closed; the caller then watches again and forgets what
// it holds of sessions, as ends between the two watches are not
// reported. The caller must keep receiving until the channel is closed,
// or end ctx.
//
// It returns an error if the watch cannot start.
func (s *Store) WatchAppSessionEnds(ctx context.Context) (<-chan AppSessionEnd, error) {
	watcher, err := s.kv.WatchFiltered(ctx, []string{appSessions.kind + ".>"}, jetstream.UpdatesOnly(), jetstream.MetaOnly())
	if err != nil {
		return nil, fmt.Errorf("watching application sessions: %w", err)
	}
	return runWatch(ctx, watcher, decodeAppSessionEnd), nil
}

// decodeAppSessionEnd returns the end an entry reports, and false for
// none: a session recorded or refreshed, or a key not of a session.
func decodeAppSessionEnd(entry jetstream.KeyValueEntry) (AppSessionEnd, bool) {
	if entry == nil {
		return AppSessionEnd{}, false
	}
	if op := entry.Operation(); op != jetstream.KeyValueDelete && op != jetstream.KeyValuePurge {
		return AppSessionEnd{}, false
	}
	parts := strings.Split(entry.Key(), ".")
	if len(parts) != 3 || parts[0] != appSessions.kind {
		return AppSessionEnd{}, false
	}
	return AppSessionEnd{AccountID: parts[1], ID: parts[2]}, true
}
