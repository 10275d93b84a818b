package main

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/check"
)

// TestAgentIngressesCommands runs every verb of `sluice agent-ingresses`
// against the API, with the flags of its certificate policy.
func TestAgentIngressesCommands(t *testing.T) {
	e := newCLIEnv(t)
	out := e.must("agent-ingresses", "create", "--domain", "Ingress.Example.com", "--description", "edge", "--private-key-type", "ecdsa")
	id := field(out, "ID")
	if !strings.HasPrefix(id, "agin_") || field(out, "DOMAIN") != "ingress.example.com" || field(out, "CERTIFICATES") != "letsencrypt/ecdsa" ||
		field(out, "URI") != "/agent_ingresses/"+id || !strings.Contains(field(out, "REGION_DOMAINS"), "tunnel.us.ingress.example.com") {
		t.Fatalf("create printed:\n%s", out)
	}
	if quiet := e.must("agent-ingresses", "create", "--domain", "b.example.com", "-q"); !strings.HasPrefix(quiet, "agin_") {
		t.Errorf("create -q printed %q", quiet)
	}
	rows := tableRows(t, e.must("agent-ingresses", "list"), "ID", "CREATED_AT", "DOMAIN", "CERTIFICATES", "DESCRIPTION")
	if len(rows) != 2 || rows[1][0] != id || rows[0][3] != "off" {
		t.Errorf("list: %v", rows)
	}
	if page := e.mustJSON("agent-ingresses", "list", "--all"); len(page["ingresses"].([]any)) != 2 {
		t.Errorf("list --all --json printed %v", page)
	}
	// --description keeps the policy; --certificate-authority alone keeps
	// the stored key type; --no-certificate-management turns it off.
	if updated := e.mustJSON("agent-ingresses", "update", id, "--description", "d2", "--certificate-authority", "letsencrypt"); updated["description"] != "d2" ||
		updated["certificate_management_policy"].(map[string]any)["private_key_type"] != "ecdsa" {
		t.Errorf("update printed %v", updated)
	}
	if updated := e.mustJSON("agent-ingresses", "update", id, "--no-certificate-management"); updated["certificate_management_policy"] != nil || updated["certificate_management_status"] != nil {
		t.Errorf("update --no-certificate-management printed %v", updated)
	}
	_, _, err := e.run("agent-ingresses", "create", "--domain", "INGRESS.example.com")
	check.ErrorContains(t, err, "(409): ")
	_, _, err = e.run("agent-ingresses", "update", id, "--domain", "c.example.com")
	check.ErrorContains(t, err, "unknown flag: --domain")
	_, _, err = e.run("agent-ingresses", "update", id, "--no-certificate-management", "--private-key-type", "rsa")
	check.ErrorContains(t, err, "not both")
	_, _, err = e.run("agent-ingresses", "update", id)
	check.ErrorContains(t, err, "--no-certificate-management")
	_, errOut, err := e.run("agent-ingresses", "delete", id)
	check.ErrorContains(t, err, "")
	if errOut != "deleted "+id+"\n" {
		t.Errorf("delete printed %q on stderr", errOut)
	}
	_, _, err = e.run("agent-ingresses", "get", id)
	check.ErrorContains(t, err, "(404): ")
}
