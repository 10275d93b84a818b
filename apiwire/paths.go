package apiwire

import (
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
	TLSCertificatesPath    = "/tls_certificates"
	TLSCertificatesListKey = "tls_certificates"
	TunnelSessionsPath     = "/tunnel_sessions"
	TunnelSessionsListKey  = "tunnel_sessions"
	EndpointsPath          = "/endpoints"
	EndpointsListKey       = "endpoints"
	// TunnelGroupBackendsPath is the tunnel group backends, the
	// backends of HTTPS edge routes.
	TunnelGroupBackendsPath    = "/backends/tunnel_group"
	TunnelGroupBackendsListKey = "tunnel_group_backends"
)

// HTTPSEdgeRoutesOf returns the path of the routes of the HTTPS edge
// edgeID, /edges/https/{edge_id}/routes.
func HTTPSEdgeRoutesOf(edgeID string) string {
	return HTTPSEdgesPath + "/" + url.PathEscape(edgeID) + "/routes"
}

// The modules of a route of an HTTPS edge, by the last segment of their
// path (specification section 4.3).
const (
	CircuitBreakerModule        = "circuit_breaker"
	WebsocketTCPConverterModule = "websocket_tcp_converter"
	BackendModule               = "backend"
	TrafficPolicyModule         = "traffic_policy"
)
