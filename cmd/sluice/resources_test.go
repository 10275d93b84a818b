package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/client"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/buildtest"
	"github.com/sluicehq/sluice/internal/check"
)

// Sample ARNs the API takes.
const (
	kinesisARN  = "arn:aws:kinesis:us-east-1:123456789012:stream/events"
	firehoseARN = "arn:aws:firehose:us-east-1:123456789012:deliverystream/events"
	logGroupARN = "arn:aws:logs:us-east-1:123456789012:log-group:events"
	roleARN     = "arn:aws:iam::123456789012:role/sluice"
)

// cliEnv is sluice's API on a real in-process NATS server, for running the
// management commands against it.
type cliEnv struct {
	t     *testing.T
	stack *apitest.Stack
}

func newCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	clearSluiceEnv(t)
	return &cliEnv{t: t, stack: apitest.Start(t)}
}

// clearSluiceEnv unsets every SLUICE_ variable for the test, so that the
// environment of whoever runs the tests does not set flags.
func clearSluiceEnv(t *testing.T) {
	t.Helper()
	buildtest.ClearEnv(t, envPrefix)
}

// runSluice runs sluice with the arguments and standard input, in process,
// and returns its standard output and error and its error.
func runSluice(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// run runs sluice with the arguments and the stack's --api-url and
// --api-key.
func (e *cliEnv) run(args ...string) (stdout, stderr string, err error) {
	e.t.Helper()
	return e.runIn("", args...)
}

// runIn is run with standard input.
func (e *cliEnv) runIn(stdin string, args ...string) (stdout, stderr string, err error) {
	e.t.Helper()
	return runSluice(e.t, stdin, append(args, "--api-url", e.stack.URL, "--api-key", e.stack.Token)...)
}

// must is run, failing the test on an error; it returns standard output.
func (e *cliEnv) must(args ...string) string {
	e.t.Helper()
	out, errOut, err := e.run(args...)
	if err != nil {
		e.t.Fatalf("sluice %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// mustJSON is must with --json, decoding what it prints.
func (e *cliEnv) mustJSON(args ...string) map[string]any {
	e.t.Helper()
	return decodeJSONOutput(e.t, e.must(append(args, "--json")...))
}

func decodeJSONOutput(t *testing.T, out string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("printed %q, not a JSON object: %v", out, err)
	}
	return v
}

// field returns the value of the line NAME of a resource's table, "" if
// there is none.
func field(out, name string) string {
	for line := range strings.Lines(out) {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// tableRows returns the rows of a table, header excluded, as fields.
func tableRows(t *testing.T, out string, header ...string) [][]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != strings.Join(header, " ") {
		t.Fatalf("table header %q, want %q; table:\n%s", got, header, out)
	}
	var rows [][]string
	for _, line := range lines[1:] {
		rows = append(rows, strings.Fields(line))
	}
	return rows
}

// closedURL returns the URL of a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return url
}

// TestResourceCommandsFlags checks what every management command says
// before it sends anything.
func TestResourceCommandsFlags(t *testing.T) {
	clearSluiceEnv(t)
	unreachable := closedURL(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no key, destinations", []string{"destinations", "list"}, "--api-key is required (or set SLUICE_API_KEY)"},
		{"no key, subscriptions", []string{"subscriptions", "get", "esb_x"}, "--api-key is required (or set SLUICE_API_KEY)"},
		{"no key, sources", []string{"subscriptions", "sources", "list", "esb_x"}, "--api-key is required (or set SLUICE_API_KEY)"},
		{"no key, api keys", []string{"api-keys", "create"}, "--api-key is required (or set SLUICE_API_KEY)"},
		{"bad URL", []string{"destinations", "list", "--api-key", "k", "--api-url", "127.0.0.1:8080"}, `--api-url "127.0.0.1:8080"`},
		{"limit over 100", []string{"destinations", "list", "--api-key", "k", "--limit", "101"}, "--limit 101: must be from 1 to 100"},
		{"unreachable", []string{"api-keys", "list", "--api-key", "k", "--api-url", unreachable}, "GET " + unreachable + "/api_keys: "},
		{"unreachable hint", []string{"destinations", "get", "ed_x", "--api-key", "k", "--api-url", unreachable}, apiURLHint},
		{"data not an object", []string{"destinations", "create", "--api-key", "k", "--data", "[1]"}, "--data: not a JSON object"},
		{"data not JSON", []string{"destinations", "update", "ed_x", "--api-key", "k", "--data", "{"}, "--data: not well-formed JSON"},
		{"data two values", []string{"destinations", "create", "--api-key", "k", "--data", "{} {}"}, "--data: more than one JSON value"},
		{"data file missing", []string{"destinations", "update", "ed_x", "--api-key", "k", "--data", "@" + filepath.Join(t.TempDir(), "none.json")}, "--data @"},
		{"nothing to update", []string{"api-keys", "update", "ak_x", "--api-key", "k"}, "nothing to update: give --description or --metadata, or --data"},
		{"nothing to update, destination", []string{"destinations", "update", "ed_x", "--api-key", "k"}, "nothing to update: give --description, --metadata, --format, a target ARN or its authentication, or --data"},
		{"source without type", []string{"subscriptions", "sources", "add", "esb_x", "--api-key", "k", "--filter", "true"}, "--type is required"},
		{"no target", []string{"destinations", "create", "--api-key", "k", "--description", "x"}, "give the target: one of --kinesis-stream-arn"},
		{"two targets", []string{"destinations", "create", "--api-key", "k", "--kinesis-stream-arn", kinesisARN, "--firehose-delivery-stream-arn", firehoseARN}, "not both: a destination has one target"},
		{"role and key", []string{"destinations", "create", "--api-key", "k", "--kinesis-stream-arn", kinesisARN, "--role-arn", roleARN, "--aws-access-key-id", "AKIA"}, "give --role-arn or --aws-access-key-id, not both"},
		{"key without secret", []string{"destinations", "create", "--api-key", "k", "--kinesis-stream-arn", kinesisARN, "--aws-access-key-id", "AKIA"}, "set SLUICE_AWS_SECRET_ACCESS_KEY"},
		{"secret without key", []string{"destinations", "create", "--api-key", "k", "--kinesis-stream-arn", kinesisARN, "--aws-secret-access-key", "s"}, "--aws-secret-access-key needs --aws-access-key-id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runSluice(t, "", tc.args...)
			check.ErrorContains(t, err, tc.want)
		})
	}
}

// TestAPIClientRequests checks the headers of every request, and the
// errors of answers that are not the API's, on a fake server: a proxy in
// front of sluice.
func TestAPIClientRequests(t *testing.T) {
	clearSluiceEnv(t)
	type request struct {
		method, path, auth, version, contentType, body string
	}
	requests := make(chan request, 10)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		requests <- request{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Service-Version"), r.Header.Get("Content-Type"), string(body)}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html><body>upstream sluice is down"+strings.Repeat(" and down", 100)+"</body></html>")
	}))
	t.Cleanup(proxy.Close)

	_, _, err := runSluice(t, "", "destinations", "update", "ed_1", "--description", "x", "--api-url", proxy.URL, "--api-key", "sk_test")
	check.ErrorContains(t, err, "PATCH "+proxy.URL+"/event_destinations/ed_1: HTTP 502, not an answer of the sluice API: <html><body>upstream sluice is down and down")
	if !strings.HasSuffix(err.Error(), "...") || len(err.Error()) > 400 {
		t.Errorf("error shows the whole body, not its start: %v", err)
	}
	got := <-requests
	want := request{"PATCH", "/event_destinations/ed_1", "Bearer sk_test", "2", "application/json", `{"description":"x"}`}
	if got != want {
		t.Errorf("request %+v, want %+v", got, want)
	}

	_, _, err = runSluice(t, "", "subscriptions", "sources", "get", "esb_1", "http_request_complete.v0", "--api-url", proxy.URL, "--api-key", "sk_test")
	check.ErrorContains(t, err, "HTTP 502")
	got = <-requests
	want = request{"GET", "/event_subscriptions/esb_1/sources/http_request_complete.v0", "Bearer sk_test", "2", "", ""}
	if got != want {
		t.Errorf("request %+v, want %+v", got, want)
	}
}

