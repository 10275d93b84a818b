package agentconfig

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/internal/dnsname"
)

// tunnelKeys are the keys of a tunnel.
var tunnelKeys = []string{
	"proto", "addr", "domain", "remote_addr", "inspect", "metadata", "description",
	"host_header", "basic_auth", "schemes", "traffic_policy", "labels",
}

// keyProtos are the keys that only tunnels of some protos take, and
// those protos ("labeled" for a tunnel given labels).
var keyProtos = map[string][]string{
	"domain": {"http"}, "basic_auth": {"http"}, "schemes": {"http"},
	"host_header": {"http", "labeled"}, "remote_addr": {"tcp"},
	"description": {"http", "tcp"}, "traffic_policy": {"http", "tcp"},
}

// notLabeled says why a labeled tunnel refuses a key: the edge's route
// that reaches it, not the tunnel, has the public side.
var notLabeled = map[string]string{
	"domain":         "a labeled tunnel has no domain of its own: the HTTPS edge whose routes reach it through a tunnel group backend has the domain",
	"schemes":        "a labeled tunnel has no public URL of its own: the HTTPS edge that routes to it serves HTTPS",
	"basic_auth":     "a labeled tunnel's requests come through an HTTPS edge's route: put access control on the route",
	"traffic_policy": "a labeled tunnel's requests come through an HTTPS edge's route: the route's modules and policy apply to them",
	"remote_addr":    "is for tcp tunnels only, and this one is labeled",
	"description":    "a labeled tunnel has no description: the edge records its labels and metadata; use metadata",
}

// nameAllowed says what a tunnel's name is, for messages.
const nameAllowed = "1 to 64 of A-Z, a-z, 0-9, '_', '.' and '-'"

// tunnels decodes the mapping of tunnels by name in v.
func (d *decoder) tunnels(v *yaml.Node) map[string]Tunnel {
	if v.Kind != yaml.MappingNode {
		d.fail(v, "tunnels", "must be a mapping of tunnels by name, not a %s", kindName(v))
		return nil
	}
	tunnels := map[string]Tunnel{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, m := v.Content[i], v.Content[i+1]
		path := join("tunnels", k.Value)
		if err := checkName(k.Value); err != nil {
			d.fail(k, path, "%v", err)
			continue
		}
		if m.Kind != yaml.MappingNode {
			d.fail(m, path, "must be a mapping of a tunnel's keys (%s), not a %s", strings.Join(tunnelKeys, ", "), kindName(m))
			continue
		}
		t := d.tunnel(k, m, path, tunnelKeys)
		t.Name = k.Value
		tunnels[k.Value] = t
	}
	return tunnels
}

// checkName checks a tunnel's name.
func checkName(name string) error {
	bad := strings.ContainsFunc(name, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '_' && r != '.' && r != '-'
	})
	if name == "" || len(name) > MaxTunnelName || bad {
		return fmt.Errorf("tunnel name %q is not allowed: give %s", name, nameAllowed)
	}
	return nil
}

// tunnel decodes the tunnel's keys in m; at is where the tunnel is
// named (nil for JSON), path its key path, and allowed the keys named
// when one is unknown.
func (d *decoder) tunnel(at, m *yaml.Node, path string, allowed []string) Tunnel {
	t := Tunnel{Inspect: true}
	d.kind(&t, at, m, path)
	var schemes bool
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key := join(path, k.Value)
		if isNull(v) || k.Value == "proto" || k.Value == "labels" {
			continue
		}
		if !d.keyFits(k, key, t.Proto) {
			continue
		}
		switch k.Value {
		case "addr":
			t.Addr = d.addr(v, key, t.Proto)
		case "domain":
			t.Domain = d.domain(v, key)
		case "remote_addr":
			t.RemoteAddr = d.remoteAddr(v, key)
		case "inspect":
			t.Inspect, _ = d.boolean(v, key)
			if t.Inspect && t.Proto == "tcp" {
				d.fail(v, key, "a tcp tunnel is not inspected: remove inspect or set it to false")
			}
		case "metadata":
			t.Metadata, _ = d.limited(v, key, MaxMetadata)
		case "description":
			t.Description, _ = d.limited(v, key, MaxDescription)
		case "host_header":
			t.HostHeader = d.hostHeader(v, key)
		case "basic_auth":
			t.BasicAuth = d.basicAuth(v, key)
		case "schemes":
			t.Schemes, schemes = d.schemes(v, key), true
		case "traffic_policy":
			t.TrafficPolicy = d.trafficPolicy(v, key)
		case "hostname", "subdomain":
			d.fail(k, key, "is not supported: give the whole name with domain, such as domain: app.example.com")
		default:
			d.unknownKey(k, path, k.Value, allowed)
		}
	}
	if valueIndex(m, "addr") < 0 || isNull(m.Content[valueIndex(m, "addr")]) {
		d.fail(at, join(path, "addr"), "is required: give a port such as 3000, host:port, or for http a URL such as http://localhost:3000")
	}
	if t.Proto == "tcp" {
		t.Inspect = false
	}
	if t.Proto == "http" && !schemes {
		t.Schemes = append([]string(nil), DefaultSchemes...)
	}
	return t
}

