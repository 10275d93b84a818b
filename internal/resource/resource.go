// Package resource declares the fields of each resource family of the
// management API once: their names, kinds and limits, which bodies accept
// them, which are required at create, write-only or shown once. The store
// checks the limits it declares, the CLI makes its flags and their help
// from it, and tests hold the API's bodies and docs/openapi.yaml to it.
package resource

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/dnsname"
	"github.com/sluicehq/sluice/schemas"
)

// Kind is the JSON kind of a field's value.
type Kind string

// The kinds of a field.
const (
	String Kind = "string"
	Bool   Kind = "bool"
	List   Kind = "list"
	Object Kind = "object"
)

// Unit is what the limit of a text field counts.
type Unit string

// The units of a limit.
const (
	Bytes      Unit = "bytes"
	Characters Unit = "characters"
)

// The limits of the free-text fields description and metadata
// (specification section 5). API keys and destinations count them in
// bytes, subscriptions in characters.
const (
	MaxDescription = 255
	MaxMetadata    = 4096
)

// Field is a field of the body of a create or an update.
type Field struct {
	// Name is its JSON name, such as "destination_ids".
	Name string
	Kind Kind
	// Max is the longest value of a String, in Unit; 0 for no limit here.
	Max  int
	Unit Unit
	// Required fields must be in the body of a create.
	Required bool
	// Create and Update say which bodies accept the field: a field only
	// Create accepts is immutable after create.
	Create, Update bool
	// ShownOnce fields are returned only in the answer to the create,
	// null after.
	ShownOnce bool
	// Usage is the CLI's help of its flag, where "{limit}" stands for
	// Limit; "" when the CLI sets the field with a flag of its own.
	Usage string
}

// Limit says Max and Unit, such as "255 bytes".
func (f Field) Limit() string {
	return strconv.Itoa(f.Max) + " " + string(f.Unit)
}

// Help returns Usage with its limit.
func (f Field) Help() string {
	return strings.ReplaceAll(f.Usage, "{limit}", f.Limit())
}

// Spec is a resource family: the prefix of its ids, its path and the member
// of a page that holds its items (package client's), and the fields of its
// bodies.
type Spec struct {
	Prefix, Path, ListKey string
	Fields                []Field
}

// Field returns the field named name. The names are the declarations'
// below, so a name that is none of them is a mistake in the code: it
// panics.
func (s Spec) Field(name string) Field {
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	panic(fmt.Sprintf("resource: the family %s has no field %q", s.Path, name))
}

// described returns description and metadata, which API keys,
// destinations and subscriptions have, counted in unit.
func described(unit Unit) []Field {
	return []Field{
		{Name: "description", Kind: String, Max: MaxDescription, Unit: unit, Create: true, Update: true,
			Usage: "free text for people, at most {limit}"},
		{Name: "metadata", Kind: String, Max: MaxMetadata, Unit: unit, Create: true, Update: true,
			Usage: "free text for programs, such as JSON, at most {limit}"},
	}
}

// APIKeys is the family of API keys, /api_keys. A key's token is made by
// sluice and shown once, in the answer to its create.
func APIKeys() Spec {
	return Spec{
		Prefix: schemas.PrefixAPIKey, Path: apiwire.APIKeysPath, ListKey: apiwire.APIKeysListKey,
		Fields: append(described(Bytes), Field{Name: "token", Kind: String, ShownOnce: true}),
	}
}

// EventDestinations is the family of event destinations,
// /event_destinations. The secret of a target's access key is write-only.
func EventDestinations() Spec {
	return Spec{
		Prefix: schemas.PrefixDestination, Path: apiwire.EventDestinationsPath, ListKey: apiwire.EventDestinationsKey,
		Fields: append(described(Bytes),
			Field{Name: "format", Kind: String, Create: true, Update: true,
				Usage: `how events are serialized: "json", the only format (default json)`},
			// The CLI sets a target with the flags of its type. The secret
			// of its access key is never returned.
			Field{Name: "target", Kind: Object, Required: true, Create: true, Update: true}),
	}
}

// EventSubscriptions is the family of event subscriptions,
// /event_subscriptions.
func EventSubscriptions() Spec {
	return Spec{
		Prefix: schemas.PrefixSubscription, Path: apiwire.EventSubscriptionsPath, ListKey: apiwire.EventSubscriptionsKey,
		Fields: append(described(Characters),
			// The CLI sets these with --source and --destination-id.
			Field{Name: "sources", Kind: List, Create: true, Update: true},
			Field{Name: "destination_ids", Kind: List, Create: true, Update: true}),
	}
}

// AgentIngresses is the family of agent ingresses, /agent_ingresses
// (specification sections 2.1 and 4.1). The domain is set at create only.
func AgentIngresses() Spec {
	return Spec{
		Prefix: schemas.PrefixAgentIngress, Path: apiwire.AgentIngressesPath, ListKey: apiwire.AgentIngressesListKey,
		Fields: append(described(Bytes),
			Field{Name: "domain", Kind: String, Max: dnsname.MaxDomain, Unit: Bytes, Required: true, Create: true,
				Usage: "the domain the account owns, a fully qualified name of at most {limit}; it cannot be changed after"},
			// The CLI sets the policy with --certificate-authority and
			// --private-key-type, or --no-certificate-management.
			Field{Name: "certificate_management_policy", Kind: Object, Create: true, Update: true}),
	}
}

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

