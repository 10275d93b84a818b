// Package dnsserver is sluice's authoritative DNS server: it answers, over
// UDP and TCP, for the zones of agent ingresses (each domain an account
// delegates to the service by NS records, with its region domains
// tunnel.<region>.<domain> at the edge's addresses, and the TXT values of
// their pending ACME DNS-01 challenges at
// _acme-challenge.tunnel.<region>.<domain>) and for the two zones
// of reserved domains under the first service domain: cname.<service
// domain>, whose <token>.cname names a custom domain's CNAME reaches the
// edge through, and acme.<service domain>, whose <token>.acme names hold
// the TXT values of pending ACME DNS-01 challenges.
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
