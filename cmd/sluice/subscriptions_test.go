package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/check"
)

var subscriptionColumns = []string{"ID", "CREATED_AT", "SOURCES", "DESTINATIONS", "DESCRIPTION"}

// newDestination creates a destination and returns its id.
func (e *cliEnv) newDestination() string {
	e.t.Helper()
	return e.mustJSON("destinations", "create", "--kinesis-stream-arn", kinesisARN, "--role-arn", roleARN)["id"].(string)
}

func TestSubscriptionsCreate(t *testing.T) {
	e := newCLIEnv(t)
	first, second := e.newDestination(), e.newDestination()

	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		// what create prints
		sources      []string // the SOURCE lines
		destinations []string
		description  string
	}{
		{
			name:         "sources and destinations from flags",
			args:         []string{"--source", "http_request_complete.v0", "--source", "api_key_created.v0", "--destination-id", first, "--destination-id", second, "--description", "requests and keys"},
			sources:      []string{"http_request_complete.v0", "api_key_created.v0"},
			destinations: []string{first, second},
			description:  "requests and keys",
		},
		{
			name:         "a filter and fields from --data",
			args:         []string{"--data", `{"sources": [{"type": "tcp_connection_closed.v0", "filter": "ev.conn.server_port == 443", "fields": ["conn.client_ip"]}], "description": "from data"}`, "--destination-id", first},
			sources:      []string{"tcp_connection_closed.v0; filter: ev.conn.server_port == 443; fields: conn.client_ip"},
			destinations: []string{first},
			description:  "from data",
		},
		{
			name:         "--source replaces the sources of --data",
			stdin:        `{"sources": [{"type": "http_request_complete.v0"}], "destination_ids": ["` + second + `"]}`,
			args:         []string{"--data", "-", "--source", "api_key_created.v0"},
			sources:      []string{"api_key_created.v0"},
			destinations: []string{second},
		},
		{
			name: "nothing: every field is optional",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := e.runIn(tc.stdin, append([]string{"subscriptions", "create"}, tc.args...)...)
			check.ErrorContains(t, err, "")
			if id := field(out, "ID"); !strings.HasPrefix(id, "esb_") {
				t.Fatalf("ID = %q; printed:\n%s", id, out)
			}
			if got := field(out, "DESCRIPTION"); got != cmpDash(tc.description) {
				t.Errorf("DESCRIPTION = %q, want %q", got, cmpDash(tc.description))
			}
			if got := lines(out, "SOURCE"); fmt.Sprint(got) != fmt.Sprint(tc.sources) {
				t.Errorf("SOURCE lines %q, want %q; printed:\n%s", got, tc.sources, out)
			}
			if got := lines(out, "DESTINATION"); fmt.Sprint(got) != fmt.Sprint(tc.destinations) {
				t.Errorf("DESTINATION lines %q, want %q; printed:\n%s", got, tc.destinations, out)
			}
		})
	}
}

// lines returns the values of every line NAME of a resource's table.
func lines(out, name string) []string {
	var values []string
	for line := range strings.Lines(out) {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			values = append(values, strings.TrimSpace(rest))
		}
	}
	return values
}

func TestSubscriptionsListGetUpdateDelete(t *testing.T) {
	e := newCLIEnv(t)
	destination := e.newDestination()
	sub := e.mustJSON("subscriptions", "create", "--source", "http_request_complete.v0", "--source", "api_key_created.v0",
		"--destination-id", destination, "--description", "first", "--metadata", "m")
	id := sub["id"].(string)

	t.Run("list", func(t *testing.T) {
		rows := tableRows(t, e.must("subscriptions", "list"), subscriptionColumns...)
		want := [][]string{{id, sub["created_at"].(string), "http_request_complete.v0,api_key_created.v0", destination, "first"}}
		if fmt.Sprint(rows) != fmt.Sprint(want) {
			t.Errorf("rows %v, want %v", rows, want)
		}
		page := e.mustJSON("subscriptions", "list")
		if items, _ := page["event_subscriptions"].([]any); len(items) != 1 || page["next_page_uri"] != nil {
			t.Errorf("list --json printed %v", page)
		}
	})
	t.Run("get", func(t *testing.T) {
		if got := e.mustJSON("subscriptions", "get", id); fmt.Sprint(got) != fmt.Sprint(sub) {
			t.Errorf("get --json printed\n%v\nwant what create printed\n%v", got, sub)
		}
		out := e.must("subscriptions", "get", id)
		if field(out, "ID") != id || field(out, "METADATA") != "m" || len(lines(out, "SOURCE")) != 2 {
			t.Errorf("get printed:\n%s", out)
		}
	})
	t.Run("update --description changes only the description", func(t *testing.T) {
		updated := e.mustJSON("subscriptions", "update", id, "--description", "renamed")
		sub["description"] = "renamed"
		if fmt.Sprint(updated) != fmt.Sprint(sub) {
			t.Errorf("update printed\n%v\nwant\n%v", updated, sub)
		}
	})
	t.Run("update --source replaces the sources", func(t *testing.T) {
		out := e.must("subscriptions", "update", id, "--source", "tcp_connection_closed.v0")
		if got := lines(out, "SOURCE"); fmt.Sprint(got) != "[tcp_connection_closed.v0]" || field(out, "DESCRIPTION") != "renamed" {
			t.Errorf("update printed:\n%s", out)
		}
	})
	t.Run("delete", func(t *testing.T) {
		out, errOut, err := e.run("subscriptions", "delete", id)
		check.ErrorContains(t, err, "")
		if out != "" || errOut != "deleted "+id+"\n" {
			t.Errorf("delete printed %q and %q on stderr", out, errOut)
		}
		_, _, err = e.run("subscriptions", "get", id)
		check.ErrorContains(t, err, "(404)")
		// The destination is free to go now.
		e.must("destinations", "delete", destination)
	})
}

