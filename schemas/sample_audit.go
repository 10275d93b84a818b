package schemas

import (
	"strings"
	"time"
)

// resourceOf returns the id prefix and management API collection of the
// resources an audit family or a reference names, or "" for none.
func resourceOf(name string) (prefix, collection string) {
	switch name {
	case "api_key":
		return PrefixAPIKey, "api_keys"
	case "certificate_authority":
		return "ca_", "certificate_authorities"
	case "certificate", "tls_certificate":
		return "cert_", "tls_certificates"
	case "credential", "tunnel_credential":
		return "cr_", "tunnel_credentials"
	case "domain":
		return "rd_", "reserved_domains"
	case "event_destination":
		return PrefixDestination, "event_destinations"
	case "event_subscription":
		return PrefixSubscription, "event_subscriptions"
	case "ip_policy":
		return "ipp_", "ip_policies"
	case "ip_policy_rule":
		return "ipr_", "ip_policy_rules"
	case "ip_restriction":
		return "ipx_", "ip_restrictions"
	case "session":
		return "ts_", "tunnel_sessions"
	case "ssh_certificate_authority":
		return "sshca_", "ssh_certificate_authorities"
	case "ssh_host_certificate":
		return "shcrt_", "ssh_host_certificates"
	case "ssh_public_key":
		return "sshk_", "ssh_public_keys"
	case "ssh_user_certificate":
		return "sucrt_", "ssh_user_certificates"
	case "tcp_address":
		return "ra_", "reserved_addrs"
	}
	return "", ""
}

// resource is the audited resource of a sample event.
type resource struct {
	kind     *Kind
	at       time.Time // the event's time
	created  time.Time // the resource's creation time
	id, uri  string
	host     string    // a hostname the resource is about
	keyType  string    // rsa, ecdsa or ed25519
	region   string    // AWS region of an event destination's target
	place    [3]string // country, province and locality of a certificate's subject
	deleting bool
}

func (s *Sampler) auditObject(k *Kind, at time.Time) map[string]any {
	r := &resource{
		kind:    k,
		at:      at,
		created: at.Add(-time.Duration(1+s.rng.IntN(90*24*3600)) * time.Second),
		host:    s.pick("api.example.com", "app.example.com", "www.example.org", "shop.example.net"),
		keyType: s.pick("rsa", "ecdsa", "ed25519"),
		region:  s.pick("us-east-1", "us-west-2", "eu-west-1", "ap-northeast-1"),
		place: [][3]string{
			{"US", "California", "San Francisco"}, {"DE", "Berlin", "Berlin"}, {"JP", "Tokyo", "Minato"},
		}[s.rng.IntN(3)],
		deleting: strings.HasSuffix(k.Name, "_deleted.v0"),
	}
	if strings.HasSuffix(k.Name, "_created.v0") {
		r.created = at.Add(-time.Duration(1+s.rng.IntN(50)) * time.Millisecond)
	}
	if prefix, collection := resourceOf(k.Family); prefix != "" {
		r.id = s.id(prefix, r.created)
		r.uri = sampleAPIBase + "/" + collection + "/" + r.id
	}
	obj := map[string]any{}
	s.refs(obj, r)
	switch k.Family {
	case "agent_session":
		s.agentSession(obj, r)
	case "domain":
		s.domain(obj, r)
	}
	s.fill(k, obj, func(f *Field) any { return s.auditValue(r, f) },
		func(list string, fields []*Field) map[string]any { return s.auditElement(r, list, fields) })
	if k.Family == "event_destination" {
		s.keepOneTarget(obj)
	}
	return obj
}

// refs sets the id and uri of every reference to another resource, such as
// certificate.id and certificate.uri.
func (s *Sampler) refs(obj map[string]any, r *resource) {
	for _, f := range r.kind.Fields {
		parent, ok := strings.CutSuffix(f.Path, ".id")
		if !ok || f.InList != "" {
			continue
		}
		prefix, collection := resourceOf(parent[strings.LastIndex(parent, ".")+1:])
		if prefix == "" {
			continue
		}
		id := s.id(prefix, r.created.Add(-time.Duration(s.rng.IntN(86400))*time.Second))
		setPath(obj, parent+".id", id)
		setPath(obj, parent+".uri", sampleAPIBase+"/"+collection+"/"+id)
	}
}

