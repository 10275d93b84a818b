package store

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/internal/dnsname"
	"github.com/sluicehq/sluice/internal/resource"
)

// AgentIngress is an agent ingress of an account (specification sections
// 2.1 and 4.1): a domain the account owns, delegated to the service by NS
// records, under which its agents connect. Its NS targets and regional
// domains are the operator's configuration, not stored: the API computes
// them when it answers.
type AgentIngress struct {
	// ID is "agin_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account that owns the agent ingress.
	AccountID string `json:"account_id"`
	// CreatedAt is when the agent ingress was created, in UTC.
	CreatedAt   time.Time `json:"created_at"`
	Description string    `json:"description"`
	Metadata    string    `json:"metadata"`
	// Domain is a fully qualified domain name in lower case, without a
	// final dot, unique across all accounts. It cannot be changed.
	Domain string `json:"domain"`
	// CertificatePolicy is how its certificates are managed; nil: they
	// are not.
	CertificatePolicy *CertificatePolicy `json:"certificate_management_policy"`
	// ProvisioningSince is when the provisioning of its certificate
	// started under the current policy; nil without a policy.
	ProvisioningSince *time.Time `json:"provisioning_since,omitempty"`
	// CertJob is where the job since ProvisioningSince is, as the
	// certificate jobs (package acme) record it with
	// SetAgentIngressCertificateJob; nil until they first do, when the
	// job is in progress with ProvisioningMsg. A new policy clears it.
	CertJob *CertificateJob `json:"certificate_job,omitempty"`
	// CertificateID is the TLS certificate of its region domains, once
	// one is issued (SetAgentIngressCertificate); it stays across new
	// policies and renewals.
	CertificateID string `json:"certificate_id,omitempty"`
	// RenewsAt is when that certificate is renewed; nil while a job runs.
	RenewsAt *time.Time `json:"renews_at,omitempty"`
	// Tree is the names whose node keys count the agent ingress in the
	// domain tree (domaintree.go), as they were when it was created, so
	// that its delete uncounts exactly them; nil for one made before the
	// tree counted agent ingresses, until TrackDomainTree counts it.
	Tree []string `json:"tree,omitempty"`
}

// claim is what a counts in the domain tree: its domain and every name
// under it, tunnel.<region>.<domain> included.
func (a AgentIngress) claim() domainClaim {
	return domainClaim{AccountID: a.AccountID, Domain: a.Domain, Tree: a.Tree}
}

// check normalizes a (its domain in lower case without a final dot, the
// defaults of its policy, the start of its provisioning at now) and
// returns a *ValidationError for the first field that breaks a rule, or
// nil.
func (a *AgentIngress) check(now time.Time) error {
	spec := resource.AgentIngresses()
	if err := checkText(spec.Field("description"), a.Description); err != nil {
		return err
	}
	if err := checkText(spec.Field("metadata"), a.Metadata); err != nil {
		return err
	}
	domain, err := dnsname.Check(a.Domain, 0)
	if err != nil {
		return invalid("domain", "%s", err)
	}
	a.Domain = domain
	p := a.CertificatePolicy
	if p == nil {
		a.ProvisioningSince, a.CertJob, a.RenewsAt = nil, nil, nil
		return nil
	}
	if err := p.check(KeyTypeRSA); err != nil {
		return err
	}
	if a.ProvisioningSince == nil {
		// The store's clock, to the nanosecond: a job's writes are
		// refused once the policy was set anew (SetAgentIngressCertificate),
		// which two starts in one millisecond would not tell apart.
		a.ProvisioningSince, a.CertJob, a.RenewsAt = &now, nil, nil
	}
	return nil
}

