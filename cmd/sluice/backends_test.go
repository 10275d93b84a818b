package main

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/check"
)

// TestTunnelGroupBackendsCommands runs every verb of the backends'
// family, and the backend and traffic policy modules of a route, against
// the API.
func TestTunnelGroupBackendsCommands(t *testing.T) {
	e := newCLIEnv(t)
	out := e.must("backends", "tunnel-group", "create", "--labels", "env=prod,app=web", "--description", "web")
	backend := field(out, "ID")
	if !strings.HasPrefix(backend, "bkdtg_") || field(out, "LABELS") != "app=web,env=prod" || field(out, "DESCRIPTION") != "web" {
		t.Fatalf("create printed:\n%s", out)
	}
	_, _, err := e.run("backends", "tunnel-group", "create", "--labels", "Env=prod")
	check.ErrorContains(t, err, `the label name "Env" is not valid`)
	rows := tableRows(t, e.must("backends", "tunnel-group", "list"), "ID", "CREATED_AT", "LABELS", "TUNNELS", "DESCRIPTION")
	if len(rows) != 1 || rows[0][0] != backend || rows[0][3] != "0" {
		t.Fatalf("list: %v", rows)
	}
	if got := e.mustJSON("backends", "tunnel-group", "update", backend, "--labels", "env=staging"); len(got["labels"].(map[string]any)) != 1 {
		t.Errorf("update --labels printed %v", got)
	}

	e.must("reserved-domains", "create", "--domain", "*.apps.example.com")
	edge := strings.TrimSpace(e.must("edges", "https", "create", "--hostports", "a.apps.example.com:443", "-q"))
	route := strings.TrimSpace(e.must("edges", "https", "routes", "create", "--edge", edge, "--match-type", "path_prefix", "--match", "/", "-q"))
	out = e.must("edges", "https", "routes", "backend", "set", route, "--edge", edge, "--backend-id", backend)
	if field(out, "BACKEND_ID") != backend || field(out, "ENABLED") != "true" {
		t.Fatalf("backend set printed:\n%s", out)
	}
	_, _, err = e.run("edges", "https", "routes", "traffic-policy", "set", route, "--edge", edge, "--value", "on_http_request:\n  - actions:\n      - type: teleport\n")
	check.ErrorContains(t, err, "line 3, column 15")
	e.must("edges", "https", "routes", "traffic-policy", "set", route, "--edge", edge, "--enabled=false", "--value", "on_http_request: []\n")
	if got := field(e.must("edges", "https", "routes", "get", route, "--edge", edge), "MODULES"); got != "backend,traffic_policy(disabled)" {
		t.Errorf("routes get shows MODULES %q", got)
	}
	_, _, err = e.run("backends", "tunnel-group", "delete", backend)
	check.ErrorContains(t, err, "ERR_SLUICE_434")
	e.must("edges", "https", "routes", "backend", "delete", route, "--edge", edge)
	e.must("backends", "tunnel-group", "delete", backend)
	_, _, err = e.run("backends", "tunnel-group", "get", backend)
	check.ErrorContains(t, err, "(404): ")
}
