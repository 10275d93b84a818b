package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/check"
)

// testSecret is an AWS secret access key that must never be printed.
const testSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzSECRETzz"

func TestDestinationsCreate(t *testing.T) {
	e := newCLIEnv(t)
	dataFile := filepath.Join(t.TempDir(), "destination.json")
	data := fmt.Sprintf(`{"target": {"cloudwatch_logs": {"log_group_arn": %q, "auth": {"role": {"role_arn": %q}}}}, "description": "from the file"}`, logGroupARN, roleARN)
	if err := os.WriteFile(dataFile, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		secret string // in SLUICE_AWS_SECRET_ACCESS_KEY
		stdin  string
		args   []string
		// the table create prints
		target, arn, auth, who, description string
		secretStored                        string
	}{
		{
			name:   "kinesis with role",
			args:   []string{"--kinesis-stream-arn", kinesisARN, "--role-arn", roleARN, "--description", "all traffic"},
			target: "kinesis", arn: kinesisARN, auth: "role", who: roleARN, description: "all traffic",
		},
		{
			name:   "firehose with creds, secret from the environment",
			secret: testSecret,
			args:   []string{"--firehose-delivery-stream-arn", firehoseARN, "--aws-access-key-id", "AKIAIOSFODNN7EXAMPLE"},
			target: "firehose", arn: firehoseARN, auth: "creds", who: "AKIAIOSFODNN7EXAMPLE", secretStored: testSecret,
		},
		{
			name:   "firehose with creds, secret as a flag",
			args:   []string{"--firehose-delivery-stream-arn", firehoseARN, "--aws-access-key-id", "AKIAIOSFODNN7EXAMPLE", "--aws-secret-access-key", testSecret},
			target: "firehose", arn: firehoseARN, auth: "creds", who: "AKIAIOSFODNN7EXAMPLE", secretStored: testSecret,
		},
		{
			name:   "cloudwatch logs from a file, description from a flag",
			args:   []string{"--data", "@" + dataFile, "--description", "flags win"},
			target: "cloudwatch_logs", arn: logGroupARN, auth: "role", who: roleARN, description: "flags win",
		},
		{
			name:   "from standard input, the role from a flag",
			stdin:  fmt.Sprintf(`{"target": {"kinesis": {"stream_arn": %q, "auth": {"creds": {"aws_access_key_id": "AKIA", "aws_secret_access_key": "s"}}}}}`, kinesisARN),
			args:   []string{"--data", "-", "--role-arn", roleARN},
			target: "kinesis", arn: kinesisARN, auth: "role", who: roleARN,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.secret != "" {
				t.Setenv("SLUICE_AWS_SECRET_ACCESS_KEY", tc.secret)
			}
			out, errOut, err := e.runIn(tc.stdin, append([]string{"destinations", "create"}, tc.args...)...)
			check.ErrorContains(t, err, "")
			if strings.Contains(out+errOut, testSecret) {
				t.Fatalf("the secret was printed:\nstdout: %s\nstderr: %s", out, errOut)
			}
			whoField := "ROLE_ARN"
			if tc.auth == "creds" {
				whoField = "AWS_ACCESS_KEY_ID"
			}
			for name, want := range map[string]string{"TARGET": tc.target, "ARN": tc.arn, "AUTH": tc.auth, whoField: tc.who, "DESCRIPTION": cmpDash(tc.description), "FORMAT": "json"} {
				if got := field(out, name); got != want {
					t.Errorf("%s = %q, want %q; printed:\n%s", name, got, want, out)
				}
			}
			id := field(out, "ID")
			if !strings.HasPrefix(id, "ed_") {
				t.Fatalf("ID = %q; printed:\n%s", id, out)
			}

			// The secret reached the store, and no answer prints it.
			stored, err := e.stack.Store.GetDestination(t.Context(), e.stack.AccountID, id)
			if err != nil {
				t.Fatal(err)
			}
			if got := stored.Target.Auth(); tc.secretStored != "" && (got.Creds == nil || got.Creds.SecretAccessKey != tc.secretStored) {
				t.Errorf("stored auth %+v, want the secret sent", got.Creds)
			}
			for _, args := range [][]string{{"get", id}, {"get", id, "--json"}, {"list"}, {"list", "--json"}} {
				out, errOut, err := e.run(append([]string{"destinations"}, args...)...)
				check.ErrorContains(t, err, "")
				if strings.Contains(out+errOut, testSecret) {
					t.Fatalf("destinations %s printed the secret:\n%s%s", args, out, errOut)
				}
			}
		})
	}
}

func cmpDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func TestDestinationsListGetUpdateDelete(t *testing.T) {
	e := newCLIEnv(t)
	first := e.mustJSON("destinations", "create", "--kinesis-stream-arn", kinesisARN, "--role-arn", roleARN,
		"--description", "first", "--metadata", `{"team":"edge"}`)
	second := e.mustJSON("destinations", "create", "--cloudwatch-log-group-arn", logGroupARN, "--role-arn", roleARN)
	firstID, secondID := first["id"].(string), second["id"].(string)

	t.Run("list", func(t *testing.T) {
		rows := tableRows(t, e.must("destinations", "list"), "ID", "CREATED_AT", "TARGET", "ARN", "AUTH", "DESCRIPTION")
		want := [][]string{
			{firstID, first["created_at"].(string), "kinesis", kinesisARN, "role", "first"},
			{secondID, second["created_at"].(string), "cloudwatch_logs", logGroupARN, "role", "-"},
		}
		// Newest first, but ids made within a second sort at random.
		byID := func(a, b []string) int { return strings.Compare(a[0], b[0]) }
		slices.SortFunc(rows, byID)
		slices.SortFunc(want, byID)
		if fmt.Sprint(rows) != fmt.Sprint(want) {
			t.Errorf("rows\n%v\nwant\n%v", rows, want)
		}
	})
	t.Run("list --json", func(t *testing.T) {
		page := e.mustJSON("destinations", "list")
		items, _ := page["event_destinations"].([]any)
		if len(items) != 2 || page["next_page_uri"] != nil {
			t.Errorf("list --json printed %v", page)
		}
	})
	t.Run("get", func(t *testing.T) {
		out := e.must("destinations", "get", firstID)
		for name, want := range map[string]string{"ID": firstID, "DESCRIPTION": "first", "METADATA": `{"team":"edge"}`, "TARGET": "kinesis", "ROLE_ARN": roleARN} {
			if got := field(out, name); got != want {
				t.Errorf("%s = %q, want %q; printed:\n%s", name, got, want, out)
			}
		}
		if got := e.mustJSON("destinations", "get", firstID); fmt.Sprint(got) != fmt.Sprint(first) {
			t.Errorf("get --json printed\n%v\nwant what create printed\n%v", got, first)
		}
	})
	t.Run("update --description changes only the description", func(t *testing.T) {
		updated := e.mustJSON("destinations", "update", firstID, "--description", "renamed")
		first["description"] = "renamed"
		if fmt.Sprint(updated) != fmt.Sprint(first) {
			t.Errorf("update printed\n%v\nwant\n%v", updated, first)
		}
	})
	t.Run("update the ARN keeps the auth", func(t *testing.T) {
		other := strings.Replace(kinesisARN, "stream/events", "stream/other", 1)
		out := e.must("destinations", "update", firstID, "--kinesis-stream-arn", other)
		if field(out, "ARN") != other || field(out, "ROLE_ARN") != roleARN || field(out, "DESCRIPTION") != "renamed" {
			t.Errorf("update printed:\n%s", out)
		}
	})
	t.Run("update the auth keeps the ARN and the stored secret", func(t *testing.T) {
		t.Setenv("SLUICE_AWS_SECRET_ACCESS_KEY", testSecret)
		out, errOut, err := e.run("destinations", "update", secondID, "--aws-access-key-id", "AKIAOTHER")
		check.ErrorContains(t, err, "")
		if field(out, "ARN") != logGroupARN || field(out, "AWS_ACCESS_KEY_ID") != "AKIAOTHER" || strings.Contains(out+errOut, testSecret) {
			t.Errorf("update printed:\n%s%s", out, errOut)
		}
		t.Setenv("SLUICE_AWS_SECRET_ACCESS_KEY", "")
		e.must("destinations", "update", secondID, "--cloudwatch-log-group-arn", logGroupARN+"-2")
		stored, err := e.stack.Store.GetDestination(t.Context(), e.stack.AccountID, secondID)
		if err != nil {
			t.Fatal(err)
		}
		if c := stored.Target.Auth().Creds; c == nil || c.AccessKeyID != "AKIAOTHER" || c.SecretAccessKey != testSecret {
			t.Errorf("stored creds %+v, want AKIAOTHER with the secret sent before", c)
		}
	})
	t.Run("delete", func(t *testing.T) {
		out, errOut, err := e.run("destinations", "delete", firstID, secondID)
		check.ErrorContains(t, err, "")
		if out != "" || errOut != fmt.Sprintf("deleted %s\ndeleted %s\n", firstID, secondID) {
			t.Errorf("delete printed %q and %q on stderr", out, errOut)
		}
		rows := tableRows(t, e.must("destinations", "list"), "ID", "CREATED_AT", "TARGET", "ARN", "AUTH", "DESCRIPTION")
		if len(rows) != 0 {
			t.Errorf("list after delete: %v", rows)
		}
	})
}

