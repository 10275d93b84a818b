package store_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
)

// TestServiceNamesRefused keeps the names sluice hands out as CNAME and
// ACME challenge targets (<token>.cname.<service domain>,
// <token>.acme.<service domain>), and everything under them, from every
// family that holds a name (issue 23, item 3): no reserved domain, agent
// ingress or hostport there, under any of the service's domains.
func TestServiceNamesRefused(t *testing.T) {
	e := newEnvWith(t, store.Config{ServiceDomains: []string{"sluice.app", "edge.example.net"}})
	a := e.createAccount(t, "a").ID
	// A wildcard made before the rule, which covers names the service
	// hands out.
	if _, err := e.store.CreateUntrackedReservedDomain(e.ctx, a, store.ReservedDomain{Domain: "*.acme.sluice.app"}); err != nil {
		t.Fatal(err)
	}
	for _, domain := range []string{
		"cname.sluice.app", "*.cname.sluice.app", "acme.sluice.app", "*.acme.sluice.app",
		"3f2a09c1d2e3f4a5b6c7.acme.sluice.app", "x.y.cname.sluice.app", "CNAME.Edge.Example.Net",
		"*.acme.edge.example.net", "sluice.app", "*.sluice.app",
	} {
		err := errOf(e.store.CreateReservedDomain(e.ctx, a, store.ReservedDomain{Domain: domain}))
		if v := (*store.ValidationError)(nil); !errors.As(err, &v) || v.Field != "domain" {
			t.Errorf("reserved domain %s: %v, want a ValidationError of domain", domain, err)
		}
	}
	for _, domain := range []string{"sluice.app", "me.sluice.app", "x.acme.sluice.app", "example.net", "cname.edge.example.net"} {
		err := errOf(e.store.CreateAgentIngress(e.ctx, a, store.AgentIngress{Domain: domain}))
		if v := (*store.ValidationError)(nil); !errors.As(err, &v) || v.Field != "domain" {
			t.Errorf("agent ingress %s: %v, want a ValidationError of domain", domain, err)
		}
	}
	err := errOf(e.store.CreateHTTPSEdge(e.ctx, a, store.HTTPSEdge{Hostports: []string{"3f2a09c1d2e3f4a5b6c7.acme.sluice.app:443"}}))
	if v := (*store.ValidationError)(nil); !errors.As(err, &v) || v.Field != "hostports[0]" || !strings.Contains(err.Error(), "acme.sluice.app") {
		t.Errorf("a hostport under acme.sluice.app: %v, want a ValidationError of hostports[0]", err)
	}
	for _, domain := range []string{"cnames.sluice.app", "acme-corp.sluice.app", "cname.example.org"} {
		if err := errOf(e.store.CreateReservedDomain(e.ctx, a, store.ReservedDomain{Domain: domain})); err != nil {
			t.Errorf("reserved domain %s: %v", domain, err)
		}
	}
	if err := errOf(e.store.CreateAgentIngress(e.ctx, a, store.AgentIngress{Domain: "ingress.example.org"})); err != nil {
		t.Errorf("agent ingress ingress.example.org: %v", err)
	}
}

// TestUnownableNames lists, for the operator, the names made before the
// rules that no account may hold any longer, and nothing else.
func TestUnownableNames(t *testing.T) {
	e := newEnvWith(t, store.Config{ServiceDomains: []string{"sluice.app"}})
	a := e.createAccount(t, "a").ID
	var want []string
	for _, domain := range []string{"127.0.0.1", "co.uk", "*.acme.sluice.app"} {
		d, err := e.store.CreateUncheckedReservedDomain(e.ctx, a, domain)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, d.ID)
	}
	reserve(t, e, a, "fine.example.com")
	edge, err := e.store.CreateUncheckedHTTPSEdge(e.ctx, a, "fine.example.com:443", "x.cname.sluice.app:443")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, edge.ID+" of "+a+": hostport x.cname.sluice.app:443")
	got, err := e.store.UnownableNames(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("UnownableNames = %q, want %d entries naming %q", got, len(want), want)
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("UnownableNames = %q, want one naming %s", got, w)
		}
	}
}

// TestServiceNamesNameServers refuses the service's name servers
// (Config.ServiceNames, serve's --ingress-ns-targets), which agent
// ingresses hand out as ns_targets, and every name under them.
func TestServiceNamesNameServers(t *testing.T) {
	e := newEnvWith(t, store.Config{ServiceDomains: []string{"sluice.app"}, ServiceNames: []string{"ns1.sluice.app", "ns2.dns.example.net"}})
	a := e.createAccount(t, "a").ID
	for _, domain := range []string{"ns1.sluice.app", "*.ns1.sluice.app", "x.ns2.dns.example.net", "ns2.dns.example.net"} {
		err := errOf(e.store.CreateReservedDomain(e.ctx, a, store.ReservedDomain{Domain: domain}))
		if v := (*store.ValidationError)(nil); !errors.As(err, &v) || v.Field != "domain" || !strings.Contains(err.Error(), "name server") {
			t.Errorf("reserved domain %s: %v, want a ValidationError of domain", domain, err)
		}
	}
	if err := errOf(e.store.CreateAgentIngress(e.ctx, a, store.AgentIngress{Domain: "ns2.dns.example.net"})); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("agent ingress ns2.dns.example.net: %v, want it invalid", err)
	}
	if err := errOf(e.store.CreateReservedDomain(e.ctx, a, store.ReservedDomain{Domain: "ns3.sluice.app"})); err != nil {
		t.Errorf("reserved domain ns3.sluice.app: %v", err)
	}
}
