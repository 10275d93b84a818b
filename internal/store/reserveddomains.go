package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/sluicehq/sluice/internal/dnsname"
	"github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/schemas"
)

// ReservedDomain is a domain an account reserves for its endpoints
// (specification sections 2.2, 3 and 4.2), possibly a wildcard such as
// *.sub.example.com. No two accounts have one domain, nor overlapping
// ones (domaintree.go).
type ReservedDomain struct {
	// ID is "rd_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account that owns the domain.
	AccountID string `json:"account_id"`
	// CreatedAt is when the domain was reserved, in UTC.
	CreatedAt   time.Time `json:"created_at"`
	Description string    `json:"description,omitempty"`
	Metadata    string    `json:"metadata,omitempty"`
	// Domain is the domain, lower case: a fully qualified name, or "*."
	// and one (see CheckReservedDomain). It cannot change.
	Domain string `json:"domain"`
	// Region is one of DomainRegions, or "" for none (null); deprecated.
	Region string `json:"region,omitempty"`
	// CertPolicy is nil when certificates are not managed.
	CertPolicy *CertificatePolicy `json:"certificate_management_policy,omitempty"`
	// CertStatus is nil exactly when CertPolicy is.
	CertStatus *CertificateStatus `json:"certificate_management_status,omitempty"`
	// CertificateID is the TLSCertificate sluice obtained for the domain,
	// "" until one is; the domain's delete deletes it. A policy set to
	// null leaves it, served until it expires.
	CertificateID string `json:"certificate_id,omitempty"`
	// Tree is the names whose node keys count the reservation
	// (domainNodes), as they were when it was created, so that its delete
	// uncounts exactly them whatever the service's domains or the public
	// suffix list are by then; nil for a reservation made before the
	// tree was kept, which no node counts.
	Tree []string `json:"tree,omitempty"`
}

// claim is what d counts in the domain tree.
func (d ReservedDomain) claim() domainClaim {
	return domainClaim{AccountID: d.AccountID, Domain: d.Domain, Tree: d.Tree}
}

// DomainRegions are the values of a reserved domain's region (spec 2.2).
var DomainRegions = []string{"au", "eu", "ap", "us", "us-cal-1", "jp", "in", "sa"}

// IsWildcardDomain reports whether a domain is a wildcard, "*." and a name.
func IsWildcardDomain(domain string) bool { return strings.HasPrefix(domain, "*.") }

// CheckReservedDomain returns the domain lower-cased, or a
// *ValidationError of the field "domain": a domain name by dnsname.Check,
// or a wildcard, "*." and such a name, that does not cover a whole public
// suffix, such as *.co.uk or *.github.io: a wildcard certificate of a
// public suffix would take every registrant's names under it, which no
// certificate authority issues and no one account may claim.
func CheckReservedDomain(domain string) (string, error) {
	d, err := dnsname.Check(domain, dnsname.Wildcard)
	if err != nil {
		return "", invalid("domain", "%s", err)
	}
	if base, wildcard := strings.CutPrefix(d, "*."); wildcard {
		if suffix, _ := publicsuffix.PublicSuffix(base); suffix == base {
			return "", invalid("domain", "%q covers the whole public suffix %q, which no account may reserve: reserve a wildcard of a name you own under it, such as *.sub.%s", domain, base, base)
		}
	}
	return d, nil
}

// CheckNotServiceDomain returns a *ValidationError of the field "domain" if
// the domain, checked by CheckReservedDomain, is one of the service's own domains,
// or a wildcard that covers one: *.example.app, or a parent of it, would
// take every account's names under the service domain.
func CheckNotServiceDomain(domain string, serviceDomains []string) error {
	base, wildcard := strings.CutPrefix(domain, "*.")
	for _, sd := range serviceDomains {
		if domain == sd {
			return invalid("domain", "%q is a domain of the service itself: reserve a name under it, such as myapp.%s", domain, sd)
		}
		if wildcard && (base == sd || strings.HasSuffix(sd, "."+base)) {
			return invalid("domain", "%q covers the service's domain %q: reserve a wildcard of a name under it, such as *.myapp.%s", domain, sd, sd)
		}
	}
	return nil
}

// UnderServiceDomain reports whether the domain is a name under one of the
// service's domains, which needs no CNAME (spec 2.2).
func UnderServiceDomain(domain string, serviceDomains []string) bool {
	return slices.ContainsFunc(serviceDomains, func(sd string) bool { return strings.HasSuffix(domain, "."+sd) })
}

