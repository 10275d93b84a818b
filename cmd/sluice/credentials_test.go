package main

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/check"
)

// TestCredentialsCommands runs every verb of the tunnel credentials'
// family against the API: the token printed once, by create; the ACL and
// owner set by flags; allows answering as the edge would.
func TestCredentialsCommands(t *testing.T) {
	e := newCLIEnv(t)
	bot := field(e.must("bot-users", "create", "--name", "agent"), "ID")
	out := e.must("credentials", "create", "--description", "edge-eu-1", "--owner-id", bot, "--acl", "bind:*.example.com,bind:example.com:8443")
	id := field(out, "ID")
	if !strings.HasPrefix(id, "cr_") || field(out, "OWNER_ID") != bot || field(out, "ACL") != "bind:*.example.com,bind:example.com:8443" ||
		!strings.Contains(out, "shown only this once") || !strings.Contains(out, "    ct_") {
		t.Fatalf("create printed:\n%s", out)
	}
	if got := e.must("credentials", "get", id); strings.Contains(got, "ct_") {
		t.Fatalf("get shows the token:\n%s", got)
	}
	rows := tableRows(t, e.must("credentials", "list"), "ID", "CREATED_AT", "OWNER_ID", "ACL", "DESCRIPTION")
	if len(rows) != 1 || rows[0][0] != id || rows[0][2] != bot {
		t.Errorf("list: %v", rows)
	}
	for target, allowed := range map[string]bool{"a.example.com": true, "*.example.com": true, "example.com": false, "example.com:8443": true, "Example.COM.:8443": true, "a.example.com:8443": false} {
		out, _, err := e.run("credentials", "allows", id, target)
		if allowed != (err == nil) || allowed && out != "allowed\n" {
			t.Errorf("allows %s: %q, %v; want allowed %v", target, out, err, allowed)
		}
	}
	// Not targets: refused, as errors other than "denied" (issue 23).
	for _, target := range []string{"evil.com/.example.com", "EVIL.COM@.example.com", "*.*.example.com", "%2e.example.com", "\t", "[fe80::1%eth0]:22"} {
		out, _, err := e.run("credentials", "allows", id, target)
		if err == nil || out != "" || strings.Contains(err.Error(), "denied") || !strings.Contains(err.Error(), "a target to bind is") {
			t.Errorf("allows %q: %q, %v; want an error saying what a target is", target, out, err)
		}
	}
	_, _, err := e.run("credentials", "create", "--acl", "connect:x")
	check.ErrorContains(t, err, `"connect:x"`)
	_, _, err = e.run("bot-users", "delete", bot)
	check.ErrorContains(t, err, "ERR_SLUICE_426")

	updated := e.mustJSON("credentials", "update", id, "--acl", "", "--owner-id", "")
	if acl, ok := updated["acl"].([]any); !ok || len(acl) != 0 || updated["owner_id"] != nil || updated["token"] != nil {
		t.Errorf("update --acl '' --owner-id '' printed %v", updated)
	}
	if out, _, err := e.run("credentials", "allows", id, "anything.org"); err != nil || out != "allowed\n" {
		t.Errorf("allows with no ACL: %q, %v", out, err)
	}
	_, _, err = e.run("credentials", "update", id)
	check.ErrorContains(t, err, "--acl or --owner-id")
	_, errOut, err := e.run("credentials", "delete", id)
	check.ErrorContains(t, err, "")
	if errOut != "deleted "+id+"\n" {
		t.Errorf("delete printed %q on stderr", errOut)
	}
	_, _, err = e.run("credentials", "get", id)
	check.ErrorContains(t, err, "(404): ")
}
