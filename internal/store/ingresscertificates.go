package store

import (
	"context"
	"encoding/json"
	"errors"
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
func (s *Store) SetAgentIngressCertificateJob(ctx context.Context, accountID, id string, since time.Time, job CertificateJob) error {
	job.StartedAt = job.StartedAt.UTC()
	if job.RetriesAt != nil {
		at := job.RetriesAt.UTC()
		job.RetriesAt = &at
	}
	_, err := s.UpdateAgentIngress(ctx, accountID, id, func(a *AgentIngress) error {
		if a.CertificatePolicy == nil || a.ProvisioningSince == nil || !a.ProvisioningSince.Equal(since) {
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
func (s *Store) SetAgentIngressCertificate(ctx context.Context, accountID, id string, since time.Time, issued IssuedCertificate) (TLSCertificate, error) {
	if err := agentIngresses.ownedID(accountID, id); err != nil {
		return TLSCertificate{}, err
	}
	var stored TLSCertificate
	err := retryConflicts(ctx, func() error {
		a, arev, err := getRecord[AgentIngress](ctx, s, agentIngresses.key(accountID, id))
		if err != nil {
			return err
		}
		if a.CertificatePolicy == nil || a.ProvisioningSince == nil || !a.ProvisioningSince.Equal(since) {
			return refusal{ErrCertificateUnmanaged}
		}
		cert, crev, err := s.ingressCertificate(ctx, a)
		if err != nil {
			return err
		}
		cert.CertificatePEM, cert.PrivateKeyPEM, cert.PrivateKeyType = issued.CertificatePEM, issued.PrivateKeyPEM, issued.PrivateKeyType
		cert.IssuedAt = issued.IssuedAt.UTC()
		renews := issued.RenewsAt.UTC()
		a.CertificateID, a.CertJob, a.RenewsAt = cert.ID, nil, &renews
		certValue, err := json.Marshal(cert)
		if err != nil {
			return err
		}
		ingressValue, err := json.Marshal(a)
		if err != nil {
			return err
		}
		if _, err := s.commitBatch(ctx, []write{
			{key: tlsCertificates.key(accountID, cert.ID), value: certValue, revision: crev},
			{key: agentIngresses.key(accountID, id), value: ingressValue, revision: arev},
		}); err != nil {
			return err
		}
		stored = cert
		return nil
	})
	if err != nil {
		return TLSCertificate{}, passOrWrap(err, nil, "storing the certificate of agent ingress "+id)
	}
	return stored, nil
}

// ingressCertificate returns the certificate the agent ingress has, to
// renew, and its revision, or a new one (revision 0).
func (s *Store) ingressCertificate(ctx context.Context, a AgentIngress) (TLSCertificate, uint64, error) {
	if a.CertificateID != "" {
		cert, rev, err := getRecord[TLSCertificate](ctx, s, tlsCertificates.key(a.AccountID, a.CertificateID))
		if err == nil {
			return cert, rev, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return TLSCertificate{}, 0, err
		}
	}
	certID, now := s.newID(tlsCertificates.prefix)
	return TLSCertificate{ID: certID, AccountID: a.AccountID, CreatedAt: now, AgentIngressID: a.ID}, 0, nil
}
