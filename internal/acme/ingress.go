package acme

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/miekg/dns"

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
// with an INTERNAL_ERROR whose retries_at has come.
func (m *Manager) ingressDue(a store.AgentIngress) bool {
	if a.CertificatePolicy == nil || a.ProvisioningSince == nil || len(m.cfg.NSTargets) == 0 {
		return false
	}
	job := a.CertJob
	switch {
	case job == nil:
		return true
	case job.ErrorCode == store.CertErrorDNS:
		return false
	}
	return job.RetriesAt != nil && !m.cfg.Now().Before(*job.RetriesAt)
}

// runIngress runs the ingress's job once, and records where it is.
func (m *Manager) runIngress(ctx context.Context, a store.AgentIngress) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.JobTimeout)
	defer cancel()
	log := m.cfg.Logger.With("agent_ingress", a.ID, "domain", a.Domain)
	job := store.CertificateJob{StartedAt: *a.ProvisioningSince}
	if a.CertJob != nil {
		job.Attempts = a.CertJob.Attempts
	}
	job.Attempts++
	err := m.dns.checkNS(ctx, a.Domain, m.cfg.NSTargets)
	var waiting *delegationError
	switch {
	case err == nil:
		job.Msg = fmt.Sprintf("certificate provisioning is in progress: the NS records of %s are %s", a.Domain, strings.Join(m.cfg.NSTargets, ", "))
		job.Attempts = 0
	case errors.As(err, &waiting):
		retry := m.cfg.Now().Add(m.retryDelay(job.Attempts))
		job.Msg, job.RetriesAt = err.Error(), &retry
		log.Info("certificate job waiting for the domain's delegation", "found", waiting.Found)
	default:
		retry := m.cfg.Now().Add(m.retryDelay(job.Attempts))
		job.ErrorCode, job.Msg, job.RetriesAt = store.CertErrorInternal, err.Error(), &retry
		log.Warn("certificate job failed", "error_code", job.ErrorCode, "error", err)
	}
	err = m.store.SetAgentIngressCertificateJob(context.WithoutCancel(ctx), a.AccountID, a.ID, *a.ProvisioningSince, job)
	if err != nil && !errors.Is(err, store.ErrCertificateUnmanaged) && !errors.Is(err, store.ErrNotFound) {
		log.Warn("recording the certificate job", "error", err)
	}
}

// delegationError is a domain whose NS records are not the ns_targets:
// the job waits for the user to set them.
type delegationError struct {
	Domain    string
	NSTargets []string
	// Found says what the DNS answers instead.
	Found string
}

func (e *delegationError) Error() string {
	return fmt.Sprintf("certificate provisioning is waiting for %s to be delegated to sluice: set its NS records to %s (%s); checked again at retries_at",
		e.Domain, strings.Join(e.NSTargets, ", "), e.Found)
}

// checkNS returns a *delegationError unless the NS records of domain are
// exactly targets, in any order and case, or an error of the resolver.
func (r resolver) checkNS(ctx context.Context, domain string, targets []string) error {
	answer, err := r.query(ctx, domain, dns.TypeNS)
	if err != nil {
		return err
	}
	wrong := &delegationError{Domain: domain, NSTargets: targets}
	switch answer.Rcode {
	case dns.RcodeSuccess:
	case dns.RcodeNameError:
		wrong.Found = domain + " does not exist"
		return wrong
	default:
		return fmt.Errorf("asking %s for NS %s: %s", r.addr, domain, dns.RcodeToString[answer.Rcode])
	}
	var found []string
	for _, rr := range answer.Answer {
		if ns, ok := rr.(*dns.NS); ok && strings.EqualFold(ns.Hdr.Name, dns.Fqdn(domain)) {
			found = append(found, strings.ToLower(strings.TrimSuffix(ns.Ns, ".")))
		}
	}
	want := make([]string, len(targets))
	for i, t := range targets {
		want[i] = strings.ToLower(strings.TrimSuffix(t, "."))
	}
	slices.Sort(found)
	found = slices.Compact(found)
	slices.Sort(want)
	want = slices.Compact(want)
	if slices.Equal(found, want) {
		return nil
	}
	if len(found) == 0 {
		wrong.Found = domain + " has no NS records"
	} else {
		wrong.Found = "its NS records are " + strings.Join(found, ", ")
	}
	return wrong
}
