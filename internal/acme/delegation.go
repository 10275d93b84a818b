package acme

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/sluicehq/sluice/internal/store"
)

// A domain is delegated to sluice when its NS records, as the resolver
// answers them, are exactly the ns_targets (Config.NSTargets): then
// sluice's DNS answers the names under it, the DNS-01 challenges'
// _acme-challenge names included. An agent ingress's job checks its
// domain (ingress.go); the job of a reserved domain under the service
// domain checks the service domain (obtain.go).

// delegationError is a domain whose NS records are not the ns_targets:
// the job waits for the user, or the operator, to set them. Its Error is
// the job's msg, which the tenant reads: an agent ingress's names the
// records the tenant sets; the service domain's says only that the
// operator has to act (the tick logs the records, serviceDelegation).
type delegationError struct {
	Domain    string
	NSTargets []string
	// Found says what the DNS answers instead.
	Found string
	// Every is set when Domain is the service domain, which the jobs of
	// the reserved domains under it wait for, looking again every Every
	// (Config.Interval); zero: an agent ingress's domain, looked at
	// again at retries_at.
	Every time.Duration
}

func (e *delegationError) Error() string {
	if e.Every > 0 {
		return fmt.Sprintf("certificate provisioning is in progress: waiting for the service's operator to delegate the service domain %s to sluice's DNS, which answers the certificate's validation; nothing to do on your side; checked again every %s",
			e.Domain, e.Every)
	}
	return fmt.Sprintf("certificate provisioning is waiting for %s to be delegated to sluice: set its NS records to %s (%s); checked again at retries_at",
		e.Domain, strings.Join(e.NSTargets, ", "), e.Found)
}

// checkDelegation returns a *delegationError unless the NS records of
// domain, as the resolver answers them, are the ns_targets, or an error of
// the resolver: the check that an agent ingress's domain (service false)
// or the service domain (true) is delegated to sluice's DNS, which answers
// the DNS-01 challenges in its zone.
func (m *Manager) checkDelegation(ctx context.Context, domain string, service bool) error {
	err := m.dns.checkNS(ctx, domain, m.cfg.NSTargets)
	var wrong *delegationError
	if service && errors.As(err, &wrong) {
		wrong.Every = m.cfg.Interval
	}
	return err
}

// serviceCheck is a tick's check of the service domain's delegation.
type serviceCheck struct {
	done bool
	err  error // checkDelegation's
}

// serviceDelegation returns the error of checkDelegation of the service
// domain, checked at the first call of the tick and remembered until the
// next: however many names under it are due, a tick asks the resolver
// once, and logs once what the operator must set while it is not
// delegated.
func (m *Manager) serviceDelegation(ctx context.Context) error {
	if m.service.done {
		return m.service.err
	}
	err := m.checkDelegation(ctx, m.cfg.ServiceDomain, true)
	m.service = serviceCheck{done: true, err: err}
	var waiting *delegationError
	if errors.As(err, &waiting) {
		m.cfg.Logger.Warn("the service domain is not delegated to sluice's DNS: the reserved domains under it wait for their certificates; set its NS records, at its registrar or parent zone, to the name servers of --ingress-ns-targets, served by --dns-listen",
			"service_domain", waiting.Domain, "ns_records_to_set", strings.Join(waiting.NSTargets, ", "), "found", waiting.Found)
	}
	return err
}

// wait records that the job of a domain under the service domain waits,
// for the reason serviceWait gives: in progress, without an error_code or
// retries_at, counting no attempt, its msg the reason's. It writes only
// when the msg changes, after extending the lease, so that a tick's cost
// of the names waiting is a comparison each, not a store read or write;
// it reports whether this process still holds the lease.
func (m *Manager) wait(ctx context.Context, d store.ReservedDomain, reason error) bool {
	prev := d.CertStatus.ProvisioningJob
	msg := reason.Error()
	if prev != nil && prev.ErrorCode == "" && prev.RetriesAt == nil && prev.Msg == msg {
		return true // waiting, as recorded
	}
	if !m.extendLease(ctx) {
		return false
	}
	job, since := m.jobOf(d)
	job.Msg = msg
	log := m.cfg.Logger.With("reserved_domain", d.ID, "domain", d.Domain)
	log.Info("certificate job waiting", "reason", msg)
	err := m.store.SetDomainCertificateJob(ctx, d.AccountID, d.ID, since, job)
	if err != nil && !errors.Is(err, store.ErrCertificateUnmanaged) && !errors.Is(err, store.ErrNotFound) {
		log.Warn("recording the certificate job", "error", err)
	}
	return true
}

// checkNS returns a *delegationError unless the NS records of domain are
// exactly targets, in any order and case, or an error of the resolver.
func (r resolver) checkNS(ctx context.Context, domain string, targets []string) error {
	answer, exists, err := r.lookup(ctx, domain, dns.TypeNS)
	if err != nil {
		return err
	}
	wrong := &delegationError{Domain: domain, NSTargets: targets}
	if !exists {
		wrong.Found = domain + " does not exist"
		return wrong
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