// kind sets t's Proto from m's proto, or to "labeled" with t's Labels
// from m's labels: a tunnel has one of them.
func (d *decoder) kind(t *Tunnel, at, m *yaml.Node, path string) {
	proto, labels := valueIndex(m, "proto"), valueIndex(m, "labels")
	hasProto := proto >= 0 && !isNull(m.Content[proto])
	hasLabels := labels >= 0 && !isNull(m.Content[labels])
	switch {
	case hasProto && hasLabels:
		d.fail(m.Content[proto-1], join(path, "proto"), "a tunnel with labels is a labeled tunnel, which has no proto: remove proto, or labels for an http or tcp tunnel")
	case hasLabels:
		t.Proto = "labeled"
		t.Labels = d.labels(m.Content[labels], join(path, "labels"))
	case hasProto:
		t.Proto = d.proto(m.Content[proto], join(path, "proto"))
	default:
		d.fail(at, join(path, "proto"), "is required: give http or tcp, or labels for a labeled tunnel")
	}
}

// keyFits reports whether a tunnel of proto takes the key k, and
// records why not when it does not ("" takes every key: its proto is
// wrong, and said so already).
func (d *decoder) keyFits(k *yaml.Node, key, proto string) bool {
	only, ok := keyProtos[k.Value]
	if !ok || proto == "" || slices.Contains(only, proto) {
		return true
	}
	if why, ok := notLabeled[k.Value]; ok && proto == "labeled" {
		d.fail(k, key, "%s", why)
		return false
	}
	d.fail(k, key, "is for %s tunnels only, and this one is %s", strings.Join(only, " and "), proto)
	return false
}

// labels returns the labels of the list v, each name=value: their syntax
// is checked here, what names and values may be is the edge's to say.
func (d *decoder) labels(v *yaml.Node, key string) map[string]string {
	const allowed = "give name=value, such as edge=edghts_2G9ZQx1"
	items, ok := d.list(v, key, "name=value labels", math.MaxInt)
	if !ok {
		return nil
	}
	if len(items) == 0 {
		d.fail(v, key, "is an empty list: %s", allowed)
		return nil
	}
	labels := map[string]string{}
	for i, n := range items {
		at := fmt.Sprintf("%s[%d]", key, i)
		name, value, found := strings.Cut(n.Value, "=")
		switch {
		case !found:
			d.fail(n, at, "%q has no '=': %s", n.Value, allowed)
		case name == "":
			d.fail(n, at, "%q has no name before '=': %s", n.Value, allowed)
		case value == "":
			d.fail(n, at, "%q has no value after '=': %s", n.Value, allowed)
		default:
			if _, dup := labels[name]; dup {
				d.fail(n, at, "label %q is given twice; give each name once", name)
				continue
			}
			labels[name] = value
		}
	}
	return labels
}

// proto returns the proto v holds, http or tcp.
func (d *decoder) proto(v *yaml.Node, key string) string {
	s, ok := d.text(v, key, "http or tcp")
	switch {
	case !ok:
	case s == "https" || s == "tls":
		d.fail(v, key, "%q is not supported (supported: http, tcp); an http tunnel serves https too, see schemes", s)
	case s != "http" && s != "tcp":
		d.fail(v, key, "%q is not supported (supported: http, tcp)", s)
	default:
		return s
	}
	return ""
}

// addr returns the upstream address v holds: a URL for http, host:port
// for tcp, with localhost for a port alone.
func (d *decoder) addr(v *yaml.Node, key, proto string) string {
	const allowed = "give a port such as 3000, host:port, or for http a URL such as http://localhost:3000"
	s, ok := d.text(v, key, "a port, host:port or URL")
	if !ok {
		return ""
	}
	if tag := v.ShortTag(); tag != "!!int" && tag != "!!str" {
		d.fail(v, key, "%q is not an address: %s", s, allowed)
		return ""
	}
	var host, port string
	switch {
	case isPort(s):
		if err := checkPort(s); err != nil {
			d.fail(v, key, "%v: %s", err, allowed)
			return ""
		}
		host, port = "localhost", s
	case strings.Contains(s, "://"):
		u, err := url.Parse(s)
		switch {
		case proto == "tcp":
			d.fail(v, key, "%q is a URL, and a tcp tunnel's addr is a port or host:port", s)
			return ""
		case err != nil || (u.Scheme != "http" && u.Scheme != "https"):
			d.fail(v, key, "%q is not an http:// or https:// URL: %s", s, allowed)
			return ""
		case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Hostname() == "":
			d.fail(v, key, "%q must be scheme://host:port alone, without a user, path or query", s)
			return ""
		}
		if u.Port() == "" {
			return u.Scheme + "://" + u.Host
		}
		if _, _, err := splitHostPort(u.Host); err != nil {
			d.fail(v, key, "%v: %s", err, allowed)
			return ""
		}
		return u.Scheme + "://" + u.Host
	default:
		var err error
		if host, port, err = splitHostPort(s); err != nil {
			d.fail(v, key, "%v: %s", err, allowed)
			return ""
		}
		if host == "" {
			host = "localhost"
		}
	}
	port = strings.TrimLeft(port, "0") // checked: 1 to 65535
	if proto == "tcp" {
		return net.JoinHostPort(host, port)
	}
	return "http://" + net.JoinHostPort(host, port)
}

