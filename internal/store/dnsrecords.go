package store

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// DNSChange is one change of what the service's DNS servers answer from:
// an agent ingress, a reserved domain or the ACME challenges of a token,
// of any account. Exactly one of AgentIngress, ReservedDomain and
// Challenge is set, unless Deleted.
type DNSChange struct {
	// Key is the resource's key in the bucket: the same key names the
	// same resource in every change.
	Key string
	// Revision is the key's revision in the bucket (0 when Deleted), which
	// increases with every change of any key.
	Revision uint64
	// Deleted reports that the resource is gone, or could not be read:
	// a DNS server answers nothing it cannot read.
	Deleted        bool
	AgentIngress   *AgentIngress
	ReservedDomain *ReservedDomain
	Challenge      *ACMEChallenge
}

// dnsFilters are the keys FollowDNS watches.
var dnsFilters = []string{agentIngresses.kind + ".>", reservedDomains.kind + ".>", acmeChallengesKind + ".>"}

// FollowDNS calls apply with every agent ingress, reserved domain and
// token's ACME challenges, then with each change of them, until ctx
// ends, as FollowRouting does with the resources of HTTPS edges: apply is
// called from one goroutine at a time, what it built stays true while
// the watch is away, and ready, if not nil, is called once the first
// watch's initial values are in.
func (s *Store) FollowDNS(ctx context.Context, log *slog.Logger, apply func(DNSChange), ready func()) {
	s.followCurrent(ctx, log, "agent ingresses, reserved domains and ACME challenges (DNS answers them as they were meanwhile)",
		dnsFilters, func(key string, entry jetstream.KeyValueEntry) {
			if entry == nil {
				apply(DNSChange{Key: key, Deleted: true})
				return
			}
			apply(decodeDNSChange(entry))
		}, ready)
}

// decodeDNSChange decodes one put of FollowDNS's watch; a value that
// cannot be decoded is a deletion.
func decodeDNSChange(entry jetstream.KeyValueEntry) DNSChange {
	key := entry.Key()
	change := DNSChange{Key: key, Revision: entry.Revision()}
	var err error
	switch kind, _, _ := strings.Cut(key, "."); kind {
	case agentIngresses.kind:
		change.AgentIngress = new(AgentIngress)
		err = json.Unmarshal(entry.Value(), change.AgentIngress)
	case reservedDomains.kind:
		change.ReservedDomain = new(ReservedDomain)
		err = json.Unmarshal(entry.Value(), change.ReservedDomain)
	default:
		change.Challenge = new(ACMEChallenge)
		err = json.Unmarshal(entry.Value(), change.Challenge)
	}
	if err != nil {
		return DNSChange{Key: key, Deleted: true}
	}
	return change
}
