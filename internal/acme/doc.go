// Package acme obtains and renews the certificates of reserved domains from
// an ACME certificate authority (Let's Encrypt, or Pebble in tests), on
// github.com/go-acme/lego/v5, and stores them for the edge to serve: a
// Manager runs the provisioning jobs that the reserved domains'
// certificate_management_status records (spec 2.1, 2.2, 3, 7), in one
// process at a time (a lease in the store).
//
// It answers DNS-01 challenges only, for custom wildcard domains: the
// user CNAMEs _acme-challenge.<domain> to the domain's
// acme_challenge_cname_target, <token>.acme.<first service domain>, whose
// TXT values sluice's DNS server (package dnsserver) serves from the store.
// It is not an ACME server, nor a DNS server, and it does not serve
// certificates (package edge does).
package acme
