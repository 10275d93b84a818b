package schemas

import "slices"

// This file is the catalogue's data: every event kind of specification
// section 6 and its fields. docs/events.md and the JSON Schemas are generated
// from it; catalogue_spec_test.go checks it against the specification.

// fieldSpec is one row of the table. A path segment ending in "[]" is a list
// of objects: "sources[].type" is the type of each element of sources.
type fieldSpec struct {
	path string
	typ  Type
	desc string
	ext  bool // not in the specification: a sluice extension
}

// The longest values of the fields that hold a host name or an IP address.
const (
	// MaxHostnameBytes is the longest DNS name, 253 bytes (RFC 1035 and
	// RFC 2181, without the final dot).
	MaxHostnameBytes = 253
	// MaxIPBytes is the longest text of an IP address, 45 bytes: an IPv6
	// address ending in an IPv4 one, such as
	// ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255.
	MaxIPBytes = 45
)

// filterablePaths are the traffic fields a CEL filter may use (spec 6.2,
// 6.3), each with the longest value accepted, in bytes, for a string field
// (0 for the others). Every filterable string field must have one: the CEL
// cost estimate of a filter assumes these sizes, and validation refuses an
// event with a longer value, so no event can cost more than its filter's
// estimate.
var filterablePaths = map[string]int{
	"conn.client_ip":   MaxIPBytes,
	"conn.server_ip":   MaxIPBytes,
	"conn.server_name": MaxHostnameBytes,
	"conn.server_port": 0,
}

// fieldValues are the fields whose values keep a rule beyond their type
// (in every kind that has them), which validation checks: the ports, IP
// addresses and times of connections that the catalogue types only as
// int32, string and timestamp.
var fieldValues = map[string]Value{
	"conn.server_port":  ValuePort,
	"conn.client_ip":    ValueIP,
	"conn.server_ip":    ValueIP,
	"agent_ip":          ValueIP,
	"ingress_server_ip": ValueIP,
	"conn.start_ts":     ValueRecent,
	"conn.end_ts":       ValueRecent,
}

// valueTypes are the types of the fields of each rule.
var valueTypes = [...]Type{ValuePort: TypeInt32, ValueIP: TypeString, ValueRecent: TypeTimestamp}

type trafficSpec struct {
	name   string
	desc   string
	fields []fieldSpec
}

type auditSpec struct {
	family string   // e.g. "api_key"
	kinds  []string // suffixes: created, updated, deleted (or start, stop)
	desc   string   // what the resource is
	fields []fieldSpec
	// bySluice marks the families of sluice's own resources, whose audit
	// events only sluice emits (Kind.EmittedBySluice): ingest refuses them.
	// Mark a family here when sluice's management API takes it over.
	bySluice bool
}

var crud = []string{"created", "deleted", "updated"}

// Fields every audited resource has.
var resourceFields = []fieldSpec{
	{"id", TypeString, "unique identifier of the resource", false},
	{"uri", TypeString, "URI of the resource in the management API", false},
	{"created_at", TypeTimestamp, "when the resource was created", false},
	{"description", TypeString, "human-readable description, at most 255 bytes", false},
	{"metadata", TypeString, "arbitrary machine-readable data, at most 4096 bytes", false},
}

// sshResource gives the SSH resources whose fields the specification does not
// show beyond id and uri the common resource fields, marked as sluice's.
func sshResource(extra ...fieldSpec) []fieldSpec {
	out := append([]fieldSpec(nil), resourceFields[:2]...)
	for _, f := range resourceFields[2:] {
		f.ext = true
		out = append(out, f)
	}
	return append(out, extra...)
}

// extension marks every field of a family the specification does not
// have as sluice's extension.
func extension(fields []fieldSpec) []fieldSpec {
	out := slices.Clone(fields)
	for i := range out {
		out[i].ext = true
	}
	return out
}

func withResource(extra ...fieldSpec) []fieldSpec {
	out := make([]fieldSpec, 0, len(resourceFields)+len(extra))
	out = append(out, resourceFields...)
	return append(out, extra...)
}

var decisionDesc = "allow, block, or invalid (the module did not run)"

