package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/internal/dnsname"
)

// serviceNameLabels are the labels, under each of the service's domains,
// of the names sluice hands out: <token>.cname.<service domain> is where a
// custom domain's CNAME points, and <token>.acme.<service domain> where its
// _acme-challenge does (the API's reserved domain body). They and every
// name under them are the service's: an account holding one could take
// another account's traffic or certificates.
var serviceNameLabels = []string{"cname", "acme"}

// serviceNames returns the names the service hands out targets under,
// for each of its domains, cname.<domain> and acme.<domain>, and the more
// names it hands out (Config.ServiceNames).
func serviceNames(serviceDomains, more []string) []string {
	var names []string
	for _, sd := range serviceDomains {
		for _, label := range serviceNameLabels {
			names = append(names, label+"."+sd)
		}
	}
	return append(names, more...)
}

// under reports whether name is parent or a name under it.
func under(name, parent string) bool {
	return name == parent || strings.HasSuffix(name, "."+parent)
}

// checkServiceName returns a *ValidationError of field if domain,
// checked, or the base of a wildcard, is a name the service hands out
// (Store.serviceNames) or a name under one, or nil. Nothing there
// can be reserved, be an edge's hostport or an agent ingress's domain.
func (s *Store) checkServiceName(field, domain string) error {
	base := reservationBase(domain)
	for _, own := range s.serviceNames {
		if under(base, own) {
			return invalid(field, "is %q, at or under %s, a name the service hands out (a CNAME or ACME challenge target, or a name server), which no account can hold: choose a name outside %s", domain, own, own)
		}
	}
	return nil
}

// checkIngressDomain returns a *ValidationError of the field "domain" if
// the agent ingress domain, checked, is a service domain, under one, or
// above one (its NS records would delegate the service's own zone), or
// under the names the service hands out (checkServiceName), or nil.
func (s *Store) checkIngressDomain(domain string) error {
	for _, sd := range s.serviceDomains {
		if under(domain, sd) || under(sd, domain) {
			return invalid("domain", "is %q, which is, is under or covers the service's own domain %s: give a domain your account owns", domain, sd)
		}
	}
	return s.checkServiceName("domain", domain)
}

// checkReservable returns a *ValidationError of the field "domain" if the
// reserved domain, checked, is one of the service's domains, a wildcard
// covering one (CheckNotServiceDomain), or under the names the service
// hands out (checkServiceName), or nil.
func (s *Store) checkReservable(domain string) error {
	if err := CheckNotServiceDomain(domain, s.serviceDomains); err != nil {
		return err
	}
	return s.checkServiceName("domain", domain)
}

// UnownableNames returns, for the operator, each reserved domain, agent
// ingress and HTTPS edge hostport in the store that no account may hold
// any longer, made before the rules that refuse them: an IP address or a
// bare public suffix (dnsname.Check), or a name the service hands out
// targets under (checkServiceName). Each is its family's noun, its id,
// its account and the name. They keep working until deleted.
func (s *Store) UnownableNames(ctx context.Context) ([]string, error) {
	var found []string
	unownable := func(name string, opts dnsname.Option) bool {
		_, err := dnsname.Check(name, opts)
		return err != nil || s.checkServiceName("domain", name) != nil
	}
	domains, err := listRecords[ReservedDomain](ctx, s, reservedDomains.kind+".*.*")
	if err != nil {
		return nil, fmt.Errorf("listing reserved domains: %w", err)
	}
	for _, d := range domains {
		if unownable(d.Domain, dnsname.Wildcard) {
			found = append(found, fmt.Sprintf("reserved domain %s of %s: %s", d.ID, d.AccountID, d.Domain))
		}
	}
	ingresses, err := listRecords[AgentIngress](ctx, s, agentIngresses.kind+".*.*")
	if err != nil {
		return nil, fmt.Errorf("listing agent ingresses: %w", err)
	}
	for _, a := range ingresses {
		if unownable(a.Domain, 0) {
			found = append(found, fmt.Sprintf("agent ingress %s of %s: %s", a.ID, a.AccountID, a.Domain))
		}
	}
	edges, err := listRecords[HTTPSEdge](ctx, s, httpsEdges.kind+".*.*")
	if err != nil {
		return nil, fmt.Errorf("listing HTTPS edges: %w", err)
	}
	for _, e := range edges {
		for _, hp := range e.Hostports {
			if host := strings.TrimSuffix(hp, ":"+HTTPSPort); unownable(host, 0) {
				found = append(found, fmt.Sprintf("HTTPS edge %s of %s: hostport %s", e.ID, e.AccountID, hp))
			}
		}
	}
	return found, nil
}
