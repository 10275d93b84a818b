package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Kinds of EdgeChange.
const (
	EdgeCredential     = "credential"
	EdgeBotUser        = "bot_user"
	EdgeReservedDomain = "reserved_domain"
	EdgeTunnelSession  = "tunnel_session"
)

// edgeKinds are the kinds of EdgeChange by the kind of their keys.
var edgeKinds = map[string]string{
	"credentials":      EdgeCredential,
	"bot_users":        EdgeBotUser,
	"reserved_domains": EdgeReservedDomain,
	tunnelSessionsKind: EdgeTunnelSession,
}

// EdgeChange is one change of a credential, bot user, reserved domain or
// tunnel session: what makes an edge end agents' sessions and endpoints.
type EdgeChange struct {
	// Kind is EdgeCredential, EdgeBotUser, EdgeReservedDomain or
	// EdgeTunnelSession.
	Kind string
	// AccountID and ID name the resource changed.
	AccountID, ID string
	// Deleted reports that the resource was deleted; the pointers are nil
	// then.
	Deleted bool
	// Credential is the credential as it is now, without its token, if
	// Kind is EdgeCredential and it was not deleted.
	Credential *Credential
	// BotUser is the bot user as it is now (Active false: deactivated),
	// if Kind is EdgeBotUser and it was not deleted.
	BotUser *BotUser
	// TunnelSession is the session as it is now (StopRequested: stop
	// it), if Kind is EdgeTunnelSession and it was not deleted.
	TunnelSession *TunnelSession
	// ReservedDomain is the reserved domain as it is now, if Kind is
	// EdgeReservedDomain and it was not deleted.
	ReservedDomain *ReservedDomain
	// Revision is the revision of the change in the bucket.
	Revision uint64
	// At is when the change was stored, by the NATS server's clock.
	At time.Time
	// Err is set if the stored value could not be decoded; the change then
	// carries Kind, AccountID, ID and Revision only. An edge treats the
	// resource as changed in a way it cannot check: it ends what the
	// resource allowed.
	Err error
}

// WatchEdge reports every change of credentials, bot users, reserved
// domains and tunnel sessions of every account from now on (not the state
// before), usually within milliseconds and in the order of the bucket,
// until ctx ends. A change may repeat the value the resource already had:
// writes that protect against concurrent deletes rewrite a resource
// unchanged (an endpoint created rewrites its tunnel session, a credential
// its owner). One watch serves a whole edge process.
//
// The watch runs in a goroutine that the caller owns through ctx: when ctx
// ends, the goroutine stops the watcher and closes the channel. It also
// closes the channel if the connection's subscription is closed; the
// caller then watches again, and checks what it holds, as changes between
// the two watches are not reported. The caller must keep receiving until
// the channel is closed, or end ctx.
//
// It returns an error if the watch cannot start.
func (e Edges) WatchEdge(ctx context.Context) (<-chan EdgeChange, error) {
	filters := make([]string, 0, len(edgeKinds))
	for kind := range edgeKinds {
		filters = append(filters, kind+".>")
	}
	watcher, err := e.store.kv.WatchFiltered(ctx, filters, jetstream.UpdatesOnly())
	if err != nil {
		return nil, fmt.Errorf("watching credentials, bot users, reserved domains and tunnel sessions: %w", err)
	}
	return runWatch(ctx, watcher, decodeEdgeChange), nil
}

// decodeEdgeChange returns the change an entry of the bucket reports, and
// false for none: the end of the (empty) initial state, or a key not of
// one of the kinds (an index of the same prefix).
func decodeEdgeChange(entry jetstream.KeyValueEntry) (EdgeChange, bool) {
	if entry == nil {
		return EdgeChange{}, false
	}
	parts := strings.Split(entry.Key(), ".")
	kind, known := edgeKinds[parts[0]]
	if len(parts) != 3 || !known {
		return EdgeChange{}, false
	}
	change := EdgeChange{Kind: kind, AccountID: parts[1], ID: parts[2], Revision: entry.Revision(), At: entry.Created()}
	if op := entry.Operation(); op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge {
		change.Deleted = true
		return change, true
	}
	var err error
	switch kind {
	case EdgeCredential:
		change.Credential = new(Credential)
		err = json.Unmarshal(entry.Value(), change.Credential)
	case EdgeBotUser:
		change.BotUser = new(BotUser)
		err = json.Unmarshal(entry.Value(), change.BotUser)
	case EdgeReservedDomain:
		change.ReservedDomain = new(ReservedDomain)
		err = json.Unmarshal(entry.Value(), change.ReservedDomain)
	default:
		change.TunnelSession = new(TunnelSession)
		err = json.Unmarshal(entry.Value(), change.TunnelSession)
	}
	if err != nil {
		change.Credential, change.BotUser, change.ReservedDomain, change.TunnelSession = nil, nil, nil, nil
		change.Err = fmt.Errorf("decoding %s: %w", entry.Key(), err)
	}
	return change, true
}
