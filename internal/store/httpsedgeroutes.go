package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/trafficpolicy"
)

// HTTPSEdgeRoute is a route of an HTTPS edge: the requests it takes, by
// their path, and its modules (specification sections 2.5, 2.6, 4.3).
type HTTPSEdgeRoute struct {
	// ID is "edghtsrt_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account that owns the route and its edge.
	AccountID string `json:"account_id"`
	// EdgeID is the edge the route belongs to; it never changes.
	EdgeID string `json:"edge_id"`
	// CreatedAt is when the route was created, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// Description is free text, at most 255 bytes.
	Description string `json:"description"`
	// Metadata is free text, at most 4096 bytes.
	Metadata string `json:"metadata"`
	// MatchType is MatchExactPath or MatchPathPrefix.
	MatchType string `json:"match_type"`
	// Match is a path starting with "/", at most resource.MaxRouteMatch
	// bytes. No two routes of an edge have one MatchType and Match.
	Match string `json:"match"`
	// CircuitBreaker is the route's circuit breaker, nil when unset.
	CircuitBreaker *CircuitBreaker `json:"circuit_breaker,omitempty"`
	// WebsocketTCPConverter is the route's websocket TCP converter, nil
	// when unset.
	WebsocketTCPConverter *WebsocketTCPConverter `json:"websocket_tcp_converter,omitempty"`
	// Backend is where the route sends its requests, nil when unset (the
	// edge answers 503 for a route without an enabled backend).
	Backend *RouteBackend `json:"backend,omitempty"`
	// TrafficPolicy is the route's traffic policy, nil when unset.
	TrafficPolicy *RouteTrafficPolicy `json:"traffic_policy,omitempty"`
}

// RouteBackend is the backend module of a route: a tunnel group backend
// of the route's account, whose tunnels take the route's requests.
type RouteBackend struct {
	// Enabled is whether it applies to traffic.
	Enabled bool `json:"enabled"`
	// BackendID is a tunnel group backend of the account (bkdtg_...).
	BackendID string `json:"backend_id"`
}

// RouteTrafficPolicy is the traffic policy module of a route: a policy
// document of package trafficpolicy, run on the route's requests after
// the policy of nothing else (routes are not endpoints).
type RouteTrafficPolicy struct {
	// Enabled is whether it applies to traffic.
	Enabled bool `json:"enabled"`
	// Value is the policy document, JSON or YAML, as the operator gave
	// it; it parses (checked at write).
	Value string `json:"value"`
}

// The match types of a route.
const (
	MatchExactPath  = "exact_path"
	MatchPathPrefix = "path_prefix"
)

// MatchTypes are the match types of a route.
var MatchTypes = []string{MatchExactPath, MatchPathPrefix}

// CircuitBreaker is the circuit breaker module of a route (specification
// section 2.5).
type CircuitBreaker struct {
	// Enabled is whether it applies to traffic.
	Enabled bool `json:"enabled"`
	// TrippedDuration is the seconds to wait, once tripped, before
	// checking the upstream's health again; above 0.
	TrippedDuration uint32 `json:"tripped_duration"`
	// RollingWindow is the seconds of the window its metrics are kept
	// for; above 0.
	RollingWindow uint32 `json:"rolling_window"`
	// NumBuckets is how many buckets the window's metrics are kept in, 1
	// to MaxCircuitBuckets.
	NumBuckets uint32 `json:"num_buckets"`
	// VolumeThreshold is how many requests of a window can trip it.
	VolumeThreshold uint32 `json:"volume_threshold"`
	// ErrorThresholdPercentage is the share of errors that trips it, 0 to
	// 1.0.
	ErrorThresholdPercentage float64 `json:"error_threshold_percentage"`
}

// MaxCircuitBuckets is the most buckets of a circuit breaker.
const MaxCircuitBuckets = 128

// check normalizes c (an error_threshold_percentage of -0 is 0) and
// returns a *ValidationError for the first field of the circuit breaker
// that breaks a rule, or nil.
func (c *CircuitBreaker) check() error {
	c.ErrorThresholdPercentage = positiveZero(c.ErrorThresholdPercentage)
	switch {
	case c.TrippedDuration == 0:
		return invalid("tripped_duration", "is 0: give the whole seconds to wait after the circuit trips, above 0")
	case c.RollingWindow == 0:
		return invalid("rolling_window", "is 0: give the whole seconds of the rolling window, above 0")
	case c.NumBuckets < 1 || c.NumBuckets > MaxCircuitBuckets:
		return invalid("num_buckets", "is %d: give 1 to %d", c.NumBuckets, MaxCircuitBuckets)
	case !(c.ErrorThresholdPercentage >= 0 && c.ErrorThresholdPercentage <= 1):
		return invalid("error_threshold_percentage", "is %g: the range is 0 to 1.0, not 0 to 100 (0.5 is half the requests)", c.ErrorThresholdPercentage)
	}
	return nil
}

