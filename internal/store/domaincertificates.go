package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/schemas"
)

// ErrCertificateUnmanaged is returned by SetDomainCertificate,
// SetDomainCertificateJob, SetAgentIngressCertificate and
// SetAgentIngressCertificateJob for a reserved domain or an agent ingress
// whose certificate_management_policy is null (set so while its job ran),
// or was set anew meanwhile, starting another job.
var ErrCertificateUnmanaged = errors.New("the certificate is not managed: its certificate_management_policy is null, or was set anew")

// The error codes of a failed certificate job (spec 3, 7).
const (
	// CertErrorInternal is a temporary failure, retried at retries_at.
	CertErrorInternal = "INTERNAL_ERROR"
	// CertErrorDNS is a DNS record the user must fix; not retried until
	// the policy is set again.
	CertErrorDNS = "DNS_ERROR"
)

// CertificateEvents builds the audit events sluice emits when it stores a
// reserved domain's certificate: change ("created" or "updated") of the
// TLS certificate, and the domain, as they are after the change. They are
// written with the change, in the outbox (see WithAudit).
type CertificateEvents func(change string, cert TLSCertificate, domain ReservedDomain) ([]schemas.Encoded, error)

// IssuedCertificate is a certificate an authority issued for a reserved
// domain.
type IssuedCertificate struct {
	// CertificatePEM is the chain, leaf first; PrivateKeyPEM the leaf's
	// key, of PrivateKeyType.
	CertificatePEM, PrivateKeyPEM, PrivateKeyType string
	// IssuedAt is when it was issued; RenewsAt when its renewal starts.
	IssuedAt, RenewsAt time.Time
}

// SetDomainCertificate stores issued as the certificate of the account's
// reserved domain with the id, obtained by the job that started at since
// (see SetDomainCertificateJob): a new TLS certificate the first time,
// the same one (same id) renewed after; the domain's certificate names
// it, its provisioning job ends and its renews_at is issued.RenewsAt. The
// events of events are stored with the change, all or none.
//
// It returns ErrCertificateUnmanaged if the domain's policy is null, or
// its job is no longer the one started at since (the policy was set anew
// meanwhile), an error wrapping ErrNotFound if the account has no such
// domain, or one saying what failed.
func (cs Certificates) SetDomainCertificate(ctx context.Context, accountID, domainID string, since time.Time, issued IssuedCertificate, events CertificateEvents) (TLSCertificate, error) {
	return setCertificate(ctx, cs.store, &reservedDomains, accountID, domainID, since, issued, func(d *ReservedDomain, cert *TLSCertificate, created bool) ([]write, error) {
		change := "updated"
		if created {
			change, cert.ReservedDomainID = "created", d.ID
		}
		renews := issued.RenewsAt.UTC()
		d.CertificateID = cert.ID
		d.CertStatus = &CertificateStatus{RenewsAt: &renews}
		evs, err := events(change, *cert, *d)
		if err != nil {
			return nil, fmt.Errorf("building the audit events: %w", err)
		}
		var writes []write
		for _, ev := range evs {
			w, err := outboxWrite(ev)
			if err != nil {
				return nil, err
			}
			writes = append(writes, w)
		}
		return writes, nil
	})
}

// outboxWrite is the write of ev in the outbox (see commit).
func outboxWrite(ev schemas.Encoded) (write, error) {
	entry, err := json.Marshal(outboxEntry{ID: ev.ID, Type: ev.Type, AccountID: ev.AccountID, Data: ev.Data})
	if err != nil {
		return write{}, fmt.Errorf("encoding the audit event: %w", err)
	}
	return write{key: outboxKey(ev.ID), value: entry}, nil
}

// SetDomainCertificateJob records the provisioning job of the account's
// reserved domain with the id: where it is, or how it failed. While a job
// runs renews_at is null (spec 2.2). since is the started_at of the job
// the domain has, as the job read it, or zero for a renewal's first
// write, when the domain has none: a policy set anew while the job ran
// started another job, which the old one must not overwrite.
//
// It returns ErrCertificateUnmanaged if the domain's policy is null, or
// its job is no longer the one started at since, an error wrapping
// ErrNotFound if the account has no such domain, or one saying what
// failed.
func (cs Certificates) SetDomainCertificateJob(ctx context.Context, accountID, domainID string, since time.Time, job CertificateJob) error {
	job = job.inUTC()
	_, err := cs.store.UpdateReservedDomain(ctx, accountID, domainID, func(d *ReservedDomain) error {
		if !d.jobStartedAt(since) {
			return ErrCertificateUnmanaged
		}
		d.CertStatus = &CertificateStatus{ProvisioningJob: &job}
		return nil
	})
	return err
}

// jobStartedAt reports whether the domain's certificate is managed by the
// job that started at since: its provisioning job did, or, since zero, it
// has none (a renewal not yet recorded).
func (d ReservedDomain) jobStartedAt(since time.Time) bool {
	if d.CertPolicy == nil || d.CertStatus == nil {
		return false
	}
	if job := d.CertStatus.ProvisioningJob; job != nil {
		return job.StartedAt.Equal(since)
	}
	return since.IsZero()
}

// certificate is the id of the domain's TLS certificate, or "".
func (d ReservedDomain) certificate() string { return d.CertificateID }
