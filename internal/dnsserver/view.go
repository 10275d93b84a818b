package dnsserver

import (
	"slices"
	"strings"
	"sync"

	"github.com/miekg/dns"

	"github.com/sluicehq/sluice/internal/store"
)

// view is what the server answers from: the zones of the agent ingresses
// and the tokens of reserved domains and ACME challenges, as the store's
// watch tells them (apply). It is safe for concurrent use: lookups share
// a read lock, which a change takes for a few map writes.
type view struct {
	cfg *Config
	// cnameApex and acmeApex are the zones of CNAME targets and ACME
	// challenge targets, cname.<first service domain>. and acme.<...>.
	cnameApex, acmeApex string
	// regionNames are the names of an agent ingress's zone below its apex
	// that exist: tunnel.<region> (true, the edge's addresses), and
	// <region> (false, a name with no records but one under it).
	regionNames map[string]bool
	// challengeRegions are the names of an agent ingress's zone below
	// its apex where its region domains' ACME challenges are answered,
	// _acme-challenge.tunnel.<region>, with their region.
	challengeRegions map[string]string

	mu    sync.RWMutex
	ready bool // the store's records are in
	// ingresses are the agent ingresses' zones, by apex (lower case,
	// with its final dot), with the key they are of.
	ingresses map[string]ingressZone
	// targets are the tokens of reserved domains with targets, each
	// true when its domain is a wildcard (it has an ACME challenge
	// target), with the key they are of.
	targets map[string]keyed[bool]
	// challenges are the TXT values of the ACME challenges, by token,
	// with the key they are of.
	challenges map[string]keyed[[]string]
	// names are what each key the view holds put where: its apex or
	// token.
	names map[string]string
	// serial is the serial of the cname and acme zones: the newest
	// revision of a reserved domain or challenge applied.
	serial uint32
}

type ingressZone struct {
	key    string
	id     string // the agent ingress's, whose challenges' tokens it makes
	serial uint32 // the agent ingress's revision
}

type keyed[T any] struct {
	key   string
	value T
}

// newView returns the empty view of a server of cfg, whose defaults are
// set.
func newView(cfg *Config) *view {
	v := &view{
		cfg:              cfg,
		cnameApex:        "cname." + cfg.ServiceDomains[0] + ".",
		acmeApex:         "acme." + cfg.ServiceDomains[0] + ".",
		regionNames:      make(map[string]bool),
		challengeRegions: make(map[string]string),
		ingresses:        make(map[string]ingressZone),
		targets:          make(map[string]keyed[bool]),
		challenges:       make(map[string]keyed[[]string]),
		names:            make(map[string]string),
	}
	for _, r := range cfg.Regions {
		if !v.regionNames[r] {
			v.regionNames[r] = false
		}
		v.regionNames["tunnel."+r] = true
		v.challengeRegions["_acme-challenge.tunnel."+r] = r
	}
	return v
}

// setReady records that the store's records are in: until then the server
// answers SERVFAIL, for resolvers to ask another name server.
func (v *view) setReady() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.ready = true
}

// apply takes one change of the store's records.
func (v *view) apply(c store.DNSChange) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.forget(c.Key)
	if c.Deleted {
		return
	}
	serial := uint32(c.Revision) // the serial wraps around, as RFC 1982 allows
	switch {
	case c.AgentIngress != nil:
		apex := dns.Fqdn(strings.ToLower(c.AgentIngress.Domain))
		v.ingresses[apex] = ingressZone{key: c.Key, id: c.AgentIngress.ID, serial: serial}
		v.names[c.Key] = apex
	case c.ReservedDomain != nil:
		d := c.ReservedDomain
		if store.UnderServiceDomain(d.Domain, v.cfg.ServiceDomains) {
			return // no CNAME target: the service's own name
		}
		token := store.DomainToken(d.ID)
		v.targets[token] = keyed[bool]{key: c.Key, value: store.IsWildcardDomain(d.Domain)}
		v.names[c.Key] = token
		v.serial = max(v.serial, serial)
	case c.Challenge != nil:
		token := strings.ToLower(c.Challenge.Token)
		v.challenges[token] = keyed[[]string]{key: c.Key, value: slices.Clone(c.Challenge.Values)}
		v.names[c.Key] = token
		v.serial = max(v.serial, serial)
	}
}

// forget drops what the key put in the view, unless another key has
// put something at the same name since.
func (v *view) forget(key string) {
	name, ok := v.names[key]
	if !ok {
		return
	}
	delete(v.names, key)
	if z, ok := v.ingresses[name]; ok && z.key == key {
		delete(v.ingresses, name)
	}
	if t, ok := v.targets[name]; ok && t.key == key {
		delete(v.targets, name)
	}
	if c, ok := v.challenges[name]; ok && c.key == key {
		delete(v.challenges, name)
	}
}
