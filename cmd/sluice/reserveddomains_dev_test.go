package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
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

	created := map[string]string{} // the domain as each create answered it, by id
	events, id := auditDelivered(t, bin, p, token, [3]string{"domain_created.v0", "domain_updated.v0", "domain_deleted.v0"}, func(int) string {
		status, body := request(t, http.MethodPost, p.url+"/reserved_domains", token, `{"domain": "*.edge.example.com"}`)
		if status != http.StatusCreated {
			t.Fatalf("reserving: %d %s", status, body)
		}
		var d struct{ ID string }
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatal(err)
		}
		created[d.ID] = strings.TrimSuffix(body, "\n")
		if status, body := request(t, http.MethodPatch, p.url+"/reserved_domains/"+d.ID, token, `{"description": "edge"}`); status != http.StatusOK {
			t.Fatalf("updating: %d %s", status, body)
		}
		if status, body := request(t, http.MethodDelete, p.url+"/reserved_domains/"+d.ID, token, ""); status != http.StatusNoContent {
			t.Fatalf("deleting: %d %s", status, body)
		}
		return d.ID
	})
	if ev := events["domain_created.v0"]; !strings.Contains(ev, `"object":`+created[id]) {
		t.Fatalf("the delivered domain_created.v0 does not hold the domain as the API answered it:\n%s\nwant the object %s", ev, created[id])
	}
}
