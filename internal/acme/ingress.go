package acme

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-acme/lego/v5/challenge/dns01"

	"github.com/sluicehq/sluice/internal/store"
)

// An agent ingress's job starts by checking that the domain is delegated
// to sluice: its NS records, as the resolver answers them, are exactly
// the ns_targets (Config.NSTargets). Until they are, the job waits: it
// stays in progress, without an error_code, its msg naming the NS records
// to set, and looks again at retries_at, with the backoff of an
// INTERNAL_ERROR. It is not a DNS_ERROR, which stops the job until the
// user sets the policy again: the user can only learn the ns_targets from
// the ingress made, and an NS record set at the parent zone takes its
// TTL, up to days, to be seen, so the job follows it on its own.

// ingressDue reports whether the ingress has a job to run now: one the
// jobs have not recorded yet, one waiting for its NS records or failed
// with an INTERNAL_ERROR whose retries_at has come, or a certificate
// whose renews_at has.
func (m *Manager) ingressDue(a store.AgentIngress) bool {
	if a.CertificatePolicy == nil || a.ProvisioningSince == nil || len(m.cfg.NSTargets) == 0 || len(m.cfg.Regions) == 0 {
		return false
	}
	now := m.cfg.Now()
	switch job := a.CertJob; {
	case job == nil:
		return a.RenewsAt == nil || !now.Before(*a.RenewsAt)
	case job.ErrorCode == store.CertErrorDNS:
		return false
	case job.RetriesAt == nil:
		return job.ErrorCode == "" // in progress: a job cut short
	}
	return !now.Before(*a.CertJob.RetriesAt)
}

// runIngress runs the ingress's job once, and records how it ended.
func (m *Manager) runIngress(ctx context.Context, a store.AgentIngress) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.JobTimeout)
	defer cancel()
	log := m.cfg.Logger.With("agent_ingress", a.ID, "domain", a.Domain)
	since := *a.ProvisioningSince
	job := store.CertificateJob{StartedAt: since}
	if a.CertJob != nil {
		job.Attempts = a.CertJob.Attempts
	}
	job.Attempts++
	step := func(msg string) error {
		job.Msg = msg
		return m.store.SetAgentIngressCertificateJob(ctx, a.AccountID, a.ID, since, job)
	}
	err := m.obtainIngress(ctx, a, step)
	var waiting *delegationError
	switch {
	case err == nil:
		log.Info("certificate stored")
		return
	case errors.Is(err, store.ErrCertificateUnmanaged), errors.Is(err, store.ErrNotFound):
		return // the policy was set anew or to null, or the ingress deleted, meanwhile
	case errors.As(err, &waiting):
		job.Msg, job.RetriesAt = err.Error(), m.retryAt(job.Attempts)
		log.Info("certificate job waiting for the domain's delegation", "found", waiting.Found)
	default:
		m.fail(&job, err, isDNSProblem(err), log)
	}
	err = m.store.SetAgentIngressCertificateJob(context.WithoutCancel(ctx), a.AccountID, a.ID, since, job)
	if err != nil && !errors.Is(err, store.ErrCertificateUnmanaged) && !errors.Is(err, store.ErrNotFound) {
		log.Warn("recording the certificate job", "error", err)
	}
}

// regionDomains are the ingress's tunnel.<region>.<domain>, by region.
func (m *Manager) regionDomains(a store.AgentIngress) map[string]string {
	names := make(map[string]string, len(m.cfg.Regions))
	for _, r := range m.cfg.Regions {
		names["tunnel."+r+"."+a.Domain] = r
	}
	return names
}

// obtainIngress checks the ingress's delegation, has the authority issue
// one certificate of all its region domains through DNS-01, answered by
// sluice's DNS in the ingress's zone, and stores it; step records what it
// does.
func (m *Manager) obtainIngress(ctx context.Context, a store.AgentIngress, step func(msg string) error) error {
	if err := step(fmt.Sprintf("certificate provisioning is in progress: checking that the NS records of %s are %s", a.Domain, strings.Join(m.cfg.NSTargets, ", "))); err != nil {
		return err
	}
	if err := m.checkDelegation(ctx, a.Domain, false); err != nil {
		return err
	}
	regions := m.regionDomains(a)
	domains := make([]string, 0, len(regions))
	for _, r := range m.cfg.Regions {
		domains = append(domains, "tunnel."+r+"."+a.Domain)
	}
	if err := step(fmt.Sprintf("certificate provisioning is in progress: ordering a certificate of %s from %s through DNS-01", strings.Join(domains, ", "), m.directory)); err != nil {
		return err
	}
	client, err := m.client(ctx)
	if err != nil {
		return err
	}
	p := &ingressProvider{store: m.store, ingressID: a.ID, regions: regions, timeout: m.cfg.PropagationTimeout, pollInterval: m.cfg.PollInterval}
	err = client.Challenge.SetDNS01Provider(p,
		dns01.WrapPreCheck(func(ctx context.Context, _, fqdn, value string, _ dns01.PreCheckFunc) (bool, error) {
			return m.dns.hasTXT(ctx, fqdn, value), nil
		}))
	if err != nil {
		return fmt.Errorf("setting up DNS-01: %w", err)
	}
	issued, err := m.order(ctx, client, domains, a.CertificatePolicy.PrivateKeyType)
	if err != nil {
		return err
	}
	_, err = m.store.SetAgentIngressCertificate(ctx, a.AccountID, a.ID, *a.ProvisioningSince, issued)
	return err
}

// ingressProvider is lego's DNS-01 provider of one agent ingress: it
// adds each region domain's TXT value under its token
// (store.IngressChallengeToken), which sluice's DNS serves at
// _acme-challenge.tunnel.<region>.<domain>, and removes it after.
type ingressProvider struct {
	store                 challenges
	ingressID             string
	regions               map[string]string // region domain → region
	timeout, pollInterval time.Duration
}

func (p *ingressProvider) token(domain string) (string, error) {
	region, ok := p.regions[strings.ToLower(domain)]
	if !ok {
		return "", fmt.Errorf("%s is no region domain of agent ingress %s", domain, p.ingressID)
	}
	return store.IngressChallengeToken(p.ingressID, region), nil
}

// Present adds the TXT value of the key authorization.
func (p *ingressProvider) Present(ctx context.Context, domain, _, keyAuth string) error {
	token, err := p.token(domain)
	if err != nil {
		return err
	}
	return p.store.AddACMEChallenge(ctx, token, challengeValue(keyAuth))
}

// CleanUp removes the TXT value of the key authorization.
func (p *ingressProvider) CleanUp(ctx context.Context, domain, _, keyAuth string) error {
	token, err := p.token(domain)
	if err != nil {
		return err
	}
	return p.store.RemoveACMEChallenge(ctx, token, challengeValue(keyAuth))
}

// Timeout is how long lego waits for the TXT value to be served, and how
// often it looks.
func (p *ingressProvider) Timeout() (time.Duration, time.Duration) { return p.timeout, p.pollInterval }
