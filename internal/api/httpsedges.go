package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apiconv"
	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

var (
	httpsEdgeResource  = resource{noun: "HTTPS edge", listPath: apiwire.HTTPSEdgesPath}
	httpsRouteResource = resource{noun: "HTTPS edge route", listPath: apiwire.HTTPSEdgeRoutesPath, taken: apiconv.CodeRouteMatchTaken}
)

// routeHTTPSEdges serves HTTPS edges, their routes, a family nested in
// the edge's path, and the routes' modules (specification sections 2.5,
// 2.6 and 4.3, and sluice's backend and traffic_policy, as the
// reference service has them). The catalogue has no audit kinds for them: their changes
// emit no audit event.
func (s *Server) routeHTTPSEdges() {
	e := s.httpsEdges
	route(s, family[edgeWithRoutes, apiwire.HTTPSEdgeInput, apiwire.HTTPSEdgeInput, apiwire.HTTPSEdge]{
		spec: declared.HTTPSEdges(), res: httpsEdgeResource,
		applyCreate: applyHTTPSEdge, applyUpdate: applyHTTPSEdge,
		create: func(ctx context.Context, accountID string, v edgeWithRoutes, opts ...store.WriteOption) (edgeWithRoutes, error) {
			created, err := e.CreateHTTPSEdge(ctx, accountID, v.HTTPSEdge, opts...)
			return edgeWithRoutes{HTTPSEdge: created}, err // a new edge has no route
		},
		get: func(ctx context.Context, accountID, id string) (edgeWithRoutes, error) {
			v, err := e.GetHTTPSEdge(ctx, accountID, id)
			return s.withRoutes(ctx, accountID, v, err)
		},
		list: func(ctx context.Context, accountID string, page store.Page) ([]edgeWithRoutes, string, error) {
			routes, err := e.HTTPSEdgeRoutesByEdge(ctx, accountID)
			if err != nil {
				return nil, "", err
			}
			if match := page.Match; match != nil {
				// ?filter= sees an edge as its body shows it: with its routes.
				page.Match = func(item any) (bool, error) {
					if v, ok := item.(store.HTTPSEdge); ok {
						return match(edgeWithRoutes{HTTPSEdge: v, routes: routes[v.ID]})
					}
					return match(item)
				}
			}
			items, next, err := e.ListHTTPSEdges(ctx, accountID, page)
			if err != nil {
				return nil, "", err
			}
			withRoutes := make([]edgeWithRoutes, len(items))
			for i, v := range items {
				withRoutes[i] = edgeWithRoutes{HTTPSEdge: v, routes: routes[v.ID]}
			}
			return withRoutes, next, nil
		},
		update: func(ctx context.Context, accountID, id string, fn func(*edgeWithRoutes) error, opts ...store.WriteOption) (edgeWithRoutes, error) {
			v, err := e.UpdateHTTPSEdge(ctx, accountID, id, func(v *store.HTTPSEdge) error {
				w := edgeWithRoutes{HTTPSEdge: *v}
				err := fn(&w)
				*v = w.HTTPSEdge
				return err
			}, opts...)
			return s.withRoutes(ctx, accountID, v, err)
		},
		delete: func(ctx context.Context, accountID, id string, opts ...store.WriteOption) (edgeWithRoutes, error) {
			v, err := e.DeleteHTTPSEdge(ctx, accountID, id, opts...)
			return edgeWithRoutes{HTTPSEdge: v}, err
		},
		body: s.httpsEdgeResponse,
	})
	routes := family[store.HTTPSEdgeRoute, apiwire.HTTPSEdgeRouteInput, apiwire.HTTPSEdgeRouteInput, apiwire.HTTPSEdgeRoute]{
		spec: declared.HTTPSEdgeRoutes(), res: httpsRouteResource,
		applyCreate: applyHTTPSRoute, applyUpdate: applyHTTPSRoute,
		create: func(ctx context.Context, accountID string, v store.HTTPSEdgeRoute, opts ...store.WriteOption) (store.HTTPSEdgeRoute, error) {
			return e.CreateHTTPSEdgeRoute(ctx, accountID, v.EdgeID, v, opts...)
		},
		get: e.GetHTTPSEdgeRoute, update: e.UpdateHTTPSEdgeRoute, delete: e.DeleteHTTPSEdgeRoute,
		body: s.httpsRouteResponse,
		parent: &parent[store.HTTPSEdgeRoute]{
			param: "edge_id", res: httpsEdgeResource,
			of: func(v *store.HTTPSEdgeRoute) *string { return &v.EdgeID },
			exists: func(ctx context.Context, accountID, id string) error {
				_, err := e.GetHTTPSEdge(ctx, accountID, id)
				return err
			},
			list: e.ListHTTPSEdgeRoutes,
		},
		fixed: map[string]string{"edge_id": "create the route on the other edge, and delete this one"},
	}
	route(s, routes)
	routeModule(s, routes, module[store.HTTPSEdgeRoute, store.CircuitBreaker, apiwire.CircuitBreakerInput, apiwire.CircuitBreaker]{
		name: apiwire.CircuitBreakerModule, noun: "circuit breaker", value: circuitBreaker,
		field: func(v *store.HTTPSEdgeRoute) **store.CircuitBreaker { return &v.CircuitBreaker },
		body:  func(_ *http.Request, c store.CircuitBreaker) apiwire.CircuitBreaker { return circuitBreakerResponse(c) },
	})
	routeModule(s, routes, module[store.HTTPSEdgeRoute, store.WebsocketTCPConverter, apiwire.WebsocketTCPConverterInput, apiwire.WebsocketTCPConverter]{
		name: apiwire.WebsocketTCPConverterModule, noun: "websocket TCP converter", value: websocketTCPConverter,
		field: func(v *store.HTTPSEdgeRoute) **store.WebsocketTCPConverter { return &v.WebsocketTCPConverter },
		body: func(_ *http.Request, m store.WebsocketTCPConverter) apiwire.WebsocketTCPConverter {
			return apiwire.WebsocketTCPConverter(m)
		},
	})
	routeModule(s, routes, module[store.HTTPSEdgeRoute, store.RouteBackend, apiwire.RouteBackendInput, apiwire.RouteBackend]{
		name: apiwire.BackendModule, noun: "backend", value: routeBackend,
		field: func(v *store.HTTPSEdgeRoute) **store.RouteBackend { return &v.Backend },
		body:  s.routeBackendResponse,
	})
	routeModule(s, routes, module[store.HTTPSEdgeRoute, store.RouteTrafficPolicy, apiwire.RouteTrafficPolicyInput, apiwire.RouteTrafficPolicy]{
		name: apiwire.TrafficPolicyModule, noun: "traffic policy", value: routeTrafficPolicy,
		field: func(v *store.HTTPSEdgeRoute) **store.RouteTrafficPolicy { return &v.TrafficPolicy },
		body: func(_ *http.Request, m store.RouteTrafficPolicy) apiwire.RouteTrafficPolicy {
			return apiwire.RouteTrafficPolicy(m)
		},
	})
}