// WebsocketTCPConverter is the websocket TCP converter module of a route
// (specification section 2.6).
type WebsocketTCPConverter struct {
	// Enabled is whether it applies to traffic.
	Enabled bool `json:"enabled"`
}

// check normalizes r and returns a *ValidationError for the first field
// that breaks a rule, or nil.
func (r *HTTPSEdgeRoute) check() error {
	spec := resource.HTTPSEdgeRoutes()
	if err := checkText(spec.Field("description"), r.Description); err != nil {
		return err
	}
	if err := checkText(spec.Field("metadata"), r.Metadata); err != nil {
		return err
	}
	if r.MatchType != MatchExactPath && r.MatchType != MatchPathPrefix {
		return invalid("match_type", "is %q: choose %s", r.MatchType, strings.Join(MatchTypes, " or "))
	}
	match := spec.Field("match")
	if !strings.HasPrefix(r.Match, "/") {
		return invalid("match", "is %q: give a path starting with /, such as /api", r.Match)
	}
	if err := checkText(match, r.Match); err != nil {
		return err
	}
	if i := strings.IndexFunc(r.Match, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }); i >= 0 {
		return invalid("match", "has white space or a control character at byte %d: a path has none (encode it as %%20)", i)
	}
	if r.CircuitBreaker != nil {
		if err := r.CircuitBreaker.check(); err != nil {
			var v *ValidationError
			if errors.As(err, &v) {
				v.Field = "circuit_breaker." + v.Field
			}
			return err
		}
	}
	if r.Backend != nil && schemas.CheckID(schemas.PrefixTunnelGroupBackend, r.Backend.BackendID) != nil {
		return invalid("backend.backend_id", "is %q: give the id of a tunnel group backend of the account (%s...); list yours with GET /backends/tunnel_group",
			schemas.Clip(r.Backend.BackendID), schemas.PrefixTunnelGroupBackend)
	}
	if r.TrafficPolicy != nil {
		return checkRoutePolicy(r.TrafficPolicy.Value)
	}
	return nil
}

// checkRoutePolicy returns a *ValidationError of traffic_policy.value if
// doc is not a policy document a route can run: one of at most
// resource.MaxRouteTrafficPolicy bytes that trafficpolicy.Parse takes
// (its error, with the line and column of each mistake, is the
// ValidationError's Err and is quoted in its Msg), with no on_tcp_connect
// rules, as a route takes HTTP requests.
func checkRoutePolicy(doc string) error {
	const field = "traffic_policy.value"
	if len(doc) > resource.MaxRouteTrafficPolicy {
		return invalid(field, "is %d bytes long, more than the %d bytes a route's policy may have: move rules to the endpoints' own policies, or shorten it",
			len(doc), resource.MaxRouteTrafficPolicy)
	}
	// The edges run openid-connect: it is checked here as they check it.
	policy, err := trafficpolicy.Parse([]byte(doc), trafficpolicy.CheckingOnly())
	if err != nil {
		var bad *trafficpolicy.PolicyError
		if !errors.As(err, &bad) {
			return fmt.Errorf("checking the traffic policy: %w", err)
		}
		problems := make([]string, len(bad.Problems))
		for i, p := range bad.Problems {
			problems[i] = p.String()
		}
		return &ValidationError{Field: field, Err: err,
			Msg: "is not a traffic policy a route can run: " + strings.Join(problems, "; ")}
	}
	if policy.ConnectRules() > 0 {
		return invalid(field, "has %s rules, which run on TCP connections: a route takes HTTP requests, so give on_http_request and on_http_response rules only",
			trafficpolicy.PhaseOnTCPConnect)
	}
	return nil
}

