package store

import (
	"context"
	"fmt"
	"strings"
)

// AgentIngressOwner returns the account whose agent ingress has host as a
// regional connection name, tunnel.<region>.<domain>, and true; or false
// when no agent ingress has. The edge calls it with the name an agent
// connected to (its TLS server name): such an agent must use a credential
// of that account.
func (s *Store) AgentIngressOwner(ctx context.Context, host string) (string, bool, error) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	rest, ok := strings.CutPrefix(host, "tunnel.")
	if !ok {
		return "", false, nil
	}
	_, domain, ok := strings.Cut(rest, ".")
	if !ok || domain == "" {
		return "", false, nil
	}
	node, _, err := s.readDomainNode(ctx, domainNodeKey(domain))
	if err != nil {
		return "", false, err
	}
	if node.Owner == "" {
		return "", false, nil
	}
	for page := (Page{Limit: MaxPageLimit}); ; {
		ingresses, next, err := s.ListAgentIngresses(ctx, node.Owner, page)
		if err != nil {
			return "", false, fmt.Errorf("reading the agent ingresses of %s: %w", domain, err)
		}
		for _, in := range ingresses {
			if in.Domain == domain {
				return node.Owner, true, nil
			}
		}
		if next == "" {
			return "", false, nil
		}
		page.BeforeID = next
	}
}
