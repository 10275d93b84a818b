package agentconfig

import (
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/internal/bytesize"
	"github.com/sluicehq/sluice/internal/dnsname"
)

// topKeys are the keys of a configuration file's top level.
var topKeys = []string{
	"version", "authtoken", "server_addr", "root_cas", "web_addr", "web_allow_hosts",
	"heartbeat_interval", "heartbeat_tolerance", "log", "log_format", "log_level",
	"metadata", "inspect_db_size", "tunnels",
}

// Defaults returns the configuration of an agent that has no file: every
// key at its default, no authtoken, no edge address and no tunnels.
func Defaults() Config {
	return Config{
		RootCAs:            DefaultRootCAs,
		WebAddr:            DefaultWebAddr,
		HeartbeatInterval:  DefaultHeartbeatInterval,
		HeartbeatTolerance: DefaultHeartbeatTolerance,
		Log:                DefaultLog,
		LogFormat:          DefaultLogFormat,
		LogLevel:           DefaultLogLevel,
		InspectDBSize:      DefaultInspectDBSize,
	}
}

// config decodes the merged top-level mapping root (nil for none); first
// is the first file, where a missing version is reported, at its start.
func (d *decoder) config(root *yaml.Node, first string) Config {
	c := Defaults()
	var version, tolerance *yaml.Node
	if root != nil {
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			if isNull(v) {
				continue
			}
			switch k.Value {
			case "version":
				version = v
				d.version(v)
			case "tunnels":
				c.Tunnels = d.tunnels(v)
			case "heartbeat_tolerance":
				tolerance = v
				c.HeartbeatTolerance = d.heartbeat(v, k.Value)
			default:
				if !d.topKey(&c, k, v) {
					d.unknownKey(k, "", k.Value, topKeys)
				}
			}
		}
	}
	if version == nil {
		d.errs = append(d.errs, &Error{File: first, Line: 1, Column: 1, Key: "version", Msg: "is required: add \"version: 2\" (supported: 2)"})
	}
	switch {
	case tolerance == nil:
		c.HeartbeatTolerance = max(DefaultHeartbeatTolerance, c.HeartbeatInterval)
	case c.HeartbeatTolerance != 0 && c.HeartbeatTolerance < c.HeartbeatInterval:
		d.fail(tolerance, "heartbeat_tolerance", "%s is less than heartbeat_interval, %s; it must be at least the interval", c.HeartbeatTolerance, c.HeartbeatInterval)
	}
	return c
}

// topKey decodes the top-level key k of the value v into c, reporting
// whether k is one it knows.
func (d *decoder) topKey(c *Config, k, v *yaml.Node) bool {
	key := k.Value
	switch key {
	case "authtoken":
		c.Authtoken = d.authtoken(v)
	case "server_addr":
		c.ServerAddrs = d.serverAddrs(v)
	case "root_cas":
		c.RootCAs = d.rootCAs(v)
	case "web_addr":
		c.WebAddr = d.webAddr(v)
	case "web_allow_hosts":
		c.WebAllowHosts = d.webAllowHosts(v)
	case "heartbeat_interval":
		c.HeartbeatInterval = d.heartbeat(v, key)
	case "log":
		c.Log = d.logTarget(v)
	case "log_format":
		c.LogFormat, _ = d.oneOf(v, key, "logfmt", "json", "term")
	case "log_level":
		c.LogLevel = d.logLevel(v)
	case "metadata":
		c.Metadata, _ = d.limited(v, key, MaxMetadata)
	case "inspect_db_size":
		c.InspectDBSize = d.inspectDBSize(v)
	default:
		return false
	}
	return true
}

// version checks that v is 2, the integer or the string.
func (d *decoder) version(v *yaml.Node) {
	if v.Kind != yaml.ScalarNode || v.Value != "2" || (v.ShortTag() != "!!int" && v.ShortTag() != "!!str") {
		shown := v.Value
		if v.Kind != yaml.ScalarNode {
			shown = "a " + kindName(v)
		}
		d.fail(v, "version", "version %s is not supported (supported: 2)", shown)
	}
}

// authtoken returns the token v holds; no message shows it.
func (d *decoder) authtoken(v *yaml.Node) string {
	s, ok := d.text(v, "authtoken", "a string")
	if ok && strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		d.fail(v, "authtoken", "holds a space or a control character; give the token as the dashboard shows it")
		return ""
	}
	return s
}

// serverAddrs returns the host:port or list of them in v, with port 443
// added to a host given without one.
func (d *decoder) serverAddrs(v *yaml.Node) []string {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		var ok bool
		if items, ok = d.list(v, "server_addr", "host:port", MaxServerAddrs); !ok {
			return nil
		}
		if len(items) == 0 {
			d.fail(v, "server_addr", "is an empty list: give host:port or a list of them")
			return nil
		}
	}
	var addrs []string
	for _, n := range items {
		s, ok := d.text(n, "server_addr", "host:port or a list of them")
		if !ok {
			continue
		}
		if _, _, err := net.SplitHostPort(s); err != nil && !strings.Contains(s, "://") {
			s = net.JoinHostPort(strings.Trim(s, "[]"), DefaultServerPort)
		}
		host, _, err := splitHostPort(s)
		if err == nil && host == "" {
			err = fmt.Errorf("%q has no host", s)
		}
		if err != nil {
			d.fail(n, "server_addr", "%v: give host:port, such as edge.example.com:443 (a host alone gets :%s)", err, DefaultServerPort)
			continue
		}
		addrs = append(addrs, s)
	}
	return addrs
}

