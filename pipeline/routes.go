package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// routeConsumerPrefix starts the name of every route's durable consumer,
// so that the reconciler can tell its consumers from any other.
const routeConsumerPrefix = "route_"

// Route is one (subscription, destination) pair: the events of the
// subscription's sources go to the destination through the route's own
// durable consumer.
type Route struct {
	// Subscription is the subscription as it is now.
	Subscription store.Subscription
	// Destination is the destination as it is now, with its secret.
	Destination store.Destination
	// Since is when the subscription was last written: a route that has no
	// consumer yet delivers the events stored from then on, so that none
	// stored between the change and the consumer's creation is missed
	// (this process was down, or busy, meanwhile). For a replay, it is
	// the replay's Since.
	Since time.Time
	// Replay, when not nil, makes the route a replay's: it delivers again
	// the events of its subscription from Replay.Since to Replay.EndSeq,
	// through a consumer of its own (see ReplayConsumerName).
	Replay *store.Replay
}

// Name is the name of the route's durable consumer: route_<subscription
// id>_<destination id>. Ids are a prefix and base62, so the name holds no
// character JetStream refuses.
func (r Route) Name() string {
	if r.Replay != nil {
		return ReplayConsumerName(r.Replay.ID, r.Destination.ID)
	}
	return ConsumerName(r.Subscription.ID, r.Destination.ID)
}

// ConsumerName is the name of the durable consumer of the route of a
// subscription and a destination.
func ConsumerName(subscriptionID, destinationID string) string {
	return routeConsumerPrefix + subscriptionID + "_" + destinationID
}

// Subjects are the subjects of the events the route delivers, one per
// source, sorted.
func (r Route) Subjects() []string {
	subjects := make([]string, len(r.Subscription.Sources))
	for i, src := range r.Subscription.Sources {
		subjects[i] = schemas.EventSubject(r.Subscription.AccountID, src.Type)
	}
	slices.Sort(subjects)
	return subjects
}

// Version identifies everything a route's delivery depends on: its
// sources and its destination. A worker delivering a route is replaced
// when the version changes.
func (r Route) Version() string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode(r.Subscription.Sources)
	_ = enc.Encode(r.Destination)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// configState is what the store holds, as the watch delivered it.
type configState struct {
	destinations  map[string]store.Destination  // by account id / destination id
	subscriptions map[string]store.Subscription // by account id / subscription id
	written       map[string]time.Time          // when each subscription was last written
	replays       map[string]store.Replay       // running replays, by account id / replay id
}

func newConfigState() *configState {
	return &configState{
		destinations:  make(map[string]store.Destination),
		subscriptions: make(map[string]store.Subscription),
		written:       make(map[string]time.Time),
		replays:       make(map[string]store.Replay),
	}
}

func stateKey(accountID, id string) string { return accountID + "/" + id }

// apply records a change of the store. A change that could not be decoded
// (Err set) removes the resource: a broken record routes nothing.
func (c *configState) apply(ch store.ConfigChange) {
	key := stateKey(ch.AccountID, ch.ID)
	switch ch.Kind {
	case store.ConfigDestination:
		if ch.Deleted || ch.Err != nil || ch.Destination == nil {
			delete(c.destinations, key)
			return
		}
		c.destinations[key] = *ch.Destination
	case store.ConfigSubscription:
		if ch.Deleted || ch.Err != nil || ch.Subscription == nil {
			delete(c.subscriptions, key)
			delete(c.written, key)
			return
		}
		c.subscriptions[key] = *ch.Subscription
		c.written[key] = ch.At
	case store.ConfigReplay:
		if ch.Deleted || ch.Err != nil || ch.Replay == nil || ch.Replay.State != store.ReplayRunning {
			delete(c.replays, key)
			return
		}
		c.replays[key] = *ch.Replay
	}
}

// routes returns the routes of the state, by name: one per destination
// each subscription with at least one source names, when that destination
// exists. A subscription without sources has no route (a consumer with no
// filter subject would take every event of the stream).
func (c *configState) routes() map[string]Route {
	routes := make(map[string]Route)
	for _, sub := range c.subscriptions {
		if len(sub.Sources) == 0 {
			continue
		}
		for _, id := range sub.DestinationIDs {
			dest, ok := c.destinations[stateKey(sub.AccountID, id)]
			if !ok {
				continue // deleted at the same time; see store.undo
			}
			r := Route{Subscription: sub, Destination: dest, Since: c.written[stateKey(sub.AccountID, sub.ID)]}
			routes[r.Name()] = r
		}
	}
	c.addReplayRoutes(routes)
	return routes
}

// isRouteConsumer reports whether a consumer name is a route's.
func isRouteConsumer(name string) bool { return strings.HasPrefix(name, routeConsumerPrefix) }
