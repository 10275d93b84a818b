package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/sluicehq/sluice/apiwire"
)

// Module is a module of a route of an HTTPS edge, at
// /edges/https/{edge_id}/routes/{id}/<module>: one value, set whole with
// Put, read with Get, removed with Delete. T is the module as the API
// returns it, In the body of a Put.
type Module[T, In any] struct {
	client *Client
	path   string
}

// NewModule returns the module named name (CircuitBreakerModule, ...) of
// the route routeID of the HTTPS edge edgeID.
func NewModule[T, In any](c *Client, edgeID, routeID, name string) Module[T, In] {
	return Module[T, In]{client: c, path: apiwire.HTTPSEdgeRoutesOf(edgeID) + "/" + url.PathEscape(routeID) + "/" + name}
}

// ModuleWithBody returns the module m whose Put takes In2 instead: another
// type of the same JSON, such as a map of what a user typed.
func ModuleWithBody[In2, T, In any](m Module[T, In]) Module[T, In2] {
	return Module[T, In2](m)
}

// Put sets the module, replacing the one set, and returns it. It returns
// the errors of Client.Do.
func (m Module[T, In]) Put(ctx context.Context, in In, opts ...CallOption) (T, error) {
	var out T
	err := m.client.Do(ctx, http.MethodPut, m.path, in, &out, opts...)
	return out, err
}

// Get returns the module. It returns the errors of Client.Do: an *Error of
// status 404 when the module is not set.
func (m Module[T, In]) Get(ctx context.Context, opts ...CallOption) (T, error) {
	var out T
	err := m.client.Do(ctx, http.MethodGet, m.path, nil, &out, opts...)
	return out, err
}

// Delete removes the module; removing a module not set succeeds too. It
// returns the errors of Client.Do.
func (m Module[T, In]) Delete(ctx context.Context, opts ...CallOption) error {
	return m.client.Do(ctx, http.MethodDelete, m.path, nil, nil, opts...)
}

// CircuitBreaker returns the circuit breaker of the route routeID of the
// HTTPS edge edgeID.
func (c *Client) CircuitBreaker(edgeID, routeID string) Module[apiwire.CircuitBreaker, apiwire.CircuitBreakerInput] {
	return NewModule[apiwire.CircuitBreaker, apiwire.CircuitBreakerInput](c, edgeID, routeID, apiwire.CircuitBreakerModule)
}

// WebsocketTCPConverter returns the websocket TCP converter of the route
// routeID of the HTTPS edge edgeID.
func (c *Client) WebsocketTCPConverter(edgeID, routeID string) Module[apiwire.WebsocketTCPConverter, apiwire.WebsocketTCPConverterInput] {
	return NewModule[apiwire.WebsocketTCPConverter, apiwire.WebsocketTCPConverterInput](c, edgeID, routeID, apiwire.WebsocketTCPConverterModule)
}

// RouteBackend returns the backend of the route routeID of the HTTPS edge
// edgeID: the tunnel group backend whose tunnels take its requests. Put
// returns an *Error of status 400 for a backend the account does not
// have.
func (c *Client) RouteBackend(edgeID, routeID string) Module[apiwire.RouteBackend, apiwire.RouteBackendInput] {
	return NewModule[apiwire.RouteBackend, apiwire.RouteBackendInput](c, edgeID, routeID, apiwire.BackendModule)
}

// RouteTrafficPolicy returns the traffic policy of the route routeID of
// the HTTPS edge edgeID. Put returns an *Error of status 400, giving the
// line and column of each mistake, for a policy that does not parse.
func (c *Client) RouteTrafficPolicy(edgeID, routeID string) Module[apiwire.RouteTrafficPolicy, apiwire.RouteTrafficPolicyInput] {
	return NewModule[apiwire.RouteTrafficPolicy, apiwire.RouteTrafficPolicyInput](c, edgeID, routeID, apiwire.TrafficPolicyModule)
}
