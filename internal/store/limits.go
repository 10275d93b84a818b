package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/schemas"
)

// Defaults of Limits. They are generous for an operator (a hundred
// destinations is more AWS streams than a team runs; a thousand
// subscriptions covers a subscription per service and environment) and
// bound what a hostile account can make the process deliver: every running
// replay delivers a subscription's whole stored range again.
const (
	DefaultMaxDestinations  = 100
	DefaultMaxSubscriptions = 1000
	// DefaultMaxRoutes is the most routes of an account by default: a
	// route is a subscription and one destination it names, each with its
	// own durable consumer and worker, delivering every event the
	// subscription's sources match once more. A hundred covers ten
	// subscriptions of ten destinations each, and bounds the work one
	// event of an account can make the process do.
	DefaultMaxRoutes         = 100
	DefaultMaxRunningReplay  = 5
	DefaultMaxAPIKeys        = 100
	DefaultMaxAgentIngresses = 100
	DefaultMaxAppSessions    = 1000
	DefaultMaxBotUsers       = 100
	DefaultMaxCredentials    = 100
	// DefaultMaxHTTPSEdges and DefaultMaxHTTPSEdgeRoutes are the most
	// HTTPS edges, and routes of all its edges, of an account by default.
	DefaultMaxHTTPSEdges      = 100
	DefaultMaxHTTPSEdgeRoutes = 300
	// DefaultMaxReservedDomains is the most reserved domains of an
	// account by default.
	DefaultMaxReservedDomains = 100
	// DefaultMaxTunnelSessions and DefaultMaxEndpoints are the most
	// tunnel sessions, and endpoints, of an account by default: agents
	// connected at once, and the addresses they serve.
	DefaultMaxTunnelSessions = 100
	DefaultMaxEndpoints      = 100
	// DefaultMaxTunnelGroupBackends is the most tunnel group backends of
	// an account by default.
	DefaultMaxTunnelGroupBackends = 100
)

// Limits bound what one account can have. A zero field gets its default.
type Limits struct {
	// Destinations is the most event destinations of an account; default
	// DefaultMaxDestinations.
	Destinations int
	// Subscriptions is the most event subscriptions of an account; default
	// DefaultMaxSubscriptions.
	Subscriptions int
	// Routes is the most routes of an account: destinations named by its
	// subscriptions, one for each destination each subscription names;
	// default DefaultMaxRoutes.
	Routes int
	// SourcesPerSubscription is the most sources of one subscription;
	// default (and most) the number of event kinds of the catalogue, as a
	// kind appears once in a subscription.
	SourcesPerSubscription int
	// RunningReplays is the most replays of an account running at once;
	// default DefaultMaxRunningReplay.
	RunningReplays int
	// APIKeys is the most API keys of an account; default
	// DefaultMaxAPIKeys.
	APIKeys int
	// AgentIngresses is the most agent ingresses of an account; default
	// DefaultMaxAgentIngresses.
	AgentIngresses int
	// AppSessions is the most application sessions of an account;
	// default DefaultMaxAppSessions, ten times the other limits, as there
	// is one per end user logged in. Past it, a login evicts the least
	// recently active session (RecordAppSession).
	AppSessions int
	// BotUsers is the most bot users of an account; default
	// DefaultMaxBotUsers.
	BotUsers int
	// Credentials is the most tunnel credentials of an account; default
	// DefaultMaxCredentials.
	Credentials int
	// HTTPSEdges is the most HTTPS edges of an account; default
	// DefaultMaxHTTPSEdges.
	HTTPSEdges int
	// HTTPSEdgeRoutes is the most routes of an account's HTTPS edges, all
	// its edges together; default DefaultMaxHTTPSEdgeRoutes, and at most
	// MaxHTTPSEdgeRoutes.
	HTTPSEdgeRoutes int
	// ReservedDomains is the most reserved domains of an account;
	// default DefaultMaxReservedDomains.
	ReservedDomains int
	// TunnelSessions is the most tunnel sessions of an account, agents
	// connected at once; default DefaultMaxTunnelSessions.
	TunnelSessions int
	// Endpoints is the most endpoints of an account; default
	// DefaultMaxEndpoints.
	Endpoints int
	// TunnelGroupBackends is the most tunnel group backends of an
	// account; default DefaultMaxTunnelGroupBackends.
	TunnelGroupBackends int
}

