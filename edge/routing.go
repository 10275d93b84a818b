package edge

import (
	"cmp"
	"maps"
	"net"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/edge/circuitbreaker"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/trafficpolicy"
)

// routing is what the routes of HTTPS edges serve, of every account: the
// edges by the hosts of their hostports, each edge's routes, and the
// tunnel group backends. It is built from the store's changes
// (Config.Routing) and read by every public request for a host no
// endpoint is bound at. Its methods are safe for concurrent use.
//
// A request's route is the edge's exact_path route equal to its path, or
// else its path_prefix route with the longest match that starts its path;
// the path is the request's, decoded and cleaned of "." and ".."
// segments, so that /public/../admin is routed as /admin. Two edges of
// an account with one hostport: the older (the smaller id) serves it.
type routing struct {
	mu sync.RWMutex
	// edges are the HTTPS edges' records, by id; routes each edge's
	// routes, by edge id and route id; routeEdge each route's edge.
	edges     map[string]store.HTTPSEdge
	routes    map[string]map[string]*route
	routeEdge map[string]string
	backends  map[string]*store.TunnelGroupBackend
	// hosts are the edges with a hostport at each host, and served the
	// one that serves it, as built by rebuild.
	hosts  map[string][]string
	served map[string]*edgeRoutes
	// options are the routes' policies' (Edge.policyOptions).
	options []trafficpolicy.Option
}

// edgeRoutes is one HTTPS edge as requests find it: its routes by how
// they match. It does not change once built; a change of the edge or its
// routes builds another.
type edgeRoutes struct {
	edge     store.HTTPSEdge
	exact    map[string]*route
	prefixes []*route // the longest match first
	// logins are the routes whose policies log users in, oldest first:
	// the edge answers their callback and logout paths for them all.
	logins []*route
}

// route is one route as the edge serves it.
type route struct {
	rec store.HTTPSEdgeRoute
	// match is the route's match decoded, as paths are compared.
	match string
	// breaker is the route's circuit breaker, nil when the module is
	// absent or disabled; it is kept across changes of the route that
	// keep its settings.
	breaker *circuitbreaker.Breaker
	// policy is the route's traffic policy, nil when none; policyErr
	// says why an enabled policy could not be loaded, and the route then
	// answers 503 (it fails closed: a policy may be what guards it).
	policy    *trafficpolicy.Policy
	policyErr error
	// warned is set once policyErr is logged: once a route.
	warned atomic.Bool
}

func newRouting(options ...trafficpolicy.Option) *routing {
	return &routing{options: options,
		edges: make(map[string]store.HTTPSEdge), routes: make(map[string]map[string]*route),
		routeEdge: make(map[string]string), backends: make(map[string]*store.TunnelGroupBackend),
		hosts: make(map[string][]string), served: make(map[string]*edgeRoutes),
	}
}

