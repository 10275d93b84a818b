package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
)

// TestAgentIngressCertificateRefused: a job, or a certificate, of an
// agent ingress whose policy was set anew or to null since the job read
// it is refused with ErrCertificateUnmanaged and changes nothing; one of
// the current policy is recorded, and a new policy clears it.
func TestAgentIngressCertificateRefused(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	a, err := e.store.CreateAgentIngress(e.ctx, account.ID, store.AgentIngress{Domain: "agents.example.com", CertificatePolicy: &store.CertificatePolicy{}})
	if err != nil {
		t.Fatal(err)
	}
	since := *a.ProvisioningSince
	job := store.CertificateJob{Msg: "checking", StartedAt: since}
	if err := e.store.Certificates().SetAgentIngressCertificateJob(e.ctx, account.ID, a.ID, since, job); err != nil {
		t.Fatalf("the current policy's job: %v", err)
	}
	renewed, err := e.store.UpdateAgentIngress(e.ctx, account.ID, a.ID, func(a *store.AgentIngress) error {
		a.ProvisioningSince = nil // a new policy, as the API sets it
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if renewed.CertJob != nil || renewed.ProvisioningSince == nil {
		t.Fatalf("after a new policy, job %+v, since %v; want none, a new start", renewed.CertJob, renewed.ProvisioningSince)
	}
	issued := store.IssuedCertificate{CertificatePEM: "chain", PrivateKeyPEM: "key", PrivateKeyType: store.KeyTypeRSA, IssuedAt: time.Now(), RenewsAt: time.Now()}
	if err := e.store.Certificates().SetAgentIngressCertificateJob(e.ctx, account.ID, a.ID, since, job); !errors.Is(err, store.ErrCertificateUnmanaged) {
		t.Errorf("the old policy's job: %v, want ErrCertificateUnmanaged", err)
	}
	if _, err := e.store.Certificates().SetAgentIngressCertificate(e.ctx, account.ID, a.ID, since, issued); !errors.Is(err, store.ErrCertificateUnmanaged) {
		t.Errorf("the old policy's certificate: %v, want ErrCertificateUnmanaged", err)
	}
	if _, err := e.store.UpdateAgentIngress(e.ctx, account.ID, a.ID, func(a *store.AgentIngress) error {
		a.CertificatePolicy = nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Certificates().SetAgentIngressCertificate(e.ctx, account.ID, a.ID, *renewed.ProvisioningSince, issued); !errors.Is(err, store.ErrCertificateUnmanaged) {
		t.Errorf("a certificate without a policy: %v, want ErrCertificateUnmanaged", err)
	}
	got, err := e.store.GetAgentIngress(e.ctx, account.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.CertJob != nil || got.CertificateID != "" || got.RenewsAt != nil {
		t.Errorf("the refused writes left job %+v, certificate %q, renews_at %v", got.CertJob, got.CertificateID, got.RenewsAt)
	}
}

// TestAgentIngressPolicyStartsByStoreClock: a new policy's provisioning
// starts at the store's clock, to the nanosecond, so that a policy set
// anew a microsecond later still refuses the first job's writes.
func TestAgentIngressPolicyStartsByStoreClock(t *testing.T) {
	clock := check.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	e := newEnvWith(t, store.Config{Clock: clock.Now})
	account := e.createAccount(t, "team")
	a, err := e.store.CreateAgentIngress(e.ctx, account.ID, store.AgentIngress{Domain: "agents.example.com", CertificatePolicy: &store.CertificatePolicy{}})
	if err != nil {
		t.Fatal(err)
	}
	if !a.ProvisioningSince.Equal(clock.Now()) {
		t.Fatalf("provisioning since %v, want the store's clock, %v", a.ProvisioningSince, clock.Now())
	}
	since := *a.ProvisioningSince
	clock.Advance(time.Microsecond)
	if _, err := e.store.UpdateAgentIngress(e.ctx, account.ID, a.ID, func(a *store.AgentIngress) error {
		a.ProvisioningSince = nil // a new policy, as the API sets it
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	job := store.CertificateJob{Msg: "checking", StartedAt: since}
	if err := e.store.Certificates().SetAgentIngressCertificateJob(e.ctx, account.ID, a.ID, since, job); !errors.Is(err, store.ErrCertificateUnmanaged) {
		t.Fatalf("the job of the policy replaced a microsecond later: %v, want ErrCertificateUnmanaged", err)
	}
}