func (l *Limits) setDefaults() {
	kinds := len(schemas.Default().Kinds())
	defaults.Positive(&l.Destinations, DefaultMaxDestinations)
	defaults.Positive(&l.Subscriptions, DefaultMaxSubscriptions)
	defaults.Positive(&l.Routes, DefaultMaxRoutes)
	if l.SourcesPerSubscription <= 0 || l.SourcesPerSubscription > kinds {
		l.SourcesPerSubscription = kinds
	}
	defaults.Positive(&l.RunningReplays, DefaultMaxRunningReplay)
	defaults.Positive(&l.APIKeys, DefaultMaxAPIKeys)
	defaults.Positive(&l.AgentIngresses, DefaultMaxAgentIngresses)
	defaults.Positive(&l.AppSessions, DefaultMaxAppSessions)
	defaults.Positive(&l.BotUsers, DefaultMaxBotUsers)
	defaults.Positive(&l.Credentials, DefaultMaxCredentials)
	defaults.Positive(&l.HTTPSEdges, DefaultMaxHTTPSEdges)
	defaults.Positive(&l.HTTPSEdgeRoutes, DefaultMaxHTTPSEdgeRoutes)
	l.HTTPSEdgeRoutes = min(l.HTTPSEdgeRoutes, MaxHTTPSEdgeRoutes)
	defaults.Positive(&l.ReservedDomains, DefaultMaxReservedDomains)
	defaults.Positive(&l.TunnelSessions, DefaultMaxTunnelSessions)
	defaults.Positive(&l.Endpoints, DefaultMaxEndpoints)
	defaults.Positive(&l.TunnelGroupBackends, DefaultMaxTunnelGroupBackends)
}

// MaxHTTPSEdgeRoutes is the highest Limits.HTTPSEdgeRoutes: deleting an
// edge deletes its routes and their index keys in one batch, two writes a
// route, and JetStream takes at most 1000 writes in a batch by default
// (the server's max_batch_size, which an external NATS may set lower).
const MaxHTTPSEdgeRoutes = 450

// ErrLimit means the account has as many resources of a kind as the
// process allows (*LimitError).
var ErrLimit = errors.New("account limit reached")

// Names of the limits, in LimitError.Limit.
const (
	LimitDestinations           = "destinations"
	LimitSubscriptions          = "subscriptions"
	LimitRoutes                 = "routes"
	LimitSourcesPerSubscription = "sources per subscription"
	LimitRunningReplays         = "running replays"
	LimitAPIKeys                = "api keys"
	LimitAgentIngresses         = "agent ingresses"
	LimitAppSessions            = "application sessions"
	LimitBotUsers               = "bot users"
	LimitCredentials            = "tunnel credentials"
	LimitHTTPSEdges             = "HTTPS edges"
	LimitHTTPSEdgeRoutes        = "HTTPS edge routes"
	LimitReservedDomains        = "reserved domains"
	LimitTunnelSessions         = "tunnel sessions"
	LimitEndpoints              = "endpoints"
	LimitTunnelGroupBackends    = "tunnel group backends"
)

// LimitError is a create refused because the account has as many resources
// of a kind as Limits allows, or a subscription given more sources than it
// allows. It matches ErrLimit.
type LimitError struct {
	Limit string // one of the Limit* names
	Max   int
	// Would is how many the refused write would have made the account
	// have, for a limit of a sum (LimitRoutes); 0 for the others, which a
	// write passes by one.
	Would int
}

func (e *LimitError) Error() string {
	if e.Would > 0 {
		return fmt.Sprintf("the write would give the account %d %s, over its limit of %d", e.Would, e.Limit, e.Max)
	}
	return fmt.Sprintf("the account has reached its limit of %d %s", e.Max, e.Limit)
}

// Is matches ErrLimit.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// creationClaimTTL is how long a claim of a create that never released it
// (its process died) counts against the limit.
const creationClaimTTL = time.Minute

