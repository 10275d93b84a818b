package main

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/check"
)

// TestBotUsersCommands runs every verb of the bot users' family, declared
// in botusers.go, against the API: the proof that a family declared once
// has its commands.
func TestBotUsersCommands(t *testing.T) {
	e := newCLIEnv(t)
	out := e.must("bot-users", "create", "--name", "ci-deployer")
	id := field(out, "ID")
	if !strings.HasPrefix(id, "bot_") || field(out, "NAME") != "ci-deployer" || field(out, "ACTIVE") != "true" {
		t.Fatalf("create printed:\n%s", out)
	}
	if quiet := e.must("bot-users", "create", "--name", "edge", "-q"); !strings.HasPrefix(quiet, "bot_") {
		t.Errorf("create -q printed %q", quiet)
	}

	rows := tableRows(t, e.must("bot-users", "list"), "ID", "CREATED_AT", "ACTIVE", "NAME")
	if len(rows) != 2 || rows[1][0] != id || rows[1][2] != "true" || rows[1][3] != "ci-deployer" {
		t.Errorf("list: %v, want edge then %s", rows, id)
	}
	if page := e.mustJSON("bot-users", "list", "--all"); len(page["bot_users"].([]any)) != 2 {
		t.Errorf("list --all --json printed %v", page)
	}

	updated := e.mustJSON("bot-users", "update", id, "--active=false")
	if updated["active"] != false || updated["name"] != "ci-deployer" {
		t.Errorf("update --active=false printed %v", updated)
	}
	if got := field(e.must("bot-users", "get", id), "ACTIVE"); got != "false" {
		t.Errorf("get shows ACTIVE %q after --active=false", got)
	}
	if updated := e.mustJSON("bot-users", "update", id, "--name", "ci", "--active"); updated["active"] != true || updated["name"] != "ci" {
		t.Errorf("update --name ci --active printed %v", updated)
	}

	_, _, err := e.run("bot-users", "create", "--name", "EDGE")
	check.ErrorContains(t, err, "(409): ")
	_, _, err = e.run("bot-users", "create", "--name", "x", "--active=false")
	check.ErrorContains(t, err, "unknown flag: --active")
	_, _, err = e.run("bot-users", "update", id)
	check.ErrorContains(t, err, "--name or --active")

	_, errOut, err := e.run("bot-users", "delete", id)
	check.ErrorContains(t, err, "")
	if errOut != "deleted "+id+"\n" {
		t.Errorf("delete printed %q on stderr", errOut)
	}
	_, _, err = e.run("bot-users", "get", id)
	check.ErrorContains(t, err, "(404): ")
}
