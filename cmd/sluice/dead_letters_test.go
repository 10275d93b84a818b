package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/check"
)

// TestServeDeadLetters runs sluice serve --dev, dead-letters events
// CloudWatch Logs refuses (older than 14 days), lists them and redrives
// them with the CLI: they fail again, stay and are reported. It then
// discards them with the CLI, one by id and the others by class, until
// the destination's status counts none.
func TestServeDeadLetters(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sluice serve")
	}
	const token = "sk_test_dead_letters_0123456789"
	clearSluiceEnv(t)
	t.Setenv(bootstrapKeyEnv, token)
	p := startServeInProcess(t, "--dev", "--dev-aws-listen", "127.0.0.1:0")
	waitReady(t, p.url)
	cli := func(args ...string) string {
		t.Helper()
		out, errOut, err := runSluice(t, "", append(args, "--api-url", p.url, "--api-key", token)...)
		if err != nil {
			t.Fatalf("sluice %s: %v\n%s", strings.Join(args, " "), err, errOut)
		}
		return out
	}
	status, body := request(t, http.MethodPost, p.url+"/event_destinations", token,
		`{"target": {"cloudwatch_logs": {"log_group_arn": "`+logGroupARN+`", "auth": {"role": {"role_arn": "`+roleARN+`"}}}}}`)
	if status != http.StatusCreated {
		t.Fatalf("creating a destination: %d %s", status, body)
	}
	var dest struct{ ID string }
	if err := json.Unmarshal([]byte(body), &dest); err != nil {
		t.Fatal(err)
	}
	status, body = request(t, http.MethodPost, p.url+"/event_subscriptions", token,
		`{"sources": [{"type": "http_request_complete.v0"}], "destination_ids": ["`+dest.ID+`"]}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the subscription: %d %s", status, body)
	}

	// Publish an event of 20 days ago a second until one is dead-lettered:
	// the route starts within a second or two.
	old := time.Now().Add(-20 * 24 * time.Hour).UTC().Format(time.RFC3339)
	var page struct {
		DeadLetters []apiwire.DeadLetter `json:"dead_letters"`
	}
	for deadline := time.Now().Add(30 * time.Second); len(page.DeadLetters) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no dead letter within 30 s:\n%s", p.logs)
		}
		status, body := request(t, http.MethodPost, p.url+"/events", token,
			`[{"event_type": "http_request_complete.v0", "event_timestamp": "`+old+`", "object": {"conn": {"server_port": 443}}}]`)
		if status != http.StatusAccepted {
			t.Fatalf("publishing: %d %s", status, body)
		}
		time.Sleep(time.Second) // publishing the next event, one a second
		if err := json.Unmarshal([]byte(cli("destinations", "dead-letters", dest.ID, "--all", "--json")), &page); err != nil {
			t.Fatal(err)
		}
	}
	d := page.DeadLetters[0]
	if d.Class != "permanent" || d.Message == "" || !strings.HasPrefix(d.ID, "dl_") || !strings.Contains(string(d.Event), `"event_timestamp"`) {
		t.Fatalf("dead letter %+v", d)
	}
	if table := cli("destinations", "dead-letters", dest.ID); !strings.Contains(table, d.ID) || !strings.Contains(table, "CLASS") {
		t.Fatalf("dead-letters table:\n%s", table)
	}

	var result apiwire.Redrive
	if err := json.Unmarshal([]byte(cli("destinations", "redrive", dest.ID, "--json")), &result); err != nil {
		t.Fatal(err)
	}
	if result.Redriven != 0 || result.Failed == 0 || result.Remaining < result.Failed || result.Failures[0].Class != "permanent" {
		t.Fatalf("redrive of events still too old: %+v", result)
	}
	out := strings.Join(strings.Fields(cli("destinations", "redrive", dest.ID, "--id", d.ID, "--id", "dl_999999")), " ")
	for _, want := range []string{"REDRIVEN 0 FAILED 2", d.ID + " permanent LogEventTooOld", "dl_999999 unknown_id"} {
		if !strings.Contains(out, want) {
			t.Fatalf("redrive output lacks %q:\n%s", want, out)
		}
	}

	// Discard the first by id: a second delete of it finds nothing.
	if out := strings.Fields(cli("destinations", "delete-dead-letters", dest.ID, "--id", d.ID)); !slices.Equal(out, []string{"DELETED", "1"}) {
		t.Fatalf("delete-dead-letters --id %s printed %q, want DELETED 1", d.ID, out)
	}
	_, errOut, err := runSluice(t, "", "destinations", "delete-dead-letters", dest.ID, "--id", d.ID, "--api-url", p.url, "--api-key", token)
	if err == nil || !strings.Contains(err.Error()+errOut, "has no dead letter") {
		t.Fatalf("deleting %s again: %v, %s; want an error saying the destination has no such letter", d.ID, err, errOut)
	}
	if _, errOut, err := runSluice(t, "", "destinations", "delete-dead-letters", dest.ID, "--api-url", p.url, "--api-key", token); err == nil || !strings.Contains(err.Error()+errOut, "--all") {
		t.Fatalf("delete-dead-letters without a choice of letters: %v, %s; want an error naming --all", err, errOut)
	}
	// The others by class, again while the last events published are
	// dead-lettered: the status then counts none.
	check.Eventually(t, 30*time.Second, "no dead letter left", func() (string, bool) {
		var deleted apiwire.DeadLetterDeletion
		if err := json.Unmarshal([]byte(cli("destinations", "delete-dead-letters", dest.ID, "--class", "permanent", "--json")), &deleted); err != nil {
			t.Fatal(err)
		}
		var status apiwire.DestinationStatus
		if err := json.Unmarshal([]byte(cli("destinations", "status", dest.ID, "--json")), &status); err != nil {
			t.Fatal(err)
		}
		return cli("destinations", "dead-letters", dest.ID), deleted.Remaining == 0 && status.EventsDeadLettered == 0
	})
}
