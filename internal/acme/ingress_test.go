package acme

import (
	"strings"
	"testing"
	"time"

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
// once they are the ns_targets, the check passes and the job goes on.
func TestIngressWaitsForDelegation(t *testing.T) {
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
	e.zone.NS("agents.example.com", "NS2.sluice.test", "ns1.sluice.test")
	e.manager.tick(e.ctx)
	got := e.ingress(t, a.ID)
	if job := got.CertJob; job == nil || job.ErrorCode != "" || job.RetriesAt != nil || strings.Contains(job.Msg, "waiting") {
		t.Fatalf("with the NS records set, job %+v; want one in progress, past the check", job)
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
	if updated.CertJob != nil || !e.manager.ingressDue(updated) {
		t.Errorf("after a new policy, job %+v, due %v; want none recorded, due", updated.CertJob, e.manager.ingressDue(updated))
	}
}