func (s *Sampler) agentSession(obj map[string]any, r *resource) {
	set := func(path string, v any) { setPath(obj, path, v) }
	region := s.pick("us", "eu", "ap", "au", "jp", "in", "sa", "us-cal-1")
	platform := s.pick("linux amd64", "linux arm64", "darwin arm64", "windows amd64")
	os, arch, _ := strings.Cut(platform, " ")
	version := s.pick("3.18.4", "3.19.0", "3.19.1")
	stop := strings.HasSuffix(r.kind.Name, "_stop.v0")
	started := r.at
	if stop {
		started = r.at.Add(-time.Duration(60+s.rng.IntN(86400)) * time.Second)
	}
	set("agent_ip", s.clientIP())
	set("ingress_server_ip", s.serverIP())
	set("ingress_hostname", "tunnel."+region+".example.com")
	set("region", region)
	set("os", os)
	set("arch", arch)
	set("transport", weighted(s, choice[string]{"muxado", 90}, choice[string]{"ssh", 10}))
	set("user_agent", "tunnel-agent/"+version+" ("+os+"; "+arch+")")
	set("metadata", s.pick(`{"host":"build-07"}`, `{"service":"billing","env":"prod"}`, `{"k8s_pod":"web-5d8f7c9b4-x2x7q"}`))
	set("started_at", stamp(started))
	set("expires_at", stamp(started.Add(30*24*time.Hour)))
	set("stopped_at", nil)
	set("error", "")
	if stop {
		set("stopped_at", stamp(r.at))
		set("error", s.pick("the agent closed the session", "the session expired", "the session was stopped through the API"))
	} else if s.percent(5) {
		set("error", "the authtoken is not valid: it was revoked")
	}
	set("deprecated.upcoming_minimum_version", nil)
	set("deprecated.upcoming_enforcement_date", nil)
	set("deprecated.message", nil)
	if version == "3.18.4" {
		set("deprecated.upcoming_minimum_version", "3.19.0")
		set("deprecated.upcoming_enforcement_date", "2027-03-01")
		set("deprecated.message", "agents older than 3.19.0 will be refused from 2027-03-01; please upgrade")
	}
}

func (s *Sampler) domain(obj map[string]any, r *resource) {
	set := func(path string, v any) { setPath(obj, path, v) }
	custom, wildcard := s.percent(70), s.percent(40)
	switch {
	case custom && wildcard:
		r.host = "*.apps.example.com"
	case !custom:
		r.host = s.pick("billing", "demo", "status") + "-" + s.hex(4) + ".sluice.dev"
		wildcard = false
	}
	set("domain", r.host)
	set("region", nil)
	if s.percent(10) {
		set("region", s.pick("us", "eu", "ap"))
	}
	set("cname_target", nil)
	set("acme_challenge_cname_target", nil)
	if custom {
		set("cname_target", s.hex(8)+"."+s.hex(8)+".cname.sluice.dev")
	}
	if wildcard {
		set("acme_challenge_cname_target", s.hex(8)+".acme.sluice.dev")
	}
	for _, conf := range []string{"http_endpoint_configuration", "https_endpoint_configuration"} {
		set(conf, nil)
		if s.percent(50) {
			id := s.id("ec_", r.created)
			set(conf, map[string]any{"id": id, "uri": sampleAPIBase + "/endpoint_configurations/" + id})
		}
	}
	set("certificate_management_policy.authority", "letsencrypt")
	set("certificate_management_policy.private_key_type", s.pick("rsa", "ecdsa"))
	provisioning := wildcard && strings.HasSuffix(r.kind.Name, "_created.v0")
	failed := !provisioning && s.percent(10)
	set("certificate_management_status.renews_at", stamp(r.created.Add(60*24*time.Hour)))
	set("certificate_management_status.provisioning_job", nil)
	switch {
	case provisioning:
		set("certificate_management_status.renews_at", nil)
		set("certificate_management_status.provisioning_job", map[string]any{
			"error_code": nil,
			"msg":        "Managed certificate provisioning in progress.",
			"started_at": stamp(r.created),
			"retries_at": nil,
		})
	case failed:
		set("certificate_management_status.provisioning_job", map[string]any{
			"error_code": "DNS_ERROR",
			"msg":        "set the DNS record _acme-challenge." + strings.TrimPrefix(r.host, "*.") + " CNAME 3f2a9c.acme.sluice.app (_acme-challenge." + strings.TrimPrefix(r.host, "*.") + " is a CNAME of other.example.net), then set the certificate_management_policy again",
			"started_at": stamp(r.at.Add(-time.Hour)),
			"retries_at": nil,
		})
	}
}

// keepOneTarget removes every target of an event destination but one, and
// every kind of authentication of that target but one.
func (s *Sampler) keepOneTarget(obj map[string]any) {
	targets := nestedMap(obj, "target")
	names := []string{"firehose", "kinesis", "cloudwatch_logs"}
	keep := names[s.n%len(names)]
	for _, name := range names {
		if name != keep {
			delete(targets, name)
		}
	}
	auth := nestedMap(targets, keep, "auth")
	if (s.n/len(names))%2 == 0 {
		delete(auth, "creds")
	} else {
		delete(auth, "role")
	}
}

func (s *Sampler) auditElement(r *resource, list string, fields []*Field) map[string]any {
	elem := map[string]any{}
	switch list {
	case "sources":
		names := s.cat.Names()
		kind, _ := s.cat.Kind(names[s.rng.IntN(len(names))])
		elem["type"] = kind.Name
		elem["uri"] = r.uri + "/sources/" + kind.Name
		elem["fields"], elem["filter"] = nil, nil
		if kind.Class == ClassTraffic {
			elem["fields"] = []string{"conn.client_ip", "conn.server_name", "conn.server_port"}
			elem["filter"] = s.pick(`ev.conn.server_port == 443`, `ev.conn.server_name == "api.example.com"`,
				`!ev.conn.client_ip.startsWith("203.0.113.")`)
		}
	case "destinations":
		id := s.id(PrefixDestination, r.created)
		elem["id"], elem["uri"] = id, sampleAPIBase+"/event_destinations/"+id
	}
	for _, f := range fields {
		if rel := strings.TrimPrefix(f.Path, list+"."); !hasPath(elem, rel) {
			setPath(elem, rel, s.auditValue(r, f))
		}
	}
	return elem
}