// domain returns the domain name v holds, lower-cased.
func (d *decoder) domain(v *yaml.Node, key string) string {
	s, ok := d.text(v, key, "a domain name")
	if !ok {
		return ""
	}
	name, err := dnsname.Check(s, 0)
	if err != nil {
		d.fail(v, key, "%v", err)
		return ""
	}
	return name
}

// remoteAddr returns the host:port v holds.
func (d *decoder) remoteAddr(v *yaml.Node, key string) string {
	s, ok := d.text(v, key, "host:port")
	if !ok {
		return ""
	}
	host, _, err := splitHostPort(s)
	if err == nil && host == "" {
		err = fmt.Errorf("%q has no host", s)
	}
	if err != nil {
		d.fail(v, key, "%v: give host:port, such as 1.tcp.example.com:20000", err)
		return ""
	}
	return s
}

// hostHeader returns rewrite, "" for preserve, or the host v holds.
func (d *decoder) hostHeader(v *yaml.Node, key string) string {
	s, ok := d.text(v, key, "rewrite, preserve or a host")
	switch {
	case !ok:
		return ""
	case s == "rewrite":
		return s
	case s == "preserve":
		return ""
	}
	bad := strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("/@?#\\", r)
	})
	if s == "" || bad || len(s) > dnsname.MaxDomain+6 {
		d.fail(v, key, "%q is not allowed; allowed: rewrite, preserve, or a host such as app.internal or app.internal:8080", s)
		return ""
	}
	return s
}

// basicAuth returns the user:password pairs of the list v; no message
// shows a password.
func (d *decoder) basicAuth(v *yaml.Node, key string) []string {
	items, ok := d.list(v, key, "user:password", MaxBasicAuthUsers)
	if !ok {
		return nil
	}
	if len(items) == 0 {
		d.fail(v, key, "is an empty list: give user:password pairs, or leave basic_auth out")
		return nil
	}
	var pairs []string
	users := map[string]bool{}
	for i, n := range items {
		at := fmt.Sprintf("%s[%d]", key, i)
		user, password, found := strings.Cut(n.Value, ":")
		switch {
		case !found || user == "":
			d.fail(n, at, "is not user:password: give a user name, a colon and a password")
		case len(password) < MinPassword || len(password) > MaxPassword:
			d.fail(n, at, "the password of %q is %d bytes long; give %d to %d", user, len(password), MinPassword, MaxPassword)
		case users[user]:
			d.fail(n, at, "user %q is listed twice; give each user once", user)
		default:
			users[user] = true
			pairs = append(pairs, n.Value)
		}
	}
	return pairs
}

// schemes returns the schemes of the list v, https and/or http.
func (d *decoder) schemes(v *yaml.Node, key string) []string {
	items, ok := d.list(v, key, "schemes (https, http)", 2)
	if !ok {
		return nil
	}
	if len(items) == 0 {
		d.fail(v, key, "is an empty list: give https, http or both")
		return nil
	}
	var schemes []string
	for i, n := range items {
		at := fmt.Sprintf("%s[%d]", key, i)
		switch {
		case n.Value != "https" && n.Value != "http":
			d.fail(n, at, "%q is not allowed; allowed: https, http", n.Value)
		case slices.Contains(schemes, n.Value):
			d.fail(n, at, "%q is listed twice; give each scheme once", n.Value)
		default:
			schemes = append(schemes, n.Value)
		}
	}
	return schemes
}

// trafficPolicy returns the policy document v holds: a mapping (written
// in place, as YAML) or a string (YAML or JSON). The edge checks what it
// says when the tunnel binds; here only its size is.
func (d *decoder) trafficPolicy(v *yaml.Node, key string) string {
	var doc string
	switch v.Kind {
	case yaml.MappingNode:
		b, err := yaml.Marshal(v)
		if err != nil {
			d.fail(v, key, "cannot be written back as YAML: %v", err)
			return ""
		}
		doc = string(b)
	case yaml.ScalarNode:
		doc = v.Value
	default:
		d.fail(v, key, "must be a policy (a mapping with on_http_request, on_http_response) or a string holding one, not a %s", kindName(v))
		return ""
	}
	if len(doc) > MaxTrafficPolicy {
		d.fail(v, key, "is %d bytes, over %d", len(doc), MaxTrafficPolicy)
		return ""
	}
	return doc
}