// TestAPIClientTimeout checks that a request that gets no answer ends at
// the client's timeout, or when its context does, saying which.
func TestAPIClientTimeout(t *testing.T) {
	stop := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(silent.Close)
	t.Cleanup(func() { close(stop) })

	flags := resourceFlags{apiURL: silent.URL, apiKey: "k"}
	c, err := flags.client(io.Discard, client.WithTimeout(50*time.Millisecond))
	check.ErrorContains(t, err, "")
	err = c.Do(t.Context(), http.MethodGet, "/api_keys", nil, nil)
	check.ErrorContains(t, err, "GET "+silent.URL+"/api_keys: no answer within 50ms; "+apiURLHint)

	c, err = flags.client(io.Discard, client.WithTimeout(time.Minute))
	check.ErrorContains(t, err, "")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = c.Do(ctx, http.MethodGet, "/api_keys", nil, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v with the context canceled, want context.Canceled", err)
	}
}

func TestAPIErrorText(t *testing.T) {
	raw := []byte(`{"error_code":"ERR_SLUICE_333","status_code":400,"msg":"sources[0].type: \"x\" is not an event kind","details":{"operation_id":"op_2","field":"sources[0].type","subscriptions":"[\"esb_1\"]"}}`)
	err := newAPIError("POST", "http://h/event_subscriptions", 400, raw)
	want := `ERR_SLUICE_333 (400): sources[0].type: "x" is not an event kind [details.field=sources[0].type] [details.subscriptions=["esb_1"]] (operation op_2)`
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
}

