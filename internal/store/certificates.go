package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// CertificatePolicy is how the certificates of a domain are managed, an
// agent ingress's or a reserved domain's (spec 2.1, 2.2).
type CertificatePolicy struct {
	// Authority is "letsencrypt", the only one; "" takes it.
	Authority string `json:"authority"`
	// PrivateKeyType is "rsa" or "ecdsa"; "" takes the family's default.
	PrivateKeyType string `json:"private_key_type"`
}

// The certificate authorities and private key types of a
// CertificatePolicy.
const (
	AuthorityLetsEncrypt = "letsencrypt"
	KeyTypeRSA           = "rsa"
	KeyTypeECDSA         = "ecdsa"
)

// check sets the defaults of p, the authority letsencrypt and the key type
// defaultKey, and returns a *ValidationError of the field of the policy
// that breaks a rule, or nil.
func (p *CertificatePolicy) check(defaultKey string) error {
	if p.Authority == "" {
		p.Authority = AuthorityLetsEncrypt
	}
	if p.Authority != AuthorityLetsEncrypt {
		return invalid("certificate_management_policy.authority", "is %q, and the only authority is %q", p.Authority, AuthorityLetsEncrypt)
	}
	if p.PrivateKeyType == "" {
		p.PrivateKeyType = defaultKey
	}
	if p.PrivateKeyType != KeyTypeRSA && p.PrivateKeyType != KeyTypeECDSA {
		return invalid("certificate_management_policy.private_key_type", "is %q: choose %q or %q (default %q)", p.PrivateKeyType, KeyTypeRSA, KeyTypeECDSA, defaultKey)
	}
	return nil
}

// CertificateStatus is where the management of a domain's certificate is.
type CertificateStatus struct {
	// RenewsAt is nil until a certificate exists.
	RenewsAt *time.Time `json:"renews_at,omitempty"`
	// ProvisioningJob is nil when no certificate is being provisioned.
	ProvisioningJob *CertificateJob `json:"provisioning_job,omitempty"`
}

// CertificateJob is a certificate being provisioned or renewed.
type CertificateJob struct {
	ErrorCode string     `json:"error_code,omitempty"`
	Msg       string     `json:"msg"`
	StartedAt time.Time  `json:"started_at"`
	RetriesAt *time.Time `json:"retries_at,omitempty"`
	// Attempts counts the job's runs, for the backoff of its retries;
	// the API does not show it.
	Attempts int `json:"attempts,omitempty"`
}

// userDNS reports whether the job waits for the user's DNS: it ended
// DNS_ERROR, or waits in progress, with a retries_at, for a record not
// created yet. Nil (no job) does not.
func (job *CertificateJob) userDNS() bool {
	return job != nil && (job.ErrorCode == CertErrorDNS || job.ErrorCode == "" && job.RetriesAt != nil)
}

// ProvisioningMsg is the msg of the job a new policy starts.
const ProvisioningMsg = "certificate provisioning is in progress"

// newCertificateStatus is the status of a certificate policy just set: a
// provisioning job in progress since now, and no renewal yet (spec 3).
func newCertificateStatus(now time.Time) *CertificateStatus {
	return &CertificateStatus{ProvisioningJob: &CertificateJob{Msg: ProvisioningMsg, StartedAt: now.UTC()}}
}

// inUTC returns the job with its times in UTC, as the store keeps them.
func (job CertificateJob) inUTC() CertificateJob {
	job.StartedAt = job.StartedAt.UTC()
	if job.RetriesAt != nil {
		at := job.RetriesAt.UTC()
		job.RetriesAt = &at
	}
	return job
}

// certified is a resource whose TLS certificate a job obtains: a
// ReservedDomain, an AgentIngress.
type certified interface {
	// jobStartedAt reports whether its certificate is managed by the job
	// that started at since.
	jobStartedAt(since time.Time) bool
	// certificate is the id of its TLS certificate, or "".
	certificate() string
}

// setCertificate stores issued as the certificate of the account's
// resource of fam with the id, whose job started at since: a new TLS
// certificate the first time (created), the same one (same id) renewed
// after. end makes the resource name cert, a new one belong to the
// resource, and the resource's job end, and returns more writes for the
// batch, which stores them, the certificate and the resource all or none.
//
// It returns ErrCertificateUnmanaged if the resource's certificate is no
// longer managed by the job started at since, an error wrapping
// ErrNotFound if the account has no such resource, or one saying what
// failed, end's included.
func setCertificate[T certified](ctx context.Context, s *Store, fam *family[T], accountID, id string, since time.Time, issued IssuedCertificate, end func(v *T, cert *TLSCertificate, created bool) ([]write, error)) (TLSCertificate, error) {
	if err := fam.ownedID(accountID, id); err != nil {
		return TLSCertificate{}, err
	}
	key := fam.key(accountID, id)
	var stored TLSCertificate
	err := retryConflicts(ctx, func() error {
		v, rev, err := getRecord[T](ctx, s, key)
		if err != nil {
			return err
		}
		if !v.jobStartedAt(since) {
			return refusal{ErrCertificateUnmanaged}
		}
		cert, crev, err := s.renewal(ctx, accountID, v.certificate())
		if err != nil {
			return err
		}
		cert.CertificatePEM, cert.PrivateKeyPEM, cert.PrivateKeyType = issued.CertificatePEM, issued.PrivateKeyPEM, issued.PrivateKeyType
		cert.IssuedAt = issued.IssuedAt.UTC()
		writes, err := end(&v, &cert, crev == 0)
		if err != nil {
			return err
		}
		certValue, err := json.Marshal(cert)
		if err != nil {
			return err
		}
		value, err := json.Marshal(v)
		if err != nil {
			return err
		}
		writes = append(writes,
			write{key: tlsCertificates.key(accountID, cert.ID), value: certValue, revision: crev},
			write{key: key, value: value, revision: rev})
		if _, err := s.commitBatch(ctx, writes); err != nil {
			return err
		}
		stored = cert
		return nil
	})
	if err != nil {
		return TLSCertificate{}, passOrWrap(err, nil, "storing the certificate of "+fam.noun+" "+id)
	}
	return stored, nil
}

// renewal returns the account's TLS certificate with the id, to renew,
// and its revision; or, if id is "" or names none, a new one, revision 0.
func (s *Store) renewal(ctx context.Context, accountID, id string) (TLSCertificate, uint64, error) {
	if id != "" {
		cert, rev, err := getRecord[TLSCertificate](ctx, s, tlsCertificates.key(accountID, id))
		if !errors.Is(err, ErrNotFound) {
			return cert, rev, err
		}
	}
	certID, now := s.newID(tlsCertificates.prefix)
	return TLSCertificate{ID: certID, AccountID: accountID, CreatedAt: now}, 0, nil
}
