package schemas

import (
	"slices"
	"strings"
	"testing"
)

// This file checks the catalogue against the specification
// (spec/000_fe5d1a0afbc505e5.txt), independently of catalogue_table.go: the
// lists below were typed from the specification's text, sections 6.1 to 6.4
// with 2.2 (reserved domain), 2.8 (event subscription) and 2.9 (event
// destination). Field names are the flattened dotted names the specification
// writes; "name:type" records a type the specification states.

// specTraffic returns spec 6.2 and 6.3: the traffic kinds and their typed
// fields.
func specTraffic() map[string]string {
	return map[string]string{
		"http_request_complete.v0": `
		backend.connection_reused:bool
		basic_auth.decision:string
		basic_auth.username:string
		circuit_breaker.decision:string
		compression.algorithm:string
		compression.bytes_saved:int64
		conn.client_ip:string
		conn.server_ip:string
		conn.server_name:string
		conn.server_port:int32
		conn.start_ts:timestamp
		http.request.body_length:int64
		http.request.headers:Map<string,List<string>>
		http.request.method:string
		http.request.url.host:string
		http.request.url.path:string
		http.request.url.query:string
		http.request.url.scheme:string
		http.request.url.raw:string
		http.request.user_agent:string
		http.response.body_length:int64
		http.response.headers:Map<string,List<string>>
		http.response.status_code:int32
		ip_policy.decision:string
		oauth.app_client_id:string
		oauth.decision:string
		oauth.user.id:string
		oauth.user.name:string
		tls.cipher_suite:string
		tls.client_cert.serial_number:string
		tls.client_cert.subject.cn:string
		tls.version:string
		traffic_policy.logs:List<Map<string,any>>
		webhook_verification.decision:string`,
		// 6.3 gives conn.client_ip, server_ip, server_name and server_port "as
		// above" and traffic_policy.logs without a type: the types of 6.2.
		"tcp_connection_closed.v0": `
		conn.bytes_in:int64
		conn.bytes_out:int64
		conn.client_ip:string
		conn.server_ip:string
		conn.server_name:string
		conn.server_port:int32
		conn.start_ts:timestamp
		conn.end_ts:timestamp
		ip_policy.decision:string
		traffic_policy.logs:List<Map<string,any>>`,
	}
}

// specFilterable returns the fields spec 6.2 and 6.3 mark filterable.
func specFilterable() []string {
	return []string{"conn.client_ip", "conn.server_ip", "conn.server_name", "conn.server_port"}
}

// specFamily is an audit family of spec 6.4: its kinds (from 6.1) and its
// fields, "all strings unless noted".
type specFamily struct {
	family string
	kinds  []string
	fields string
}

