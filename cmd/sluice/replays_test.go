package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
)

// TestServeReplay runs sluice serve --dev, publishes an event, replays the
// subscription with the CLI and waits for the replay to be done.
func TestServeReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sluice serve")
	}
	const token = "sk_test_replay_0123456789abcdef"
	clearSluiceEnv(t)
	t.Setenv(bootstrapKeyEnv, token)
	p := startServeInProcess(t, "--dev", "--dev-aws-listen", "127.0.0.1:0")
	waitReady(t, p.url)
	cli := func(args ...string) (string, error) {
		t.Helper()
		out, errOut, err := runSluice(t, "", append(args, "--api-url", p.url, "--api-key", token)...)
		if err != nil {
			return errOut + err.Error(), err
		}
		return out, nil
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
	var sub struct{ ID string }
	if err := json.Unmarshal([]byte(body), &sub); err != nil {
		t.Fatal(err)
	}
	status, body = request(t, http.MethodPost, p.url+"/events", token,
		`[{"event_type": "http_request_complete.v0", "object": {"conn": {"server_port": 443}}}]`)
	if status != http.StatusAccepted {
		t.Fatalf("publishing: %d %s", status, body)
	}

	if out, err := cli("subscriptions", "replay", sub.ID, "--since", "yesterday"); err == nil || !strings.Contains(out, "--since") {
		t.Fatalf("replay --since yesterday: %v %s, want an error naming --since", err, out)
	}
	out, err := cli("subscriptions", "replay", sub.ID, "--since", "1h", "--json")
	if err != nil {
		t.Fatalf("replay: %v %s", err, out)
	}
	var replay struct{ ID, State string }
	if err := json.Unmarshal([]byte(out), &replay); err != nil || replay.State != "running" {
		t.Fatalf("replay answer %s: %v", out, err)
	}
	if !strings.Contains(out, `"events_replayed":0`) || !strings.Contains(out, `"events_total":1`) {
		t.Fatalf("replay answer %s: want 0 of 1 event replayed", out)
	}
	check.Eventually(t, 30*time.Second, "the replay done", func() (string, bool) {
		out, err := cli("subscriptions", "replays", sub.ID, replay.ID)
		if err != nil {
			t.Fatalf("replays: %v %s", err, out)
		}
		return out, strings.Contains(out, "done")
	})
	out, err = cli("subscriptions", "replays", sub.ID)
	if err != nil || !strings.Contains(out, replay.ID) || !strings.Contains(out, "STATE") || !strings.Contains(out, "1 of 1") {
		t.Fatalf("replays list: %v\n%s", err, out)
	}

	// --wait shows the progress of the replay, and the replay once done.
	out, errOut, err := runSluice(t, "", "subscriptions", "replay", sub.ID, "--since", "1h", "--wait", "--interval", "50ms", "--timeout", "30s",
		"--api-url", p.url, "--api-key", token)
	if err != nil {
		t.Fatalf("replay --wait: %v\n%s\n%s", err, errOut, p.logs)
	}
	if !strings.Contains(errOut, ": 0 of 1 events (0%)\n") || !strings.HasSuffix(errOut, ": 1 of 1 events (100%), done\n") {
		t.Fatalf("replay --wait showed:\n%s", errOut)
	}
	if !strings.Contains(out, "done") || !strings.Contains(out, "1 of 1") {
		t.Fatalf("replay --wait printed:\n%s", out)
	}
}
