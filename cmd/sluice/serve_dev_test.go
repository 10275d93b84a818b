package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeDev runs sluice serve --dev as a newcomer would: destinations
// of all three kinds with ARNs nobody created and a role nobody can
// assume, one subscription, a few events, then sluice tail --emulator
// reads each destination back.
func TestServeDev(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve --dev")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	const token = "sk_serve_dev_test_0123456789"
	p := startServe(t, bin, t.TempDir(), "SLUICE_BOOTSTRAP_API_KEY="+token, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0")
	endpoint := p.logAttr(t, "dev mode: every destination delivers to the AWS emulator", "aws_endpoint")

	arns := []string{
		"arn:aws:kinesis:eu-west-1:123456789012:stream/edge",
		"arn:aws:firehose:eu-west-1:123456789012:deliverystream/edge",
		"arn:aws:logs:eu-west-1:123456789012:log-group:/sluice/edge",
	}
	targets := []string{
		`{"kinesis": {"stream_arn": %q, "auth": {"role": {"role_arn": "arn:aws:iam::123456789012:role/sluice"}}}}`,
		`{"firehose": {"delivery_stream_arn": %q, "auth": {"role": {"role_arn": "arn:aws:iam::123456789012:role/sluice"}}}}`,
		`{"cloudwatch_logs": {"log_group_arn": %q, "auth": {"role": {"role_arn": "arn:aws:iam::123456789012:role/sluice"}}}}`,
	}
	var ids []string
	for i, arn := range arns {
		status, body := request(t, http.MethodPost, p.url+"/event_destinations", token, fmt.Sprintf(`{"target": `+targets[i]+`}`, arn))
		if status != http.StatusCreated {
			t.Fatalf("creating a destination: %d %s", status, body)
		}
		var d struct{ ID string }
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, `"`+d.ID+`"`)
	}
	status, body := request(t, http.MethodPost, p.url+"/event_subscriptions", token,
		`{"sources": [{"type": "http_request_complete.v0"}], "destination_ids": [`+strings.Join(ids, ",")+`]}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the subscription: %d %s", status, body)
	}

	// Publish an event a second until one has reached every destination:
	// the routes start within a second or two.
	deadline := time.Now().Add(30 * time.Second)
	var published []string
	for {
		id := fmt.Sprintf("ev_%027d", len(published)+1)
		status, body := request(t, http.MethodPost, p.url+"/events", token,
			`[{"event_id": "`+id+`", "event_type": "http_request_complete.v0", "object": {"conn": {"server_port": 443}}}]`)
		if status != http.StatusAccepted {
			t.Fatalf("publishing: %d %s", status, body)
		}
		published = append(published, id)
		reached := 0
		for _, arn := range arns {
			out, _, err := runSluice(t, "", "tail", "--emulator", endpoint, arn, "--since", "5m", "--follow=false")
			switch {
			case err != nil && (strings.Contains(err.Error(), "not found") || strings.Contains(err.Error(), "ResourceNotFoundException")):
				continue // made by the first events delivered to it
			case err != nil:
				t.Fatalf("sluice tail %s: %v", arn, err)
			}
			if strings.Contains(out, `"event_id":"`+published[0]) || strings.Contains(out, id) {
				reached++
			}
		}
		if reached == len(arns) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s, %d of %d destinations hold an event:\n%s", reached, len(arns), p.tail())
		}
		time.Sleep(time.Second) // publishing the next event, one a second
	}
}
