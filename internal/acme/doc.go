// Package acme obtains and renews the certificates of reserved domains from
// an ACME certificate authority (Let's Encrypt, or Pebble in tests), on
// github.com/go-acme/lego/v5, and stores them for the edge to serve: a
// Manager runs the provisioning jobs that the reserved domains'
// certificate_management_status records (spec 2.1, 2.2, 3, 7), in one
// process at a time (a lease in the store).
//
// A custom wildcard domain is validated through DNS-01: the user CNAMEs
// _acme-challenge.<domain> to the domain's acme_challenge_cname_target,
// <token>.acme.<first service domain>, whose TXT values sluice's DNS
// server (package dnsserver) serves from the store. Another custom domain
// is validated through HTTP-01: the user CNAMEs it to its cname_target,
// and the edges answer the challenge from the store. A name under the
// first service domain, wildcard or not, is validated through DNS-01 at
// its own _acme-challenge name, which sluice's DNS answers in the service
// domain's zone: its job waits, in progress, until the service domain's
// NS records are the ns_targets (the operator delegates it to sluice's
// DNS), and while the budget of their orders, which no tenant proves
// anything for, is spent (budget.go). An agent ingress's region domains are validated through DNS-01
// in its own zone, delegated likewise. It is not an ACME server, nor a
// DNS server, and it does not serve certificates (package edge does).
package acme
