package resource

import (
	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/dnsname"
	"github.com/sluicehq/sluice/schemas"
)

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

// TLSCertificates is the family of TLS certificates, /tls_certificates:
// those sluice obtains for reserved domains. sluice obtains, renews and
// deletes them; the API lists and shows them, and sets no field.
func TLSCertificates() Spec {
	return Spec{Prefix: schemas.PrefixTLSCertificate, Path: apiwire.TLSCertificatesPath, ListKey: apiwire.TLSCertificatesListKey}
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