// apply takes one change of the store. A route's policy is parsed
// before the table is locked: requests go on meanwhile.
func (t *routing) apply(c store.RoutingChange) {
	kind, rest, _ := strings.Cut(c.Key, ".")
	_, id, _ := strings.Cut(rest, ".")
	var parsed *route
	if c.Route != nil && !c.Deleted {
		parsed = t.parseRoute(*c.Route)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch kind {
	case "https_edges":
		before, had := t.edges[id]
		if c.Deleted {
			delete(t.edges, id)
		} else {
			t.edges[id] = *c.Edge
		}
		t.rehost(id, hostsOf(before, had), hostsOf(t.edges[id], !c.Deleted))
	case "https_edge_routes":
		if edgeID, ok := t.routeEdge[id]; ok {
			old := t.routes[edgeID][id]
			delete(t.routes[edgeID], id)
			delete(t.routeEdge, id)
			if parsed != nil && c.Route.EdgeID == edgeID {
				t.addRoute(parsed.keepBreaker(old))
			}
			t.rebuild(edgeID)
		}
		if parsed != nil && t.routeEdge[id] == "" {
			t.addRoute(parsed)
			t.rebuild(c.Route.EdgeID)
		}
	default:
		if c.Deleted {
			delete(t.backends, id)
		} else {
			t.backends[id] = c.Backend
		}
	}
}

func (t *routing) addRoute(r *route) {
	edgeID := r.rec.EdgeID
	if t.routes[edgeID] == nil {
		t.routes[edgeID] = make(map[string]*route)
	}
	t.routes[edgeID][r.rec.ID] = r
	t.routeEdge[r.rec.ID] = edgeID
}

// hostsOf returns the hosts of an edge's hostports; none if !ok.
func hostsOf(e store.HTTPSEdge, ok bool) []string {
	if !ok {
		return nil
	}
	hosts := make([]string, 0, len(e.Hostports))
	for _, hp := range e.Hostports {
		if host, _, err := net.SplitHostPort(hp); err == nil {
			hosts = append(hosts, strings.ToLower(host))
		}
	}
	return hosts
}

// rehost moves edge id from the hosts it had to those it has, and
// rebuilds what it serves.
func (t *routing) rehost(id string, had, has []string) {
	for _, host := range had {
		t.hosts[host] = slices.DeleteFunc(t.hosts[host], func(e string) bool { return e == id })
		if len(t.hosts[host]) == 0 {
			delete(t.hosts, host)
		}
	}
	for _, host := range has {
		if !slices.Contains(t.hosts[host], id) {
			t.hosts[host] = append(t.hosts[host], id)
			slices.Sort(t.hosts[host])
		}
	}
	for _, host := range had {
		t.serve(host)
	}
	t.rebuild(id)
}

// rebuild builds the routes of edge id again, for the hosts it serves.
func (t *routing) rebuild(id string) {
	e, ok := t.edges[id]
	if !ok {
		return
	}
	er := &edgeRoutes{edge: e, exact: make(map[string]*route)}
	// Oldest first (ids sort by time): of two routes whose matches
	// decode alike (/admin and /%61dmin), the older takes the path, on
	// every edge and at every rebuild.
	routes := slices.SortedFunc(maps.Values(t.routes[id]), func(a, b *route) int { return cmp.Compare(a.rec.ID, b.rec.ID) })
	for _, r := range routes {
		if r.policy != nil && len(r.policy.OpenIDConnects()) > 0 {
			er.logins = append(er.logins, r)
		}
		if r.rec.MatchType != store.MatchExactPath {
			er.prefixes = append(er.prefixes, r)
		} else if er.exact[r.match] == nil {
			er.exact[r.match] = r
		}
	}
	slices.SortStableFunc(er.prefixes, func(a, b *route) int { return cmp.Compare(len(b.match), len(a.match)) })
	for _, host := range hostsOf(e, true) {
		if t.hosts[host][0] == id {
			t.served[host] = er
		}
	}
}

// serve sets which edge serves host: the oldest with a hostport there.
func (t *routing) serve(host string) {
	ids := t.hosts[host]
	if len(ids) == 0 {
		delete(t.served, host)
		return
	}
	t.rebuild(ids[0])
}

// parseRoute makes the route of rec, with a new breaker (see
// keepBreaker).
func (t *routing) parseRoute(rec store.HTTPSEdgeRoute) *route {
	r := &route{rec: rec, match: rec.Match}
	if m, err := url.PathUnescape(rec.Match); err == nil {
		r.match = m
	}
	if cb := rec.CircuitBreaker; cb != nil && cb.Enabled {
		// The store checked the settings; one it would refuse now
		// leaves the route without a breaker rather than unserved.
		r.breaker, _ = circuitbreaker.New(breakerConfig(*cb))
	}
	if p := rec.TrafficPolicy; p != nil && p.Enabled {
		r.policy, r.policyErr = trafficpolicy.Parse([]byte(p.Value), t.options...)
		if r.policyErr == nil {
			if n := r.policy.ConnectRules(); n > 0 {
				r.policy, r.policyErr = nil, errConnectRules
			}
		}
	}
	return r
}

// keepBreaker gives r the breaker of old, the route it replaces, when the
// breaker's settings did not change: its state goes on. It returns r.
func (r *route) keepBreaker(old *route) *route {
	if r.breaker != nil && old != nil && old.breaker != nil && *old.rec.CircuitBreaker == *r.rec.CircuitBreaker {
		r.breaker = old.breaker
	}
	return r
}

// breakerConfig is the circuit breaker of a route's module.
func breakerConfig(cb store.CircuitBreaker) circuitbreaker.Config {
	return circuitbreaker.Config{
		TrippedDuration: time.Duration(cb.TrippedDuration) * time.Second,
		RollingWindow:   time.Duration(cb.RollingWindow) * time.Second,
		NumBuckets:      int(cb.NumBuckets),
		VolumeThreshold: cb.VolumeThreshold,
		ErrorThreshold:  cb.ErrorThresholdPercentage,
	}
}

// lookup returns the HTTPS edge serving host, nil when none does, and
// its route for the request path p (r.URL.Path), nil when none matches.
func (t *routing) lookup(host, p string) (*edgeRoutes, *route) {
	t.mu.RLock()
	er := t.served[host]
	t.mu.RUnlock()
	if er == nil {
		return nil, nil
	}
	return er, er.match(p)
}

// match returns the route of the request path p, or nil.
func (er *edgeRoutes) match(p string) *route {
	if p == "" {
		p = "/"
	}
	if clean := path.Clean(p); clean != p {
		if strings.HasSuffix(p, "/") && clean != "/" {
			clean += "/"
		}
		p = clean
	}
	if r := er.exact[p]; r != nil {
		return r
	}
	for _, r := range er.prefixes {
		if strings.HasPrefix(p, r.match) {
			return r
		}
	}
	return nil
}

// backend returns the tunnel group backend id, nil when there is none.
func (t *routing) backend(id string) *store.TunnelGroupBackend {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.backends[id]
}

// serves reports whether an HTTPS edge has a hostport at host.
func (t *routing) serves(host string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.served[strings.ToLower(host)] != nil
}
