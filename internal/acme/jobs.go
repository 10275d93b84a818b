package acme

import (
	"slices"
	"sync"

	"github.com/sluicehq/sluice/internal/store"
)

// jobs is the lease holder's view of the certificate jobs: the reserved
// domains and agent ingresses whose certificate_management_policy is not
// null, by key, as store.FollowCertificateJobs tells them. A resource
// whose policy goes null, or that is deleted, leaves it. It keeps of each
// only what a job reads: no description, metadata or domain tree, and no
// certificate (the resources name theirs by id; the jobs read and write
// them through the store). It is safe for concurrent use: the watch's
// goroutine applies the changes while a tick reads.
type jobs struct {
	mu        sync.Mutex
	domains   map[string]store.ReservedDomain
	ingresses map[string]store.AgentIngress
}

func newJobs() *jobs {
	return &jobs{domains: map[string]store.ReservedDomain{}, ingresses: map[string]store.AgentIngress{}}
}

// apply applies one change of store.FollowCertificateJobs.
func (j *jobs) apply(c store.CertificateChange) {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case c.ReservedDomain != nil && c.ReservedDomain.CertPolicy != nil:
		j.domains[c.Key] = jobDomain(*c.ReservedDomain)
	case c.AgentIngress != nil && c.AgentIngress.CertificatePolicy != nil:
		j.ingresses[c.Key] = jobIngress(*c.AgentIngress)
	default: // deleted, unreadable, or its policy null
		delete(j.domains, c.Key)
		delete(j.ingresses, c.Key)
	}
}

// reset forgets every job, when the watch stops.
func (j *jobs) reset() {
	j.mu.Lock()
	defer j.mu.Unlock()
	clear(j.domains)
	clear(j.ingresses)
}

// dueDomains returns the keys of the domains due says are, in key order.
func (j *jobs) dueDomains(due func(store.ReservedDomain) bool) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return dueKeys(j.domains, due)
}

// dueIngresses returns the keys of the agent ingresses due says are, in
// key order.
func (j *jobs) dueIngresses(due func(store.AgentIngress) bool) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return dueKeys(j.ingresses, due)
}

// dueKeys returns the keys of the records of m that due says are due, in
// key order.
func dueKeys[T any](m map[string]T, due func(T) bool) []string {
	var keys []string
	for key, r := range m {
		if due(r) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

// domain returns the domain of the key as the view holds it now.
func (j *jobs) domain(key string) (store.ReservedDomain, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	d, ok := j.domains[key]
	return d, ok
}

// ingress returns the agent ingress of the key as the view holds it now.
func (j *jobs) ingress(key string) (store.AgentIngress, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	a, ok := j.ingresses[key]
	return a, ok
}

// jobDomain is what the view keeps of a reserved domain.
func jobDomain(d store.ReservedDomain) store.ReservedDomain {
	d.Description, d.Metadata, d.Tree = "", "", nil
	return d
}

// jobIngress is what the view keeps of an agent ingress.
func jobIngress(a store.AgentIngress) store.AgentIngress {
	a.Description, a.Metadata, a.Tree = "", "", nil
	return a
}
