package dnsserver

import (
	"slices"
	"strings"

	"github.com/miekg/dns"

	"github.com/sluicehq/sluice/internal/store"
)

// The SOA's timers, for secondaries the server does not have (it
// transfers no zone): a day's refresh and retries, two weeks to expire.
const (
	soaRefresh = 86400
	soaRetry   = 7200
	soaExpire  = 1209600
)

type zoneKind uint8

const (
	ingressKind zoneKind = iota + 1 // an agent ingress's domain
	cnameKind                       // cname.<first service domain>
	acmeKind                        // acme.<first service domain>
	serviceKind                     // the first service domain
)

// zone is a zone the server answers.
type zone struct {
	apex   string // lower case, with its final dot
	kind   zoneKind
	serial uint32
	id     string // an agent ingress's id, in its zone
}

// node is what exists at a name of a zone.
type node struct {
	apex  bool     // SOA and NS
	edge  bool     // A and AAAA: the edge's addresses
	txt   []string // TXT values
	empty bool     // the name exists with no records (a name under it does)
}

func (n node) exists() bool { return n.apex || n.edge || n.txt != nil || n.empty }

// answer returns the answer to the question of req, which has exactly
// one, without its EDNS: the answer, NODATA or NXDOMAIN of a name in a
// zone the view holds, REFUSED for one outside them, and SERVFAIL until
// the store's records are in.
func (v *view) answer(req *dns.Msg) *dns.Msg {
	resp := new(dns.Msg)
	resp.SetReply(req)
	q := req.Question[0]
	if q.Qclass != dns.ClassINET || q.Qtype == dns.TypeAXFR || q.Qtype == dns.TypeIXFR {
		resp.Rcode = dns.RcodeRefused
		return resp
	}
	name := strings.ToLower(q.Name)
	v.mu.RLock()
	defer v.mu.RUnlock()
	if !v.ready {
		resp.Rcode = dns.RcodeServerFailure
		return resp
	}
	z, below, ok := v.zoneOf(name)
	if !ok {
		resp.Rcode = dns.RcodeRefused
		return resp
	}
	resp.Authoritative = true
	n := v.node(z, below)
	if !n.exists() {
		resp.Rcode = dns.RcodeNameError
		resp.Ns = []dns.RR{v.soa(z, z.apex)}
		return resp
	}
	resp.Answer = v.records(z, n, q)
	if len(resp.Answer) == 0 {
		resp.Ns = []dns.RR{v.soa(z, z.apex)}
	}
	return resp
}

// zoneOf returns the deepest zone that name (lower case, with its final
// dot) is or is under, with the part of name below its apex, without
// the dot ("" at the apex). The caller holds v.mu.
func (v *view) zoneOf(name string) (zone, string, bool) {
	for i := 0; i < len(name); {
		if z, ok := v.zoneAt(name[i:]); ok {
			return z, strings.TrimSuffix(name[:i], "."), true
		}
		dot := strings.IndexByte(name[i:], '.')
		if dot < 0 {
			break
		}
		i += dot + 1
	}
	return zone{}, "", false
}

// zoneAt returns the zone whose apex is name.
func (v *view) zoneAt(name string) (zone, bool) {
	switch name {
	case v.cnameApex:
		return zone{apex: name, kind: cnameKind, serial: v.serial}, true
	case v.acmeApex:
		return zone{apex: name, kind: acmeKind, serial: v.serial}, true
	case v.serviceApex:
		return zone{apex: name, kind: serviceKind, serial: v.serial}, true
	}
	if z, ok := v.ingresses[name]; ok {
		return zone{apex: name, kind: ingressKind, serial: z.serial, id: z.id}, true
	}
	return zone{}, false
}

// node returns what exists at the name below z's apex.
func (v *view) node(z zone, below string) node {
	if below == "" {
		return node{apex: true}
	}
	switch z.kind {
	case ingressKind:
		if edge, ok := v.regionNames[below]; ok {
			return node{edge: edge, empty: !edge}
		}
		if region, ok := v.challengeRegions[below]; ok {
			if c := v.challenges[store.IngressChallengeToken(z.id, region)]; len(c.value) > 0 {
				return node{txt: c.value} // values never change in place
			}
		}
	case cnameKind:
		if _, ok := v.targets[below]; ok {
			return node{edge: true}
		}
	case acmeKind:
		c := v.challenges[below]
		if t := v.targets[below]; t.value || len(c.value) > 0 {
			return node{txt: c.value, empty: len(c.value) == 0} // values never change in place
		}
	case serviceKind:
		return v.serviceNode(below)
	}
	return node{}
}

