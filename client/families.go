package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/sluicehq/sluice/apiwire"
)

// AgentIngresses returns the account's agent ingresses, /agent_ingresses.
func (c *Client) AgentIngresses() Family[apiwire.AgentIngress, apiwire.AgentIngressInput] {
	return NewFamily[apiwire.AgentIngress, apiwire.AgentIngressInput](c, apiwire.AgentIngressesPath, apiwire.AgentIngressesListKey)
}

// AppSessions returns the account's application sessions, /app/sessions:
// the edge records them, the API lists, shows and revokes (deletes) them.
// It has no create or update: Create and Update answer 405.
func (c *Client) AppSessions() Family[apiwire.AppSession, struct{}] {
	return NewFamily[apiwire.AppSession, struct{}](c, apiwire.AppSessionsPath, apiwire.AppSessionsListKey)
}

// TunnelSessions returns the account's tunnel sessions, /tunnel_sessions:
// the edge records them, the API lists and shows them, and stops one
// (StopTunnelSession). It has no create, update or delete: they answer
// 405.
func (c *Client) TunnelSessions() Family[apiwire.TunnelSession, struct{}] {
	return NewFamily[apiwire.TunnelSession, struct{}](c, apiwire.TunnelSessionsPath, apiwire.TunnelSessionsListKey)
}

// StopTunnelSession asks the edge holding the tunnel session id to end
// it, POST /tunnel_sessions/{id}/stop; the agent may connect again.
func (c *Client) StopTunnelSession(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodPost, apiwire.TunnelSessionsPath+"/"+url.PathEscape(id)+"/stop", nil, nil)
}

// Endpoints returns the account's endpoints, /endpoints: the edge records
// them, the API lists and shows them. It has no create, update or
// delete: they answer 405.
func (c *Client) Endpoints() Family[apiwire.Endpoint, struct{}] {
	return NewFamily[apiwire.Endpoint, struct{}](c, apiwire.EndpointsPath, apiwire.EndpointsListKey)
}

// TLSCertificates returns the account's TLS certificates,
// /tls_certificates: sluice obtains and renews them for reserved domains,
// the API lists and shows them, without their private keys. It has no
// create, update or delete: they answer 405.
func (c *Client) TLSCertificates() Family[apiwire.TLSCertificate, struct{}] {
	return NewFamily[apiwire.TLSCertificate, struct{}](c, apiwire.TLSCertificatesPath, apiwire.TLSCertificatesListKey)
}

// BotUsers returns the account's bot users, /bot_users.
func (c *Client) BotUsers() Family[apiwire.BotUser, apiwire.BotUserInput] {
	return NewFamily[apiwire.BotUser, apiwire.BotUserInput](c, apiwire.BotUsersPath, apiwire.BotUsersListKey)
}

// Credentials returns the account's tunnel credentials, /credentials.
func (c *Client) Credentials() Family[apiwire.Credential, apiwire.CredentialInput] {
	return NewFamily[apiwire.Credential, apiwire.CredentialInput](c, apiwire.CredentialsPath, apiwire.CredentialsListKey)
}

// HTTPSEdges returns the account's HTTPS edges, /edges/https.
func (c *Client) HTTPSEdges() Family[apiwire.HTTPSEdge, apiwire.HTTPSEdgeInput] {
	return NewFamily[apiwire.HTTPSEdge, apiwire.HTTPSEdgeInput](c, apiwire.HTTPSEdgesPath, apiwire.HTTPSEdgesListKey)
}

// HTTPSEdgeRoutes returns the routes of the HTTPS edge edgeID,
// /edges/https/{edge_id}/routes.
func (c *Client) HTTPSEdgeRoutes(edgeID string) Family[apiwire.HTTPSEdgeRoute, apiwire.HTTPSEdgeRouteInput] {
	return NewFamily[apiwire.HTTPSEdgeRoute, apiwire.HTTPSEdgeRouteInput](c, apiwire.HTTPSEdgeRoutesOf(edgeID), apiwire.HTTPSEdgeRoutesListKey)
}

