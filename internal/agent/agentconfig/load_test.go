package agentconfig

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLoadTopKeys takes each top-level key's good values as the
// configuration means them.
func TestLoadTopKeys(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		check      func(Config) bool
	}{
		{"defaults", "", func(c Config) bool {
			return c.WebAddr == DefaultWebAddr && c.HeartbeatInterval == DefaultHeartbeatInterval &&
				c.HeartbeatTolerance == DefaultHeartbeatTolerance && c.Log == "false" && c.LogFormat == "term" &&
				c.LogLevel == "info" && c.InspectDBSize == DefaultInspectDBSize && c.RootCAs == "trusted" &&
				c.ServerAddrs == nil && c.Authtoken == "" && len(c.Tunnels) == 0
		}},
		{"authtoken", "authtoken: 2abcDEF_ghi\n", func(c Config) bool { return c.Authtoken == "2abcDEF_ghi" }},
		{"server_addr host gets 443", "server_addr: edge.example.com\n", func(c Config) bool {
			return slices.Equal(c.ServerAddrs, []string{"edge.example.com:443"})
		}},
		{"server_addr list", "server_addr: [a.example.com:4443, b.example.com, '::1']\n", func(c Config) bool {
			return slices.Equal(c.ServerAddrs, []string{"a.example.com:4443", "b.example.com:443", "[::1]:443"})
		}},
		{"root_cas host", "root_cas: host\n", func(c Config) bool { return c.RootCAs == "host" }},
		{"web_addr false", "web_addr: false\n", func(c Config) bool { return c.WebAddr == "" }},
		{"web_addr", "web_addr: 0.0.0.0:4041\n", func(c Config) bool { return c.WebAddr == "0.0.0.0:4041" }},
		{"web_addr free port", "web_addr: 127.0.0.1:0\n", func(c Config) bool { return c.WebAddr == "127.0.0.1:0" }},
		{"web_allow_hosts", "web_allow_hosts: [Dev.Example.com, myhost, 10.0.0.2]\n", func(c Config) bool {
			return slices.Equal(c.WebAllowHosts, []string{"dev.example.com", "myhost", "10.0.0.2"})
		}},
		{"heartbeat_interval raises the default tolerance", "heartbeat_interval: 20s\n", func(c Config) bool {
			return c.HeartbeatInterval == 20*time.Second && c.HeartbeatTolerance == 20*time.Second
		}},
		{"heartbeat_tolerance", "heartbeat_interval: 1s\nheartbeat_tolerance: 2m\n", func(c Config) bool {
			return c.HeartbeatInterval == time.Second && c.HeartbeatTolerance == 2*time.Minute
		}},
		{"log stdout", "log: stdout\n", func(c Config) bool { return c.Log == "stdout" }},
		{"log false", "log: false\n", func(c Config) bool { return c.Log == "false" }},
		{"log file", "log: /var/log/agent.log\n", func(c Config) bool { return c.Log == "/var/log/agent.log" }},
		{"log_format", "log_format: json\n", func(c Config) bool { return c.LogFormat == "json" }},
		{"log_level", "log_level: warn\n", func(c Config) bool { return c.LogLevel == "warn" }},
		{"log_level crit", "log_level: crit\n", func(c Config) bool { return c.LogLevel == "error" }},
		{"metadata", "metadata: '" + strings.Repeat("m", MaxMetadata) + "'\n", func(c Config) bool { return len(c.Metadata) == MaxMetadata }},
		{"inspect_db_size bytes", "inspect_db_size: 1048576\n", func(c Config) bool { return c.InspectDBSize == 1<<20 }},
		{"inspect_db_size MiB", "inspect_db_size: 10MiB\n", func(c Config) bool { return c.InspectDBSize == 10<<20 }},
		{"inspect_db_size MB", "inspect_db_size: 50MB\n", func(c Config) bool { return c.InspectDBSize == 50e6 }},
		{"inspect_db_size GiB", "inspect_db_size: 1GiB\n", func(c Config) bool { return c.InspectDBSize == 1<<30 }},
		{"empty value is absent", "log_level:\n", func(c Config) bool { return c.LogLevel == "info" }},
		{"anchors", "web_addr: &w localhost:4040\nmetadata: *w\n", func(c Config) bool { return c.Metadata == "localhost:4040" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := loadOne(t, "version: 2\n"+c.yaml)
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(got) {
				t.Errorf("got %+v", got)
			}
			if !slices.Equal(got.Files, []string{"a.yml"}) {
				t.Errorf("Files = %v", got.Files)
			}
		})
	}
}

