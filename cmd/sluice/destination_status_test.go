package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeDevDestinationStatusAndTest runs sluice serve --dev and checks
// the wiring of the destination status and test commands: a worker's
// writes reach the status through the SLUICE_STATUS bucket, and a test
// write goes to the emulator.
func TestServeDevDestinationStatusAndTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve --dev")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	const token = "sk_serve_dev_status_0123456789"
	p := startServe(t, bin, t.TempDir(), "SLUICE_BOOTSTRAP_API_KEY="+token, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0")
	cli := func(args ...string) (string, error) {
		out, errOut, err := runSluice(t, "", append(args, "--api-url", p.url, "--api-key", token)...)
		if err != nil {
			t.Logf("sluice %s: %s", strings.Join(args, " "), errOut)
		}
		return out, err
	}
	status, body := request(t, http.MethodPost, p.url+"/event_destinations", token,
		`{"target": {"kinesis": {"stream_arn": "arn:aws:kinesis:eu-west-1:123456789012:stream/status", "auth": {"role": {"role_arn": "arn:aws:iam::123456789012:role/sluice"}}}}}`)
	if status != http.StatusCreated {
		t.Fatalf("creating a destination: %d %s", status, body)
	}
	var d struct{ ID string }
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}

	out, err := cli("destinations", "test", d.ID)
	if err != nil || field(out, "RESULT") != "delivered" {
		t.Fatalf("sluice destinations test: %v\n%s", err, out)
	}

	status, body = request(t, http.MethodPost, p.url+"/event_subscriptions", token,
		`{"sources": [{"type": "http_request_complete.v0"}], "destination_ids": ["`+d.ID+`"]}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the subscription: %d %s", status, body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := request(t, http.MethodPost, p.url+"/events", token,
			`[{"event_type": "http_request_complete.v0", "object": {"conn": {"server_port": 443}}}]`)
		if status != http.StatusAccepted {
			t.Fatalf("publishing: %d %s", status, body)
		}
		out, err := cli("destinations", "status", d.ID)
		if err != nil {
			t.Fatalf("sluice destinations status: %v", err)
		}
		if field(out, "STATE") == "ok" && field(out, "LAST_SUCCESS_AT") != "-" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no success in the status within 30 s:\n%s", out)
		}
		time.Sleep(500 * time.Millisecond) // a running server's state, polled with a deadline
	}
}