// TunnelGroupBackends returns the account's tunnel group backends,
// /backends/tunnel_group: the backends of HTTPS edge routes, each the
// labeled tunnels its labels select.
func (c *Client) TunnelGroupBackends() Family[apiwire.TunnelGroupBackend, apiwire.TunnelGroupBackendInput] {
	return NewFamily[apiwire.TunnelGroupBackend, apiwire.TunnelGroupBackendInput](c, apiwire.TunnelGroupBackendsPath, apiwire.TunnelGroupBackendsListKey)
}

// APIKeys returns the account's API keys, /api_keys.
func (c *Client) APIKeys() Family[apiwire.APIKey, apiwire.APIKeyInput] {
	return NewFamily[apiwire.APIKey, apiwire.APIKeyInput](c, apiwire.APIKeysPath, apiwire.APIKeysListKey)
}

// EventDestinations returns the account's event destinations,
// /event_destinations.
func (c *Client) EventDestinations() Family[apiwire.Destination, apiwire.DestinationInput] {
	return NewFamily[apiwire.Destination, apiwire.DestinationInput](c, apiwire.EventDestinationsPath, apiwire.EventDestinationsKey)
}

// ReservedDomains returns the account's reserved domains,
// /reserved_domains.
func (c *Client) ReservedDomains() Family[apiwire.ReservedDomain, apiwire.ReservedDomainInput] {
	return NewFamily[apiwire.ReservedDomain, apiwire.ReservedDomainInput](c, apiwire.ReservedDomainsPath, apiwire.ReservedDomainsListKey)
}

// EventSubscriptions returns the account's event subscriptions,
// /event_subscriptions.
func (c *Client) EventSubscriptions() Family[apiwire.Subscription, apiwire.SubscriptionInput] {
	return NewFamily[apiwire.Subscription, apiwire.SubscriptionInput](c, apiwire.EventSubscriptionsPath, apiwire.EventSubscriptionsKey)
}

// Sources are the sources of a subscription,
// /event_subscriptions/{id}/sources, one per event kind, added with an In
// and changed with an Update. Their pages are not paged: List returns
// every source.
type Sources[In, Update any] struct {
	added   Family[apiwire.Source, In]     // POST, GET and DELETE
	changed Family[apiwire.Source, Update] // PATCH
}

// Sources returns the sources of the subscription subscriptionID.
func (c *Client) Sources(subscriptionID string) Sources[apiwire.SourceInput, apiwire.SourceUpdate] {
	path := apiwire.EventSubscriptionsPath + "/" + url.PathEscape(subscriptionID) + "/sources"
	return Sources[apiwire.SourceInput, apiwire.SourceUpdate]{
		added:   NewFamily[apiwire.Source, apiwire.SourceInput](c, path, "sources"),
		changed: NewFamily[apiwire.Source, apiwire.SourceUpdate](c, path, "sources"),
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
func (s Sources[In, Update]) Add(ctx context.Context, in In, opts ...CallOption) (apiwire.Source, error) {
	return s.added.Create(ctx, in, opts...)
}

// List returns every source. It returns the errors of Client.Do.
func (s Sources[In, Update]) List(ctx context.Context, opts ...CallOption) (apiwire.SourceList, error) {
	var out apiwire.SourceList
	err := s.added.client.Do(ctx, http.MethodGet, s.added.path, nil, &out, opts...)
	return out, err
}

// Get returns the source of eventType. It returns the errors of Client.Do.
func (s Sources[In, Update]) Get(ctx context.Context, eventType string, opts ...CallOption) (apiwire.Source, error) {
	return s.added.Get(ctx, eventType, opts...)
}

// Update changes the filter or fields of the source of eventType. It
// returns the errors of Client.Do.
func (s Sources[In, Update]) Update(ctx context.Context, eventType string, in Update, opts ...CallOption) (apiwire.Source, error) {
	return s.changed.Update(ctx, eventType, in, opts...)
}

// Delete removes the source of eventType. It returns the errors of
// Client.Do.
func (s Sources[In, Update]) Delete(ctx context.Context, eventType string, opts ...CallOption) error {
	return s.added.Delete(ctx, eventType, opts...)
}
