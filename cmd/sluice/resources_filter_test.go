package main

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/check"
)

// TestListFilterCommands: list --filter lists only what matches, by pages
// that keep the filter with --all, and a filter the API refuses is an
// error that quotes the API's message, with the problem's position.
func TestListFilterCommands(t *testing.T) {
	e := newCLIEnv(t)
	for _, name := range []string{"prod-1", "dev", "prod-2", "prod-3"} {
		e.must("bot-users", "create", "--name", name)
	}
	rows := tableRows(t, e.must("bot-users", "list", "--filter", `obj.name.startsWith("prod")`, "--limit", "2", "--all"), "ID", "CREATED_AT", "ACTIVE", "NAME")
	var names []string
	for _, row := range rows {
		names = append(names, row[3])
	}
	if strings.Join(names, " ") != "prod-3 prod-2 prod-1" {
		t.Errorf("list --filter --all listed %v", names)
	}
	_, errOut, err := e.run("bot-users", "list", "--filter", `obj.name.startsWith("prod")`, "--limit", "2")
	check.ErrorContains(t, err, "")
	if !strings.Contains(errOut, "with the same --filter") {
		t.Errorf("list --filter of one page said %q", errOut)
	}
	page := e.mustJSON("api-keys", "list", "--filter", `obj.description == "none of them"`)
	if items := page["keys"].([]any); len(items) != 0 {
		t.Errorf("api-keys list --filter printed %v", page)
	}
	_, _, err = e.run("bot-users", "list", "--filter", `obj.nme == "x"`)
	check.ErrorContains(t, err, "ERR_SLUICE_335")
	check.ErrorContains(t, err, "<input>:1:4: undefined field 'nme'")
}

// TestEveryListTakesFilter: the list command of every family has
// --filter.
func TestEveryListTakesFilter(t *testing.T) {
	root := newRootCommand()
	n := 0
	for _, family := range root.Commands() {
		for _, cmd := range family.Commands() {
			if cmd.Name() != "list" || !strings.HasPrefix(cmd.Short, "List the account's ") {
				continue
			}
			n++
			if cmd.Flags().Lookup("filter") == nil {
				t.Errorf("%s list has no --filter", family.Name())
			}
		}
	}
	if n < 7 {
		t.Errorf("found the list commands of %d families, want 7 or more", n)
	}
}
