package client

import (
	"context"
	"net/http"
	"net/url"
)

// The collections of the API, by path and the field of a page that holds
// the items.
const (
	AgentIngressesPath     = "/agent_ingresses"
	AgentIngressesListKey  = "ingresses" // not agent_ingresses (specification section 4.1)
	AppSessionsPath        = "/app/sessions"
	AppSessionsListKey     = "application_sessions"
	APIKeysPath            = "/api_keys"
	APIKeysListKey         = "keys" // not api_keys: the official clients read keys
	EventDestinationsPath  = "/event_destinations"
	EventDestinationsKey   = "event_destinations"
	EventSubscriptionsPath = "/event_subscriptions"
	EventSubscriptionsKey  = "event_subscriptions"
	BotUsersPath           = "/bot_users"
	BotUsersListKey        = "bot_users"
	CredentialsPath        = "/credentials"
	CredentialsListKey     = "credentials"
	HTTPSEdgesPath         = "/edges/https"
	HTTPSEdgesListKey      = "https_edges"
	// HTTPSEdgeRoutesPath is the routes of the edge {edge_id}
	// (HTTPSEdgeRoutesOf).
	HTTPSEdgeRoutesPath    = HTTPSEdgesPath + "/{edge_id}/routes"
	HTTPSEdgeRoutesListKey = "routes"
	ReservedDomainsPath    = "/reserved_domains"
	ReservedDomainsListKey = "reserved_domains"
	TunnelSessionsPath     = "/tunnel_sessions"
	TunnelSessionsListKey  = "tunnel_sessions"
	EndpointsPath          = "/endpoints"
	EndpointsListKey       = "endpoints"
)

// AgentIngresses returns the account's agent ingresses, /agent_ingresses.
func (c *Client) AgentIngresses() Family[AgentIngress, AgentIngressInput] {
	return NewFamily[AgentIngress, AgentIngressInput](c, AgentIngressesPath, AgentIngressesListKey)
}

// AppSessions returns the account's application sessions, /app/sessions:
// the edge records them, the API lists, shows and revokes (deletes) them.
// It has no create or update: Create and Update answer 405.
func (c *Client) AppSessions() Family[AppSession, struct{}] {
	return NewFamily[AppSession, struct{}](c, AppSessionsPath, AppSessionsListKey)
}

// TunnelSessions returns the account's tunnel sessions, /tunnel_sessions:
// the edge records them, the API lists and shows them, and stops one
// (StopTunnelSession). It has no create, update or delete: they answer
// 405.
func (c *Client) TunnelSessions() Family[TunnelSession, struct{}] {
	return NewFamily[TunnelSession, struct{}](c, TunnelSessionsPath, TunnelSessionsListKey)
}

// StopTunnelSession asks the edge holding the tunnel session id to end
// it, POST /tunnel_sessions/{id}/stop; the agent may connect again.
func (c *Client) StopTunnelSession(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodPost, TunnelSessionsPath+"/"+url.PathEscape(id)+"/stop", nil, nil)
}

// Endpoints returns the account's endpoints, /endpoints: the edge records
// them, the API lists and shows them. It has no create, update or
// delete: they answer 405.
func (c *Client) Endpoints() Family[Endpoint, struct{}] {
	return NewFamily[Endpoint, struct{}](c, EndpointsPath, EndpointsListKey)
}

// BotUsers returns the account's bot users, /bot_users.
func (c *Client) BotUsers() Family[BotUser, BotUserInput] {
	return NewFamily[BotUser, BotUserInput](c, BotUsersPath, BotUsersListKey)
}

// Credentials returns the account's tunnel credentials, /credentials.
func (c *Client) Credentials() Family[Credential, CredentialInput] {
	return NewFamily[Credential, CredentialInput](c, CredentialsPath, CredentialsListKey)
}

// HTTPSEdges returns the account's HTTPS edges, /edges/https.
func (c *Client) HTTPSEdges() Family[HTTPSEdge, HTTPSEdgeInput] {
	return NewFamily[HTTPSEdge, HTTPSEdgeInput](c, HTTPSEdgesPath, HTTPSEdgesListKey)
}