// TestResourceCommandsFromEnvironment runs the management commands with
// SLUICE_API_URL and SLUICE_API_KEY instead of flags, each command of each
// collection, and checks that a flag given beats its variable.
func TestResourceCommandsFromEnvironment(t *testing.T) {
	e := newCLIEnv(t)
	t.Setenv("SLUICE_API_URL", e.stack.URL)
	t.Setenv("SLUICE_API_KEY", e.stack.Token)
	sluice := func(args ...string) string {
		t.Helper()
		out, errOut, err := runSluice(t, "", args...)
		if err != nil {
			t.Fatalf("sluice %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
		}
		return out
	}
	idOf := func(out string) string {
		t.Helper()
		id, _ := decodeJSONOutput(t, out)["id"].(string)
		return id
	}

	dest := idOf(sluice("destinations", "create", "--kinesis-stream-arn", kinesisARN, "--role-arn", roleARN, "--json"))
	sub := idOf(sluice("subscriptions", "create", "--source", "http_request_complete.v0", "--destination-id", dest, "--json"))
	key := idOf(sluice("api-keys", "create", "--description", "from env", "--json"))
	for _, r := range []struct{ command, id string }{{"destinations", dest}, {"subscriptions", sub}, {"api-keys", key}} {
		if out := sluice(r.command, "list"); !strings.Contains(out, r.id) {
			t.Errorf("%s list does not show %s:\n%s", r.command, r.id, out)
		}
		if out := sluice(r.command, "update", r.id, "--description", "changed"); field(out, "DESCRIPTION") != "changed" {
			t.Errorf("%s update:\n%s", r.command, out)
		}
		if out := sluice(r.command, "get", r.id); field(out, "ID") != r.id {
			t.Errorf("%s get:\n%s", r.command, out)
		}
	}
	for _, r := range []struct{ command, id string }{{"subscriptions", sub}, {"destinations", dest}, {"api-keys", key}} {
		sluice(r.command, "delete", r.id)
	}

	// A flag beats its variable.
	t.Setenv("SLUICE_API_KEY", "sk_wrong_key_of_nobody")
	_, _, err := runSluice(t, "", "destinations", "list")
	check.ErrorContains(t, err, "ERR_SLUICE_211 (401): the API key is unknown or was deleted")
	sluice("destinations", "list", "--api-key", e.stack.Token)
	t.Setenv("SLUICE_API_URL", closedURL(t))
	_, _, err = runSluice(t, "", "destinations", "list", "--api-key", e.stack.Token)
	check.ErrorContains(t, err, "is sluice serve running there?")
	sluice("destinations", "list", "--api-key", e.stack.Token, "--api-url", e.stack.URL)
}

// TestDescribedFlagsHelp checks that --description and --metadata state
// each resource's limits in the unit its API counts: characters for
// subscriptions, bytes for the others.
func TestDescribedFlagsHelp(t *testing.T) {
	clearSluiceEnv(t)
	for _, tc := range []struct {
		args []string
		unit string
	}{
		{[]string{"destinations", "create"}, "bytes"},
		{[]string{"destinations", "update"}, "bytes"},
		{[]string{"subscriptions", "create"}, "characters"},
		{[]string{"subscriptions", "update"}, "characters"},
		{[]string{"api-keys", "create"}, "bytes"},
		{[]string{"api-keys", "update"}, "bytes"},
	} {
		out, _, err := runSluice(t, "", append(tc.args, "--help")...)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"at most 255 " + tc.unit, "at most 4096 " + tc.unit} {
			if !strings.Contains(out, want) {
				t.Errorf("sluice %s --help does not say %q:\n%s", strings.Join(tc.args, " "), want, out)
			}
		}
	}
}