// TLSCertificates is the family of TLS certificates, /tls_certificates:
// those sluice obtains for reserved domains. sluice obtains, renews and
// deletes them; the API lists and shows them, and sets no field.
func TLSCertificates() Spec {
	return Spec{Prefix: schemas.PrefixTLSCertificate, Path: apiwire.TLSCertificatesPath, ListKey: apiwire.TLSCertificatesListKey}
}

// BotUsers is the family of bot users, /bot_users (specification sections
// 2.3 and 4.2). A bot user is created active.
func BotUsers() Spec {
	return Spec{
		Prefix: schemas.PrefixBotUser, Path: apiwire.BotUsersPath, ListKey: apiwire.BotUsersListKey,
		Fields: []Field{
			{Name: "name", Kind: String, Max: 255, Unit: Bytes, Required: true, Create: true, Update: true,
				Usage: "the bot user's name, 1 to {limit}, unique in the account ignoring case"},
			{Name: "active", Kind: Bool, Update: true,
				Usage: "whether the bot user is active: --active=false deactivates it"},
		},
	}
}

// Credentials is the family of tunnel credentials, /credentials
// (specification sections 2.4 and 5). A credential's token is made by
// sluice and shown once, in the answer to its create.
func Credentials() Spec {
	return Spec{
		Prefix: schemas.PrefixCredential, Path: apiwire.CredentialsPath, ListKey: apiwire.CredentialsListKey,
		Fields: append(described(Bytes),
			Field{Name: "token", Kind: String, ShownOnce: true},
			Field{Name: "acl", Kind: List, Create: true, Update: true,
				Usage: `what the token may bind, rules separated by commas: "*" (anything), bind:<domain>, bind:*.<domain>, bind:<host>:<port> or bind:<label>=<value>; --acl "" removes every rule`},
			Field{Name: "owner_id", Kind: String, Create: true, Update: true,
				Usage: `the bot user that owns the credential (bot_...); --owner-id "" removes the owner`}),
	}
}

// HTTPSEdges is the family of HTTPS edges, /edges/https.
func HTTPSEdges() Spec {
	return Spec{
		Prefix: schemas.PrefixHTTPSEdge, Path: apiwire.HTTPSEdgesPath, ListKey: apiwire.HTTPSEdgesListKey,
		Fields: append(described(Bytes),
			Field{Name: "hostports", Kind: List, Create: true, Update: true,
				Usage: `where the edge takes traffic, separated by commas: <domain>:443, each a reserved domain of the account or a name under a reserved wildcard; --hostports "" removes every one`}),
	}
}

// MaxRouteMatch is the longest match of a route of an HTTPS edge, in
// bytes.
const MaxRouteMatch = 1024

// HTTPSEdgeRoutes is the family of the routes of an HTTPS edge,
// /edges/https/{edge_id}/routes; their modules are set apart (PUT
// .../{id}/circuit_breaker).
func HTTPSEdgeRoutes() Spec {
	return Spec{
		Prefix: schemas.PrefixHTTPSEdgeRoute, Path: apiwire.HTTPSEdgeRoutesPath, ListKey: apiwire.HTTPSEdgeRoutesListKey,
		Fields: append(described(Bytes),
			Field{Name: "match_type", Kind: String, Required: true, Create: true, Update: true,
				Usage: "how match is compared with a request's path: exact_path or path_prefix"},
			Field{Name: "match", Kind: String, Max: MaxRouteMatch, Unit: Bytes, Required: true, Create: true, Update: true,
				Usage: "the path the route takes, starting with /, at most {limit}; one route of the edge per match_type and match"}),
	}
}

// MaxRouteTrafficPolicy is the largest traffic policy document of a
// route of an HTTPS edge, in bytes. It is well under
// trafficpolicy.MaxDocumentBytes, what the parser reads of an endpoint's
// policy at its bind: a route's policy is stored with the route, which
// every edge process reads and holds.
const MaxRouteTrafficPolicy = 64 << 10

// TunnelGroupBackends is the family of tunnel group backends,
// /backends/tunnel_group: the backends of HTTPS edge routes, each the
// account's labeled tunnels whose labels include all of its own (see
// CheckLabels).
func TunnelGroupBackends() Spec {
	return Spec{
		Prefix: schemas.PrefixTunnelGroupBackend, Path: apiwire.TunnelGroupBackendsPath, ListKey: apiwire.TunnelGroupBackendsListKey,
		Fields: append(described(Bytes),
			// The CLI sets them with --labels.
			Field{Name: "labels", Kind: Object, Required: true, Create: true, Update: true}),
	}
}

// ReservedDomains is the family of reserved domains, /reserved_domains
// (specification sections 2.2 and 4.2). The domain cannot change.
func ReservedDomains() Spec {
	return Spec{
		Prefix: schemas.PrefixReservedDomain, Path: apiwire.ReservedDomainsPath, ListKey: apiwire.ReservedDomainsListKey,
		Fields: append(described(Bytes),
			Field{Name: "domain", Kind: String, Max: 253, Unit: Bytes, Required: true, Create: true,
				Usage: "the domain, such as app.example.com, or a wildcard such as *.sub.example.com; at most {limit}"},
			Field{Name: "region", Kind: String, Create: true, Update: true,
				Usage: "deprecated (traffic is served globally): au, eu, ap, us, us-cal-1, jp, in or sa"},
			// The CLI sets it with --certificate-key-type.
			Field{Name: "certificate_management_policy", Kind: Object, Create: true, Update: true}),
	}
}