// rootCAs returns trusted, host, or the path of a PEM file of at least
// one certificate, a relative one taken from the directory of v's file.
func (d *decoder) rootCAs(v *yaml.Node) string {
	s, ok := d.text(v, "root_cas", "trusted, host or the path of a PEM file")
	if !ok || s == "trusted" || s == "host" {
		return s
	}
	if s == "" {
		d.fail(v, "root_cas", "is empty; allowed: trusted, host, or the path of a PEM file of CA certificates")
		return ""
	}
	path := s
	if !filepath.IsAbs(path) && d.file != nil {
		path = filepath.Join(filepath.Dir(d.file[v]), path)
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		d.fail(v, "root_cas", "reading %s: %v; allowed: trusted, host, or the path of a PEM file of CA certificates", path, err)
		return ""
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		d.fail(v, "root_cas", "%s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", path)
		return ""
	}
	return path
}

// webAddr returns the host:port v holds, or "" when it is false.
func (d *decoder) webAddr(v *yaml.Node) string {
	if isFalse(v) {
		return ""
	}
	s, ok := d.text(v, "web_addr", "host:port or false")
	if !ok {
		return ""
	}
	// Port 0 is a free port, which the agent's log names ("starting web
	// service ... addr=").
	host, port, err := net.SplitHostPort(s)
	if err == nil && port != "0" {
		host, _, err = splitHostPort(s)
	}
	if err == nil && host == "" {
		err = fmt.Errorf("%q has no host", s)
	}
	if err != nil {
		d.fail(v, "web_addr", "%v: give host:port, such as %s (port 0: a free one), or false for no local API", err, DefaultWebAddr)
		return ""
	}
	return s
}

// webAllowHosts returns the host names of the list v, lower-cased.
func (d *decoder) webAllowHosts(v *yaml.Node) []string {
	items, ok := d.list(v, "web_allow_hosts", "host names", MaxWebAllowHosts)
	if !ok {
		return nil
	}
	var hosts []string
	for i, n := range items {
		h, err := dnsname.Check(n.Value, dnsname.OneLabel|dnsname.Pattern)
		if err != nil {
			d.fail(n, fmt.Sprintf("web_allow_hosts[%d]", i), "%v", err)
			continue
		}
		hosts = append(hosts, h)
	}
	return hosts
}

// heartbeat returns the duration v holds, within MinHeartbeat and
// MaxHeartbeat.
func (d *decoder) heartbeat(v *yaml.Node, key string) time.Duration {
	allowed := fmt.Sprintf("a duration from %s to %s, such as 10s or 1m", MinHeartbeat, MaxHeartbeat)
	s, ok := d.text(v, key, allowed)
	if !ok {
		return 0
	}
	dur, err := time.ParseDuration(s)
	switch {
	case err != nil:
		d.fail(v, key, "%q is not a duration: give %s", s, allowed)
	case dur < MinHeartbeat || dur > MaxHeartbeat:
		d.fail(v, key, "%s is out of range: give %s", dur, allowed)
	default:
		return dur
	}
	return 0
}

// logTarget returns stdout, stderr, false, or a file's path, a relative
// one taken from the directory of v's file.
func (d *decoder) logTarget(v *yaml.Node) string {
	if isFalse(v) {
		return "false"
	}
	s, ok := d.text(v, "log", "stdout, stderr, false or a file's path")
	switch {
	case !ok:
		return ""
	case s == "" || v.ShortTag() == "!!bool":
		d.fail(v, "log", "%q is not allowed; allowed: stdout, stderr, false or a file's path", s)
		return ""
	case s == "stdout" || s == "stderr" || filepath.IsAbs(s) || d.file == nil:
		return s
	}
	return filepath.Join(filepath.Dir(d.file[v]), s)
}

// logLevel returns the level v holds; crit, as the ngrok agent writes
// it, is error.
func (d *decoder) logLevel(v *yaml.Node) string {
	s, ok := d.oneOf(v, "log_level", "debug", "info", "warn", "error", "crit")
	if s == "crit" {
		return "error"
	}
	if !ok {
		return ""
	}
	return s
}

// inspectDBSize returns the size v holds, a number of bytes or one with
// a unit, within MinInspectDBSize and MaxInspectDBSize.
func (d *decoder) inspectDBSize(v *yaml.Node) int64 {
	const allowed = "give bytes, such as 52428800, or a size with a unit, such as 50MB or 10MiB, from 1MiB to 1GiB"
	s, ok := d.text(v, "inspect_db_size", "a size")
	if !ok {
		return 0
	}
	n, err := bytesize.Parse(s)
	switch {
	case err != nil:
		d.fail(v, "inspect_db_size", "%q is not a size: %s", s, allowed)
	case n < MinInspectDBSize || n > MaxInspectDBSize:
		d.fail(v, "inspect_db_size", "%q is out of range: %s", s, allowed)
	default:
		return n
	}
	return 0
}
