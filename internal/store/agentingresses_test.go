package store_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestAgentIngressLifecycle creates, reads, lists, changes and deletes an
// agent ingress: its domain in lower case, its policy's defaults and the
// start of its provisioning, stored as its JSON with its domain's index
// key (one across accounts), which the delete removes; another account's
// id is not found; the domain cannot be changed.
func TestAgentIngressLifecycle(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")

	a, err := e.store.CreateAgentIngress(e.ctx, account.ID, store.AgentIngress{
		ID: "agin_ignored", AccountID: other.ID, Description: "edge", Metadata: `{"env":"prod"}`,
		Domain: "Ingress.Example.COM.", CertificatePolicy: &store.CertificatePolicy{},
	})
	if err != nil {
		t.Fatalf("CreateAgentIngress: %v", err)
	}
	if schemas.CheckID(schemas.PrefixAgentIngress, a.ID) != nil || a.AccountID != account.ID || a.Domain != "ingress.example.com" ||
		a.CertificatePolicy == nil || *a.CertificatePolicy != (store.CertificatePolicy{Authority: "letsencrypt", PrivateKeyType: "rsa"}) ||
		a.ProvisioningSince == nil || a.CreatedAt.IsZero() {
		t.Fatalf("created %+v; want an agin_ id of the account, the domain in lower case, letsencrypt/rsa, provisioning", a)
	}
	raw := e.rawEntries(t)
	want, _ := json.Marshal(a)
	if got := raw["agent_ingresses."+account.ID+"."+a.ID]; got != string(want) {
		t.Fatalf("stored %s, want %s", got, want)
	}
	if n := countPrefix(raw, "agent_ingress_domains."); n != 1 {
		t.Fatalf("%d domain index keys, want 1", n)
	}
	if got, err := e.store.GetAgentIngress(e.ctx, account.ID, a.ID); err != nil || got.Domain != a.Domain {
		t.Fatalf("GetAgentIngress = %+v, %v", got, err)
	}

	changed, err := e.store.UpdateAgentIngress(e.ctx, account.ID, a.ID, func(v *store.AgentIngress) error {
		v.Description, v.CertificatePolicy, v.ID = "edge 2", nil, "agin_other"
		return nil
	})
	if err != nil || changed.Description != "edge 2" || changed.CertificatePolicy != nil || changed.ProvisioningSince != nil || changed.ID != a.ID {
		t.Fatalf("UpdateAgentIngress = %+v, %v; want the description, no policy, no provisioning, same id", changed, err)
	}
	var invalid *store.ValidationError
	err = errOf(e.store.UpdateAgentIngress(e.ctx, account.ID, a.ID, func(v *store.AgentIngress) error { v.Domain = "other.example.com"; return nil }))
	if !errors.As(err, &invalid) || invalid.Field != "domain" || !strings.Contains(err.Error(), "cannot be changed") {
		t.Fatalf("changing the domain: %v, want a *ValidationError of domain", err)
	}

	for name, err := range map[string]error{
		"GetAgentIngress":    errOf(e.store.GetAgentIngress(e.ctx, other.ID, a.ID)),
		"UpdateAgentIngress": errOf(e.store.UpdateAgentIngress(e.ctx, other.ID, a.ID, func(*store.AgentIngress) error { return nil })),
		"DeleteAgentIngress": errOf(e.store.DeleteAgentIngress(e.ctx, other.ID, a.ID)),
		"a malformed id":     errOf(e.store.GetAgentIngress(e.ctx, account.ID, "agin_*")),
	} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s from another account: %v, want ErrNotFound", name, err)
		}
	}
	if _, err := e.store.DeleteAgentIngress(e.ctx, account.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	wantErr(t, errOf(e.store.GetAgentIngress(e.ctx, account.ID, a.ID)), store.ErrNotFound)
	if n := countPrefix(e.rawEntries(t), "agent_ingress"); n != 0 {
		t.Fatalf("%d agent ingress keys left after the delete, want 0", n)
	}
}

