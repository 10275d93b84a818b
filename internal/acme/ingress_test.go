package acme

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/acmetest"
	"github.com/sluicehq/sluice/internal/store"
)

func (e *env) ingress(t *testing.T, id string) store.AgentIngress {
	t.Helper()
	a, err := e.store.GetAgentIngress(e.ctx, e.account, id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestIngressWaitsForDelegation: an agent ingress whose NS records are
// not the ns_targets waits, in progress with no error_code, its msg
// naming the records to set, and looks again at retries_at, not before;
// once they are the ns_targets, it gets a certificate of its region
// domains from Pebble through DNS-01 answered by sluice's DNS in its
// zone, which an edge's table serves by SNI to a client trusting
// Pebble's root, and is due again at renews_at.
func TestIngressCertificate(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	a, err := e.store.CreateAgentIngress(e.ctx, e.account, store.AgentIngress{
		Domain: "agents.example.com", CertificatePolicy: &store.CertificatePolicy{Authority: store.AuthorityLetsEncrypt},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name  string
		ns    []string
		found string
	}{
		{"no NS records", nil, "agents.example.com has no NS records"},
		{"NS records elsewhere", []string{"ns1.other.test", "ns1." + serviceDomain}, "its NS records are ns1.other.test, ns1.sluice.test"},
	} {
		t.Run(step.name, func(t *testing.T) {
			e.zone.NS("agents.example.com", step.ns...)
			if due := e.ingress(t, a.ID); !e.manager.ingressDue(due) {
				t.Fatalf("job %+v is not due", due.CertJob)
			}
			e.manager.tick(e.ctx)
			got := e.ingress(t, a.ID)
			job := got.CertJob
			set := "set its NS records to ns1.sluice.test, ns2.sluice.test"
			if job == nil || job.ErrorCode != "" || !strings.Contains(job.Msg, set) || !strings.Contains(job.Msg, step.found) ||
				job.RetriesAt == nil || !job.RetriesAt.After(e.clock.Now()) || !job.StartedAt.Equal(*a.ProvisioningSince) {
				t.Fatalf("job %+v; want one in progress saying %q and %q, retried later, started at %s", job, set, step.found, a.ProvisioningSince)
			}
			if e.manager.ingressDue(got) {
				t.Fatal("the job is due before its retries_at")
			}
			e.clock.Set(job.RetriesAt.Add(time.Second))
		})
	}
	table := edge.NewCertificates()
	go e.store.Certificates().FollowTLSCertificates(e.ctx, slog.New(slog.DiscardHandler), func(key string, c *store.TLSCertificate) {
		_ = table.Apply(key, c)
	}, nil)
	e.zone.NS("agents.example.com", "NS2.sluice.test", "ns1.sluice.test")
	e.manager.tick(e.ctx)
	got := e.ingress(t, a.ID)
	if got.CertJob != nil || got.RenewsAt == nil || got.CertificateID == "" {
		t.Fatalf("with the NS records set, job %+v, renews_at %v, certificate %q; want no job, a renews_at, a certificate", got.CertJob, got.RenewsAt, got.CertificateID)
	}
	cert, err := e.store.GetTLSCertificate(e.ctx, e.account, got.CertificateID)
	if err != nil {
		t.Fatal(err)
	}
	if cert.AgentIngressID != a.ID || cert.PrivateKeyType != store.KeyTypeRSA {
		t.Errorf("the stored certificate is of ingress %q, key type %q", cert.AgentIngressID, cert.PrivateKeyType)
	}
	leaf := e.served(t, table, "tunnel.us.agents.example.com", "")
	if want := []string{"tunnel.us.agents.example.com"}; !slices.Equal(leaf.DNSNames, want) {
		t.Errorf("the certificate's names are %q, want %q", leaf.DNSNames, want)
	}
	if want := leaf.NotAfter.Add(-30 * 24 * time.Hour).UTC(); !got.RenewsAt.Equal(want) {
		t.Errorf("renews_at %s, want 30 days before expiry, %s", got.RenewsAt, want)
	}
	if e.manager.ingressDue(got) {
		t.Error("the issued certificate's job is due before renews_at")
	}
	e.clock.Set(got.RenewsAt.Add(time.Second))
	if !e.manager.ingressDue(e.ingress(t, a.ID)) {
		t.Error("the certificate is not due for renewal at renews_at")
	}

	// A new policy starts a new job, which checks again.
	updated, err := e.store.UpdateAgentIngress(e.ctx, e.account, a.ID, func(a *store.AgentIngress) error {
		a.CertificatePolicy = &store.CertificatePolicy{Authority: store.AuthorityLetsEncrypt, PrivateKeyType: store.KeyTypeECDSA}
		a.ProvisioningSince = nil
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if updated.CertJob != nil || updated.RenewsAt != nil || !e.manager.ingressDue(updated) {
		t.Errorf("after a new policy, job %+v, renews_at %v, due %v; want none recorded, due", updated.CertJob, updated.RenewsAt, e.manager.ingressDue(updated))
	}

	// The ingress's delete deletes its certificate.
	if _, err := e.store.DeleteAgentIngress(e.ctx, e.account, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.GetTLSCertificate(e.ctx, e.account, got.CertificateID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the deleted ingress's certificate: %v, want ErrNotFound", err)
	}
}