// specAudit returns spec 6.1 and 6.4: the audit families.
func specAudit() []specFamily {
	return []specFamily{
		{"agent_session", []string{"agent_session_start.v0", "agent_session_stop.v0"}, `
		session.id session.uri credential.id credential.uri agent_ip ingress_server_ip region
		ingress_hostname user_agent metadata os arch transport started_at expires_at stopped_at
		deprecated.upcoming_minimum_version deprecated.upcoming_enforcement_date deprecated.message error`},
		{"api_key", crudKinds("api_key"), `id uri description metadata created_at token`},
		{"certificate_authority", crudKinds("certificate_authority"), `
		id uri created_at description metadata ca_pem subject_common_name not_before not_after
		key_usages:List<string> extended_key_usages:List<string>`},
		// 2.2: the response fields and the event payload's description, metadata
		// and certificate (Ref), with the shapes of 2.1 flattened as 6.4 says.
		// The endpoint configurations' structure is "not shown": objects.
		{"domain", crudKinds("domain"), `
		id uri created_at domain region cname_target
		http_endpoint_configuration:object https_endpoint_configuration:object
		certificate.id certificate.uri
		certificate_management_policy.authority certificate_management_policy.private_key_type
		certificate_management_status.renews_at
		certificate_management_status.provisioning_job.error_code
		certificate_management_status.provisioning_job.msg
		certificate_management_status.provisioning_job.started_at
		certificate_management_status.provisioning_job.retries_at
		acme_challenge_cname_target description metadata`},
		// 2.9, "all are strings".
		{"event_destination", crudKinds("event_destination"), `
		id uri metadata created_at description format
		target.firehose.auth.role.role_arn target.firehose.auth.creds.aws_access_key_id
		target.firehose.auth.creds.aws_secret_access_key target.firehose.delivery_stream_arn
		target.kinesis.auth.role.role_arn target.kinesis.auth.creds.aws_access_key_id
		target.kinesis.auth.creds.aws_secret_access_key target.kinesis.stream_arn
		target.cloudwatch_logs.auth.role.role_arn target.cloudwatch_logs.auth.creds.aws_access_key_id
		target.cloudwatch_logs.auth.creds.aws_secret_access_key target.cloudwatch_logs.log_group_arn`},
		{"event_subscription", crudKinds("event_subscription"), `
		id uri created_at metadata description sources.type sources.uri destinations.id destinations.uri`},
		{"ip_policy", crudKinds("ip_policy"), `id uri created_at description metadata`},
		{"ip_policy_rule", crudKinds("ip_policy_rule"), `
		id uri created_at description metadata cidr ip_policy.id ip_policy.uri action`},
		{"ip_restriction", crudKinds("ip_restriction"), `id uri created_at description metadata enforced:bool type`},
		{"ssh_user_certificate", crudKinds("ssh_user_certificate"), `
		id uri created_at description metadata public_key key_type ssh_certificate_authority_id
		principals:List<string> critical_options:Map<string,string> extensions:Map<string,string>
		valid_after valid_until certificate`},
		// "at least extensions, valid_after, valid_until, certificate", and the
		// id and uri every resource has (section 2).
		{"ssh_host_certificate", crudKinds("ssh_host_certificate"), `
		id uri extensions:Map<string,string> valid_after valid_until certificate`},
		// Fields "not shown": only the id and uri every resource has.
		{"ssh_certificate_authority", crudKinds("ssh_certificate_authority"), `id uri`},
		{"ssh_public_key", crudKinds("ssh_public_key"), `id uri`},
		{"tcp_address", crudKinds("tcp_address"), `id uri created_at description metadata addr region`},
		{"tls_certificate", crudKinds("tls_certificate"), `
		id uri created_at description metadata certificate_pem subject_common_name
		subject_alternative_names.dns_names:List<string> subject_alternative_names.ips:List<string>
		issued_at not_before not_after key_usages:List<string> extended_key_usages:List<string>
		private_key_type issuer_common_name serial_number subject_organization
		subject_organizational_unit subject_locality subject_province subject_country`},
		{"tunnel_credential", crudKinds("tunnel_credential"), `
		id uri created_at description metadata token acl:List<string>`},
	}
}

// specLists returns the fields of event_subscription that spec 2.8 types as
// lists of objects (List<EventSource> and List<Ref>).
func specLists() []string { return []string{"destinations", "sources"} }

// extensionFamilies are the audit families sluice adds to the
// specification's, about resources of its own the specification does not
// have: every field of their kinds is marked as an extension.
func extensionFamilies() []string { return []string{"tunnel_group_backend"} }

func crudKinds(family string) []string {
	return []string{family + "_created.v0", family + "_deleted.v0", family + "_updated.v0"}
}

// specType returns the catalogue types that match a type as the
// specification writes it; "" (not noted) is any JSON string.
func specType(t *testing.T, name string) []Type {
	t.Helper()
	switch name {
	case "", "string":
		return []Type{TypeString, TypeTimestamp}
	case "timestamp":
		return []Type{TypeTimestamp}
	case "bool":
		return []Type{TypeBool}
	case "int32":
		return []Type{TypeInt32}
	case "int64":
		return []Type{TypeInt64}
	case "List<string>":
		return []Type{TypeStringList}
	case "Map<string,string>":
		return []Type{TypeStringMap}
	case "Map<string,List<string>>":
		return []Type{TypeHeaderMap}
	case "List<Map<string,any>>":
		return []Type{TypeMapList}
	case "object":
		return []Type{TypeObject}
	}
	t.Fatalf("the spec lists have an unknown type %q", name)
	return nil
}

// specKind is one kind as the specification describes it.
type specKind struct {
	name   string
	class  Class
	family string
	fields map[string]string // name → type as the spec writes it, or ""
}

func specKinds(t *testing.T) []specKind {
	t.Helper()
	parse := func(list string) map[string]string {
		fields := map[string]string{}
		for _, f := range strings.Fields(list) {
			name, typ, _ := strings.Cut(f, ":")
			if _, dup := fields[name]; dup {
				t.Fatalf("the spec lists name %s twice", name)
			}
			fields[name] = typ
		}
		return fields
	}
	var kinds []specKind
	for name, fields := range specTraffic() {
		kinds = append(kinds, specKind{name, ClassTraffic, strings.TrimSuffix(name, ".v0"), parse(fields)})
	}
	for _, a := range specAudit() {
		for _, name := range a.kinds {
			kinds = append(kinds, specKind{name, ClassAudit, a.family, parse(a.fields)})
		}
	}
	return kinds
}

