package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeDevCredentialAuditEvents runs sluice serve --dev, subscribes a
// destination to the tunnel_credential_* kinds, and creates, changes and
// deletes credentials until the three audit events of one credential are
// read back from the emulator, each with its token null.
func TestServeDevCredentialAuditEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve --dev")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	const token = "sk_serve_dev_credentials_0123456789"
	p := startServe(t, bin, t.TempDir(), "SLUICE_BOOTSTRAP_API_KEY="+token, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0")
	p.logAttr(t, "dev mode: every destination delivers to the AWS emulator", "aws_endpoint")

	status, body := request(t, http.MethodPost, p.url+"/event_destinations", token,
		`{"target": {"kinesis": {"stream_arn": "arn:aws:kinesis:eu-west-1:123456789012:stream/audit", "auth": {"role": {"role_arn": "arn:aws:iam::123456789012:role/sluice"}}}}}`)
	if status != http.StatusCreated {
		t.Fatalf("creating a destination: %d %s", status, body)
	}
	var dest struct{ ID string }
	if err := json.Unmarshal([]byte(body), &dest); err != nil {
		t.Fatal(err)
	}
	status, body = request(t, http.MethodPost, p.url+"/event_subscriptions", token,
		`{"sources": [{"type": "tunnel_credential_created.v0"}, {"type": "tunnel_credential_updated.v0"}, {"type": "tunnel_credential_deleted.v0"}], "destination_ids": ["`+dest.ID+`"]}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the subscription: %d %s", status, body)
	}

	// A credential's life a second until one has all three events
	// delivered: the route starts within a second or two.
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		status, body := request(t, http.MethodPost, p.url+"/credentials", token, `{"acl": ["bind:*.example.com"]}`)
		if status != http.StatusCreated {
			t.Fatalf("creating a credential: %d %s", status, body)
		}
		var c struct{ ID, Token string }
		if err := json.Unmarshal([]byte(body), &c); err != nil || c.Token == "" {
			t.Fatalf("created %s: %v", body, err)
		}
		if status, body := request(t, http.MethodPatch, p.url+"/credentials/"+c.ID, token, fmt.Sprintf(`{"description": "try %d"}`, i)); status != http.StatusOK {
			t.Fatalf("updating: %d %s", status, body)
		}
		if status, body := request(t, http.MethodDelete, p.url+"/credentials/"+c.ID, token, ""); status != http.StatusNoContent {
			t.Fatalf("deleting: %d %s", status, body)
		}
		time.Sleep(time.Second)
		out, err := tailWithoutAWS(t, bin, p.url, token, dest.ID, "--since", "5m", "--follow=false", "--json")
		if err != nil && !strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "ResourceNotFoundException") {
			t.Fatalf("sluice tail: %v", err)
		}
		if strings.Contains(out, c.Token) {
			t.Fatalf("a delivered event holds the token:\n%s", out)
		}
		kinds := map[string]bool{}
		for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
			var ev struct {
				Type   string `json:"event_type"`
				Object map[string]json.RawMessage
			}
			if json.Unmarshal([]byte(line), &ev) != nil || string(ev.Object["id"]) != `"`+c.ID+`"` {
				continue
			}
			if string(ev.Object["token"]) != "null" || string(ev.Object["acl"]) != `["bind:*.example.com"]` {
				t.Fatalf("delivered %s", line)
			}
			kinds[ev.Type] = true
		}
		if kinds["tunnel_credential_created.v0"] && kinds["tunnel_credential_updated.v0"] && kinds["tunnel_credential_deleted.v0"] {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s, the events of %s delivered are %v:\n%s\n%s", c.ID, kinds, out, p.tail())
		}
	}
}
