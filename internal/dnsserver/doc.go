// Package dnsserver is sluice's authoritative DNS server: it answers, over
// UDP and TCP, for the zones of agent ingresses (each domain an account
// delegates to the service by NS records, with its region domains
// tunnel.<region>.<domain> at the edge's addresses, and the TXT values of
// their pending ACME DNS-01 challenges at
// _acme-challenge.tunnel.<region>.<domain>), for the two zones
// of reserved domains under the first service domain: cname.<service
// domain>, whose <token>.cname names a custom domain's CNAME reaches the
// edge through, and acme.<service domain>, whose <token>.acme names hold
// the TXT values of pending ACME DNS-01 challenges, and for the zone of
// the first service domain itself, around those two, for an operator who
// delegates it: every host name under it at the edge's addresses (the
// names endpoints take), and _acme-challenge.<name>.<service domain> with
// the TXT values of the pending challenges of the reserved domain
// <name>.<service domain> or *.<name>.<service domain>, which package
// acme orders certificates of. The more specific zone answers a name.
//
// Every answer comes from memory, a view the store's watch (FollowDNS)
// keeps up to date: a query costs no store read, and every process
// serving DNS from one store answers alike.
//
// It is not a resolver: a name outside its zones is REFUSED, it never
// recurses, and it does not transfer zones, sign them (DNSSEC) or take
// dynamic updates. Nor does it limit the rate of answers per client: put
// it behind a network that does, if its addresses draw floods.
package dnsserver