// HTTPSEdgeRoutesOf returns the path of the routes of the HTTPS edge
// edgeID, /edges/https/{edge_id}/routes.
func HTTPSEdgeRoutesOf(edgeID string) string {
	return HTTPSEdgesPath + "/" + url.PathEscape(edgeID) + "/routes"
}

// HTTPSEdgeRoutes returns the routes of the HTTPS edge edgeID,
// /edges/https/{edge_id}/routes.
func (c *Client) HTTPSEdgeRoutes(edgeID string) Family[HTTPSEdgeRoute, HTTPSEdgeRouteInput] {
	return NewFamily[HTTPSEdgeRoute, HTTPSEdgeRouteInput](c, HTTPSEdgeRoutesOf(edgeID), HTTPSEdgeRoutesListKey)
}

// APIKeys returns the account's API keys, /api_keys.
func (c *Client) APIKeys() Family[APIKey, APIKeyInput] {
	return NewFamily[APIKey, APIKeyInput](c, APIKeysPath, APIKeysListKey)
}

// EventDestinations returns the account's event destinations,
// /event_destinations.
func (c *Client) EventDestinations() Family[Destination, DestinationInput] {
	return NewFamily[Destination, DestinationInput](c, EventDestinationsPath, EventDestinationsKey)
}

// ReservedDomains returns the account's reserved domains,
// /reserved_domains.
func (c *Client) ReservedDomains() Family[ReservedDomain, ReservedDomainInput] {
	return NewFamily[ReservedDomain, ReservedDomainInput](c, ReservedDomainsPath, ReservedDomainsListKey)
}

// EventSubscriptions returns the account's event subscriptions,
// /event_subscriptions.
func (c *Client) EventSubscriptions() Family[Subscription, SubscriptionInput] {
	return NewFamily[Subscription, SubscriptionInput](c, EventSubscriptionsPath, EventSubscriptionsKey)
}

// Sources are the sources of a subscription,
// /event_subscriptions/{id}/sources, one per event kind, added with an In
// and changed with an Update. Their pages are not paged: List returns
// every source.
type Sources[In, Update any] struct {
	added   Family[Source, In]     // POST, GET and DELETE
	changed Family[Source, Update] // PATCH
}

// Sources returns the sources of the subscription subscriptionID.
func (c *Client) Sources(subscriptionID string) Sources[SourceInput, SourceUpdate] {
	path := EventSubscriptionsPath + "/" + url.PathEscape(subscriptionID) + "/sources"
	return Sources[SourceInput, SourceUpdate]{
		added:   NewFamily[Source, SourceInput](c, path, "sources"),
		changed: NewFamily[Source, SourceUpdate](c, path, "sources"),
	}
}

// SourcesWithBodies returns the sources s whose bodies are In2 and Update2
// instead: other types of the same JSON, such as a map of what a user
// typed.
func SourcesWithBodies[In2, Update2, In, Update any](s Sources[In, Update]) Sources[In2, Update2] {
	return Sources[In2, Update2]{added: WithBodies[In2](s.added), changed: WithBodies[Update2](s.changed)}
}

// Add adds a source. It returns the errors of Client.Do: an *Error of
// status 409 when the subscription has a source of this kind.
func (s Sources[In, Update]) Add(ctx context.Context, in In, opts ...CallOption) (Source, error) {
	return s.added.Create(ctx, in, opts...)
}

// List returns every source. It returns the errors of Client.Do.
func (s Sources[In, Update]) List(ctx context.Context, opts ...CallOption) (SourceList, error) {
	var out SourceList
	err := s.added.client.Do(ctx, http.MethodGet, s.added.path, nil, &out, opts...)
	return out, err
}

// Get returns the source of eventType. It returns the errors of Client.Do.
func (s Sources[In, Update]) Get(ctx context.Context, eventType string, opts ...CallOption) (Source, error) {
	return s.added.Get(ctx, eventType, opts...)
}

// Update changes the filter or fields of the source of eventType. It
// returns the errors of Client.Do.
func (s Sources[In, Update]) Update(ctx context.Context, eventType string, in Update, opts ...CallOption) (Source, error) {
	return s.changed.Update(ctx, eventType, in, opts...)
}

// Delete removes the source of eventType. It returns the errors of
// Client.Do.
func (s Sources[In, Update]) Delete(ctx context.Context, eventType string, opts ...CallOption) error {
	return s.added.Delete(ctx, eventType, opts...)
}
