package store

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// CertificateChange is one change of what the certificate jobs (package
// acme) run from: a reserved domain or an agent ingress, of any account.
// Exactly one of ReservedDomain and AgentIngress is set, unless Deleted.
type CertificateChange struct {
	// Key is the resource's key in the bucket: the same key names the
	// same resource in every change.
	Key string
	// Revision is the key's revision in the bucket (0 when Deleted),
	// which increases with every change of any key.
	Revision uint64
	// Deleted reports that the resource is gone, or could not be read:
	// a job is run only for what can be read.
	Deleted        bool
	ReservedDomain *ReservedDomain
	AgentIngress   *AgentIngress
}

// certificateJobFilters are the keys FollowCertificateJobs watches.
var certificateJobFilters = []string{reservedDomains.kind + ".>", agentIngresses.kind + ".>"}

// FollowCertificateJobs calls apply with every reserved domain and agent
// ingress of every account, then with each change of them, until ctx
// ends, as FollowRouting does with the resources of HTTPS edges: apply is
// called from one goroutine at a time, what it built stays true while
// the watch is away, and ready, if not nil, is called once the first
// watch's initial values are in. It reads every one of them once, when
// it starts, and after that only what changes: the certificate jobs keep
// the few with a certificate_management_policy rather than list them all
// again at every look.
func (cs Certificates) FollowCertificateJobs(ctx context.Context, log *slog.Logger, apply func(CertificateChange), ready func()) {
	cs.store.followCurrent(ctx, log, "reserved domains and agent ingresses (the certificate jobs run as they were meanwhile)",
		certificateJobFilters, func(key string, entry jetstream.KeyValueEntry) {
			if entry == nil {
				apply(CertificateChange{Key: key, Deleted: true})
				return
			}
			change, err := decodeCertificateChange(entry)
			if err != nil {
				// Its job stops until the record is written again.
				log.Warn("a reserved domain or agent ingress cannot be read: its certificate job waits until it is written again", "key", key, "error", err)
			}
			apply(change)
		}, ready)
}

// decodeCertificateChange decodes one put of FollowCertificateJobs's
// watch; a value that cannot be decoded is a deletion, and its error.
func decodeCertificateChange(entry jetstream.KeyValueEntry) (CertificateChange, error) {
	key := entry.Key()
	change := CertificateChange{Key: key, Revision: entry.Revision()}
	var err error
	if kind, _, _ := strings.Cut(key, "."); kind == reservedDomains.kind {
		change.ReservedDomain = new(ReservedDomain)
		err = json.Unmarshal(entry.Value(), change.ReservedDomain)
	} else {
		change.AgentIngress = new(AgentIngress)
		err = json.Unmarshal(entry.Value(), change.AgentIngress)
	}
	if err != nil {
		return CertificateChange{Key: key, Deleted: true}, err
	}
	return change, nil
}
