package store_test

import (
	"testing"

	"github.com/sluicehq/sluice/internal/store"
)

// TestAgentIngressOwner: the connection names of an account's agent
// ingress belong to it; a reserved domain's names, another name under
// the ingress and names of no ingress belong to none.
func TestAgentIngressOwner(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	if _, err := e.store.CreateAgentIngress(e.ctx, account.ID, store.AgentIngress{Domain: "ingress.a-corp.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateReservedDomain(e.ctx, other.ID, store.ReservedDomain{Domain: "app.b-corp.com"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host  string
		owner string
	}{
		{"tunnel.us.ingress.a-corp.com", account.ID},
		{"TUNNEL.eu.Ingress.A-Corp.com.", account.ID},
		{"ingress.a-corp.com", ""},
		{"tunnel.us.app.b-corp.com", ""},
		{"tunnel.us.example.org", ""},
		{"tunnel.ingress.a-corp.com", ""},
	} {
		owner, ok, err := e.store.AgentIngressOwner(e.ctx, tc.host)
		if err != nil {
			t.Fatalf("%s: %v", tc.host, err)
		}
		if owner != tc.owner || ok != (tc.owner != "") {
			t.Errorf("AgentIngressOwner(%s) = %q, %v; want %q", tc.host, owner, ok, tc.owner)
		}
	}
}
