package agentconfig

import (
	"reflect"
	"strings"
	"testing"
)

// tunnelFile is a file of one tunnel t of proto and addr, with extra
// lines of keys from line 6 (each "key: value", indented here).
func tunnelFile(proto, addr string, extra ...string) string {
	var b strings.Builder
	b.WriteString("version: 2\ntunnels:\n  t:\n")
	if proto != "" {
		b.WriteString("    proto: " + proto + "\n")
	}
	if addr != "" {
		b.WriteString("    addr: " + addr + "\n")
	}
	for _, e := range extra {
		b.WriteString("    " + e + "\n")
	}
	return b.String()
}

// TestLoadTunnels takes each tunnel key's good values, normalized.
func TestLoadTunnels(t *testing.T) {
	https := []string{"https", "http"}
	for _, c := range []struct {
		name string
		yaml string
		want Tunnel
	}{
		{"http port", tunnelFile("http", "3000"), Tunnel{Proto: "http", Addr: "http://localhost:3000", Inspect: true, Schemes: https}},
		{"http port string", tunnelFile("http", `"3000"`), Tunnel{Proto: "http", Addr: "http://localhost:3000", Inspect: true, Schemes: https}},
		{"http host:port", tunnelFile("http", "192.168.1.2:8080"), Tunnel{Proto: "http", Addr: "http://192.168.1.2:8080", Inspect: true, Schemes: https}},
		{"http :port", tunnelFile("http", "':8080'"), Tunnel{Proto: "http", Addr: "http://localhost:8080", Inspect: true, Schemes: https}},
		{"http https URL", tunnelFile("http", "https://localhost:8443"), Tunnel{Proto: "http", Addr: "https://localhost:8443", Inspect: true, Schemes: https}},
		{"http URL no port", tunnelFile("http", "http://app.internal/"), Tunnel{Proto: "http", Addr: "http://app.internal", Inspect: true, Schemes: https}},
		{"http IPv6", tunnelFile("http", "'[::1]:3000'"), Tunnel{Proto: "http", Addr: "http://[::1]:3000", Inspect: true, Schemes: https}},
		{"tcp port", tunnelFile("tcp", "22"), Tunnel{Proto: "tcp", Addr: "localhost:22"}},
		{"tcp port leading zero", tunnelFile("tcp", "'localhost:022'"), Tunnel{Proto: "tcp", Addr: "localhost:22"}},
		{"tcp host:port", tunnelFile("tcp", "db:5432", "remote_addr: 1.tcp.example.com:20000", "inspect: false"),
			Tunnel{Proto: "tcp", Addr: "db:5432", RemoteAddr: "1.tcp.example.com:20000"}},
		{"domain", tunnelFile("http", "3000", "domain: App.Example.com"), Tunnel{Proto: "http", Addr: "http://localhost:3000", Domain: "app.example.com", Inspect: true, Schemes: https}},
		{"inspect false", tunnelFile("http", "3000", "inspect: false"), Tunnel{Proto: "http", Addr: "http://localhost:3000", Schemes: https}},
		{"host_header rewrite", tunnelFile("http", "3000", "host_header: rewrite"), Tunnel{Proto: "http", Addr: "http://localhost:3000", HostHeader: "rewrite", Inspect: true, Schemes: https}},
		{"host_header preserve", tunnelFile("http", "3000", "host_header: preserve"), Tunnel{Proto: "http", Addr: "http://localhost:3000", Inspect: true, Schemes: https}},
		{"host_header host", tunnelFile("http", "3000", "host_header: app.internal:8080"), Tunnel{Proto: "http", Addr: "http://localhost:3000", HostHeader: "app.internal:8080", Inspect: true, Schemes: https}},
		{"basic_auth", tunnelFile("http", "3000", "basic_auth: ['ann:password1', 'bob:pass:word']"),
			Tunnel{Proto: "http", Addr: "http://localhost:3000", BasicAuth: []string{"ann:password1", "bob:pass:word"}, Inspect: true, Schemes: https}},
		{"traffic_policy string", tunnelFile("http", "3000", `traffic_policy: "on_http_request: []"`), Tunnel{Proto: "http", Addr: "http://localhost:3000", Inspect: true, Schemes: https, TrafficPolicy: "on_http_request: []"}},
		{"traffic_policy mapping", tunnelFile("http", "3000", "traffic_policy:", "      on_http_request:", "        - actions: [{type: deny}]"), Tunnel{Proto: "http", Addr: "http://localhost:3000", Inspect: true, Schemes: https,
			TrafficPolicy: "on_http_request:\n    - actions: [{type: deny}]\n"}},
		{"traffic_policy tcp", tunnelFile("tcp", "5432", "traffic_policy: 'on_tcp_connect: []'"), Tunnel{Proto: "tcp", Addr: "localhost:5432", TrafficPolicy: "on_tcp_connect: []"}},
		{"schemes", tunnelFile("http", "3000", "schemes: [http, https]"), Tunnel{Proto: "http", Addr: "http://localhost:3000", Inspect: true, Schemes: []string{"http", "https"}}},
		{"metadata and description", tunnelFile("tcp", "22", "metadata: '{\"a\":1}'", "description: ssh"),
			Tunnel{Proto: "tcp", Addr: "localhost:22", Metadata: `{"a":1}`, Description: "ssh"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := loadOne(t, c.yaml)
			if err != nil {
				t.Fatal(err)
			}
			c.want.Name = "t"
			if got := cfg.Tunnels["t"]; !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestLoadTunnelsRefused refuses each tunnel key's bad values, naming
// file, line and column, the key, and what is allowed.
func TestLoadTunnelsRefused(t *testing.T) {
	for _, c := range []struct {
		name, yaml, prefix string
		parts              []string
	}{
		{"proto missing", tunnelFile("", "3000"), "a.yml:3:3: tunnels.t.proto: ", []string{"is required", "http or tcp"}},
		{"proto https", tunnelFile("https", "3000"), "a.yml:4:12: tunnels.t.proto: ", []string{`"https" is not supported (supported: http, tcp)`}},
		{"proto tls", tunnelFile("tls", "3000"), "a.yml:4:12: tunnels.t.proto: ", []string{"supported: http, tcp"}},
		{"addr missing", tunnelFile("http", ""), "a.yml:3:3: tunnels.t.addr: ", []string{"is required"}},
		{"traffic_policy list", tunnelFile("http", "3000", "traffic_policy: [a]"), "a.yml:6:21: tunnels.t.traffic_policy: ", []string{"a mapping"}},
		{"addr 0", tunnelFile("http", "0"), "a.yml:5:11: tunnels.t.addr: ", []string{"1 to 65535"}},
		{"addr 70000", tunnelFile("tcp", "70000"), "a.yml:5:11: tunnels.t.addr: ", []string{"1 to 65535"}},
		{"addr host alone", tunnelFile("http", "localhost"), "a.yml:5:11: tunnels.t.addr: ", []string{"not host:port", "such as 3000"}},
		{"addr float", tunnelFile("http", "3000.5"), "a.yml:5:11: tunnels.t.addr: ", []string{"not an address"}},
		{"addr ftp", tunnelFile("http", "ftp://x:21"), "a.yml:5:11: tunnels.t.addr: ", []string{"not an http:// or https:// URL"}},
		{"addr path", tunnelFile("http", "http://x:80/app"), "a.yml:5:11: tunnels.t.addr: ", []string{"without a user, path or query"}},
		{"addr URL for tcp", tunnelFile("tcp", "http://x:80"), "a.yml:5:11: tunnels.t.addr: ", []string{"a tcp tunnel's addr is a port or host:port"}},
		{"domain on tcp", tunnelFile("tcp", "22", "domain: a.example.com"), "a.yml:6:5: tunnels.t.domain: ", []string{"http tunnels only"}},
		{"domain wildcard", tunnelFile("http", "3000", "domain: '*.example.com'"), "a.yml:6:13: tunnels.t.domain: ", []string{"wildcard"}},
		{"domain one label", tunnelFile("http", "3000", "domain: localhost"), "a.yml:6:13: tunnels.t.domain: ", []string{"two labels"}},
		{"domain long", tunnelFile("http", "3000", "domain: "+strings.Repeat("a.", 127)+"io"), "a.yml:6:13: tunnels.t.domain: ", []string{"at most 253"}},
		{"hostname", tunnelFile("http", "3000", "hostname: a.example.com"), "a.yml:6:5: tunnels.t.hostname: ", []string{"not supported", "domain"}},
		{"subdomain", tunnelFile("http", "3000", "subdomain: a"), "a.yml:6:5: tunnels.t.subdomain: ", []string{"not supported", "domain"}},
		{"remote_addr on http", tunnelFile("http", "3000", "remote_addr: a.example.com:1"), "a.yml:6:5: tunnels.t.remote_addr: ", []string{"tcp tunnels only"}},
		{"remote_addr no port", tunnelFile("tcp", "22", "remote_addr: a.example.com"), "a.yml:6:18: tunnels.t.remote_addr: ", []string{"host:port"}},
		{"inspect on tcp", tunnelFile("tcp", "22", "inspect: true"), "a.yml:6:14: tunnels.t.inspect: ", []string{"not inspected"}},
		{"inspect string", tunnelFile("http", "3000", "inspect: 'yes'"), "a.yml:6:14: tunnels.t.inspect: ", []string{"true or false"}},
		{"metadata long", tunnelFile("http", "3000", "metadata: "+strings.Repeat("m", MaxMetadata+1)), "a.yml:6:15: tunnels.t.metadata: ", []string{"at most 4096"}},
		{"description long", tunnelFile("http", "3000", "description: "+strings.Repeat("d", MaxDescription+1)), "a.yml:6:18: tunnels.t.description: ", []string{"at most 255"}},
		{"host_header space", tunnelFile("http", "3000", "host_header: a b"), "a.yml:6:18: tunnels.t.host_header: ", []string{"rewrite, preserve, or a host"}},
		{"basic_auth short password", tunnelFile("http", "3000", "basic_auth: ['ann:short']"), "a.yml:6:18: tunnels.t.basic_auth[0]: ", []string{"8 to 128"}},
		{"basic_auth long password", tunnelFile("http", "3000", "basic_auth: ['ann:"+strings.Repeat("p", 129)+"']"), "a.yml:6:18: tunnels.t.basic_auth[0]: ", []string{"8 to 128"}},
		{"basic_auth no user", tunnelFile("http", "3000", "basic_auth: [':password1']"), "a.yml:6:18: tunnels.t.basic_auth[0]: ", []string{"user:password"}},
		{"basic_auth no colon", tunnelFile("http", "3000", "basic_auth: [password1]"), "a.yml:6:18: tunnels.t.basic_auth[0]: ", []string{"user:password"}},
		{"basic_auth twice", tunnelFile("http", "3000", "basic_auth: ['a:password1', 'a:password2']"), "a.yml:6:33: tunnels.t.basic_auth[1]: ", []string{"twice"}},
		{"basic_auth string", tunnelFile("http", "3000", "basic_auth: 'a:password1'"), "a.yml:6:17: tunnels.t.basic_auth: ", []string{"must be a list"}},
		{"schemes empty", tunnelFile("http", "3000", "schemes: []"), "a.yml:6:14: tunnels.t.schemes: ", []string{"empty list"}},
		{"schemes ftp", tunnelFile("http", "3000", "schemes: [ftp]"), "a.yml:6:15: tunnels.t.schemes[0]: ", []string{"allowed: https, http"}},
		{"schemes twice", tunnelFile("http", "3000", "schemes: [http, http]"), "a.yml:6:21: tunnels.t.schemes[1]: ", []string{"twice"}},
		{"schemes on tcp", tunnelFile("tcp", "22", "schemes: [http]"), "a.yml:6:5: tunnels.t.schemes: ", []string{"http tunnels only"}},
		{"unknown key", tunnelFile("http", "3000", "adr: 3000"), "a.yml:6:5: tunnels.t: ", []string{`unknown key "adr" (did you mean "addr"?)`, "allowed: proto, addr"}},
		{"not a mapping", "version: 2\ntunnels:\n  t: 3000\n", "a.yml:3:6: tunnels.t: ", []string{"must be a mapping"}},
		{"bad name", "version: 2\ntunnels:\n  a b:\n    proto: tcp\n    addr: 22\n", "a.yml:3:3: tunnels.a b: ", []string{"A-Z, a-z, 0-9"}},
		{"long name", "version: 2\ntunnels:\n  " + strings.Repeat("n", 65) + ":\n    proto: tcp\n    addr: 22\n", "a.yml:3:3: tunnels.nnn", []string{"1 to 64"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadOne(t, c.yaml)
			wantError(t, err, c.prefix, c.parts...)
		})
	}
}

// TestLoadTunnelName takes names of the allowed bytes.
func TestLoadTunnelName(t *testing.T) {
	name := "Web_1.a-" + strings.Repeat("n", MaxTunnelName-8)
	cfg, err := loadOne(t, "version: 2\ntunnels:\n  "+name+":\n    proto: tcp\n    addr: 22\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Tunnels[name].Name != name {
		t.Fatalf("tunnels: %+v", cfg.Tunnels)
	}
}