var trafficKinds = []trafficSpec{
	{
		name: "http_request_complete.v0",
		desc: "An HTTP request to an endpoint completes.",
		fields: []fieldSpec{
			{"backend.connection_reused", TypeBool, "true if a TCP connection to the upstream was reused", false},
			{"basic_auth.decision", TypeString, decisionDesc, false},
			{"basic_auth.username", TypeString, "username in the basic auth credentials", false},
			{"circuit_breaker.decision", TypeString, "allow, block, allow_while_open, or invalid (the module did not run)", false},
			{"compression.algorithm", TypeString, "gzip, deflate, or none", false},
			{"compression.bytes_saved", TypeInt64, "raw response size minus compressed size", false},
			{"conn.client_ip", TypeString, "source IP of the connection", false},
			{"conn.server_ip", TypeString, "IP of the server that received the request", false},
			{"conn.server_name", TypeString, "hostname of the connection", false},
			{"conn.server_port", TypeInt32, "port the connection came in on", false},
			{"conn.start_ts", TypeTimestamp, "when the connection was established", false},
			{"http.request.body_length", TypeInt64, "request body size in bytes", false},
			{"http.request.headers", TypeHeaderMap, "request headers, normalized: keys capitalized, values lowercased", false},
			{"http.request.method", TypeString, "request method, normalized to lowercase", false},
			{"http.request.url.host", TypeString, "host of the request URL", false},
			{"http.request.url.path", TypeString, "path of the request URL", false},
			{"http.request.url.query", TypeString, "query of the request URL", false},
			{"http.request.url.raw", TypeString, "full URL with scheme, host, path and query", false},
			{"http.request.url.scheme", TypeString, "scheme of the request URL", false},
			{"http.request.user_agent", TypeString, "User-Agent header value", false},
			{"http.response.body_length", TypeInt64, "response body size in bytes", false},
			{"http.response.headers", TypeHeaderMap, "response headers, normalized like request headers", false},
			{"http.response.status_code", TypeInt32, "status code returned", false},
			{"ip_policy.decision", TypeString, decisionDesc, false},
			{"oauth.app_client_id", TypeString, "OAuth application client id", false},
			{"oauth.decision", TypeString, decisionDesc, false},
			{"oauth.user.id", TypeString, "authenticated user's id, as reported by the OAuth provider", false},
			{"oauth.user.name", TypeString, "authenticated user's name, as reported by the OAuth provider", false},
			{"tls.cipher_suite", TypeString, "negotiated cipher suite", false},
			{"tls.client_cert.serial_number", TypeString, "serial number of the client's leaf certificate in mutual TLS", false},
			{"tls.client_cert.subject.cn", TypeString, "subject common name of the client's leaf certificate", false},
			{"tls.version", TypeString, "TLS version between client and edge", false},
			{"traffic_policy.logs", TypeMapList, "logs from Log actions of the traffic policy", false},
			{"webhook_verification.decision", TypeString, decisionDesc, false},
		},
	},
	{
		name: "tcp_connection_closed.v0",
		desc: "A TCP connection to an endpoint closes.",
		fields: []fieldSpec{
			{"conn.bytes_in", TypeInt64, "bytes arriving at the endpoint from the frontend", false},
			{"conn.bytes_out", TypeInt64, "bytes leaving to the frontend", false},
			{"conn.client_ip", TypeString, "source IP of the connection", false},
			{"conn.end_ts", TypeTimestamp, "when the connection closed", false},
			{"conn.server_ip", TypeString, "IP of the server that received the connection", false},
			{"conn.server_name", TypeString, "hostname of the connection", false},
			{"conn.server_port", TypeInt32, "port the connection came in on", false},
			{"conn.start_ts", TypeTimestamp, "when the connection was established", false},
			{"ip_policy.decision", TypeString, decisionDesc + "; invalid also when the connection was made for an HTTP endpoint", false},
			{"traffic_policy.logs", TypeMapList, "logs from Log actions of the traffic policy", false},
		},
	},
}