// operationID matches the operation id at the end of an error of the API.
var operationID = regexp.MustCompile(`\(operation op_[0-9A-Za-z]{27}\)$`)

func TestDestinationsAPIErrors(t *testing.T) {
	e := newCLIEnv(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"malformed ARN", []string{"create", "--kinesis-stream-arn", "arn:aws:kinesis:nowhere", "--role-arn", roleARN},
			[]string{"ERR_SLUICE_333 (400): ", "[details.field=target.kinesis.stream_arn]"}},
		{"unknown field", []string{"create", "--data", `{"colour": "blue"}`, "--kinesis-stream-arn", kinesisARN, "--role-arn", roleARN},
			[]string{"ERR_SLUICE_331 (400): unknown field \"colour\""}},
		{"no such destination", []string{"get", "ed_2ZfXq6s0T1o5H4uV3mXbJ0kQ8wC"}, []string{"ERR_SLUICE_420 (404): "}},
		{"bad before_id", []string{"list", "--before-id", "nope"}, []string{"ERR_SLUICE_334 (400): ", "[details.parameter=before_id]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := e.run(append([]string{"destinations"}, tc.args...)...)
			for _, want := range tc.want {
				check.ErrorContains(t, err, want)
			}
			if !operationID.MatchString(err.Error()) {
				t.Errorf("error %q does not end with the operation id", err)
			}
		})
	}
	_, _, err := runSluice(t, "", "destinations", "list", "--api-url", e.stack.URL, "--api-key", "sk_wrong_key_of_nobody")
	check.ErrorContains(t, err, "ERR_SLUICE_211 (401): ")
}

func TestDestinationsListPages(t *testing.T) {
	e := newCLIEnv(t)
	for i := range 7 {
		e.must("destinations", "create", "--kinesis-stream-arn", kinesisARN, "--role-arn", roleARN, "--description", fmt.Sprint("d", i))
	}
	columns := []string{"ID", "CREATED_AT", "TARGET", "ARN", "AUTH", "DESCRIPTION"}
	listedIDs := func(rows [][]string) []string {
		var got []string
		for _, row := range rows {
			got = append(got, row[0])
		}
		return got
	}
	// The API's order, in one page: ids made within the same second are
	// not in the order they were made.
	ids := listedIDs(tableRows(t, e.must("destinations", "list"), columns...))
	if len(ids) != 7 {
		t.Fatalf("listed %d destinations, want 7", len(ids))
	}

	out, errOut, err := e.run("destinations", "list", "--limit", "3")
	check.ErrorContains(t, err, "")
	if got := listedIDs(tableRows(t, out, columns...)); fmt.Sprint(got) != fmt.Sprint(ids[:3]) {
		t.Errorf("first page %v, want %v", got, ids[:3])
	}
	if want := "--before-id " + ids[2]; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q, want the hint %q", errOut, want)
	}

	out = e.must("destinations", "list", "--limit", "3", "--before-id", ids[2])
	if got := listedIDs(tableRows(t, out, columns...)); fmt.Sprint(got) != fmt.Sprint(ids[3:6]) {
		t.Errorf("second page %v, want %v", got, ids[3:6])
	}

	out, errOut, err = e.run("destinations", "list", "--limit", "3", "--all")
	check.ErrorContains(t, err, "")
	if got := listedIDs(tableRows(t, out, columns...)); fmt.Sprint(got) != fmt.Sprint(ids) || errOut != "" {
		t.Errorf("--all listed %v (stderr %q), want %v", got, errOut, ids)
	}

	all := e.mustJSON("destinations", "list", "--limit", "3", "--all")
	items, _ := all["event_destinations"].([]any)
	var got []string
	for _, item := range items {
		got = append(got, item.(map[string]any)["id"].(string))
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) || all["next_page_uri"] != nil || !strings.Contains(all["uri"].(string), "limit=3") {
		t.Errorf("--all --json printed %v", all)
	}
}