// edgeWithRoutes is an HTTPS edge with its routes, which its body shows
// inline as the reference service does.
type edgeWithRoutes struct {
	store.HTTPSEdge
	routes []store.HTTPSEdgeRoute // oldest first
}

// withRoutes returns the edge v, read with err, with its routes.
func (s *Server) withRoutes(ctx context.Context, accountID string, v store.HTTPSEdge, err error) (edgeWithRoutes, error) {
	if err != nil {
		return edgeWithRoutes{}, err
	}
	routes, err := s.httpsEdges.HTTPSEdgeRoutesByEdge(ctx, accountID)
	if err != nil {
		return edgeWithRoutes{}, err
	}
	return edgeWithRoutes{HTTPSEdge: v, routes: routes[v.ID]}, nil
}

func (s *Server) httpsEdgeResponse(r *http.Request, e edgeWithRoutes) apiwire.HTTPSEdge {
	body := apiwire.HTTPSEdge{
		ID:          e.ID,
		URI:         s.resourceURI(r, httpsEdgeResource.listPath+"/"+e.ID),
		CreatedAt:   e.CreatedAt.UTC().Format(createdAtLayout),
		Description: e.Description,
		Metadata:    e.Metadata,
		Hostports:   append([]string{}, e.Hostports...),
		Routes:      make([]apiwire.HTTPSEdgeRoute, len(e.routes)),
	}
	for i, v := range e.routes {
		body.Routes[i] = s.httpsRouteResponse(r, v)
	}
	return body
}

func (s *Server) httpsRouteResponse(r *http.Request, v store.HTTPSEdgeRoute) apiwire.HTTPSEdgeRoute {
	body := apiwire.HTTPSEdgeRoute{
		ID:          v.ID,
		URI:         s.resourceURI(r, apiwire.HTTPSEdgeRoutesOf(v.EdgeID)+"/"+v.ID),
		EdgeID:      v.EdgeID,
		CreatedAt:   v.CreatedAt.UTC().Format(createdAtLayout),
		Description: v.Description,
		Metadata:    v.Metadata,
		MatchType:   v.MatchType,
		Match:       v.Match,
	}
	if v.CircuitBreaker != nil {
		c := circuitBreakerResponse(*v.CircuitBreaker)
		body.CircuitBreaker = &c
	}
	if v.WebsocketTCPConverter != nil {
		body.WebsocketTCPConverter = &apiwire.WebsocketTCPConverter{Enabled: v.WebsocketTCPConverter.Enabled}
	}
	if v.Backend != nil {
		b := s.routeBackendResponse(r, *v.Backend)
		body.Backend = &b
	}
	if v.TrafficPolicy != nil {
		body.TrafficPolicy = &apiwire.RouteTrafficPolicy{Enabled: v.TrafficPolicy.Enabled, Value: v.TrafficPolicy.Value}
	}
	return body
}

// routeBackendResponse is the backend module of a route as the API shows
// it: the backend as a reference.
func (s *Server) routeBackendResponse(r *http.Request, b store.RouteBackend) apiwire.RouteBackend {
	return apiwire.RouteBackend{Enabled: b.Enabled,
		Backend: schemas.Ref{ID: b.BackendID, URI: s.resourceURI(r, tunnelGroupBackendResource.listPath+"/"+b.BackendID)}}
}