// certificate policy and status of spec 2.1, as flattened in domain events.
var certManagementFields = []fieldSpec{
	{"certificate_management_policy.authority", TypeString, "certificate authority; only letsencrypt", false},
	{"certificate_management_policy.private_key_type", TypeString, "rsa or ecdsa", false},
	{"certificate_management_status.renews_at", TypeTimestamp, "when the next renewal will be requested", false},
	{"certificate_management_status.provisioning_job.error_code", TypeString, "INTERNAL_ERROR (temporary) or DNS_ERROR (permanent)", false},
	{"certificate_management_status.provisioning_job.msg", TypeString, "current status or error message", false},
	{"certificate_management_status.provisioning_job.retries_at", TypeTimestamp, "when the job will be retried", false},
	{"certificate_management_status.provisioning_job.started_at", TypeTimestamp, "when the job started", false},
}

func destinationTarget(target, arnField, arnDesc string) []fieldSpec {
	p := "target." + target + "."
	return []fieldSpec{
		{p + "auth.role.role_arn", TypeString, "ARN of the IAM role assumed for delivery", false},
		{p + "auth.creds.aws_access_key_id", TypeString, "AWS access key id used for delivery", false},
		{p + "auth.creds.aws_secret_access_key", TypeString, "AWS secret access key; write-only, always null in events", false},
		{p + arnField, TypeString, arnDesc, false},
	}
}

