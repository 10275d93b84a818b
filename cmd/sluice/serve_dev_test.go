package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestServeDev runs sluice serve --dev as a newcomer would: destinations
// of all three kinds with ARNs nobody created and a role nobody can
// assume, one subscription, a few events, then sluice tail, on a machine
// without AWS credentials and given no flag but SLUICE_API_URL and
// SLUICE_API_KEY, reads each destination back from the emulator, by id as
// the README does, and by ARN.
func TestServeDev(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve --dev")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	const token = "sk_serve_dev_test_0123456789"
	p := startServe(t, bin, t.TempDir(), "SLUICE_BOOTSTRAP_API_KEY="+token, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0")
	p.logAttr(t, "dev mode: every destination delivers to the AWS emulator", "aws_endpoint")

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
	var ids, quoted []string
	for i, arn := range arns {
		status, body := request(t, http.MethodPost, p.url+"/event_destinations", token, fmt.Sprintf(`{"target": `+targets[i]+`}`, arn))
		if status != http.StatusCreated {
			t.Fatalf("creating a destination: %d %s", status, body)
		}
		var d struct{ ID string }
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
		quoted = append(quoted, `"`+d.ID+`"`)
	}
	status, body := request(t, http.MethodPost, p.url+"/event_subscriptions", token,
		`{"sources": [{"type": "http_request_complete.v0"}], "destination_ids": [`+strings.Join(quoted, ",")+`]}`)
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
		for _, target := range ids {
			out, err := tailWithoutAWS(t, bin, p.url, token, target, "--since", "5m", "--follow=false", "--json")
			switch {
			case err != nil && (strings.Contains(err.Error(), "not found") || strings.Contains(err.Error(), "ResourceNotFoundException")):
				continue // made by the first events delivered to it
			case err != nil:
				t.Fatalf("sluice tail %s: %v", target, err)
			}
			if strings.Contains(out, `"event_id":"`+published[0]) || strings.Contains(out, id) {
				reached++
			}
		}
		if reached == len(arns) {
			// The README's own line, and an ARN, read from the emulator
			// too; --emulator still chooses another.
			out, err := tailWithoutAWS(t, bin, p.url, token, ids[0], "--since", "1h", "--follow=false", "--pretty")
			if err != nil || !strings.Contains(out, `"event_type": "http_request_complete.v0"`) {
				t.Fatalf("sluice tail %s --since 1h --follow=false --pretty: %v\n%s", ids[0], err, out)
			}
			for _, arn := range arns {
				if out, err := tailWithoutAWS(t, bin, p.url, token, arn, "--since", "5m", "--follow=false"); err != nil || !strings.Contains(out, published[0]) {
					t.Fatalf("sluice tail %s: %v\n%s", arn, err, out)
				}
			}
			if _, err := tailWithoutAWS(t, bin, p.url, token, arns[0], "--emulator", "http://127.0.0.1:1", "--follow=false"); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
				t.Fatalf("sluice tail --emulator http://127.0.0.1:1: %v, want it to read from there", err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s, %d of %d destinations hold an event:\n%s", reached, len(arns), p.tail())
		}
		time.Sleep(time.Second) // publishing the next event, one a second
	}
}

// tailWithoutAWS runs sluice tail with the arguments as a newcomer without
// AWS credentials would, with only SLUICE_API_URL and SLUICE_API_KEY set,
// and returns its standard output, or an error with its standard error.
func tailWithoutAWS(t *testing.T, bin, apiURL, token string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"tail"}, args...)...)
	dir := t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"SLUICE_API_URL=" + apiURL, "SLUICE_API_KEY=" + token,
		// No AWS credentials anywhere, and no waiting on an instance role.
		"AWS_SHARED_CREDENTIALS_FILE=" + dir + "/credentials", "AWS_CONFIG_FILE=" + dir + "/config", "AWS_EC2_METADATA_DISABLED=true"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, stderr.String())
	}
	return stdout.String(), nil
}
