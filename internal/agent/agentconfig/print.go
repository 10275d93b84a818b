package agentconfig

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// printed is a Config as YAML prints it: every key, in the order
// docs/agent.md lists them.
type printed struct {
	Version            int                      `yaml:"version"`
	Authtoken          string                   `yaml:"authtoken,omitempty"`
	ServerAddr         []string                 `yaml:"server_addr,omitempty"`
	RootCAs            string                   `yaml:"root_cas"`
	WebAddr            any                      `yaml:"web_addr"`
	WebAllowHosts      []string                 `yaml:"web_allow_hosts,omitempty"`
	HeartbeatInterval  string                   `yaml:"heartbeat_interval"`
	HeartbeatTolerance string                   `yaml:"heartbeat_tolerance"`
	Log                any                      `yaml:"log"`
	LogFormat          string                   `yaml:"log_format"`
	LogLevel           string                   `yaml:"log_level"`
	Metadata           string                   `yaml:"metadata,omitempty"`
	InspectDBSize      int64                    `yaml:"inspect_db_size"`
	Tunnels            map[string]printedTunnel `yaml:"tunnels,omitempty"`
}

// printedTunnel is a Tunnel as YAML prints it.
type printedTunnel struct {
	// Proto is left out for a labeled tunnel, which has Labels instead.
	Proto string `yaml:"proto,omitempty"`
	// Labels are name=value, by name.
	Labels      []string `yaml:"labels,omitempty"`
	Addr        string   `yaml:"addr"`
	Domain      string   `yaml:"domain,omitempty"`
	RemoteAddr  string   `yaml:"remote_addr,omitempty"`
	Inspect     *bool    `yaml:"inspect,omitempty"`
	Metadata    string   `yaml:"metadata,omitempty"`
	Description string   `yaml:"description,omitempty"`
	// TrafficPolicy is printed as the document it is.
	TrafficPolicy string   `yaml:"traffic_policy,omitempty"`
	HostHeader    string   `yaml:"host_header,omitempty"`
	BasicAuth     []string `yaml:"basic_auth,omitempty"`
	Schemes       []string `yaml:"schemes,omitempty"`
}

// YAML returns c as a configuration file of version 2, for
// "sluice-agent config check": every key with the value in effect,
// defaults included, after a comment naming the files it was read from.
// The authtoken and basic_auth passwords are masked, never shown whole.
func (c Config) YAML() ([]byte, error) {
	p := printed{
		Version:            Version,
		Authtoken:          MaskToken(c.Authtoken),
		ServerAddr:         c.ServerAddrs,
		RootCAs:            c.RootCAs,
		WebAddr:            orFalse(c.WebAddr),
		WebAllowHosts:      c.WebAllowHosts,
		HeartbeatInterval:  c.HeartbeatInterval.String(),
		HeartbeatTolerance: c.HeartbeatTolerance.String(),
		Log:                logValue(c.Log),
		LogFormat:          c.LogFormat,
		LogLevel:           c.LogLevel,
		Metadata:           c.Metadata,
		InspectDBSize:      c.InspectDBSize,
	}
	if len(c.Tunnels) > 0 {
		p.Tunnels = map[string]printedTunnel{}
	}
	for name, t := range c.Tunnels {
		pt := printedTunnel{
			Proto: t.Proto, Addr: t.Addr, Domain: t.Domain, RemoteAddr: t.RemoteAddr,
			Metadata: t.Metadata, Description: t.Description, HostHeader: t.HostHeader, TrafficPolicy: t.TrafficPolicy,
			Schemes: t.Schemes,
		}
		if t.Proto == "labeled" {
			pt.Proto, pt.Labels = "", t.LabelPairs()
		}
		if t.Proto == "http" || t.Proto == "labeled" {
			pt.Inspect = &t.Inspect
			if pt.HostHeader == "" {
				pt.HostHeader = "preserve"
			}
		}
		for _, pair := range t.BasicAuth {
			user, _, _ := strings.Cut(pair, ":")
			pt.BasicAuth = append(pt.BasicAuth, user+":********")
		}
		p.Tunnels[name] = pt
	}
	var b bytes.Buffer
	if len(c.Files) > 0 {
		fmt.Fprintf(&b, "# merged from %s\n", strings.Join(c.Files, ", "))
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("encoding configuration: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding configuration: %w", err)
	}
	return b.Bytes(), nil
}

// MaskToken returns token as it may be shown: its first 4 characters and
// "…" for a token of 16 bytes or more, "(set)" for a shorter one, and ""
// for none.
func MaskToken(token string) string {
	switch {
	case token == "":
		return ""
	case len(token) >= 16:
		return token[:4] + "…"
	}
	return "(set)"
}

// orFalse returns s, or false when s is "".
func orFalse(s string) any {
	if s == "" {
		return false
	}
	return s
}

// logValue returns log as printed: false for "false" or "".
func logValue(log string) any {
	if log == "false" {
		return false
	}
	return orFalse(log)
}