// TestCreateQuiet checks that create -q prints the new id alone, the id
// get finds, so that a script can capture it: ED=$(sluice destinations
// create -q ...).
func TestCreateQuiet(t *testing.T) {
	e := newCLIEnv(t)
	id := func(what string, args ...string) string {
		t.Helper()
		out := e.must(args...)
		id := strings.TrimSuffix(out, "\n")
		if !strings.HasPrefix(id, what) || strings.ContainsAny(id, " \n\t") {
			t.Fatalf("sluice %s printed %q, want the new id alone on a line", strings.Join(args, " "), out)
		}
		if got := field(e.must(args[0], "get", id), "ID"); got != id {
			t.Fatalf("sluice %s get %s shows ID %q", args[0], id, got)
		}
		return id
	}
	destination := id("ed_", "destinations", "create", "-q", "--kinesis-stream-arn", kinesisARN, "--role-arn", roleARN)
	id("esb_", "subscriptions", "create", "--quiet", "--source", "api_key_created.v0", "--destination-id", destination)

	// An API key's and a credential's token are shown only at their
	// creation: -q prints the id, then the token.
	for _, tt := range []struct{ prefix, command string }{{"ak_", "api-keys"}, {"cr_", "credentials"}} {
		out := e.must(tt.command, "create", "-q", "--description", "script")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], tt.prefix) || lines[1] == "" || strings.ContainsAny(out, " \t") {
			t.Fatalf("sluice %s create -q printed %q, want the id and the token, a line each", tt.command, out)
		}
		if got := field(e.must(tt.command, "get", lines[0]), "ID"); got != lines[0] {
			t.Fatalf("sluice %s get %s shows ID %q", tt.command, lines[0], got)
		}
		if tt.command == "api-keys" {
			if _, errOut, err := runSluice(t, "", "api-keys", "get", lines[0], "--api-url", e.stack.URL, "--api-key", lines[1]); err != nil {
				t.Fatalf("the token api-keys create -q printed does not authenticate: %v\n%s", err, errOut)
			}
		}
	}
}

// TestEveryCreateHasQuiet checks that every create command takes -q
// (--quiet), for scripts: ID=$(sluice ... create -q ...).
func TestEveryCreateHasQuiet(t *testing.T) {
	var creates []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "create" {
			creates = append(creates, c.CommandPath())
			if f := c.Flags().Lookup("quiet"); f == nil || f.Shorthand != "q" || f.Value.Type() != "bool" {
				t.Errorf("%s has no -q (--quiet)", c.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand())
	if len(creates) < 10 {
		t.Fatalf("found the create commands %v; the walk is wrong", creates)
	}
}
