package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
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
	for deadline := time.Now().Add(30 * time.Second); ; {
		out, err := cli("subscriptions", "replays", sub.ID, replay.ID)
		if err != nil {
			t.Fatalf("replays: %v %s", err, out)
		}
		if strings.Contains(out, "done") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replay not done within 30 s:\n%s\n%s", out, p.logs)
		}
		time.Sleep(200 * time.Millisecond) // polling the API, with a deadline
	}
	out, err = cli("subscriptions", "replays", sub.ID)
	if err != nil || !strings.Contains(out, replay.ID) || !strings.Contains(out, "STATE") {
		t.Fatalf("replays list: %v\n%s", err, out)
	}
}
