package dnsserver

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"

	"github.com/sluicehq/sluice/internal/store"
)

// TestServiceZoneAllocations: an answer in the service domain's zone
// allocates no more than the same answer in the zones before it (a
// region domain's addresses, a challenge target's TXT value, a name that
// does not exist): finding the node costs map reads, no string built.
func TestServiceZoneAllocations(t *testing.T) {
	cfg := Config{
		NSTargets: []string{"ns1.example.net"}, Regions: []string{"us"}, ServiceDomains: []string{"sluice.test"},
		EdgeAddrs: []netip.Addr{netip.MustParseAddr("192.0.2.1")},
	}
	cfg.setDefaults()
	v := newView(&cfg)
	v.apply(store.DNSChange{Key: "agent_ingresses.a.ai_1", Revision: 1, AgentIngress: &store.AgentIngress{ID: "ai_1", Domain: "ingress.example.com"}})
	wildcard, custom := &store.ReservedDomain{ID: "rd_1", Domain: "*.team.sluice.test"}, &store.ReservedDomain{ID: "rd_2", Domain: "*.apps.example.com"}
	v.apply(store.DNSChange{Key: "reserved_domains.a.rd_1", Revision: 2, ReservedDomain: wildcard})
	v.apply(store.DNSChange{Key: "reserved_domains.a.rd_2", Revision: 3, ReservedDomain: custom})
	for i, d := range []*store.ReservedDomain{wildcard, custom} {
		token := store.DomainToken(d.ID)
		v.apply(store.DNSChange{Key: "acme_challenges." + token, Revision: uint64(4 + i), Challenge: &store.ACMEChallenge{Token: token, Values: []string{"value"}}})
	}
	v.setReady()
	allocs := func(name string, qtype uint16) float64 {
		q := new(dns.Msg)
		q.SetQuestion(name, qtype)
		return testing.AllocsPerRun(200, func() { v.answer(q) })
	}
	for _, tt := range []struct {
		name, before string
		qtype        uint16
	}{
		{"x.team.sluice.test.", "tunnel.us.ingress.example.com.", dns.TypeA},
		{"_acme-challenge.team.sluice.test.", store.DomainToken(custom.ID) + ".acme.sluice.test.", dns.TypeTXT},
		{"_acme-challenge.nobody.sluice.test.", "www.ingress.example.com.", dns.TypeTXT},
	} {
		if got, want := allocs(tt.name, tt.qtype), allocs(tt.before, tt.qtype); got > want {
			t.Errorf("%s %s: %.0f allocations, more than the %.0f of %s", tt.name, dns.TypeToString[tt.qtype], got, want, tt.before)
		}
	}
}
