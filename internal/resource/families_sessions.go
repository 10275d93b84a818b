package resource

import (
	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/schemas"
)

// AppSessions is the family of application sessions, /app/sessions
// (specification sections 2.7 and 4.3a). The edge records them; the API
// lists, shows and revokes them, and sets no field.
func AppSessions() Spec {
	return Spec{Prefix: schemas.PrefixAppSession, Path: apiwire.AppSessionsPath, ListKey: apiwire.AppSessionsListKey}
}

// TunnelSessions is the family of tunnel sessions, /tunnel_sessions: an
// agent's session with an edge. The edge records and ends them; the API
// lists and shows them, stops one, and sets no field.
func TunnelSessions() Spec {
	return Spec{Prefix: schemas.PrefixTunnelSession, Path: apiwire.TunnelSessionsPath, ListKey: apiwire.TunnelSessionsListKey}
}

// Endpoints is the family of endpoints, /endpoints: the public addresses
// agents' sessions serve. The edge records and ends them; the API lists
// and shows them, and sets no field.
func Endpoints() Spec {
	return Spec{Prefix: schemas.PrefixEndpoint, Path: apiwire.EndpointsPath, ListKey: apiwire.EndpointsListKey}
}