func circuitBreakerResponse(c store.CircuitBreaker) apiwire.CircuitBreaker {
	return apiwire.CircuitBreaker(c)
}

// applyHTTPSEdge sets the fields of an edge's create or update sent. An
// empty hostports removes every one.
func applyHTTPSEdge(in apiwire.HTTPSEdgeInput, e *edgeWithRoutes) {
	setSent(&e.Description, in.Description)
	setSent(&e.Metadata, in.Metadata)
	if in.Hostports != nil {
		e.Hostports = slices.Clone(*in.Hostports)
	}
}

// applyHTTPSRoute sets the fields of a route's create or update sent.
// Its modules have paths of their own.
func applyHTTPSRoute(in apiwire.HTTPSEdgeRouteInput, v *store.HTTPSEdgeRoute) {
	setSent(&v.Description, in.Description)
	setSent(&v.Metadata, in.Metadata)
	setSent(&v.MatchType, in.MatchType)
	setSent(&v.Match, in.Match)
}

// The defaults of a circuit breaker's fields not sent in its PUT: those
// of the reference service.
const (
	defaultTrippedDuration   = 10
	defaultRollingWindow     = 10
	defaultNumBuckets        = 10
	defaultVolumeThreshold   = 20
	defaultErrorThresholdPct = 0.5
)

// circuitBreaker returns the circuit breaker a PUT sets, which replaces
// it whole: a field not sent takes its default.
func circuitBreaker(in apiwire.CircuitBreakerInput) store.CircuitBreaker {
	c := store.CircuitBreaker{Enabled: true, TrippedDuration: defaultTrippedDuration, RollingWindow: defaultRollingWindow,
		NumBuckets: defaultNumBuckets, VolumeThreshold: defaultVolumeThreshold, ErrorThresholdPercentage: defaultErrorThresholdPct}
	setSent(&c.Enabled, in.Enabled)
	setSent(&c.TrippedDuration, in.TrippedDuration)
	setSent(&c.RollingWindow, in.RollingWindow)
	setSent(&c.NumBuckets, in.NumBuckets)
	setSent(&c.VolumeThreshold, in.VolumeThreshold)
	setSent(&c.ErrorThresholdPercentage, in.ErrorThresholdPercentage)
	return c
}

// websocketTCPConverter returns the websocket TCP converter a PUT sets.
func websocketTCPConverter(in apiwire.WebsocketTCPConverterInput) store.WebsocketTCPConverter {
	c := store.WebsocketTCPConverter{Enabled: true}
	setSent(&c.Enabled, in.Enabled)
	return c
}

// routeBackend returns the backend a PUT sets, which replaces it whole.
func routeBackend(in apiwire.RouteBackendInput) store.RouteBackend {
	b := store.RouteBackend{Enabled: true}
	setSent(&b.Enabled, in.Enabled)
	setSent(&b.BackendID, in.BackendID)
	return b
}

// routeTrafficPolicy returns the traffic policy a PUT sets, which
// replaces it whole.
func routeTrafficPolicy(in apiwire.RouteTrafficPolicyInput) store.RouteTrafficPolicy {
	p := store.RouteTrafficPolicy{Enabled: true}
	setSent(&p.Enabled, in.Enabled)
	setSent(&p.Value, in.Value)
	return p
}

// HTTPSEdges keeps the HTTPS edges of accounts and their routes.
// *store.Store implements it; see its methods for the errors each returns.
type HTTPSEdges interface {
	CreateHTTPSEdge(ctx context.Context, accountID string, in store.HTTPSEdge, opts ...store.WriteOption) (store.HTTPSEdge, error)
	GetHTTPSEdge(ctx context.Context, accountID, id string) (store.HTTPSEdge, error)
	ListHTTPSEdges(ctx context.Context, accountID string, page store.Page) ([]store.HTTPSEdge, string, error)
	UpdateHTTPSEdge(ctx context.Context, accountID, id string, fn func(*store.HTTPSEdge) error, opts ...store.WriteOption) (store.HTTPSEdge, error)
	DeleteHTTPSEdge(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.HTTPSEdge, error)
	HTTPSEdgeRoutesByEdge(ctx context.Context, accountID string) (map[string][]store.HTTPSEdgeRoute, error)

	CreateHTTPSEdgeRoute(ctx context.Context, accountID, edgeID string, in store.HTTPSEdgeRoute, opts ...store.WriteOption) (store.HTTPSEdgeRoute, error)
	GetHTTPSEdgeRoute(ctx context.Context, accountID, id string) (store.HTTPSEdgeRoute, error)
	ListHTTPSEdgeRoutes(ctx context.Context, accountID, edgeID string, page store.Page) ([]store.HTTPSEdgeRoute, string, error)
	UpdateHTTPSEdgeRoute(ctx context.Context, accountID, id string, fn func(*store.HTTPSEdgeRoute) error, opts ...store.WriteOption) (store.HTTPSEdgeRoute, error)
	DeleteHTTPSEdgeRoute(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.HTTPSEdgeRoute, error)
}