// serviceNode returns what exists at the name below the first service
// domain's apex (the zones cname. and acme. under it are their own):
// every host name is the edge's, as the names that reserved domains and
// endpoints take under it are; _acme-challenge.<name> answers the
// challenges of the reserved domains <name>.<service domain> and
// *.<name>.<service domain>, and exists while either is reserved; a name
// with another label starting with "_" (no host's: _dmarc, or one under
// _acme-challenge) does not exist, so that a name nobody reserved is
// NXDOMAIN along with all below it. The NS targets under the service
// domain exist without records: their addresses are not the edge's, and
// sluice does not know them.
func (v *view) serviceNode(below string) node {
	if oc, ok := v.ownChallenges[below]; ok {
		values := v.ownValues(oc)
		return node{txt: values, empty: len(values) == 0}
	}
	if below[0] == '_' || strings.Contains(below, "._") {
		return node{}
	}
	if v.nsNames[below] {
		return node{empty: true}
	}
	return node{edge: true}
}

// ownValues returns the TXT values pending under the tokens of oc. Values
// never change in place, so one token's are returned as they are; both
// tokens' at once (a name and its wildcard ordered together) are copied
// into one slice.
func (v *view) ownValues(oc ownChallenge) []string {
	var base, wildcard []string
	if oc.base.key != "" {
		base = v.challenges[oc.base.value].value
	}
	if oc.wildcard.key != "" {
		wildcard = v.challenges[oc.wildcard.value].value
	}
	switch {
	case len(base) == 0:
		return wildcard
	case len(wildcard) == 0:
		return base
	}
	return append(slices.Clip(base), wildcard...)
}

// records returns the records of type q.Qtype at n, owned by q.Name as
// asked (its case kept); ANY gets the one HINFO record RFC 8482 answers
// it with, so that it never amplifies.
func (v *view) records(z zone, n node, q dns.Question) []dns.RR {
	ttl := uint32(v.cfg.TTL.Seconds())
	hdr := func(rrtype uint16) dns.RR_Header {
		return dns.RR_Header{Name: q.Name, Rrtype: rrtype, Class: dns.ClassINET, Ttl: ttl}
	}
	var rrs []dns.RR
	switch {
	case q.Qtype == dns.TypeANY:
		rrs = append(rrs, &dns.HINFO{Hdr: hdr(dns.TypeHINFO), Cpu: "RFC8482"})
	case q.Qtype == dns.TypeSOA && n.apex:
		rrs = append(rrs, v.soa(z, q.Name))
	case q.Qtype == dns.TypeNS && n.apex:
		for _, ns := range v.cfg.NSTargets {
			rrs = append(rrs, &dns.NS{Hdr: hdr(dns.TypeNS), Ns: ns + "."})
		}
	case q.Qtype == dns.TypeA && n.edge:
		for _, a := range v.cfg.EdgeAddrs {
			if a.Is4() {
				rrs = append(rrs, &dns.A{Hdr: hdr(dns.TypeA), A: a.AsSlice()})
			}
		}
	case q.Qtype == dns.TypeAAAA && n.edge:
		for _, a := range v.cfg.EdgeAddrs {
			if a.Is6() {
				rrs = append(rrs, &dns.AAAA{Hdr: hdr(dns.TypeAAAA), AAAA: a.AsSlice()})
			}
		}
	case q.Qtype == dns.TypeTXT:
		for _, value := range n.txt {
			rrs = append(rrs, &dns.TXT{Hdr: hdr(dns.TypeTXT), Txt: []string{value}})
		}
	}
	return rrs
}

// soa returns the SOA record of z, owned by owner.
func (v *view) soa(z zone, owner string) *dns.SOA {
	ttl := uint32(v.cfg.TTL.Seconds())
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: owner, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: ttl},
		Ns:      v.cfg.NSTargets[0] + ".",
		Mbox:    v.cfg.Hostmaster,
		Serial:  z.serial,
		Refresh: soaRefresh,
		Retry:   soaRetry,
		Expire:  soaExpire,
		Minttl:  ttl,
	}
}
