package store

import (
	"context"
	"time"
)

// SetAgentIngressCertificateJob records the provisioning job of the
// account's agent ingress with the id, the one its policy started at
// since (its ProvisioningSince when the job read it): where it is, or how
// it failed. The API shows it as the ingress's provisioning_job.
//
// It returns ErrCertificateUnmanaged if the ingress's policy is null or
// was set anew since, an error wrapping ErrNotFound if the account has no
// such agent ingress, or one saying what failed.
func (cs Certificates) SetAgentIngressCertificateJob(ctx context.Context, accountID, id string, since time.Time, job CertificateJob) error {
	job = job.inUTC()
	_, err := cs.store.UpdateAgentIngress(ctx, accountID, id, func(a *AgentIngress) error {
		if !a.jobStartedAt(since) {
			return ErrCertificateUnmanaged
		}
		a.CertJob, a.RenewsAt = &job, nil
		return nil
	})
	return err
}

// SetAgentIngressCertificate stores issued as the certificate of the
// region domains of the account's agent ingress with the id, whose job
// its policy started at since: a new TLS certificate the first time, the
// same one (same id) renewed after; the ingress's job ends and its
// renews_at is issued.RenewsAt. Agent ingresses have no audit event
// kinds, so no tls_certificate_* event is emitted.
//
// It returns ErrCertificateUnmanaged if the ingress's policy is null or
// was set anew since, an error wrapping ErrNotFound if the account has no
// such agent ingress, or one saying what failed.
func (cs Certificates) SetAgentIngressCertificate(ctx context.Context, accountID, id string, since time.Time, issued IssuedCertificate) (TLSCertificate, error) {
	return setCertificate(ctx, cs.store, &agentIngresses, accountID, id, since, issued, func(a *AgentIngress, cert *TLSCertificate, created bool) ([]write, error) {
		if created {
			cert.AgentIngressID = a.ID
		}
		renews := issued.RenewsAt.UTC()
		a.CertificateID, a.CertJob, a.RenewsAt = cert.ID, nil, &renews
		return nil, nil
	})
}

// jobStartedAt reports whether the ingress's certificate is managed by
// the job its policy started at since.
func (a AgentIngress) jobStartedAt(since time.Time) bool {
	return a.CertificatePolicy != nil && a.ProvisioningSince != nil && a.ProvisioningSince.Equal(since)
}

// certificate is the id of the ingress's TLS certificate, or "".
func (a AgentIngress) certificate() string { return a.CertificateID }
