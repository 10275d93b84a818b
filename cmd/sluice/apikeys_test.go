package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/check"
)

// tokenPattern is the form of an API key's token.
var tokenPattern = regexp.MustCompile(`sk_[0-9A-Za-z]{43}`)

func TestAPIKeysCreate(t *testing.T) {
	e := newCLIEnv(t)
	for _, tc := range []struct {
		name        string
		args        []string
		asJSON      bool
		description string
	}{
		{name: "table", args: []string{"--description", "edge-eu-1"}, description: "edge-eu-1"},
		{name: "json", args: []string{"--data", `{"metadata": "{\"team\": \"edge\"}"}`, "--description", "edge-us-1"}, asJSON: true, description: "edge-us-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"api-keys", "create"}, tc.args...)
			if tc.asJSON {
				args = append(args, "--json")
			}
			out, errOut, err := e.run(args...)
			check.ErrorContains(t, err, "")
			var id, token string
			if tc.asJSON {
				if !strings.Contains(errOut, "shown only this once") {
					t.Errorf("create --json printed no warning on stderr: %q", errOut)
				}
				key := decodeJSONOutput(t, out)
				id, _ = key["id"].(string)
				token, _ = key["token"].(string)
				if key["description"] != tc.description || key["metadata"] != `{"team": "edge"}` {
					t.Errorf("create --json printed %v", key)
				}
			} else {
				if !strings.Contains(out, tokenShownOnce) {
					t.Errorf("create printed no warning that the token is shown once:\n%s", out)
				}
				id, token = field(out, "ID"), tokenPattern.FindString(out)
				if field(out, "DESCRIPTION") != tc.description {
					t.Errorf("create printed:\n%s", out)
				}
			}
			if !strings.HasPrefix(id, "ak_") || !tokenPattern.MatchString(token) {
				t.Fatalf("create printed id %q and token %q:\n%s", id, token, out)
			}

			// The token works, and is never shown again.
			out, _, err = runSluice(t, "", "api-keys", "get", id, "--json", "--api-url", e.stack.URL, "--api-key", token)
			check.ErrorContains(t, err, "")
			if key := decodeJSONOutput(t, out); key["token"] != nil || key["description"] != tc.description {
				t.Errorf("get --json with the new key printed %v", key)
			}
			for _, args := range [][]string{{"get", id}, {"list"}, {"list", "--json"}} {
				out, errOut, err := e.run(append([]string{"api-keys"}, args...)...)
				check.ErrorContains(t, err, "")
				if strings.Contains(out+errOut, token) {
					t.Errorf("api-keys %s printed the token", args)
				}
			}
		})
	}
}

func TestAPIKeysListGetUpdateDelete(t *testing.T) {
	e := newCLIEnv(t)
	created := e.mustJSON("api-keys", "create", "--description", "ci", "--metadata", "m")
	id, token := created["id"].(string), created["token"].(string)
	created["token"] = nil // as every answer but the creation's shows it

	t.Run("list", func(t *testing.T) {
		rows := tableRows(t, e.must("api-keys", "list"), "ID", "CREATED_AT", "DESCRIPTION")
		if len(rows) != 2 || !slices.ContainsFunc(rows, func(r []string) bool { return slices.Equal(r, []string{id, created["created_at"].(string), "ci"}) }) {
			t.Errorf("list: %v, want the stack's key and %s", rows, id)
		}
		page := e.mustJSON("api-keys", "list")
		if items, _ := page["keys"].([]any); len(items) != 2 || page["next_page_uri"] != nil {
			t.Errorf("list --json printed %v", page)
		}
	})
	t.Run("get", func(t *testing.T) {
		out := e.must("api-keys", "get", id)
		if field(out, "ID") != id || field(out, "DESCRIPTION") != "ci" || field(out, "METADATA") != "m" {
			t.Errorf("get printed:\n%s", out)
		}
		if got := e.mustJSON("api-keys", "get", id); fmt.Sprint(got) != fmt.Sprint(created) {
			t.Errorf("get --json printed\n%v\nwant\n%v", got, created)
		}
	})
	t.Run("update --description changes only the description", func(t *testing.T) {
		updated := e.mustJSON("api-keys", "update", id, "--description", "ci, renamed")
		created["description"] = "ci, renamed"
		if fmt.Sprint(updated) != fmt.Sprint(created) {
			t.Errorf("update printed\n%v\nwant\n%v", updated, created)
		}
	})
	t.Run("delete", func(t *testing.T) {
		out, errOut, err := e.run("api-keys", "delete", id)
		check.ErrorContains(t, err, "")
		if out != "" || errOut != "deleted "+id+"\n" {
			t.Errorf("delete printed %q and %q on stderr", out, errOut)
		}
		_, _, err = runSluice(t, "", "api-keys", "list", "--api-url", e.stack.URL, "--api-key", token)
		check.ErrorContains(t, err, "ERR_SLUICE_211 (401): ")
		_, _, err = e.run("api-keys", "delete", id)
		check.ErrorContains(t, err, "(404): ")
		if !operationID.MatchString(err.Error()) {
			t.Errorf("error %q does not end with the operation id", err)
		}
	})
}

func TestAPIKeysListPages(t *testing.T) {
	e := newCLIEnv(t)
	for i := range 6 { // and the stack's own: 7
		e.must("api-keys", "create", "--description", fmt.Sprint("k", i))
	}
	ids := func(out string) []string {
		var got []string
		for _, row := range tableRows(t, out, "ID", "CREATED_AT", "DESCRIPTION") {
			got = append(got, row[0])
		}
		return got
	}
	want := ids(e.must("api-keys", "list"))
	out, errOut, err := e.run("api-keys", "list", "--limit", "3", "--all")
	check.ErrorContains(t, err, "")
	if got := ids(out); len(want) != 7 || fmt.Sprint(got) != fmt.Sprint(want) || errOut != "" {
		t.Errorf("--limit 3 --all listed %v (stderr %q), want %v", got, errOut, want)
	}
	all := e.mustJSON("api-keys", "list", "--limit", "3", "--all")
	if items, _ := all["keys"].([]any); len(items) != 7 || all["next_page_uri"] != nil {
		t.Errorf("--all --json printed %v", all)
	}
}
