package store_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
)

// TestFollowCertificateJobs: FollowCertificateJobs tells the reserved
// domains and agent ingresses of every account written before it started,
// all of them before ready, then their changes and deletions, each under
// the key that names it, and nothing else of the bucket.
func TestFollowCertificateJobs(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	domain, err := e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "shop.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	wildcard, err := e.store.CreateReservedDomain(e.ctx, other.ID, store.ReservedDomain{Domain: "*.apps.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	ingress, err := e.store.CreateAgentIngress(e.ctx, other.ID, store.AgentIngress{
		Domain: "agents.example.com", CertificatePolicy: &store.CertificatePolicy{},
	})
	if err != nil {
		t.Fatal(err)
	}
	domainKey := "reserved_domains." + account.ID + "." + domain.ID
	wildcardKey := "reserved_domains." + other.ID + "." + wildcard.ID
	ingressKey := "agent_ingresses." + other.ID + "." + ingress.ID

	var mu sync.Mutex
	held := map[string]store.CertificateChange{}
	var others []string // keys told that are neither
	ctx, stop := context.WithCancel(e.ctx)
	ready := make(chan map[string]store.CertificateChange, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.store.Certificates().FollowCertificateJobs(ctx, slog.New(slog.DiscardHandler), func(c store.CertificateChange) {
			mu.Lock()
			defer mu.Unlock()
			if !strings.HasPrefix(c.Key, "reserved_domains.") && !strings.HasPrefix(c.Key, "agent_ingresses.") {
				others = append(others, c.Key)
			}
			if c.Deleted {
				delete(held, c.Key)
			} else {
				held[c.Key] = c
			}
		}, func() {
			mu.Lock()
			defer mu.Unlock()
			initial := make(map[string]store.CertificateChange, len(held))
			for k, c := range held {
				initial[k] = c
			}
			ready <- initial
		})
	}()
	defer func() {
		stop()
		<-done
	}()
	var initial map[string]store.CertificateChange
	select {
	case initial = <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("no ready after 10 s")
	}
	for key, want := range map[string]func(store.CertificateChange) bool{
		domainKey: func(c store.CertificateChange) bool {
			return c.ReservedDomain != nil && c.AgentIngress == nil && c.ReservedDomain.ID == domain.ID && c.ReservedDomain.CertPolicy == nil && c.Revision > 0
		},
		wildcardKey: func(c store.CertificateChange) bool {
			return c.ReservedDomain != nil && c.ReservedDomain.CertPolicy != nil && c.ReservedDomain.CertStatus != nil
		},
		ingressKey: func(c store.CertificateChange) bool {
			return c.AgentIngress != nil && c.ReservedDomain == nil && c.AgentIngress.CertificatePolicy != nil && c.AgentIngress.ProvisioningSince != nil
		},
	} {
		if c, ok := initial[key]; !ok || !want(c) {
			t.Errorf("at ready, %s is %+v (held %v)", key, c, ok)
		}
	}
	if len(initial) != 3 {
		t.Errorf("at ready, %d resources held, want 3", len(initial))
	}

	holds := func(what string, want func(map[string]store.CertificateChange) bool) {
		t.Helper()
		check.Eventually(t, 5*time.Second, what, func() (string, bool) {
			mu.Lock()
			defer mu.Unlock()
			return "not yet", want(held)
		})
	}
	before := initial[domainKey].Revision
	if _, err := e.store.UpdateReservedDomain(e.ctx, account.ID, domain.ID, func(d *store.ReservedDomain) error {
		d.CertPolicy = &store.CertificatePolicy{}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	holds("the policy set after", func(h map[string]store.CertificateChange) bool {
		c := h[domainKey]
		return c.ReservedDomain != nil && c.ReservedDomain.CertPolicy != nil && c.Revision > before
	})
	// Written before the deletion, the edge has passed the watch when the
	// deletion is seen.
	if _, err := e.store.CreateHTTPSEdge(e.ctx, account.ID, store.HTTPSEdge{Hostports: []string{"shop.example.com:443"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DeleteAgentIngress(e.ctx, other.ID, ingress.ID); err != nil {
		t.Fatal(err)
	}
	holds("the ingress deleted", func(h map[string]store.CertificateChange) bool {
		_, ok := h[ingressKey]
		return !ok
	})
	mu.Lock()
	defer mu.Unlock()
	if len(others) != 0 {
		t.Errorf("told of other keys: %q", others)
	}
}