func concat(parts ...[]fieldSpec) []fieldSpec {
	var out []fieldSpec
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

var sshKeyFields = []fieldSpec{
	{"public_key", TypeString, "public key in authorized-keys format", true},
	{"key_type", TypeString, "rsa, ecdsa or ed25519", true},
}

var auditKinds = []auditSpec{
	{
		family:   "agent_session",
		kinds:    []string{"start", "stop"},
		bySluice: true, // the edge's: a service or an account cannot forge them
		desc:     "an agent session",
		fields: []fieldSpec{
			{"agent_ip", TypeString, "IP address the agent connected from", false},
			{"arch", TypeString, "CPU architecture of the agent's host", false},
			{"credential.id", TypeString, "id of the tunnel credential the agent used", false},
			{"credential.uri", TypeString, "URI of the tunnel credential the agent used", false},
			{"deprecated.message", TypeString, "deprecation notice for the agent's version", false},
			{"deprecated.upcoming_enforcement_date", TypeString, "when the upcoming minimum version is enforced", false},
			{"deprecated.upcoming_minimum_version", TypeString, "upcoming minimum agent version", false},
			{"error", TypeString, "on a failed start, why; on a successful start, empty; on a stop, the reason for the stop", false},
			{"expires_at", TypeTimestamp, "when the session expires", false},
			{"ingress_hostname", TypeString, "hostname of the ingress the agent connected to", false},
			{"ingress_server_ip", TypeString, "IP of the ingress server the agent connected to", false},
			{"metadata", TypeString, "user-supplied metadata of the agent session", false},
			{"os", TypeString, "operating system of the agent's host", false},
			{"region", TypeString, "region the agent connected to", false},
			{"session.id", TypeString, "id of the agent session", false},
			{"session.uri", TypeString, "URI of the agent session", false},
			{"started_at", TypeTimestamp, "when the session started", false},
			{"stopped_at", TypeTimestamp, "when the session stopped", false},
			{"transport", TypeString, "muxado for agents and agent libraries, ssh for reverse SSH tunnels", false},
			{"user_agent", TypeString, "user agent of the agent", false},
		},
	},
	{
		family: "api_key", kinds: crud, bySluice: true, desc: "an API key",
		fields: withResource(
			fieldSpec{"token", TypeString, "the bearer token; only in the creation response, always null in events", false},
		),
	},
	{
		family: "certificate_authority", kinds: crud, desc: "a certificate authority",
		fields: withResource(
			fieldSpec{"ca_pem", TypeString, "the CA certificate in PEM format", false},
			fieldSpec{"extended_key_usages", TypeStringList, "extended key usages of the certificate", false},
			fieldSpec{"key_usages", TypeStringList, "key usages of the certificate", false},
			fieldSpec{"not_after", TypeTimestamp, "end of the certificate's validity", false},
			fieldSpec{"not_before", TypeTimestamp, "start of the certificate's validity", false},
			fieldSpec{"subject_common_name", TypeString, "subject common name of the certificate", false},
		),
	},
	{
		family: "domain", kinds: crud, bySluice: true, desc: "a reserved domain",
		fields: concat(withResource(
			fieldSpec{"acme_challenge_cname_target", TypeString, "CNAME target for _acme-challenge.<domain>; null unless a wildcard custom domain", false},
			fieldSpec{"certificate.id", TypeString, "id of the domain's certificate", false},
			fieldSpec{"certificate.uri", TypeString, "URI of the domain's certificate", false},
			fieldSpec{"cname_target", TypeString, "DNS CNAME target for a custom hostname; null for a subdomain of a service-owned domain", false},
			fieldSpec{"domain", TypeString, "the domain, possibly a wildcard such as *.sub.example.com", false},
			fieldSpec{"http_endpoint_configuration", TypeObject, "HTTP endpoint configuration (structure not specified)", false},
			fieldSpec{"https_endpoint_configuration", TypeObject, "HTTPS endpoint configuration (structure not specified)", false},
			fieldSpec{"region", TypeString, "deprecated; au, eu, ap, us, us-cal-1, jp, in, sa, or null", false},
		), certManagementFields),
	},
	{
		family: "event_destination", kinds: crud, bySluice: true, desc: "an event destination",
		fields: concat(withResource(
			fieldSpec{"format", TypeString, "serialization format; always json", false},
		),
			destinationTarget("cloudwatch_logs", "log_group_arn", "ARN of the CloudWatch Logs log group"),
			destinationTarget("firehose", "delivery_stream_arn", "ARN of the Firehose delivery stream"),
			destinationTarget("kinesis", "stream_arn", "ARN of the Kinesis data stream"),
		),
	},
	{
		family: "event_subscription", kinds: crud, bySluice: true, desc: "an event subscription",
		fields: withResource(
			fieldSpec{"destinations[].id", TypeString, "id of an event destination receiving the events", false},
			fieldSpec{"destinations[].uri", TypeString, "URI of an event destination receiving the events", false},
			fieldSpec{"sources[].fields", TypeStringList, "selected fields of a traffic source; all when absent", true},
			fieldSpec{"sources[].filter", TypeString, "CEL filter of a traffic source", true},
			fieldSpec{"sources[].type", TypeString, "event kind routed by the source", false},
			fieldSpec{"sources[].uri", TypeString, "URI of the source", false},
		),
	},
	{
		family: "ip_policy", kinds: crud, desc: "an IP policy",
		fields: withResource(),
	},
	{
		family: "ip_policy_rule", kinds: crud, desc: "an IP policy rule",
		fields: withResource(
			fieldSpec{"action", TypeString, "allow or deny", false},
			fieldSpec{"cidr", TypeString, "IPv4 or IPv6 address or range in CIDR notation", false},
			fieldSpec{"ip_policy.id", TypeString, "id of the IP policy the rule belongs to", false},
			fieldSpec{"ip_policy.uri", TypeString, "URI of the IP policy the rule belongs to", false},
		),
	},
	{
		family: "ip_restriction", kinds: crud, desc: "an IP restriction",
		fields: withResource(
			fieldSpec{"enforced", TypeBool, "when false, only warnings are issued", false},
			fieldSpec{"type", TypeString, "restriction kind: dashboard, api, agent, …", false},
		),
	},
	{
		family: "ssh_certificate_authority", kinds: crud, desc: "an SSH certificate authority",
		fields: sshResource(sshKeyFields...),
	},
	{
		family: "ssh_host_certificate", kinds: crud, desc: "an SSH host certificate",
		fields: sshResource(concat(sshKeyFields, []fieldSpec{
			{"certificate", TypeString, "signed SSH certificate in authorized-keys format", false},
			{"extensions", TypeStringMap, "certificate extensions", false},
			{"principals", TypeStringList, "host names the certificate is valid for", true},
			{"ssh_certificate_authority_id", TypeString, "id of the signing SSH certificate authority", true},
			{"valid_after", TypeTimestamp, "start of the certificate's validity", false},
			{"valid_until", TypeTimestamp, "end of the certificate's validity", false},
		})...),
	},
	{
		family: "ssh_public_key", kinds: crud, desc: "an SSH public key",
		fields: sshResource(sshKeyFields...),
	},
	{
		family: "ssh_user_certificate", kinds: crud, desc: "an SSH user certificate",
		fields: withResource(
			fieldSpec{"certificate", TypeString, "signed SSH certificate in authorized-keys format", false},
			fieldSpec{"critical_options", TypeStringMap, "critical options: force-command, source-address", false},
			fieldSpec{"extensions", TypeStringMap, "extensions; by default permit-pty and permit-user-rc with empty values", false},
			fieldSpec{"key_type", TypeString, "rsa, ecdsa or ed25519", false},
			fieldSpec{"principals", TypeStringList, "users the certificate may log in as; empty means any user", false},
			fieldSpec{"public_key", TypeString, "public key in authorized-keys format", false},
			fieldSpec{"ssh_certificate_authority_id", TypeString, "id of the signing SSH certificate authority", false},
			fieldSpec{"valid_after", TypeTimestamp, "start of the certificate's validity", false},
			fieldSpec{"valid_until", TypeTimestamp, "end of the certificate's validity", false},
		),
	},
	{
		family: "tcp_address", kinds: crud, desc: "a reserved TCP address",
		fields: withResource(
			fieldSpec{"addr", TypeString, "hostname:port assigned at creation", false},
			fieldSpec{"region", TypeString, "au, eu, ap, us (default), us-cal-1, jp, in or sa", false},
		),
	},
	{
		family: "tls_certificate", kinds: crud, bySluice: true, desc: "a TLS certificate",
		fields: withResource(
			fieldSpec{"certificate_pem", TypeString, "certificate chain in PEM format, leaf first", false},
			fieldSpec{"extended_key_usages", TypeStringList, "extended key usages of the leaf certificate", false},
			fieldSpec{"issued_at", TypeTimestamp, "when the certificate was issued; null if uploaded by a user", false},
			fieldSpec{"issuer_common_name", TypeString, "issuer common name", false},
			fieldSpec{"key_usages", TypeStringList, "key usages of the leaf certificate", false},
			fieldSpec{"not_after", TypeTimestamp, "end of the certificate's validity", false},
			fieldSpec{"not_before", TypeTimestamp, "start of the certificate's validity", false},
			fieldSpec{"private_key_type", TypeString, "rsa, ecdsa or ed25519", false},
			fieldSpec{"serial_number", TypeString, "serial number of the leaf certificate", false},
			fieldSpec{"subject_alternative_names.dns_names", TypeStringList, "DNS names of the subject alternative names", false},
			fieldSpec{"subject_alternative_names.ips", TypeStringList, "IP addresses of the subject alternative names", false},
			fieldSpec{"subject_common_name", TypeString, "subject common name", false},
			fieldSpec{"subject_country", TypeString, "subject country", false},
			fieldSpec{"subject_locality", TypeString, "subject locality", false},
			fieldSpec{"subject_organization", TypeString, "subject organization", false},
			fieldSpec{"subject_organizational_unit", TypeString, "subject organizational unit", false},
			fieldSpec{"subject_province", TypeString, "subject province", false},
		),
	},
	{
		// Not in the specification: sluice's backend of HTTPS edge routes,
		// the reference service's tunnel group backend.
		family: "tunnel_group_backend", kinds: crud, bySluice: true, desc: "a tunnel group backend",
		fields: extension(withResource(
			fieldSpec{"labels", TypeStringMap, "the labels that select the backend's tunnels: a labeled tunnel is in the group when each of them is one of its labels, with the same value", false},
		)),
	},
	{
		family: "tunnel_credential", kinds: crud, bySluice: true, desc: "a tunnel credential (authtoken)",
		fields: withResource(
			fieldSpec{"acl", TypeStringList, "bind rules restricting what the credential may bind; empty means no restriction", false},
			fieldSpec{"token", TypeString, "the authtoken; only in the creation response, always null in events", false},
		),
	},
}

// principalSpec is the shape of an audit event's principal: who made the change.
var principalSpec = []fieldSpec{
	{"id", TypeString, "id of the actor (the API key's id for changes through the API)", false},
	{"subject", TypeString, "who the actor is, for people reading the event", false},
	{"source", TypeString, "where the change came from: API", false},
	{"credential.id", TypeString, "id of the credential used", false},
	{"credential.uri", TypeString, "URI of the credential used", false},
}
