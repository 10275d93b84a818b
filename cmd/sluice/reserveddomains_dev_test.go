package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestReservedDomainAuditEventsDelivered runs sluice serve --dev, subscribes
// a destination to domain_created.v0, domain_updated.v0 and
// domain_deleted.v0, reserves, changes and deletes a domain, and reads the
// three events back from the destination with sluice tail: sluice's own
// audit events delivered end to end, the object the domain as the API
// answered it.
func TestReservedDomainAuditEventsDelivered(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve --dev")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	const token = "sk_domains_dev_test_0123456789"
	p := startServe(t, bin, t.TempDir(), "SLUICE_BOOTSTRAP_API_KEY="+token, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0")

	status, body := request(t, http.MethodPost, p.url+"/event_destinations", token,
		`{"target": {"kinesis": {"stream_arn": "arn:aws:kinesis:eu-west-1:123456789012:stream/domains", "auth": {"role": {"role_arn": "arn:aws:iam::123456789012:role/sluice"}}}}}`)
	if status != http.StatusCreated {
		t.Fatalf("creating a destination: %d %s", status, body)
	}
	var dest struct{ ID string }
	if err := json.Unmarshal([]byte(body), &dest); err != nil {
		t.Fatal(err)
	}
	status, body = request(t, http.MethodPost, p.url+"/event_subscriptions", token,
		`{"sources": [{"type": "domain_created.v0"}, {"type": "domain_updated.v0"}, {"type": "domain_deleted.v0"}], "destination_ids": ["`+dest.ID+`"]}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the subscription: %d %s", status, body)
	}
	time.Sleep(2 * time.Second) // the route starts within a second or two

	status, created := request(t, http.MethodPost, p.url+"/reserved_domains", token, `{"domain": "*.edge.example.com"}`)
	if status != http.StatusCreated {
		t.Fatalf("reserving: %d %s", status, created)
	}
	var d struct{ ID string }
	if err := json.Unmarshal([]byte(created), &d); err != nil {
		t.Fatal(err)
	}
	if status, body := request(t, http.MethodPatch, p.url+"/reserved_domains/"+d.ID, token, `{"description": "edge"}`); status != http.StatusOK {
		t.Fatalf("updating: %d %s", status, body)
	}
	if status, body := request(t, http.MethodDelete, p.url+"/reserved_domains/"+d.ID, token, ""); status != http.StatusNoContent {
		t.Fatalf("deleting: %d %s", status, body)
	}

	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := tailWithoutAWS(t, bin, p.url, token, dest.ID, "--since", "5m", "--follow=false", "--json")
		if err == nil && strings.Contains(out, `"domain_created.v0"`) && strings.Contains(out, `"domain_updated.v0"`) && strings.Contains(out, `"domain_deleted.v0"`) {
			if !strings.Contains(out, `"object":`+strings.TrimSuffix(created, "\n")) {
				t.Fatalf("the delivered domain_created.v0 does not hold the domain as the API answered it:\n%s\nwant the object %s", out, created)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the destination holds: %v\n%s\n%s", err, out, p.tail())
		}
		time.Sleep(time.Second)
	}
}
