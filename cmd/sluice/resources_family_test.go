package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/resource"
)

// TestFamilyDeclaration declares a family of its own, over the API's
// /api_keys, and checks that the declaration alone gives create (with
// --quiet), list, get, update and delete, its fields as flags set on
// --data's body, and the "nothing to update" error: what a new family's
// declaration gets without code of its own.
func TestFamilyDeclaration(t *testing.T) {
	e := newCLIEnv(t)
	keys := family[apiwire.APIKey, apiwire.APIKeyInput]{
		spec:        opsOf(resource.APIKeys(), "create", "update", "delete"),
		kind:        resourceKind{command: "keys", plural: "keys", columns: []string{"ID", "NOTE"}},
		row:         func(k apiwire.APIKey) []string { return []string{k.ID, k.Description} },
		fields:      func(k apiwire.APIKey) []resourceField { return []resourceField{{"ID", k.ID}, {"NOTE", k.Description}} },
		moreFlags:   []fieldFlag{{flag: "note", field: "description", usage: "a note"}},
		create:      verbHelp{short: "Create a key"},
		update:      verbHelp{short: "Change a key"},
		updateFlags: "--note",
	}
	run := func(args ...string) (string, string, error) {
		t.Helper()
		cmd := newFamilyCommand(keys)
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(append(args, "--api-url", e.stack.URL, "--api-key", e.stack.Token))
		err := cmd.ExecuteContext(t.Context())
		return out.String(), errOut.String(), err
	}
	must := func(args ...string) string {
		t.Helper()
		out, errOut, err := run(args...)
		if err != nil {
			t.Fatalf("keys %s: %v\n%s", strings.Join(args, " "), err, errOut)
		}
		return out
	}

	var names []string
	for _, c := range newFamilyCommand(keys).Commands() {
		names = append(names, c.Name())
	}
	if got := strings.Join(names, " "); got != "create delete get list update" {
		t.Errorf("commands %q", got)
	}
	id := strings.TrimSpace(must("create", "-q", "--data", `{"metadata": "m"}`, "--note", "first"))
	if out := must("get", id); field(out, "NOTE") != "first" {
		t.Errorf("get printed:\n%s", out)
	}
	if got := e.mustJSON("api-keys", "get", id); got["metadata"] != "m" || got["description"] != "first" {
		t.Errorf("the key created: %v", got)
	}
	if out := must("update", id, "--note", "second"); field(out, "NOTE") != "second" {
		t.Errorf("update printed:\n%s", out)
	}
	_, _, err := run("update", id)
	check.ErrorContains(t, err, "nothing to update: give --note, or --data")
	rows := tableRows(t, must("list", "--limit", "1", "--all"), "ID", "NOTE")
	if len(rows) != 2 || rows[0][0] != id || rows[0][1] != "second" {
		t.Errorf("list rows %q", rows)
	}
	if _, errOut, err := run("delete", id); err != nil || errOut != "deleted "+id+"\n" {
		t.Fatalf("delete: %v, %q", err, errOut)
	}
	_, _, err = run("get", id)
	check.ErrorContains(t, err, "(404)")
}

// TestFamilyCommandsAreItsOperations checks that a family has list and
// get, and create, update and delete when its declaration has them.
func TestFamilyCommandsAreItsOperations(t *testing.T) {
	for _, ops := range [][]string{{}, {"delete"}, {"create"}, {"create", "delete"}, {"create", "update", "delete"}} {
		cmd := newFamilyCommand(family[apiwire.APIKey, apiwire.APIKeyInput]{
			spec:   opsOf(resource.APIKeys(), ops...),
			kind:   resourceKind{command: "keys", plural: "keys", columns: []string{"ID"}},
			row:    func(k apiwire.APIKey) []string { return []string{k.ID} },
			fields: func(k apiwire.APIKey) []resourceField { return []resourceField{{"ID", k.ID}} },
		})
		want := append([]string{"get", "list"}, ops...)
		slices.Sort(want)
		var names []string
		for _, c := range cmd.Commands() {
			names = append(names, c.Name())
		}
		if got := strings.Join(names, " "); got != strings.Join(want, " ") {
			t.Errorf("declared %v: commands %q, want %q", ops, got, strings.Join(want, " "))
		}
	}
}

// opsOf returns spec without its fields (a test's flags are its own) and
// with none of its operations but list, get and those named in ops
// ("create", "update", "delete").
func opsOf(spec resource.Spec, ops ...string) resource.Spec {
	spec.Fields = nil
	doc := resource.Doc{List: spec.Doc.List, Get: spec.Doc.Get}
	for _, op := range ops {
		switch op {
		case "create":
			doc.Create = &resource.Op{}
		case "update":
			doc.Update = &resource.Op{}
		case "delete":
			doc.Delete = &resource.Op{}
		}
	}
	spec.Doc = doc
	return spec
}