// agentIngresses declares agent ingresses (see family): their domains are
// unique across all accounts, and cannot be changed. An agent ingress
// holds its domain and every name under it in the domain tree, counted in
// the batch that creates or deletes it.
var agentIngresses = family[AgentIngress]{
	kind:   "agent_ingresses",
	prefix: resource.AgentIngresses().Prefix,
	noun:   "agent ingress",
	meta:   func(a *AgentIngress) (*string, *string, *time.Time) { return &a.ID, &a.AccountID, &a.CreatedAt },
	input: func(in AgentIngress) AgentIngress {
		out := AgentIngress{Description: in.Description, Metadata: in.Metadata, Domain: in.Domain, Tree: in.Tree}
		if in.CertificatePolicy != nil {
			p := *in.CertificatePolicy
			out.CertificatePolicy = &p
		}
		return out
	},
	check: func(_ context.Context, s *Store, a *AgentIngress) error { return a.check(s.now()) },
	rule: func(was, v AgentIngress) error {
		if v.Domain != was.Domain {
			return invalid("domain", "cannot be changed: create another agent ingress for %q, and delete this one of %q", v.Domain, was.Domain)
		}
		return nil
	},
	limit: LimitAgentIngresses,
	max:   func(l Limits) int { return l.AgentIngresses },
	writes: func(ctx context.Context, s *Store, before *AgentIngress, a AgentIngress) ([]write, error) {
		if before != nil {
			return nil, nil // the domain cannot change
		}
		return s.domainTreeWrites(ctx, a.claim(), 1)
	},
	cascade: func(ctx context.Context, s *Store, a AgentIngress) ([]write, error) {
		writes, err := s.domainTreeWrites(ctx, a.claim(), -1) // a.Tree: nil before the tree
		if err != nil {
			return nil, err
		}
		// Agent ingresses have no audit event kinds: their
		// certificate goes without a tls_certificate_deleted.v0.
		cert, err := s.certificateDelete(ctx, a.AccountID, a.CertificateID, nil)
		return append(writes, cert...), err
	},
	unique: &uniqueIndex[AgentIngress]{
		field:  "domain",
		value:  func(a AgentIngress) string { return a.Domain },
		key:    agentIngressDomainKey,
		across: true,
	},
}

// CreateAgentIngress creates an agent ingress of the account with the
// Description, Metadata, Domain and CertificatePolicy of in; the store
// sets ID, AccountID, CreatedAt and ProvisioningSince.
//
// It returns a *ValidationError (matching ErrInvalid) for a field that
// breaks a rule, a domain that is, is under or covers a service domain, or
// is under the names the service hands out (checkIngressDomain),
// included, a *TakenError (matching ErrConflict, Across) if an agent
// ingress of any account has the domain, a *DomainTakenError (matching
// ErrConflict) if another account holds a name it would overlap, by a
// reserved domain or an agent ingress (see domainNode), a *LimitError (matching
// ErrLimit) if the account has Limits.AgentIngresses, or an error
// wrapping ErrNotFound if the account does not exist. Two creates of one
// domain at once, from any processes and accounts, never both succeed.
func (s *Store) CreateAgentIngress(ctx context.Context, accountID string, in AgentIngress, opts ...WriteOption) (AgentIngress, error) {
	in.Tree = nil
	if domain, err := dnsname.Check(in.Domain, 0); err == nil {
		if err := s.checkIngressDomain(domain); err != nil {
			return AgentIngress{}, err
		}
		in.Tree = domainNodes(domain, s.serviceDomains)
	}
	return agentIngresses.create(ctx, s, accountID, in, opts)
}

// GetAgentIngress returns the agent ingress of the account with the id. It
// returns an error wrapping ErrNotFound if the account has no such agent
// ingress, including when another account has.
func (s *Store) GetAgentIngress(ctx context.Context, accountID, id string) (AgentIngress, error) {
	return agentIngresses.get(ctx, s, accountID, id)
}

// ListAgentIngresses returns a page of the account's agent ingresses,
// newest first (by id), and the BeforeID of the next page, "" after the
// last page; its errors are ListBotUsers'.
func (s *Store) ListAgentIngresses(ctx context.Context, accountID string, page Page) ([]AgentIngress, string, error) {
	return agentIngresses.list(ctx, s, accountID, page)
}

// UpdateAgentIngress changes the agent ingress of the account with the id
// as UpdateBotUser changes a bot user: fn may be called several times, on
// a fresh copy each time, and no update is lost. A change of the domain is
// a *ValidationError; setting ProvisioningSince to nil with a policy
// starts its provisioning again.
func (s *Store) UpdateAgentIngress(ctx context.Context, accountID, id string, fn func(*AgentIngress) error, opts ...WriteOption) (AgentIngress, error) {
	return agentIngresses.update(ctx, s, accountID, id, fn, opts)
}

// DeleteAgentIngress deletes the agent ingress of the account with the id,
// which frees its domain for any account, and returns it as it was. It
// returns an error wrapping ErrNotFound if the account has no such agent
// ingress.
func (s *Store) DeleteAgentIngress(ctx context.Context, accountID, id string, opts ...WriteOption) (AgentIngress, error) {
	return agentIngresses.remove(ctx, s, accountID, id, opts, nil)
}