func TestCatalogueHasTheSpecKinds(t *testing.T) {
	kinds := specKinds(t)
	var want []string
	for _, k := range kinds {
		want = append(want, k.name)
	}
	if len(want) != 2+47 {
		t.Fatalf("the spec lists have %d kinds, want 2 traffic and 47 audit kinds", len(want))
	}
	for _, family := range extensionFamilies() {
		want = append(want, crudKinds(family)...)
	}
	slices.Sort(want)
	if got := Default().Names(); !slices.Equal(got, want) {
		t.Errorf("catalogue kinds differ from the spec's:\n\tonly in catalogue: %v\n\tonly in spec:      %v",
			missingFrom(want, got), missingFrom(got, want))
	}
}

func TestCatalogueFieldsMatchTheSpec(t *testing.T) {
	c := Default()
	for _, sk := range specKinds(t) {
		t.Run(sk.name, func(t *testing.T) {
			k, ok := c.Kind(sk.name)
			if !ok {
				t.Fatalf("kind missing from the catalogue")
			}
			if k.Class != sk.class || k.Family != sk.family {
				t.Errorf("class %s family %q, want %s %q", k.Class, k.Family, sk.class, sk.family)
			}
			for name, typ := range sk.fields {
				f, ok := k.Field(name)
				if !ok {
					t.Errorf("field %s of the spec is missing", name)
					continue
				}
				if want := specType(t, typ); !slices.Contains(want, f.Type) {
					t.Errorf("field %s has type %s, the spec says %q", name, f.Type, typ)
				}
				if f.Extension {
					t.Errorf("field %s is in the spec but marked as an extension", name)
				}
			}
			for _, f := range k.Fields {
				if _, inSpec := sk.fields[f.Path]; !inSpec && !f.Extension {
					t.Errorf("field %s is not in the spec and not marked as an extension", f.Path)
				}
				wantList := ""
				if list, _, nested := strings.Cut(f.Path, "."); nested && sk.family == "event_subscription" && slices.Contains(specLists(), list) {
					wantList = list
				}
				if f.InList != wantList {
					t.Errorf("field %s is in list %q, want %q: the spec's only lists of objects are event_subscription's %v",
						f.Path, f.InList, wantList, specLists())
				}
			}
		})
	}
}

func TestExtensionFamiliesAreMarked(t *testing.T) {
	c := Default()
	for _, family := range extensionFamilies() {
		for _, name := range crudKinds(family) {
			k, ok := c.Kind(name)
			if !ok {
				t.Errorf("extension kind %s is missing from the catalogue", name)
				continue
			}
			if k.Class != ClassAudit || k.Family != family || !k.EmittedBySluice {
				t.Errorf("%s: class %s family %q emitted by sluice %t, want an audit kind of %s that only sluice emits",
					name, k.Class, k.Family, k.EmittedBySluice, family)
			}
			for _, f := range k.Fields {
				if !f.Extension {
					t.Errorf("%s: field %s is not in the spec and not marked as an extension", name, f.Path)
				}
			}
		}
	}
}

func TestCatalogueFilterableAndSelectable(t *testing.T) {
	filterable := specFilterable()
	for _, k := range Default().Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			for _, f := range k.Fields {
				wantFilterable := k.Class == ClassTraffic && slices.Contains(filterable, f.Path)
				if f.Filterable != wantFilterable {
					t.Errorf("field %s: filterable %t, want %t", f.Path, f.Filterable, wantFilterable)
				}
				if wantSelectable := k.Class == ClassTraffic; f.Selectable != wantSelectable {
					t.Errorf("field %s: selectable %t, want %t", f.Path, f.Selectable, wantSelectable)
				}
			}
			if k.Class != ClassTraffic {
				return
			}
			for _, name := range filterable {
				if _, ok := k.Field(name); !ok {
					t.Errorf("filterable field %s is missing", name)
				}
			}
		})
	}
}

// missingFrom returns the elements of b that are not in a.
func missingFrom(a, b []string) []string {
	var out []string
	for _, s := range b {
		if !slices.Contains(a, s) {
			out = append(out, s)
		}
	}
	return out
}
