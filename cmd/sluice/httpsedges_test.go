package main

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/check"
)

// TestHTTPSEdgesCommands runs every verb of the edges' family, of their
// routes' (nested: --edge) and of the routes' modules against the API.
func TestHTTPSEdgesCommands(t *testing.T) {
	e := newCLIEnv(t)
	e.must("reserved-domains", "create", "--domain", "*.apps.example.com")
	out := e.must("edges", "https", "create", "--description", "prod", "--hostports", "a.apps.example.com:443,b.apps.example.com:443")
	edge := field(out, "ID")
	if !strings.HasPrefix(edge, "edghts_") || field(out, "HOSTPORTS") != "a.apps.example.com:443,b.apps.example.com:443" {
		t.Fatalf("create printed:\n%s", out)
	}
	_, _, err := e.run("edges", "https", "create", "--hostports", "app.example.com:443")
	check.ErrorContains(t, err, "reserve the domain first")
	rows := tableRows(t, e.must("edges", "https", "list"), "ID", "CREATED_AT", "HOSTPORTS", "DESCRIPTION")
	if len(rows) != 1 || rows[0][0] != edge {
		t.Fatalf("list: %v", rows)
	}
	if got := e.mustJSON("edges", "https", "update", edge, "--hostports", ""); len(got["hostports"].([]any)) != 0 {
		t.Errorf("update --hostports \"\" printed %v", got)
	}

	_, _, err = e.run("edges", "https", "routes", "list")
	check.ErrorContains(t, err, `"edge" not set`)
	route := e.must("edges", "https", "routes", "create", "--edge", edge, "--match-type", "path_prefix", "--match", "/api", "-q")
	if !strings.HasPrefix(route, "edghtsrt_") {
		t.Fatalf("routes create -q printed %q", route)
	}
	route = strings.TrimSpace(route)
	rows = tableRows(t, e.must("edges", "https", "routes", "list", "--edge", edge, "--all"), "ID", "CREATED_AT", "MATCH_TYPE", "MATCH", "MODULES")
	if len(rows) != 1 || rows[0][0] != route || rows[0][3] != "/api" {
		t.Fatalf("routes list: %v", rows)
	}
	if got := e.mustJSON("edges", "https", "routes", "update", route, "--edge", edge, "--match-type", "exact_path"); got["match_type"] != "exact_path" {
		t.Errorf("routes update printed %v", got)
	}
	_, _, err = e.run("edges", "https", "routes", "create", "--edge", edge, "--match-type", "exact_path", "--match", "/api")
	check.ErrorContains(t, err, "ERR_SLUICE_432")

	out = e.must("edges", "https", "routes", "circuit-breaker", "set", route, "--edge", edge, "--error-threshold-percentage", "0.25", "--num-buckets", "20")
	if field(out, "ERROR_THRESHOLD_PERCENTAGE") != "0.25" || field(out, "NUM_BUCKETS") != "20" || field(out, "ENABLED") != "true" {
		t.Fatalf("circuit-breaker set printed:\n%s", out)
	}
	_, _, err = e.run("edges", "https", "routes", "circuit-breaker", "set", route, "--edge", edge, "--error-threshold-percentage", "50")
	check.ErrorContains(t, err, "0 to 1.0, not 0 to 100")
	e.must("edges", "https", "routes", "websocket-tcp-converter", "set", route, "--edge", edge, "--enabled=false")
	if got := field(e.must("edges", "https", "routes", "get", route, "--edge", edge), "MODULES"); got != "circuit_breaker,websocket_tcp_converter(disabled)" {
		t.Errorf("routes get shows MODULES %q", got)
	}
	e.must("edges", "https", "routes", "circuit-breaker", "delete", route, "--edge", edge)
	_, _, err = e.run("edges", "https", "routes", "circuit-breaker", "get", route, "--edge", edge)
	check.ErrorContains(t, err, "ERR_SLUICE_431")
	if got := field(e.must("edges", "https", "routes", "websocket-tcp-converter", "get", route, "--edge", edge), "ENABLED"); got != "false" {
		t.Errorf("websocket-tcp-converter get: ENABLED %q", got)
	}

	if got := field(e.must("edges", "https", "get", edge), "ROUTES"); got != route {
		t.Errorf("get shows ROUTES %q, want %s", got, route)
	}
	e.must("edges", "https", "delete", edge)
	_, _, err = e.run("edges", "https", "routes", "get", route, "--edge", edge)
	check.ErrorContains(t, err, "(404): ")
}

// TestParseFloatFlag: a module's number flag takes a finite number only,
// so that NaN or Inf is refused with what to give rather than failing to
// encode the body.
func TestParseFloatFlag(t *testing.T) {
	for text, ok := range map[string]bool{"0.5": true, "1e-3": true, "NaN": false, "Inf": false, "-inf": false, "1e400": false, "x": false} {
		if _, err := parseFloat(text); (err == nil) != ok {
			t.Errorf("parseFloat(%q): %v, want ok %v", text, err, ok)
		}
	}
}
