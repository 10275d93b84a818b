package resource

import (
	"reflect"

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
		Doc: Doc{
			Stem: "AgentIngress", Plural: "AgentIngresses", Tag: "agent_ingresses",
			Item: "agent ingress", Items: "agent ingresses",
			Create: &Op{Summary: "Create an agent ingress of a domain the account owns.",
				Description: "`domain` is required: a fully qualified domain name (labels of a-z, 0-9 and\n" +
					"hyphens, not starting or ending with a hyphen, at most 63 bytes each and 253 in all;\n" +
					"punycode `xn--` for other letters), stored in lower case. It may not be one of the\n" +
					"service's own domains or a name under one (400 `ERR_SLUICE_341`), and is unique\n" +
					"across all accounts: a domain an agent ingress of any account has is 409\n" +
					"`ERR_SLUICE_428`. A `certificate_management_policy` starts the provisioning of a\n" +
					"certificate; null or none leaves certificates unmanaged.\n",
				Answer: Answer{Response: "AgentIngress200"}},
			List: &Op{Summary: "List agent ingresses, newest first, under `ingresses`.",
				Answer: Answer{Description: "A page of agent ingresses."}},
			Get: &Op{Summary: "Get an agent ingress."},
			Update: &Op{Summary: "Change an agent ingress's description, metadata or certificate management.",
				Description: "The domain cannot be changed: a body with `domain` is 400 `ERR_SLUICE_340`.\n" +
					"A policy sent replaces the policy (null turns management off); a policy that\n" +
					"differs starts provisioning again.\n"},
			Delete: &Op{Summary: "Delete an agent ingress, which frees its domain for any account."},
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.AgentIngress](), Input: reflect.TypeFor[apiwire.AgentIngressInput](),
				ID: "an agent ingress",
				Resource: "A domain the account owns, delegated to the service with the NS records of `ns_targets`, " +
					"under which agents connect through `region_domains` (specification section 2.1, whose order the fields keep).",
				Create:   "A new agent ingress.",
				Update:   "The fields to change; `domain` cannot be changed.",
				List:     "A page of agent ingresses, newest first, under `ingresses`.",
				Response: "The agent ingress."},
		},
	}
}

// TLSCertificates is the family of TLS certificates, /tls_certificates:
// those sluice obtains for reserved domains. sluice obtains, renews and
// deletes them; the API lists and shows them, and sets no field.
func TLSCertificates() Spec {
	return Spec{
		Prefix: schemas.PrefixTLSCertificate, Path: apiwire.TLSCertificatesPath, ListKey: apiwire.TLSCertificatesListKey,
		Doc: Doc{
			Stem: "TLSCertificate", Plural: "TLSCertificates", Tag: "tls_certificates",
			Item: "TLS certificate", Items: "certificates",
			List: &Op{Summary: "List TLS certificates, newest first.",
				Description: "The certificates sluice obtained for the account's reserved domains with a\n" +
					"certificate_management_policy. There is no create, update or delete (405): sluice\n" +
					"obtains and renews them, and deletes one with its reserved domain. The private key\n" +
					"is never shown.\n",
				Answer: Answer{Description: "A page of TLS certificates."}},
			Get: &Op{Summary: "Get a TLS certificate.",
				Description: "The certificate, without its private key; a renewal keeps its id."},
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.TLSCertificate](),
				ID: "a TLS certificate",
				Resource: "A certificate sluice obtained for a reserved domain (spec 6.4's tls_certificate_* " +
					"fields), chain and fields of its leaf; never its private key.",
				List:     "A page of TLS certificates, newest first, under `tls_certificates`.",
				Response: "The TLS certificate."},
		},
	}
}