// creationClaims is the value of creations.<account_id>.<kind>: the
// resources of the kind being created right now. A create adds its
// resource's id here with a compare-and-swap, after counting the resources
// that exist and those claimed, and removes it once its resource is
// written; so of concurrent creates, each counts the others, and together
// they never pass the limit.
type creationClaims = pendingList[creationClaim]

type creationClaim struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

// creationsKey is the key of the claims of creates of a kind of an account.
func creationsKey(accountID, kind string) string {
	return "creations." + accountID + "." + kind
}

// counted is a kind of resource under a limit: its name in keys, its limit
// and the ids of the account's resources that count against it.
type counted struct {
	kind  string
	limit string
	max   func(Limits) int
	ids   func(ctx context.Context, s *Store, accountID string) ([]string, error)
}

var countedReplays = counted{kind: "replays", limit: LimitRunningReplays,
	max: func(l Limits) int { return l.RunningReplays }, ids: runningReplayIDs}

// keyIDs returns the ids of the account's keys matching filter(account).
func keyIDs(filter func(accountID string) string) func(context.Context, *Store, string) ([]string, error) {
	return func(ctx context.Context, s *Store, accountID string) ([]string, error) {
		f := filter(accountID)
		entries, err := s.entries(ctx, f)
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(entries))
		for i, e := range entries {
			ids[i] = strings.TrimPrefix(e.Key(), strings.TrimSuffix(f, "*"))
		}
		return ids, nil
	}
}

// runningReplayIDs returns the ids of the account's running replays.
func runningReplayIDs(ctx context.Context, s *Store, accountID string) ([]string, error) {
	all, err := listRecords[Replay](ctx, s, "replays."+accountID+".*")
	if err != nil {
		return nil, err
	}
	var ids []string
	var subs map[string]*Subscription
	for _, r := range all {
		if r.State != ReplayRunning {
			continue
		}
		if subs == nil {
			list, err := listRecords[Subscription](ctx, s, subscriptions.filter(accountID))
			if err != nil {
				return nil, err
			}
			subs = make(map[string]*Subscription, len(list))
			for i := range list {
				subs[list[i].ID] = &list[i]
			}
		}
		// A replay with nothing left to deliver stays "running" in the
		// bucket (see Replay.Finished), and must not hold the limit.
		if !r.Finished(subs[r.SubscriptionID]) {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}

// withinLimit runs create, which writes the resource id of the kind c, if
// the account has fewer than its limit of them, counting those other calls
// are creating at the same time. It returns a *LimitError otherwise, or an
// error wrapping ErrConflict if the claims kept changing under concurrent
// creates.
//
// The claims are read before the resources: a resource written since is
// either among the resources listed or still claimed, and counted once
// either way (claims of listed resources are dropped).
func (s *Store) withinLimit(ctx context.Context, accountID string, c counted, id string, create func() error) error {
	key := creationsKey(accountID, c.kind)
	limit := c.max(s.limits)
	err := retryConflicts(ctx, func() error {
		claims, rev, err := getRecord[creationClaims](ctx, s, key)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("reading the creations of account %s: %w", accountID, err)
		}
		ids, err := c.ids(ctx, s, accountID)
		if err != nil {
			return fmt.Errorf("counting %s: %w", c.limit, err)
		}
		stale := time.Now().Add(-creationClaimTTL)
		pending := slices.DeleteFunc(claims.Pending, func(p creationClaim) bool {
			return p.At.Before(stale) || slices.Contains(ids, p.ID)
		})
		if len(ids)+len(pending) >= limit {
			return &LimitError{Limit: c.limit, Max: limit}
		}
		claims.Pending = append(pending, creationClaim{ID: id, At: time.Now().UTC()})
		return writePending(ctx, s, key, claims, rev)
	})
	if err != nil {
		return err
	}
	defer s.releaseClaim(ctx, key, id)
	return create()
}

// releaseClaim drops the claim of id, even if ctx has ended. If that
// fails, the claim is dropped by the next create that sees its resource,
// or after creationClaimTTL.
func (s *Store) releaseClaim(ctx context.Context, key, id string) {
	dropPending(ctx, s, key, func(p creationClaim) bool { return p.ID == id })
}