func TestSubscriptionsAPIErrors(t *testing.T) {
	e := newCLIEnv(t)
	destination := e.newDestination()
	sub := e.mustJSON("subscriptions", "create", "--destination-id", destination)["id"].(string)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown kind", []string{"subscriptions", "create", "--source", "x"},
			[]string{`ERR_SLUICE_333 (400): sources[0].type: "x" is not an event kind`, "[details.field=sources[0].type]"}},
		{"bad filter", []string{"subscriptions", "sources", "add", sub, "--type", "tcp_connection_closed.v0", "--filter", "ev.conn.server_port =="},
			[]string{"ERR_SLUICE_333 (400): ", "[details.field="}},
		{"destination in use", []string{"destinations", "delete", destination},
			[]string{"(409): ", "[details.subscriptions=[\"" + sub + "\"]]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := e.run(tc.args...)
			for _, want := range tc.want {
				check.ErrorContains(t, err, want)
			}
			if !operationID.MatchString(err.Error()) {
				t.Errorf("error %q does not end with the operation id", err)
			}
		})
	}
}

func TestSubscriptionSources(t *testing.T) {
	e := newCLIEnv(t)
	sub := e.mustJSON("subscriptions", "create", "--source", "api_key_created.v0")["id"].(string)
	sources := func() [][]string {
		t.Helper()
		return tableRows(t, e.must("subscriptions", "sources", "list", sub), "TYPE", "FILTER", "FIELDS")
	}

	out := e.must("subscriptions", "sources", "add", sub, "--type", "tcp_connection_closed.v0",
		"--filter", "ev.conn.server_port == 443", "--field", "conn.client_ip", "--field", "conn.server_port")
	for name, want := range map[string]string{"TYPE": "tcp_connection_closed.v0", "FILTER": "ev.conn.server_port == 443", "FIELDS": "conn.client_ip,conn.server_port"} {
		if got := field(out, name); got != want {
			t.Errorf("add printed %s = %q, want %q:\n%s", name, got, want, out)
		}
	}
	added := e.mustJSON("subscriptions", "sources", "add", sub, "--data", `{"type": "http_request_complete.v0", "filter": "ev.conn.server_port != 80"}`)
	if added["filter"] != "ev.conn.server_port != 80" {
		t.Errorf("add --data --json printed %v", added)
	}
	_, _, err := e.run("subscriptions", "sources", "add", sub, "--type", "api_key_created.v0")
	check.ErrorContains(t, err, "(409): ")

	want := [][]string{
		{"api_key_created.v0", "-", "-"},
		{"tcp_connection_closed.v0", "ev.conn.server_port", "==", "443", "conn.client_ip,conn.server_port"},
		{"http_request_complete.v0", "ev.conn.server_port", "!=", "80", "-"},
	}
	if got := sources(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sources list:\n%v\nwant\n%v", got, want)
	}
	if list := e.mustJSON("subscriptions", "sources", "list", sub); len(list["sources"].([]any)) != 3 {
		t.Errorf("sources list --json printed %v", list)
	}

	out = e.must("subscriptions", "sources", "update", sub, "tcp_connection_closed.v0", "--filter", "ev.conn.server_port != 22")
	if field(out, "FILTER") != "ev.conn.server_port != 22" || field(out, "FIELDS") != "conn.client_ip,conn.server_port" {
		t.Errorf("update --filter printed:\n%s", out)
	}
	got := e.mustJSON("subscriptions", "sources", "get", sub, "tcp_connection_closed.v0")
	if got["filter"] != "ev.conn.server_port != 22" || fmt.Sprint(got["fields"]) != "[conn.client_ip conn.server_port]" {
		t.Errorf("get --json printed %v", got)
	}
	_, _, err = e.run("subscriptions", "sources", "update", sub, "api_key_created.v0", "--filter", "true")
	check.ErrorContains(t, err, "(400): ")

	out, errOut, err := e.run("subscriptions", "sources", "delete", sub, "http_request_complete.v0")
	check.ErrorContains(t, err, "")
	if out != "" || errOut != "deleted source http_request_complete.v0 of "+sub+"\n" {
		t.Errorf("delete printed %q and %q on stderr", out, errOut)
	}
	if got := sources(); len(got) != 2 {
		t.Errorf("sources after delete: %v", got)
	}
	_, _, err = e.run("subscriptions", "sources", "get", sub, "http_request_complete.v0")
	check.ErrorContains(t, err, "(404): ")
}

func TestSubscriptionsListPages(t *testing.T) {
	e := newCLIEnv(t)
	for range 7 {
		e.must("subscriptions", "create", "--source", "api_key_created.v0")
	}
	ids := func(out string) []string {
		var got []string
		for _, row := range tableRows(t, out, subscriptionColumns...) {
			got = append(got, row[0])
		}
		return got
	}
	want := ids(e.must("subscriptions", "list"))
	out, errOut, err := e.run("subscriptions", "list", "--limit", "3", "--all")
	check.ErrorContains(t, err, "")
	if got := ids(out); len(want) != 7 || fmt.Sprint(got) != fmt.Sprint(want) || errOut != "" {
		t.Errorf("--limit 3 --all listed %v (stderr %q), want %v", got, errOut, want)
	}
	out, errOut, err = e.run("subscriptions", "list", "--limit", "3")
	check.ErrorContains(t, err, "")
	if got := ids(out); fmt.Sprint(got) != fmt.Sprint(want[:3]) || !strings.Contains(errOut, "--before-id "+want[2]) {
		t.Errorf("--limit 3 listed %v (stderr %q), want %v", got, errOut, want[:3])
	}
}
