package store

import (
	"context"
	"fmt"
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
		a.CertJob = &job
		return nil
	})
	return err
}

// ManagedAgentIngresses returns the agent ingresses of every account
// whose certificates are managed (a policy that is not null).
func (s *Store) ManagedAgentIngresses(ctx context.Context) ([]AgentIngress, error) {
	all, err := listRecords[AgentIngress](ctx, s, agentIngresses.kind+".*.*")
	if err != nil {
		return nil, fmt.Errorf("listing the managed agent ingresses: %w", err)
	}
	managed := all[:0]
	for _, a := range all {
		if a.CertificatePolicy != nil {
			managed = append(managed, a)
		}
	}
	return managed, nil
}