// HTTPSEdges is the family of HTTPS edges, /edges/https.
func HTTPSEdges() Spec {
	return Spec{
		Prefix: schemas.PrefixHTTPSEdge, Path: apiwire.HTTPSEdgesPath, ListKey: apiwire.HTTPSEdgesListKey,
		Fields: append(described(Bytes),
			Field{Name: "hostports", Kind: List, Create: true, Update: true,
				Usage: `where the edge takes traffic, separated by commas: <domain>:443, each a reserved domain of the account or a name under a reserved wildcard; --hostports "" removes every one`}),
		Doc: Doc{
			Stem: "HTTPSEdge", Plural: "HTTPSEdges", Tag: "edges",
			Item: "edge", Items: "edges",
			Create: &Op{Summary: "Create an HTTPS edge.",
				Description: "`hostports` are `<domain>:443`, each a reserved domain of the account or a name under\n" +
					"one of its wildcard reserved domains, at any depth (`*.apps.example.com` covers\n" +
					"`a.apps.example.com` and `a.b.apps.example.com`, not `apps.example.com`); any other\n" +
					"is 400 `ERR_SLUICE_333` naming it in `details.field` (`hostports[i]`) and saying to\n" +
					"reserve the domain first. They are checked when written: deleting a reserved domain\n" +
					"later does not change the edges that use it. The edge's routes are a family of\n" +
					"their own, `/edges/https/{edge_id}/routes`, which its body shows inline.\n",
				Answer: Answer{Description: "The edge was created.", Schema: "HTTPSEdge"}},
			List: &Op{Summary: "List HTTPS edges, newest first.",
				Answer: Answer{Description: "A page of HTTPS edges."}},
			Get: &Op{Summary: "Get an HTTPS edge."},
			Update: &Op{Summary: "Change the description, metadata or hostports of an HTTPS edge.",
				Description: "The fields sent are set; `hostports` replaces the list whole, `[]` removes every one."},
			Delete: &Op{Summary: "Delete an HTTPS edge and all its routes.",
				Description: "The edge and its routes are deleted together, in one write, or none is."},
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.HTTPSEdge](), Input: reflect.TypeFor[apiwire.HTTPSEdgeInput](),
				ID:       "an HTTPS edge",
				Resource: "An HTTPS edge, with its routes.",
				Create:   "A new HTTPS edge.",
				List:     "A page of HTTPS edges, newest first.",
				Response: "The HTTPS edge."},
		},
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
		Doc: Doc{
			Stem: "HTTPSEdgeRoute", Plural: "HTTPSEdgeRoutes", Tag: "edges",
			Items: "routes", IDParameter: "RouteIDPath",
			Parent: "EdgeIDPath",
			Create: &Op{Summary: "Create a route of an HTTPS edge.",
				Description: "A route takes the requests whose path is `match` (`match_type` `exact_path`) or\n" +
					"starts with it (`path_prefix`). No two routes of an edge have one `match_type` and\n" +
					"`match` (409 `ERR_SLUICE_432`; the path's case counts). It has no module until one\n" +
					"is set with PUT. An edge of another account, or none, is 404.\n",
				Answer: Answer{Description: "The route was created.", Schema: "HTTPSEdgeRoute"}},
			List: &Op{Summary: "List the routes of an HTTPS edge, newest first.",
				Answer: Answer{Description: "A page of the edge's routes."}},
			Get: &Op{Summary: "Get a route of an HTTPS edge, with its modules."},
			Update: &Op{Summary: "Change the description, metadata, match type or match of a route.",
				Description: "The fields sent are set. A route stays on its edge (`edge_id` is 400\n" +
					"`ERR_SLUICE_340`); its modules are set on their own paths.\n"},
			Delete: &Op{Summary: "Delete a route of an HTTPS edge."},
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.HTTPSEdgeRoute](), Input: reflect.TypeFor[apiwire.HTTPSEdgeRouteInput](),
				ID:       "a route of an HTTPS edge",
				Resource: "A route of an HTTPS edge, with its modules, null when unset.",
				Create:   "A new route; `match_type` and `match` are required.",
				List:     "A page of the routes of an HTTPS edge, newest first.",
				Response: "The route, with its modules."},
		},
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
		Doc: Doc{
			Stem: "TunnelGroupBackend", Plural: "TunnelGroupBackends", Tag: "backends",
			Item: "backend", Items: "backends",
			Create: &Op{Summary: "Create a tunnel group backend.",
				Description: "`labels` is required: 1 to 10 labels, each name 1 to 64 bytes of lowercase\n" +
					"letters, digits, `-`, `_` and `.`, starting with a letter or a digit, each value 1\n" +
					"to 255 bytes of printable ASCII without spaces (400 `ERR_SLUICE_333` naming the\n" +
					"label otherwise). The backend's tunnels are the account's labeled tunnels whose\n" +
					"labels include all of these. Past the account's limit (100 by default), 409\n" +
					"`ERR_SLUICE_452`.\n",
				Answer: Answer{Response: "TunnelGroupBackend200"}},
			List: &Op{Summary: "List tunnel group backends, newest first.",
				Answer: Answer{Description: "A page of tunnel group backends."}},
			Get: &Op{Summary: "Get a tunnel group backend, with the tunnels it selects now."},
			Update: &Op{Summary: "Change the description, metadata or labels of a tunnel group backend.",
				Description: "The fields sent are set; `labels` replaces the backend's whole, and cannot be empty."},
			Delete: &Op{Summary: "Delete a tunnel group backend no route uses.",
				Description: "A backend that routes of HTTPS edges name, with their backend module enabled or\n" +
					"not, is 409 `ERR_SLUICE_434`, `details.https_edge_routes` listing them: remove it\n" +
					"from them first.\n",
				Errors: []int{409}},
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.TunnelGroupBackend](), Input: reflect.TypeFor[apiwire.TunnelGroupBackendInput](),
				ID: "a tunnel group backend",
				Resource: "A tunnel group backend: the labels that select its tunnels, and the account's " +
					"labeled tunnels whose labels include all of them now.",
				Create:   "A new tunnel group backend; `labels` is required.",
				List:     "A page of tunnel group backends, newest first.",
				Response: "The tunnel group backend, with the tunnels it selects now."},
		},
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
		Doc: Doc{
			Stem: "ReservedDomain", Plural: "ReservedDomains", Tag: "reserved_domains",
			Item: "reserved domain", Items: "reserved domains",
			Create: &Op{Summary: "Reserve a domain, or a wildcard of one.",
				Description: "`domain` is required: a fully qualified name, or a wildcard `*.<name>` (only the first\n" +
					"label may be `*`, and exactly `*`). It is lower-cased. A wildcard may not cover a whole\n" +
					"public suffix (`*.co.uk`) or a domain of the service (`--service-domains`), and a domain\n" +
					"of the service cannot be reserved. A domain reserved by any account is 409\n" +
					"`ERR_SLUICE_430`. A new wildcard gets the certificate policy letsencrypt with\n" +
					"`certificate_management_policy.private_key_type` (default ecdsa) and a provisioning job\n" +
					"in progress. Over the account's limit, 409 `ERR_SLUICE_448`.\n",
				Answer: Answer{Response: "ReservedDomain200"}},
			List: &Op{Summary: "List reserved domains, newest first.",
				Answer: Answer{Description: "A page of reserved domains."}},
			Get: &Op{Summary: "Get a reserved domain."},
			Update: &Op{Summary: "Change a reserved domain's description, metadata, region or certificate policy.",
				Description: "The domain cannot be changed (a body with `domain` is 400 `ERR_SLUICE_340`, as for an\n" +
					"agent ingress: reserve the new domain, and delete this one). A policy set\n" +
					"or changed starts a new provisioning job.\n"},
			Delete: &Op{Summary: "Delete a reserved domain, which frees it for any account.",
				Description: "A domain that covers a hostport of an HTTPS edge, and no other reserved domain of the\n" +
					"account does, is not deleted (409 `ERR_SLUICE_433`, `details.https_edges` listing the\n" +
					"edges): remove those hostports, or delete the edges, first.\n",
				Errors: []int{409}},
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.ReservedDomain](), Input: reflect.TypeFor[apiwire.ReservedDomainInput](),
				ID: "a reserved domain",
				Resource: "A domain the account reserves (specification 2.2), its fields in the specification's order " +
					"with description and metadata after created_at.",
				Create:   "A domain to reserve.",
				Update:   "The fields to change; the domain cannot change.",
				List:     "A page of reserved domains, newest first.",
				Response: "The reserved domain."},
		},
	}
}