// TestLoadTopKeysRefused refuses each top-level key's bad values, naming
// file, line and column, the key, and what is allowed.
func TestLoadTopKeysRefused(t *testing.T) {
	for _, c := range []struct {
		name, yaml, prefix string
		parts              []string
	}{
		{"authtoken list", "authtoken: [a]\n", "a.yml:2:12: authtoken: ", []string{"must be a string, not a list"}},
		{"server_addr port", "server_addr: a.example.com:99999\n", "a.yml:2:14: server_addr: ", []string{"1 to 65535"}},
		{"server_addr empty list", "server_addr: []\n", "a.yml:2:14: server_addr: ", []string{"empty list"}},
		{"server_addr no host", "server_addr: ':443'\n", "a.yml:2:14: server_addr: ", []string{"no host"}},
		{"server_addr list entry", "server_addr:\n  - a.example.com\n  - b.example.com:0\n", "a.yml:4:5: server_addr: ", []string{"1 to 65535"}},
		{"root_cas missing file", "root_cas: missing.pem\n", "a.yml:2:11: root_cas: ", []string{"missing.pem", "trusted, host"}},
		{"web_addr true", "web_addr: true\n", "a.yml:2:11: web_addr: ", []string{"host:port", "or false"}},
		{"web_addr port only", "web_addr: 4040\n", "a.yml:2:11: web_addr: ", []string{"host:port"}},
		{"web_addr no host", "web_addr: ':4040'\n", "a.yml:2:11: web_addr: ", []string{"no host"}},
		{"web_allow_hosts not a list", "web_allow_hosts: a.example.com\n", "a.yml:2:18: web_allow_hosts: ", []string{"must be a list"}},
		{"web_allow_hosts bad name", "web_allow_hosts: [ok.example.com, bad_name]\n", "a.yml:2:35: web_allow_hosts[1]: ", []string{"'_'"}},
		{"heartbeat_interval short", "heartbeat_interval: 500ms\n", "a.yml:2:21: heartbeat_interval: ", []string{"out of range", "1s to 2m0s"}},
		{"heartbeat_interval long", "heartbeat_interval: 3m\n", "a.yml:2:21: heartbeat_interval: ", []string{"out of range"}},
		{"heartbeat_interval no unit", "heartbeat_interval: 10\n", "a.yml:2:21: heartbeat_interval: ", []string{"not a duration", "such as 10s"}},
		{"heartbeat_tolerance below interval", "heartbeat_interval: 30s\nheartbeat_tolerance: 20s\n", "a.yml:3:22: heartbeat_tolerance: ", []string{"less than heartbeat_interval"}},
		{"log true", "log: true\n", "a.yml:2:6: log: ", []string{"stdout, stderr, false"}},
		{"log empty", "log: ''\n", "a.yml:2:6: log: ", []string{"stdout, stderr, false"}},
		{"log_format", "log_format: xml\n", "a.yml:2:13: log_format: ", []string{`"xml"`, "logfmt, json, term"}},
		{"log_level", "log_level: trace\n", "a.yml:2:12: log_level: ", []string{"debug, info, warn, error"}},
		{"metadata long", "metadata: '" + strings.Repeat("m", MaxMetadata+1) + "'\n", "a.yml:2:11: metadata: ", []string{"4097 bytes", "at most 4096"}},
		{"inspect_db_size small", "inspect_db_size: 512KiB\n", "a.yml:2:18: inspect_db_size: ", []string{"out of range", "1MiB to 1GiB"}},
		{"inspect_db_size large", "inspect_db_size: 2GiB\n", "a.yml:2:18: inspect_db_size: ", []string{"out of range"}},
		{"inspect_db_size zero", "inspect_db_size: 0\n", "a.yml:2:18: inspect_db_size: ", []string{"out of range"}},
		{"inspect_db_size negative", "inspect_db_size: -1\n", "a.yml:2:18: inspect_db_size: ", []string{"not a size"}},
		{"inspect_db_size words", "inspect_db_size: lots\n", "a.yml:2:18: inspect_db_size: ", []string{"not a size", "50MB"}},
		{"tunnels list", "tunnels: [a]\n", "a.yml:2:10: tunnels: ", []string{"mapping of tunnels"}},
		{"unknown key", "region: us\n", "a.yml:2:1: ", []string{`unknown key "region"`, "allowed: version, authtoken"}},
		{"unknown key typo", "authtokn: x\n", "a.yml:2:1: ", []string{`did you mean "authtoken"?`}},
		{"repeated key", "log: stdout\nlog: stderr\n", "a.yml:3:1: log: ", []string{"repeated (first at line 2)"}},
		{"syntax", "log: [\n", "a.yml:2:1: ", []string{"invalid YAML"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadOne(t, "version: 2\n"+c.yaml)
			wantError(t, err, c.prefix, c.parts...)
		})
	}
}

// TestLoadVersion needs version 2, the integer or the string, in the
// merged result.
func TestLoadVersion(t *testing.T) {
	for _, c := range []struct {
		name, yaml, err string
	}{
		{"integer", "version: 2\n", ""},
		{"string", "version: \"2\"\n", ""},
		{"missing", "log: stdout\n", `a.yml:1:1: version: is required: add "version: 2" (supported: 2)`},
		{"empty file", "", `a.yml:1:1: version: is required`},
		{"3", "version: 3\n", "a.yml:1:10: version: version 3 is not supported (supported: 2)"},
		{"string 3", "version: \"3\"\n", "a.yml:1:10: version: version 3 is not supported (supported: 2)"},
		{"float", "version: 2.0\n", "a.yml:1:10: version: version 2.0 is not supported (supported: 2)"},
		{"list", "version: [2]\n", "a.yml:1:10: version: version a list is not supported (supported: 2)"},
		{"not a mapping", "- version: 2\n", "a.yml:1:1: the file must be a mapping of keys"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadOne(t, c.yaml)
			switch {
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
				t.Fatalf("error %v; want %q", err, c.err)
			}
		})
	}
}

// TestLoadNoFiles refuses to load nothing.
func TestLoadNoFiles(t *testing.T) {
	if _, err := Load(nil); err == nil {
		t.Fatal("Load(nil) took it")
	}
	inDir(t, nil)
	if _, err := Load([]string{"missing.yml"}); err == nil || !strings.Contains(err.Error(), "missing.yml") {
		t.Fatalf("error %v does not name the file", err)
	}
}

// TestLoadCollectsErrors reports every wrong key at once.
func TestLoadCollectsErrors(t *testing.T) {
	_, err := loadOne(t, "version: 3\nlog_level: loud\ntunnels:\n  web:\n    proto: tls\n    addr: 0\n")
	for _, prefix := range []string{"a.yml:1:10: version:", "a.yml:2:12: log_level:", "a.yml:5:12: tunnels.web.proto:", "a.yml:6:11: tunnels.web.addr:"} {
		wantError(t, err, prefix)
	}
}
