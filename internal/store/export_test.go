package store

import "context"

// CreateUntrackedReservedDomain creates a reserved domain as a store did
// before the domain tree (domaintree.go): without its node keys, and so
// without the overlap check, for tests of what guards such a reservation.
func (s *Store) CreateUntrackedReservedDomain(ctx context.Context, accountID string, in ReservedDomain) (ReservedDomain, error) {
	untracked := reservedDomains
	untracked.writes = nil
	return untracked.create(ctx, s, accountID, in, nil)
}

// CreateUntrackedAgentIngress creates an agent ingress as a store did
// before agent ingresses were counted in the domain tree.
func (s *Store) CreateUntrackedAgentIngress(ctx context.Context, accountID string, in AgentIngress) (AgentIngress, error) {
	untracked := agentIngresses
	untracked.writes = nil
	return untracked.create(ctx, s, accountID, in, nil)
}

// CreateUncheckedReservedDomain creates a reserved domain, untracked, as
// a store did before the rules that refuse IP addresses, public suffixes
// and the service's names: without checking its domain.
func (s *Store) CreateUncheckedReservedDomain(ctx context.Context, accountID string, domain string) (ReservedDomain, error) {
	unchecked := reservedDomains
	unchecked.writes = nil
	unchecked.check = func(context.Context, *Store, *ReservedDomain) error { return nil }
	return unchecked.create(ctx, s, accountID, ReservedDomain{Domain: domain}, nil)
}

// CreateUncheckedHTTPSEdge creates an HTTPS edge as a store did before
// those rules: without checking its hostports.
func (s *Store) CreateUncheckedHTTPSEdge(ctx context.Context, accountID string, hostports ...string) (HTTPSEdge, error) {
	unchecked := httpsEdges
	unchecked.writes = nil
	unchecked.check = func(context.Context, *Store, *HTTPSEdge) error { return nil }
	return unchecked.create(ctx, s, accountID, HTTPSEdge{Hostports: hostports}, nil)
}

// CreateUnindexedCredential creates a credential as a store did before
// the token index: without it. It returns the credential with its token.
func (s *Store) CreateUnindexedCredential(ctx context.Context, accountID string) (Credential, error) {
	token, err := NewAPIKeyToken()
	if err != nil {
		return Credential{}, err
	}
	unindexed := credentials
	unindexed.writes, unindexed.cascade = nil, nil
	c, err := unindexed.create(ctx, s, accountID, Credential{TokenHash: hashToken(token)}, nil)
	c.Token = token
	return c, err
}

// IndexCredentialTokens is indexCredentialTokens, for tests.
func (s *Store) IndexCredentialTokens(ctx context.Context) (int, error) {
	return s.indexCredentialTokens(ctx)
}

// Live reports whether the cache answers from memory: it watches the
// keys' records.
func (c *KeyCache) Live() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live
}

// PlantTLSCertificate stores c as the certificate of the reserved domain
// it names, as sluice's certificate jobs do, without their events: for
// tests of what reads certificates.
func (s *Store) PlantTLSCertificate(ctx context.Context, c TLSCertificate) (TLSCertificate, error) {
	d, err := s.GetReservedDomain(ctx, c.AccountID, c.ReservedDomainID)
	if err != nil {
		return TLSCertificate{}, err
	}
	c.ID, c.CreatedAt = s.newID(tlsCertificates.prefix)
	if err := s.createJSON(ctx, tlsCertificates.key(c.AccountID, c.ID), c); err != nil {
		return TLSCertificate{}, err
	}
	_, err = s.UpdateReservedDomain(ctx, c.AccountID, d.ID, func(d *ReservedDomain) error {
		d.CertificateID = c.ID
		return nil
	})
	return c, err
}
