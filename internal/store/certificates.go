package store

import "time"

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

// ProvisioningMsg is the msg of the job a new policy starts.
const ProvisioningMsg = "certificate provisioning is in progress"

// newCertificateStatus is the status of a certificate policy just set: a
// provisioning job in progress since now, and no renewal yet (spec 3).
func newCertificateStatus(now time.Time) *CertificateStatus {
	return &CertificateStatus{ProvisioningJob: &CertificateJob{Msg: ProvisioningMsg, StartedAt: now.UTC()}}
}
