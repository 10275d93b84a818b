package agentconfig

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// labeledFile is a file of one labeled tunnel t: labels (a YAML value)
// on line 4, addr (when not "") on line 5, then extra lines of keys,
// each "key: value", indented here.
func labeledFile(labels, addr string, extra ...string) string {
	var b strings.Builder
	b.WriteString("version: 2\ntunnels:\n  t:\n    labels: " + labels + "\n")
	if addr != "" {
		b.WriteString("    addr: " + addr + "\n")
	}
	for _, e := range extra {
		b.WriteString("    " + e + "\n")
	}
	return b.String()
}

// TestLoadLabeledTunnels takes a labeled tunnel's keys: labels instead of
// proto, and the keys that the agent's side of its forwarding uses.
func TestLoadLabeledTunnels(t *testing.T) {
	edge := map[string]string{"edge": "edghts_2G9ZQx1"}
	for _, c := range []struct {
		name string
		yaml string
		want Tunnel
	}{
		{"port", labeledFile("[edge=edghts_2G9ZQx1]", "8080"),
			Tunnel{Proto: "labeled", Labels: edge, Addr: "http://localhost:8080", Inspect: true}},
		{"block list of two", "version: 2\ntunnels:\n  t:\n    labels:\n      - edge=edghts_2G9ZQx1\n      - team=web\n    addr: app.internal:80\n",
			Tunnel{Proto: "labeled", Labels: map[string]string{"edge": "edghts_2G9ZQx1", "team": "web"}, Addr: "http://app.internal:80", Inspect: true}},
		{"value with =", labeledFile("['query=a=b']", "8080"),
			Tunnel{Proto: "labeled", Labels: map[string]string{"query": "a=b"}, Addr: "http://localhost:8080", Inspect: true}},
		{"https upstream", labeledFile("[edge=edghts_2G9ZQx1]", "https://localhost:8443"),
			Tunnel{Proto: "labeled", Labels: edge, Addr: "https://localhost:8443", Inspect: true}},
		{"inspect, metadata, host_header", labeledFile("[edge=edghts_2G9ZQx1]", "8080", "inspect: false", "metadata: '{\"a\":1}'", "host_header: rewrite"),
			Tunnel{Proto: "labeled", Labels: edge, Addr: "http://localhost:8080", Metadata: `{"a":1}`, HostHeader: "rewrite"}},
		{"empty proto is absent", labeledFile("[edge=edghts_2G9ZQx1]", "8080", "proto:"),
			Tunnel{Proto: "labeled", Labels: edge, Addr: "http://localhost:8080", Inspect: true}},
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

// TestLoadLabeledTunnelsRefused refuses bad labels and the keys a labeled
// tunnel has no use for, naming file, line and column, the key, and why.
func TestLoadLabeledTunnelsRefused(t *testing.T) {
	const labels = "[edge=edghts_2G9ZQx1]"
	for _, c := range []struct {
		name, yaml, prefix string
		parts              []string
	}{
		{"no =", labeledFile("[edge]", "8080"), "a.yml:4:14: tunnels.t.labels[0]: ", []string{`"edge" has no '='`, "name=value"}},
		{"no name", labeledFile("['=edghts_1']", "8080"), "a.yml:4:14: tunnels.t.labels[0]: ", []string{"no name before '='"}},
		{"no value", labeledFile("['edge=']", "8080"), "a.yml:4:14: tunnels.t.labels[0]: ", []string{"no value after '='"}},
		{"name twice", labeledFile("[edge=a, edge=b]", "8080"), "a.yml:4:22: tunnels.t.labels[1]: ", []string{`label "edge" is given twice`}},
		{"empty list", labeledFile("[]", "8080"), "a.yml:4:13: tunnels.t.labels: ", []string{"empty list", "name=value"}},
		{"string", labeledFile("edge=edghts_1", "8080"), "a.yml:4:13: tunnels.t.labels: ", []string{"must be a list of name=value labels, not a string"}},
		{"mapping", labeledFile("{edge: edghts_1}", "8080"), "a.yml:4:13: tunnels.t.labels: ", []string{"not a mapping"}},
		{"list in the list", labeledFile("[[edge=a]]", "8080"), "a.yml:4:14: tunnels.t.labels[0]: ", []string{"not a list"}},
		{"with proto", tunnelFile("http", "3000", "labels: "+labels), "a.yml:4:5: tunnels.t.proto: ", []string{"labeled tunnel, which has no proto", "remove proto"}},
		{"addr missing", labeledFile(labels, ""), "a.yml:3:3: tunnels.t.addr: ", []string{"is required"}},
		{"addr 0", labeledFile(labels, "0"), "a.yml:5:11: tunnels.t.addr: ", []string{"1 to 65535"}},
		{"addr path", labeledFile(labels, "http://x:80/app"), "a.yml:5:11: tunnels.t.addr: ", []string{"without a user, path or query"}},
		{"domain", labeledFile(labels, "8080", "domain: app.example.com"), "a.yml:6:5: tunnels.t.domain: ", []string{"no domain of its own", "HTTPS edge"}},
		{"schemes", labeledFile(labels, "8080", "schemes: [https]"), "a.yml:6:5: tunnels.t.schemes: ", []string{"no public URL of its own"}},
		{"basic_auth", labeledFile(labels, "8080", "basic_auth: ['ann:password1']"), "a.yml:6:5: tunnels.t.basic_auth: ", []string{"access control on the route"}},
		{"traffic_policy", labeledFile(labels, "8080", "traffic_policy: 'on_http_request: []'"), "a.yml:6:5: tunnels.t.traffic_policy: ", []string{"route's modules and policy"}},
		{"remote_addr", labeledFile(labels, "8080", "remote_addr: 1.tcp.example.com:20000"), "a.yml:6:5: tunnels.t.remote_addr: ", []string{"tcp tunnels only, and this one is labeled"}},
		{"description", labeledFile(labels, "8080", "description: web"), "a.yml:6:5: tunnels.t.description: ", []string{"use metadata"}},
		{"inspect string", labeledFile(labels, "8080", "inspect: 'yes'"), "a.yml:6:14: tunnels.t.inspect: ", []string{"true or false"}},
		{"metadata long", labeledFile(labels, "8080", "metadata: "+strings.Repeat("m", MaxMetadata+1)), "a.yml:6:15: tunnels.t.metadata: ", []string{"at most 4096"}},
		{"unknown key", labeledFile(labels, "8080", "lables: [a=b]"), "a.yml:6:5: tunnels.t: ", []string{`unknown key "lables" (did you mean "labels"?)`}},
		{"host_header on tcp", tunnelFile("tcp", "22", "host_header: rewrite"), "a.yml:6:5: tunnels.t.host_header: ", []string{"for http and labeled tunnels only, and this one is tcp"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadOne(t, c.yaml)
			wantError(t, err, c.prefix, c.parts...)
		})
	}
}

// TestLoadLabeledMerge: labels added by a later file to a tunnel whose
// proto an earlier one gave are refused where the proto is; a later file
// may give a labeled tunnel's addr.
func TestLoadLabeledMerge(t *testing.T) {
	inDir(t, map[string]string{
		"a.yml": "version: 2\ntunnels:\n  web:\n    proto: http\n    addr: 3000\n  routed:\n    labels: [edge=edghts_1]\n",
		"b.yml": "tunnels:\n  web:\n    labels: [edge=edghts_1]\n  routed:\n    addr: 4000\n",
	})
	_, err := Load([]string{"a.yml", "b.yml"})
	wantError(t, err, "a.yml:4:5: tunnels.web.proto: ", "labeled tunnel")
	if strings.Contains(err.Error(), "routed") {
		t.Errorf("the labeled tunnel whose addr is in b.yml is refused: %v", err)
	}
}

// TestDecodeLabeledTunnelJSON decodes a labeled tunnel as the local API
// receives it; proto http with labels is the npm package's default, and
// ignored.
func TestDecodeLabeledTunnelJSON(t *testing.T) {
	want := Tunnel{Name: "routed", Proto: "labeled", Labels: map[string]string{"edge": "edghts_1", "team": "web"}, Addr: "http://localhost:8080", Inspect: true}
	for _, c := range []struct{ name, body string }{
		{"labels", `{"name":"routed","labels":["edge=edghts_1","team=web"],"addr":8080}`},
		{"npm wrapper", `{"name":"routed","proto":"http","labels":["edge=edghts_1","team=web"],"addr":8080,"authtoken":"x","configPath":"/tmp/a.yml"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeTunnelJSON([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestDecodeLabeledTunnelJSONRefused refuses a bad labeled body, naming
// the key.
func TestDecodeLabeledTunnelJSONRefused(t *testing.T) {
	for _, c := range []struct{ name, body, err string }{
		{"proto tcp", `{"name":"r","proto":"tcp","labels":["edge=edghts_1"],"addr":22}`, "proto: a tunnel with labels is a labeled tunnel"},
		{"object", `{"name":"r","labels":{"edge":"edghts_1"},"addr":8080}`, "labels: must be a list of name=value labels, not a mapping"},
		{"no =", `{"name":"r","labels":["edge"],"addr":8080}`, `labels[0]: "edge" has no '='`},
		{"number", `{"name":"r","labels":[5],"addr":8080}`, `labels[0]: "5" has no '='`},
		{"domain", `{"name":"r","labels":["edge=edghts_1"],"addr":8080,"domain":"a.example.com"}`, "domain: a labeled tunnel has no domain of its own"},
		{"no addr", `{"name":"r","labels":["edge=edghts_1"]}`, "addr: is required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeTunnelJSON([]byte(c.body))
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v; want one saying %q", err, c.err)
			}
			var e *Error
			if !errors.As(err, &e) || e.Line != 0 || e.File != "" {
				t.Errorf("error %#v is not an *Error without a position", err)
			}
		})
	}
}

// TestYAMLLabeled prints a labeled tunnel with its labels, by name, and
// no proto: the printed file loads back to the same tunnel.
func TestYAMLLabeled(t *testing.T) {
	cfg, err := loadOne(t, labeledFile("[team=web, edge=edghts_1]", "8080"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if !strings.Contains(s, "    labels:\n      - edge=edghts_1\n      - team=web\n") || strings.Contains(s, "proto") ||
		!strings.Contains(s, "    inspect: true\n") || !strings.Contains(s, "    host_header: preserve\n") {
		t.Fatalf("YAML\n%s", s)
	}
	again, err := loadOne(t, s)
	if err != nil {
		t.Fatalf("the printed file does not load: %v\n%s", err, s)
	}
	if !reflect.DeepEqual(again.Tunnels, cfg.Tunnels) {
		t.Errorf("loaded back: %+v\nwant %+v", again.Tunnels, cfg.Tunnels)
	}
}
