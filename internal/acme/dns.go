package acme

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/sluicehq/sluice/internal/store"
)

// DNSError is a DNS record the user must fix before a certificate can be
// issued: a DNS_ERROR (spec 7), which is not retried until the user sets
// the policy again.
type DNSError struct {
	// Record is the record to set, "_acme-challenge.<domain> CNAME
	// <target>".
	Record string
	// Found says what the DNS answers instead.
	Found string
}

func (e *DNSError) Error() string {
	return fmt.Sprintf("set the DNS record %s (%s), then set the certificate_management_policy again", e.Record, e.Found)
}

// RecordMissing is a DNS record the user has not created yet. The job
// waits for it, in progress, looking again at retries_at, rather than end
// DNS_ERROR: the user learns the record's target only from the reserved
// domain made, so its first job almost always runs before the record
// exists (as an agent ingress's job waits for its NS records).
type RecordMissing struct {
	// Record is the record to create, as in DNSError.
	Record string
	// Found says what the DNS answers instead: that the name does not
	// exist, or has no CNAME record.
	Found string
}

func (e *RecordMissing) Error() string {
	return fmt.Sprintf("certificate provisioning is in progress: waiting for the DNS record %s (%s); create it, and sluice looks again at retries_at, or at once if the certificate_management_policy is sent again while the job waits", e.Record, e.Found)
}

// challengeName is the DNS-01 name of the domain: _acme-challenge and the
// domain without its wildcard label.
func challengeName(domain string) string {
	return "_acme-challenge." + strings.TrimPrefix(domain, "*.")
}

// challengeValue is the TXT value of a DNS-01 key authorization (RFC 8555
// 8.4): the base64url of its SHA-256.
func challengeValue(keyAuth string) string {
	sum := sha256.Sum256([]byte(keyAuth))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// resolver asks one recursive DNS resolver.
type resolver struct {
	addr    string
	timeout time.Duration
}

// query asks the resolver for the records of type qtype at name.
func (r resolver) query(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = true
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	c := &dns.Client{Timeout: r.timeout}
	answer, _, err := c.ExchangeContext(ctx, m, r.addr)
	if err == nil && answer.Truncated {
		c.Net = "tcp"
		answer, _, err = c.ExchangeContext(ctx, m, r.addr)
	}
	if err != nil {
		return nil, fmt.Errorf("asking %s for %s %s: %w", r.addr, dns.TypeToString[qtype], name, err)
	}
	return answer, nil
}

// lookup asks the resolver for the records of name of qtype: the answer,
// or false when name does not exist (NXDOMAIN); any other failure is an
// error.
func (r resolver) lookup(ctx context.Context, name string, qtype uint16) (*dns.Msg, bool, error) {
	answer, err := r.query(ctx, name, qtype)
	if err != nil {
		return nil, false, err
	}
	switch answer.Rcode {
	case dns.RcodeSuccess:
		return answer, true, nil
	case dns.RcodeNameError:
		return answer, false, nil
	}
	return nil, false, fmt.Errorf("asking %s for %s %s: %s", r.addr, dns.TypeToString[qtype], name, dns.RcodeToString[answer.Rcode])
}

// checkCNAME returns nil if name is a CNAME of target; a *RecordMissing
// if name has no CNAME record yet; a *DNSError if it is a CNAME of another
// name; or an error of the resolver.
func (r resolver) checkCNAME(ctx context.Context, name, target string) error {
	record := name + " CNAME " + target
	answer, exists, err := r.lookup(ctx, name, dns.TypeCNAME)
	if err != nil {
		return err
	}
	if !exists {
		return &RecordMissing{Record: record, Found: name + " does not exist"}
	}
	for _, rr := range answer.Answer {
		if c, ok := rr.(*dns.CNAME); ok && strings.EqualFold(c.Hdr.Name, dns.Fqdn(name)) {
			if strings.EqualFold(c.Target, dns.Fqdn(target)) {
				return nil
			}
			return &DNSError{Record: record, Found: name + " is a CNAME of " + strings.TrimSuffix(c.Target, ".")}
		}
	}
	return &RecordMissing{Record: record, Found: name + " has no CNAME record"}
}

// hasTXT reports whether the resolver answers value among the TXT records
// of name.
func (r resolver) hasTXT(ctx context.Context, name, value string) bool {
	answer, err := r.query(ctx, name, dns.TypeTXT)
	if err != nil {
		return false
	}
	for _, rr := range answer.Answer {
		if t, ok := rr.(*dns.TXT); ok && strings.Join(t.Txt, "") == value {
			return true
		}
	}
	return false
}

// challenges is what the DNS-01 provider writes to: the store's ACME
// challenges, which sluice's DNS servers answer.
type challenges interface {
	AddACMEChallenge(ctx context.Context, token, value string) error
	RemoveACMEChallenge(ctx context.Context, token, value string) error
}

// provider is lego's DNS-01 provider of one reserved domain: it adds the
// challenge's TXT value under the domain's token, which sluice's DNS
// serves at its acme_challenge_cname_target, and removes it after.
type provider struct {
	store                 challenges
	token                 string
	timeout, pollInterval time.Duration
}

// Present adds the TXT value of the key authorization.
func (p *provider) Present(ctx context.Context, _, _, keyAuth string) error {
	return p.store.AddACMEChallenge(ctx, p.token, challengeValue(keyAuth))
}

// CleanUp removes the TXT value of the key authorization.
func (p *provider) CleanUp(ctx context.Context, _, _, keyAuth string) error {
	return p.store.RemoveACMEChallenge(ctx, p.token, challengeValue(keyAuth))
}

// Timeout is how long lego waits for the TXT value to be served, and how
// often it looks.
func (p *provider) Timeout() (time.Duration, time.Duration) { return p.timeout, p.pollInterval }

// httpChallenges is what the HTTP-01 provider writes to: the store's
// HTTP-01 challenges, which every edge answers on its HTTP listener.
type httpChallenges interface {
	PutHTTPChallenge(ctx context.Context, c store.HTTPChallenge) error
	RemoveHTTPChallenge(ctx context.Context, domain, token string) error
}

// httpProvider is lego's HTTP-01 provider: it stores the challenge's key
// authorization, which the edges answer at
// http://<domain>/.well-known/acme-challenge/<token>, and removes it after.
type httpProvider struct{ store httpChallenges }

// Present stores the challenge.
func (p *httpProvider) Present(ctx context.Context, domain, token, keyAuth string) error {
	return p.store.PutHTTPChallenge(ctx, store.HTTPChallenge{Domain: domain, Token: token, KeyAuthorization: keyAuth})
}

// CleanUp removes the challenge.
func (p *httpProvider) CleanUp(ctx context.Context, domain, token, _ string) error {
	return p.store.RemoveHTTPChallenge(ctx, domain, token)
}