// TestAgentIngressDomainUniqueAcrossAccounts refuses a domain an agent
// ingress of any account has, ignoring case, with a *TakenError Across
// that names no account; a delete frees it for any account.
func TestAgentIngressDomainUniqueAcrossAccounts(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	first, err := e.store.CreateAgentIngress(e.ctx, account.ID, store.AgentIngress{Domain: "ingress.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for _, owner := range []string{account.ID, other.ID} {
		err := errOf(e.store.CreateAgentIngress(e.ctx, owner, store.AgentIngress{Domain: "INGRESS.example.com"}))
		var taken *store.TakenError
		if !errors.As(err, &taken) || !taken.Across || taken.Field != "domain" || !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a taken domain: %v, want a *TakenError across accounts", err)
		}
		if want := `domain "ingress.example.com" is taken by another agent ingress, of this account or of another: choose another domain`; err.Error() != want {
			t.Fatalf("error says %q, want %q", err, want)
		}
	}
	if _, err := e.store.DeleteAgentIngress(e.ctx, account.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateAgentIngress(e.ctx, other.ID, store.AgentIngress{Domain: "ingress.example.com"}); err != nil {
		t.Fatalf("a domain a delete freed, for another account: %v", err)
	}
}

// TestAgentIngressRules refuses, field by field, what breaks a rule.
func TestAgentIngressRules(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	label63 := strings.Repeat("a", 63)
	for _, domain := range []string{"xn--bcher-kva.example", "a-b.c0", label63 + ".com", strings.Repeat(label63+".", 4)[:249] + ".io"} {
		if _, err := e.store.CreateAgentIngress(e.ctx, account.ID, store.AgentIngress{Domain: domain}); err != nil {
			t.Errorf("creating an agent ingress of %q: %v, want valid", domain, err)
		}
	}
	tests := []struct {
		name  string
		in    store.AgentIngress
		field string
	}{
		{"no domain", store.AgentIngress{}, "domain"},
		{"one label", store.AgentIngress{Domain: "localhost"}, "domain"},
		{"empty label", store.AgentIngress{Domain: "a..example.com"}, "domain"},
		{"leading hyphen", store.AgentIngress{Domain: "-a.example.com"}, "domain"},
		{"trailing hyphen", store.AgentIngress{Domain: "a-.example.com"}, "domain"},
		{"label over 63", store.AgentIngress{Domain: label63 + "a.example.com"}, "domain"},
		{"over 253", store.AgentIngress{Domain: strings.Repeat("a.", 127) + "io"}, "domain"},
		{"underscore", store.AgentIngress{Domain: "a_b.example.com"}, "domain"},
		{"unicode", store.AgentIngress{Domain: "bücher.example"}, "domain"},
		{"wildcard", store.AgentIngress{Domain: "*.example.com"}, "domain"},
		{"description", store.AgentIngress{Domain: "d.example.com", Description: strings.Repeat("x", 256)}, "description"},
		{"metadata", store.AgentIngress{Domain: "d.example.com", Metadata: strings.Repeat("x", 4097)}, "metadata"},
		{"authority", store.AgentIngress{Domain: "d.example.com", CertificatePolicy: &store.CertificatePolicy{Authority: "zerossl"}}, "certificate_management_policy.authority"},
		{"key type", store.AgentIngress{Domain: "d.example.com", CertificatePolicy: &store.CertificatePolicy{PrivateKeyType: "ed25519"}}, "certificate_management_policy.private_key_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var invalid *store.ValidationError
			err := errOf(e.store.CreateAgentIngress(e.ctx, account.ID, tt.in))
			if !errors.As(err, &invalid) || invalid.Field != tt.field {
				t.Fatalf("%v, want a *ValidationError of %s", err, tt.field)
			}
		})
	}
}

// TestAgentIngressLimitAndPages refuses an agent ingress over
// Limits.AgentIngresses, and pages newest first.
func TestAgentIngressLimitAndPages(t *testing.T) {
	e := newEnvWith(t, store.Config{Limits: store.Limits{AgentIngresses: 3}})
	account := e.createAccount(t, "team")
	var made []string
	for _, d := range []string{"a.example.com", "b.example.com", "c.example.com"} {
		a, err := e.store.CreateAgentIngress(e.ctx, account.ID, store.AgentIngress{Domain: d})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, a.ID)
	}
	var limit *store.LimitError
	if err := errOf(e.store.CreateAgentIngress(e.ctx, account.ID, store.AgentIngress{Domain: "d.example.com"})); !errors.As(err, &limit) || limit.Limit != store.LimitAgentIngresses || limit.Max != 3 {
		t.Fatalf("over the limit: %v, want a *LimitError of %q", err, store.LimitAgentIngresses)
	}
	if store.DefaultMaxAgentIngresses != 100 {
		t.Fatalf("DefaultMaxAgentIngresses = %d, want 100", store.DefaultMaxAgentIngresses)
	}
	items, next, err := e.store.ListAgentIngresses(e.ctx, account.ID, store.Page{Limit: 2})
	if err != nil || len(items) != 2 || items[0].ID != made[2] || next == "" {
		t.Fatalf("first page %+v, %q, %v", items, next, err)
	}
	items, next, err = e.store.ListAgentIngresses(e.ctx, account.ID, store.Page{Limit: 2, BeforeID: next})
	if err != nil || len(items) != 1 || items[0].ID != made[0] || next != "" {
		t.Fatalf("last page %+v, %q, %v", items, next, err)
	}
}

// TestAgentIngressConcurrentDomains creates one domain many times at once
// from two processes and two accounts: exactly one wins.
func TestAgentIngressConcurrentDomains(t *testing.T) {
	const burst = 12
	e := newEnv(t)
	stores := []*store.Store{e.store, e.openAnother(t)}
	accounts := []string{e.createAccount(t, "team").ID, e.createAccount(t, "other").ID}
	var (
		mu          sync.Mutex
		won, taken  int
		otherErrors []error
		wg          sync.WaitGroup
	)
	for i := range burst {
		wg.Go(func() {
			_, err := stores[i%2].CreateAgentIngress(e.ctx, accounts[i/2%2], store.AgentIngress{Domain: "same.example.com"})
			var takenErr *store.TakenError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.As(err, &takenErr):
				taken++
			case errors.Is(err, store.ErrConflict):
			default:
				otherErrors = append(otherErrors, err)
			}
		})
	}
	wg.Wait()
	if won != 1 || taken == 0 || len(otherErrors) > 0 {
		t.Fatalf("%d of %d creates of one domain won, %d taken, other errors %v; want exactly one", won, burst, taken, otherErrors)
	}
}
