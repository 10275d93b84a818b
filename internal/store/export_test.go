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