// httpsEdgeRoutes declares the routes of HTTPS edges (see family): each
// belongs to an edge of its account (parent), claimed in the batch that
// creates the route (claimEdge), and no two routes of an edge have one
// match_type and match (its unique index, whose key holds the edge). A
// route given a backend claims it in the batch that gives it
// (claimBackend).
var httpsEdgeRoutes = family[HTTPSEdgeRoute]{
	kind:   "https_edge_routes",
	prefix: resource.HTTPSEdgeRoutes().Prefix,
	noun:   "HTTPS edge route",
	meta:   func(r *HTTPSEdgeRoute) (*string, *string, *time.Time) { return &r.ID, &r.AccountID, &r.CreatedAt },
	input: func(in HTTPSEdgeRoute) HTTPSEdgeRoute {
		r := HTTPSEdgeRoute{EdgeID: in.EdgeID, Description: in.Description, Metadata: in.Metadata,
			MatchType: in.MatchType, Match: in.Match}
		if in.Backend != nil {
			r.Backend = &RouteBackend{Enabled: in.Backend.Enabled, BackendID: in.Backend.BackendID}
		}
		if in.TrafficPolicy != nil {
			r.TrafficPolicy = &RouteTrafficPolicy{Enabled: in.TrafficPolicy.Enabled, Value: in.TrafficPolicy.Value}
		}
		return r
	},
	check:  func(_ context.Context, _ *Store, r *HTTPSEdgeRoute) error { return r.check() },
	limit:  LimitHTTPSEdgeRoutes,
	max:    func(l Limits) int { return l.HTTPSEdgeRoutes },
	parent: func(r *HTTPSEdgeRoute) *string { return &r.EdgeID },
	rule: func(was, r HTTPSEdgeRoute) error {
		if was.EdgeID != r.EdgeID {
			return invalid("edge_id", "cannot change: create the route on the other edge, and delete this one")
		}
		return nil
	},
	unique: &uniqueIndex[HTTPSEdgeRoute]{
		field: "match",
		value: func(r HTTPSEdgeRoute) string { return r.MatchType + " " + r.Match + " on edge " + r.EdgeID },
		key:   routeMatchKey,
	},
	writes: func(ctx context.Context, s *Store, before *HTTPSEdgeRoute, after HTTPSEdgeRoute) ([]write, error) {
		var writes []write
		if before == nil {
			claim, err := s.claimEdge(ctx, after.AccountID, after.EdgeID)
			if err != nil {
				return nil, err
			}
			writes = append(writes, claim...)
		}
		if b := after.Backend; b != nil && (before == nil || before.Backend == nil || before.Backend.BackendID != b.BackendID) {
			claim, err := s.claimBackend(ctx, after.AccountID, b.BackendID)
			if err != nil {
				return nil, err
			}
			writes = append(writes, claim...)
		}
		return writes, nil
	},
}

// routeMatchKey is the index key of a route's match type, match and edge
// (the value of its unique index) within the account. Unlike a name's, it
// keeps case: /API and /api are two paths.
func routeMatchKey(accountID, value string) string {
	sum := sha256.Sum256([]byte(value))
	return "https_edge_route_matches." + accountID + "." + hex.EncodeToString(sum[:])
}

// claimEdge returns the write that rewrites the edge as it is, at its
// revision, so that a delete of the edge meanwhile, which deletes its
// routes, makes one of the two start over; or an error wrapping
// ErrNotFound if the account has no such edge.
func (s *Store) claimEdge(ctx context.Context, accountID, edgeID string) ([]write, error) {
	key := httpsEdgesKind + "." + accountID + "." + edgeID // httpsEdges.key, which refers to this
	claim, err := s.claimKey(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return nil, refusal{fmt.Errorf("HTTPS edge %s: %w", edgeID, ErrNotFound)}
	}
	if err != nil {
		return nil, err
	}
	return []write{claim}, nil
}

// deleteRoutesOf returns the writes that delete the routes of the edge
// and their index keys, each at the revision read now.
func (s *Store) deleteRoutesOf(ctx context.Context, e HTTPSEdge) ([]write, error) {
	entries, err := s.entries(ctx, httpsEdgeRoutes.filter(e.AccountID))
	if err != nil {
		return nil, fmt.Errorf("listing routes of HTTPS edge %s: %w", e.ID, err)
	}
	var writes []write
	for _, entry := range entries {
		var r HTTPSEdgeRoute
		if err := json.Unmarshal(entry.Value(), &r); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", entry.Key(), err)
		}
		if r.EdgeID != e.ID {
			continue
		}
		release, err := httpsEdgeRoutes.release(ctx, s, e.AccountID, r)
		if err != nil {
			return nil, err
		}
		writes = append(writes, write{key: entry.Key(), del: true, revision: entry.Revision()})
		writes = append(writes, release...)
	}
	return writes, nil
}