// check normalizes d and returns a *ValidationError for the first field
// that breaks a rule, or nil; a policy without a status starts a job at
// now.
func (d *ReservedDomain) check(now time.Time) error {
	spec := resource.ReservedDomains()
	if err := checkText(spec.Field("description"), d.Description); err != nil {
		return err
	}
	if err := checkText(spec.Field("metadata"), d.Metadata); err != nil {
		return err
	}
	domain, err := CheckReservedDomain(d.Domain)
	if err != nil {
		return err
	}
	d.Domain = domain
	if d.Region != "" && !slices.Contains(DomainRegions, d.Region) {
		return invalid("region", "is %q: choose one of %s, or leave it out (the region is deprecated: traffic is served globally)", d.Region, strings.Join(DomainRegions, ", "))
	}
	if d.CertPolicy != nil {
		if err := d.CertPolicy.check(KeyTypeECDSA); err != nil {
			return err
		}
		if d.CertStatus == nil {
			d.CertStatus = newCertificateStatus(now)
		}
	} else {
		d.CertStatus = nil
	}
	return nil
}

// reservedDomains declares reserved domains (see family). A domain is
// unique across all accounts: its index key holds no account (see
// reservedDomainKey), which the layer's uniqueIndex allows as it is.
var reservedDomains = family[ReservedDomain]{
	kind:   "reserved_domains",
	prefix: resource.ReservedDomains().Prefix,
	noun:   "reserved domain",
	meta: func(d *ReservedDomain) (*string, *string, *time.Time) {
		return &d.ID, &d.AccountID, &d.CreatedAt
	},
	input: func(in ReservedDomain) ReservedDomain {
		out := ReservedDomain{Description: in.Description, Metadata: in.Metadata, Domain: in.Domain, Region: in.Region, Tree: in.Tree}
		if in.CertPolicy != nil {
			p := *in.CertPolicy
			out.CertPolicy = &p
		}
		return out
	},
	check: func(_ context.Context, s *Store, d *ReservedDomain) error { return d.check(s.now()) },
	rule: func(was, d ReservedDomain) error {
		if was.Domain != d.Domain {
			return invalid("domain", "cannot change: delete the reserved domain and reserve the new one")
		}
		return nil
	},
	limit: LimitReservedDomains,
	max:   func(l Limits) int { return l.ReservedDomains },
	writes: func(ctx context.Context, s *Store, before *ReservedDomain, d ReservedDomain) ([]write, error) {
		if before != nil {
			return nil, nil // the domain cannot change
		}
		return s.domainTreeWrites(ctx, d.claim(), 1)
	},
	cascade: func(ctx context.Context, s *Store, d ReservedDomain) ([]write, error) {
		return s.reservedDomainCascade(ctx, d, nil)
	},
	unique: &uniqueIndex[ReservedDomain]{
		field: "domain",
		value: func(d ReservedDomain) string { return d.Domain },
		key:   reservedDomainKey,
	},
}

// reservedDomainCascade returns the writes of the domain's delete besides
// its own: its domain tree's counts (d.Tree: nil before the tree), and
// its certificate's delete, with the audit event certificateDeleted
// builds (nil: none).
func (s *Store) reservedDomainCascade(ctx context.Context, d ReservedDomain, certificateDeleted func(TLSCertificate) (schemas.Encoded, error)) ([]write, error) {
	writes, err := s.domainTreeWrites(ctx, d.claim(), -1)
	if err != nil {
		return nil, err
	}
	cert, err := s.certificateDelete(ctx, d.AccountID, d.CertificateID, certificateDeleted)
	return append(writes, cert...), err
}

// reservedDomainKey is the index key of a reserved domain, across all
// accounts: the account id is not part of it.
func reservedDomainKey(_, domain string) string { return "reserved_domain_names." + foldedHash(domain) }

// DomainTakenError is a domain reserved already, by this account or
// another (which it does not name), or one that would overlap a name
// another account holds, by a reserved domain or an agent ingress (see
// domainNode). It matches ErrConflict.
type DomainTakenError struct {
	Domain string
	// Within is the name, the domain's own or one above it, that another
	// account holds; "" if none.
	Within string
	// Covers is the name under which another account holds names the
	// domain would cover; "" if none.
	Covers string
}

func (e *DomainTakenError) Error() string {
	const rule = "a name held by a reserved domain, its wildcard or an agent ingress, and every name under it, belong to one account"
	switch {
	case e.Within != "":
		return fmt.Sprintf("the domain %q overlaps %q, which another account holds: %s; choose a domain outside %s", e.Domain, e.Within, rule, e.Within)
	case e.Covers != "":
		return fmt.Sprintf("the domain %q covers names under %s that another account holds: %s; choose another domain", e.Domain, e.Covers, rule)
	}
	return fmt.Sprintf("the domain %q is reserved already, by your account or another: a domain is reserved by one account at most; choose another domain", e.Domain)
}

// Is reports whether target is ErrConflict.
func (e *DomainTakenError) Is(target error) bool { return target == ErrConflict }

