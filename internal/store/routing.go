package store

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// RoutingChange is one change of what the routes of HTTPS edges serve:
// an HTTPS edge, a route or a tunnel group backend, of any account.
// Exactly one of Edge, Route and Backend is set, unless Deleted.
type RoutingChange struct {
	// Key is the resource's key in the bucket: the same key names the
	// same resource in every change.
	Key string
	// Deleted reports that the resource is gone (or could not be read,
	// which an edge treats alike: it serves nothing it cannot check).
	Deleted bool
	Edge    *HTTPSEdge
	Route   *HTTPSEdgeRoute
	Backend *TunnelGroupBackend
}

// routingFilters are the keys FollowRouting watches.
var routingFilters = []string{httpsEdgesKind + ".>", "https_edge_routes.>", "tunnel_group_backends.>"}

// FollowRouting calls apply with every HTTPS edge, route and tunnel group
// backend of every account, then with each change of them, until ctx
// ends; apply is called from one goroutine at a time. When a watch ends
// it watches again, and once the new watch's initial values are in it
// calls apply with the deletion of each resource it told of before that
// the new watch did not: what apply built from the changes stays true
// meanwhile, and is never left with a resource deleted while no watch
// ran. ready, if not nil, is called once the first watch's initial values
// are in.
func (s *Store) FollowRouting(ctx context.Context, log *slog.Logger, apply func(RoutingChange), ready func()) {
	s.followCurrent(ctx, log, "HTTPS edges, routes and backends (the edge serves them as they were meanwhile)",
		routingFilters, func(key string, entry jetstream.KeyValueEntry) {
			if entry == nil {
				apply(RoutingChange{Key: key, Deleted: true})
				return
			}
			apply(decodeRoutingChange(entry))
		}, ready)
}

// decodeRoutingChange decodes one put of FollowRouting's watch; a value
// that cannot be decoded is a deletion.
func decodeRoutingChange(entry jetstream.KeyValueEntry) RoutingChange {
	key := entry.Key()
	change := RoutingChange{Key: key, Deleted: true}
	var err error
	switch kind, _, _ := strings.Cut(key, "."); kind {
	case httpsEdgesKind:
		change.Edge = new(HTTPSEdge)
		err = json.Unmarshal(entry.Value(), change.Edge)
	case "https_edge_routes":
		change.Route = new(HTTPSEdgeRoute)
		err = json.Unmarshal(entry.Value(), change.Route)
	default:
		change.Backend = new(TunnelGroupBackend)
		err = json.Unmarshal(entry.Value(), change.Backend)
	}
	if err != nil {
		return RoutingChange{Key: key, Deleted: true}
	}
	change.Deleted = false
	return change
}