// CreateHTTPSEdgeRoute creates a route of the HTTPS edge edgeID of the
// account with the Description, Metadata, MatchType, Match, Backend and
// TrafficPolicy of in, and no other module (the API sets modules with
// UpdateHTTPSEdgeRoute); the store sets ID, AccountID, EdgeID and
// CreatedAt.
//
// It returns a *ValidationError (matching ErrInvalid) for a field that
// breaks a rule, including a backend_id that names no tunnel group
// backend of the account (also matching ErrNotFound) and a traffic
// policy that does not parse (its Err the *trafficpolicy.PolicyError,
// with positions), a *TakenError (matching ErrConflict) if a route of the
// edge has the match type and match, a *LimitError (matching ErrLimit) if
// the account has Limits.HTTPSEdgeRoutes, or an error wrapping ErrNotFound
// if the account has no such edge.
func (s *Store) CreateHTTPSEdgeRoute(ctx context.Context, accountID, edgeID string, in HTTPSEdgeRoute, opts ...WriteOption) (HTTPSEdgeRoute, error) {
	if err := httpsEdges.ownedID(accountID, edgeID); err != nil {
		return HTTPSEdgeRoute{}, err
	}
	in.EdgeID = edgeID
	return httpsEdgeRoutes.create(ctx, s, accountID, in, opts)
}

// GetHTTPSEdgeRoute returns the route of the account with the id. It
// returns an error wrapping ErrNotFound if the account has no such route,
// including when another account has. Which edge it belongs to is its
// EdgeID.
func (s *Store) GetHTTPSEdgeRoute(ctx context.Context, accountID, id string) (HTTPSEdgeRoute, error) {
	return httpsEdgeRoutes.get(ctx, s, accountID, id)
}

// ListHTTPSEdgeRoutes returns a page of the routes of the account's HTTPS
// edge edgeID, newest first (by id), and the BeforeID of the next page, ""
// after the last page. An edge with no routes, or none, has an empty page.
//
// It returns a *ValidationError (matching ErrInvalid) for a page limit
// outside 1 to MaxPageLimit or a malformed BeforeID, or an error wrapping
// ErrNotFound if accountID is not an account id.
func (s *Store) ListHTTPSEdgeRoutes(ctx context.Context, accountID, edgeID string, page Page) ([]HTTPSEdgeRoute, string, error) {
	return httpsEdgeRoutes.listIn(ctx, s, accountID, edgeID, page)
}

// UpdateHTTPSEdgeRoute changes the route of the account with the id, its
// modules included: it calls fn on the stored route, checks the result as
// CreateHTTPSEdgeRoute does, and writes it if the route has not changed in
// the meantime; otherwise it starts over on a fresh copy, so fn may be
// called several times and must have no other effect, and two updates at
// once (of two modules, say) both take effect. Changes fn makes to ID,
// AccountID and CreatedAt are discarded; a change of EdgeID is refused.
//
// It returns the route written, or the error of fn as it is, a
// *ValidationError (matching ErrInvalid) for a field that breaks a rule
// (as CreateHTTPSEdgeRoute's: a backend is claimed, as there, when it is
// set or changed), a *TakenError (matching ErrConflict) if another route
// of the edge has the new match type and match, an error wrapping ErrNotFound if the
// account has no such route, or one wrapping ErrConflict if the route kept
// changing under concurrent updates.
func (s *Store) UpdateHTTPSEdgeRoute(ctx context.Context, accountID, id string, fn func(*HTTPSEdgeRoute) error, opts ...WriteOption) (HTTPSEdgeRoute, error) {
	return httpsEdgeRoutes.update(ctx, s, accountID, id, fn, opts)
}

// DeleteHTTPSEdgeRoute deletes the route of the account with the id, which
// frees its match, and returns it as it was. It returns an error wrapping
// ErrNotFound if the account has no such route.
func (s *Store) DeleteHTTPSEdgeRoute(ctx context.Context, accountID, id string, opts ...WriteOption) (HTTPSEdgeRoute, error) {
	return httpsEdgeRoutes.remove(ctx, s, accountID, id, opts, nil)
}

// HTTPSEdgeRoutesByEdge returns every route of the account's HTTPS
// edges, by the id of their edge, each edge's oldest first, for the
// edges' bodies that show their routes. It returns an error wrapping
// ErrNotFound if accountID is not an account id.
func (s *Store) HTTPSEdgeRoutesByEdge(ctx context.Context, accountID string) (map[string][]HTTPSEdgeRoute, error) {
	if err := schemas.CheckID(schemas.PrefixAccount, accountID); err != nil {
		return nil, fmt.Errorf("account %q: %w", accountID, ErrNotFound)
	}
	all, err := listRecords[HTTPSEdgeRoute](ctx, s, httpsEdgeRoutes.filter(accountID))
	if err != nil {
		return nil, fmt.Errorf("listing HTTPS edge routes: %w", err)
	}
	slices.SortFunc(all, func(a, b HTTPSEdgeRoute) int { return strings.Compare(a.ID, b.ID) })
	byEdge := map[string][]HTTPSEdgeRoute{}
	for _, r := range all {
		byEdge[r.EdgeID] = append(byEdge[r.EdgeID], r)
	}
	return byEdge, nil
}
