package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestServeDevCredentialAuditEvents runs sluice serve --dev, subscribes a
// destination to the tunnel_credential_* kinds, and creates, changes and
// deletes credentials until the three audit events of one credential are
// read back from the emulator, each with its token null (see
// auditDelivered).
func TestServeDevCredentialAuditEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve --dev")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	const token = "sk_serve_dev_credentials_0123456789"
	p := startServe(t, bin, t.TempDir(), "SLUICE_BOOTSTRAP_API_KEY="+token, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0")
	p.logAttr(t, "dev mode: every destination delivers to the AWS emulator", "aws_endpoint")

	tokens := map[string]string{} // the token each create answered, by id
	events, id := auditDelivered(t, bin, p, token, [3]string{"tunnel_credential_created.v0", "tunnel_credential_updated.v0", "tunnel_credential_deleted.v0"}, func(i int) string {
		status, body := request(t, http.MethodPost, p.url+"/credentials", token, `{"acl": ["bind:*.example.com"]}`)
		if status != http.StatusCreated {
			t.Fatalf("creating a credential: %d %s", status, body)
		}
		var c struct{ ID, Token string }
		if err := json.Unmarshal([]byte(body), &c); err != nil || c.Token == "" {
			t.Fatalf("created %s: %v", body, err)
		}
		tokens[c.ID] = c.Token
		if status, body := request(t, http.MethodPatch, p.url+"/credentials/"+c.ID, token, fmt.Sprintf(`{"description": "try %d"}`, i)); status != http.StatusOK {
			t.Fatalf("updating: %d %s", status, body)
		}
		if status, body := request(t, http.MethodDelete, p.url+"/credentials/"+c.ID, token, ""); status != http.StatusNoContent {
			t.Fatalf("deleting: %d %s", status, body)
		}
		return c.ID
	})
	for kind, line := range events {
		var ev struct{ Object map[string]json.RawMessage }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, tokens[id]) || string(ev.Object["token"]) != "null" || string(ev.Object["acl"]) != `["bind:*.example.com"]` {
			t.Fatalf("delivered %s: %s", kind, line)
		}
	}
}
