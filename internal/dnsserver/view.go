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
// watch tells them (apply), and the zone of the first service domain. It is safe for concurrent use: lookups share
// a read lock, which a change takes for a few map writes.
type view struct {
	cfg *Config
	// serviceApex is the zone of the first service domain, with its
	// final dot; cnameApex and acmeApex are the zones under it of CNAME
	// targets and ACME challenge targets, cname.<first service domain>.
	// and acme.<...>.
	serviceApex, cnameApex, acmeApex string
	// nsNames are the names of the NS targets under the first service
	// domain, below its apex: sluice does not know their addresses, so
	// they are no names of the edge.
	nsNames map[string]bool
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
	// ownChallenges are the tokens whose TXT values the names
	// _acme-challenge.<name> below the first service domain's apex
	// answer, by that name: the tokens of the reserved domains
	// <name>.<first service domain> and *.<name>.<...>.
	ownChallenges map[string]ownChallenge
	// names are what each key the view holds put where: its apex or
	// token.
	names map[string]string
	// serial is the serial of the service domain's zone and of the
	// cname and acme zones: the newest revision of a reserved domain or
	// challenge applied.
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

// ownChallenge is the tokens of the reserved domains whose challenges
// one _acme-challenge name under the first service domain answers: the
// name's own (base) and its wildcard's, each with the key it is of, or
// none.
type ownChallenge struct {
	base, wildcard keyed[string]
}

// newView returns the empty view of a server of cfg, whose defaults are
// set.
func newView(cfg *Config) *view {
	sd := cfg.ServiceDomains[0]
	v := &view{
		cfg:              cfg,
		serviceApex:      sd + ".",
		cnameApex:        "cname." + sd + ".",
		acmeApex:         "acme." + sd + ".",
		nsNames:          make(map[string]bool),
		regionNames:      make(map[string]bool),
		challengeRegions: make(map[string]string),
		ingresses:        make(map[string]ingressZone),
		targets:          make(map[string]keyed[bool]),
		challenges:       make(map[string]keyed[[]string]),
		ownChallenges:    make(map[string]ownChallenge),
		names:            make(map[string]string),
	}
	for _, ns := range cfg.NSTargets {
		if below, ok := strings.CutSuffix(ns, "."+sd); ok {
			v.nsNames[below] = true
		}
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
			v.applyOwn(c.Key, d) // no CNAME target: the service's own name
			v.serial = max(v.serial, serial)
			return
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

// applyOwn maps the _acme-challenge name of a reserved domain under the
// first service domain to its token; a domain under another service
// domain has no name in the view, whose zone is the first's alone.
func (v *view) applyOwn(key string, d *store.ReservedDomain) {
	below, ok := strings.CutSuffix(strings.ToLower(d.Domain), "."+v.cfg.ServiceDomains[0])
	if !ok {
		return
	}
	base, wildcard := strings.CutPrefix(below, "*.")
	name := "_acme-challenge." + base
	token := keyed[string]{key: key, value: store.DomainToken(d.ID)}
	oc := v.ownChallenges[name]
	if wildcard {
		oc.wildcard = token
	} else {
		oc.base = token
	}
	v.ownChallenges[name] = oc
	v.names[key] = name
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
	if oc, ok := v.ownChallenges[name]; ok {
		if oc.base.key == key {
			oc.base = keyed[string]{}
		}
		if oc.wildcard.key == key {
			oc.wildcard = keyed[string]{}
		}
		if oc.base.key == "" && oc.wildcard.key == "" {
			delete(v.ownChallenges, name)
		} else {
			v.ownChallenges[name] = oc
		}
	}
}
