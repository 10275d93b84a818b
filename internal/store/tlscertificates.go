package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/schemas"
)

// tlsCertificatesKind is the key space of TLS certificates:
// tls_certificates.<account_id>.<id>.
const tlsCertificatesKind = "tls_certificates"

// Certificates are what sluice keeps to obtain and serve TLS
// certificates: the ACME account and the lease of its jobs, the jobs of
// reserved domains and agent ingresses and the certificates they store,
// the DNS-01 and HTTP-01 challenges pending, and the follows through
// which the edges serve the certificates and answer the challenges. The
// ACME manager, the edges and sluice's DNS use them; the API shows the
// certificates through Store (GetTLSCertificate, ListTLSCertificates).
type Certificates struct{ store *Store }

// Certificates returns the store's certificates and what obtains them.
func (s *Store) Certificates() Certificates { return Certificates{s} }

// TLSCertificate is a certificate sluice obtained for a reserved domain
// (spec 6.4's tls_certificate_*), with its private key. The API shows it
// read-only and without the key; the edge serves it by SNI. The key is in
// the store as the certificate is: the store's JetStream is encrypted at
// rest when serve has a --data-key-file, and nothing logs a TLSCertificate.
type TLSCertificate struct {
	// ID is "cert_" and a KSUID; it stays the same across renewals.
	ID        string    `json:"id"`
	AccountID string    `json:"account_id"`
	CreatedAt time.Time `json:"created_at"`
	// ReservedDomainID is the reserved domain the certificate is for,
	// whose certificate Ref names it; "" for an agent ingress's.
	ReservedDomainID string `json:"reserved_domain_id"`
	// AgentIngressID is the agent ingress whose region domains the
	// certificate is for; "" for a reserved domain's.
	AgentIngressID string `json:"agent_ingress_id,omitempty"`
	// CertificatePEM is the chain, leaf first.
	CertificatePEM string `json:"certificate_pem"`
	// PrivateKeyPEM is the leaf's private key: never in an API answer,
	// never logged.
	PrivateKeyPEM string `json:"private_key_pem"`
	// PrivateKeyType is "rsa" or "ecdsa" (KeyTypeRSA, KeyTypeECDSA).
	PrivateKeyType string `json:"private_key_type"`
	// IssuedAt is when the authority issued this certificate, in UTC.
	IssuedAt time.Time `json:"issued_at"`
}

// tlsCertificates declares TLS certificates (see family). The API only
// reads them: sluice's certificate jobs write them with their reserved
// domain, and a domain's delete deletes its certificate.
var tlsCertificates = family[TLSCertificate]{
	kind:   tlsCertificatesKind,
	prefix: resource.TLSCertificates().Prefix,
	noun:   "TLS certificate",
	meta: func(c *TLSCertificate) (*string, *string, *time.Time) {
		return &c.ID, &c.AccountID, &c.CreatedAt
	},
}

// GetTLSCertificate returns the TLS certificate of the account with the
// id, or an error wrapping ErrNotFound, also when another account has it.
func (s *Store) GetTLSCertificate(ctx context.Context, accountID, id string) (TLSCertificate, error) {
	return tlsCertificates.get(ctx, s, accountID, id)
}

// ListTLSCertificates returns a page of the account's TLS certificates,
// newest first, and the BeforeID of the next page ("" after the last).
func (s *Store) ListTLSCertificates(ctx context.Context, accountID string, page Page) ([]TLSCertificate, string, error) {
	return tlsCertificates.list(ctx, s, accountID, page)
}

// certificateDelete returns the delete of the account's TLS certificate
// with the id, for the batch that deletes the reserved domain or agent
// ingress it is of, with the audit event audit builds of it (nil: none);
// none if id is "" or the certificate is gone.
func (s *Store) certificateDelete(ctx context.Context, accountID, id string, audit func(TLSCertificate) (schemas.Encoded, error)) ([]write, error) {
	if id == "" {
		return nil, nil
	}
	key := tlsCertificates.key(accountID, id)
	cert, rev, err := getRecord[TLSCertificate](ctx, s, key)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	writes := []write{{key: key, del: true, revision: rev}}
	if audit != nil {
		ev, err := audit(cert)
		if err != nil {
			return nil, fmt.Errorf("building the audit event of %s: %w", cert.ID, err)
		}
		w, err := outboxWrite(ev)
		if err != nil {
			return nil, err
		}
		writes = append(writes, w)
	}
	return writes, nil
}

// FollowTLSCertificates calls apply with every TLS certificate of every
// account, then with each change of them, until ctx ends; apply is called
// from one goroutine at a time, with the certificate's key and the
// certificate, or nil when it is gone (or cannot be read). When a watch
// ends it watches again, and tells apply of the certificates deleted
// meanwhile once the new watch's initial values are in (followCurrent):
// what apply built stays true. ready, if not nil, is called once the
// first watch's initial values are in.
func (cs Certificates) FollowTLSCertificates(ctx context.Context, log *slog.Logger, apply func(key string, c *TLSCertificate), ready func()) {
	cs.store.followCurrent(ctx, log, "TLS certificates (the edge serves those it has meanwhile)",
		[]string{tlsCertificatesKind + ".>"}, func(key string, entry jetstream.KeyValueEntry) {
			if entry == nil {
				apply(key, nil)
				return
			}
			c := new(TLSCertificate)
			if json.Unmarshal(entry.Value(), c) != nil {
				c = nil
			}
			apply(key, c)
		}, ready)
}