// CreateReservedDomain reserves the Domain of in for the account, with its
// Description, Metadata, Region and CertPolicy; a wildcard without
// a policy gets letsencrypt and ecdsa. A policy starts a provisioning job.
//
// It returns a *ValidationError (matching ErrInvalid) for a field that
// breaks a rule, a service domain or a name under those the service hands
// out (checkReservable) included, a *DomainTakenError (matching
// ErrConflict) if any account has the domain reserved or another account
// holds a name it would overlap, by a reserved domain or an agent ingress
// (see domainNode), a *LimitError (matching ErrLimit) if the account has
// Limits.ReservedDomains, or an error wrapping ErrNotFound if the account
// does not exist.
func (s *Store) CreateReservedDomain(ctx context.Context, accountID string, in ReservedDomain, opts ...WriteOption) (ReservedDomain, error) {
	if in.CertPolicy == nil && IsWildcardDomain(in.Domain) {
		in.CertPolicy = &CertificatePolicy{Authority: AuthorityLetsEncrypt, PrivateKeyType: KeyTypeECDSA}
	}
	in.Tree = nil
	if domain, err := CheckReservedDomain(in.Domain); err == nil {
		if err := s.checkReservable(domain); err != nil {
			return ReservedDomain{}, err
		}
		in.Tree = domainNodes(reservationBase(domain), s.serviceDomains)
	}
	d, err := reservedDomains.create(ctx, s, accountID, in, opts)
	var taken *TakenError
	if errors.As(err, &taken) {
		return d, &DomainTakenError{Domain: taken.Value}
	}
	return d, err
}

// GetReservedDomain returns the reserved domain of the account with the
// id, or an error wrapping ErrNotFound, also when another account has it.
func (s *Store) GetReservedDomain(ctx context.Context, accountID, id string) (ReservedDomain, error) {
	return reservedDomains.get(ctx, s, accountID, id)
}

// ListReservedDomains returns a page of the account's reserved domains,
// newest first, and the BeforeID of the next page ("" after the last).
func (s *Store) ListReservedDomains(ctx context.Context, accountID string, page Page) ([]ReservedDomain, string, error) {
	return reservedDomains.list(ctx, s, accountID, page)
}

// UpdateReservedDomain changes the reserved domain of the account with
// the id as fn does, checked as at create; the domain cannot change (a
// *ValidationError). A policy set or changed starts a new provisioning
// job, and so does a policy sent again after a DNS_ERROR or while the job
// waits for a DNS record (in progress with a retries_at); a policy
// removed removes the status. A new job starts at the store's clock, and
// after the job it replaces, whose writes then are refused
// (SetDomainCertificateJob). No update is lost (see family.update).
func (s *Store) UpdateReservedDomain(ctx context.Context, accountID, id string, fn func(*ReservedDomain) error, opts ...WriteOption) (ReservedDomain, error) {
	return reservedDomains.update(ctx, s, accountID, id, func(d *ReservedDomain) error {
		was := d.CertPolicy
		if err := fn(d); err != nil {
			return err
		}
		// A policy set again (fn gave a new one, though equal) after a
		// DNS_ERROR, or while the job waits for a record, retries now:
		// the user says the DNS is fixed.
		again := d.CertPolicy != was && d.CertStatus != nil && d.CertStatus.ProvisioningJob.userDNS()
		if d.CertPolicy != nil && (was == nil || *was != *d.CertPolicy || again) {
			d.CertStatus = newCertificateStatus(s.jobStart(d.CertStatus))
		}
		return nil
	}, opts)
}

// jobStart is the started_at of a job that replaces the status st: now,
// by the store's clock, or, if that is not after the started_at of the
// job replaced (a clock that did not move, or moved back), a nanosecond
// after it, so that the two jobs differ by their started_at.
func (s *Store) jobStart(st *CertificateStatus) time.Time {
	now := s.now()
	if st != nil && st.ProvisioningJob != nil && !now.After(st.ProvisioningJob.StartedAt) {
		return st.ProvisioningJob.StartedAt.Add(time.Nanosecond)
	}
	return now
}

// DeleteReservedDomain deletes the reserved domain of the account with the
// id, which frees the domain for any account, and its TLS certificate,
// with the certificate's audit event WithCertificateAudit builds, and
// returns it as it was.
//
// It returns a *DomainInUseError (matching ErrConflict) naming the HTTPS
// edges of the account with a hostport the domain covers and no other
// reserved domain of the account does, or an error wrapping ErrNotFound if
// the account has no such reserved domain. An edge given such a hostport
// at the same time rewrites the domain in its batch (claimHostports), and
// the delete is a compare-and-swap on the revision read before the edges
// were: one of the two writers sees the other.
func (s *Store) DeleteReservedDomain(ctx context.Context, accountID, id string, opts ...WriteOption) (ReservedDomain, error) {
	f := reservedDomains
	certificateDeleted := newWriteOptions(opts).certificateDeleted
	f.cascade = func(ctx context.Context, s *Store, d ReservedDomain) ([]write, error) {
		return s.reservedDomainCascade(ctx, d, certificateDeleted)
	}
	return f.remove(ctx, s, accountID, id, opts, func(d ReservedDomain) error {
		using, err := s.edgesUsing(ctx, d)
		if err != nil {
			return err
		}
		if len(using) > 0 {
			return refusal{&DomainInUseError{Domain: d.Domain, Edges: using}}
		}
		return nil
	})
}
