package acme

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/sluicehq/sluice/internal/store"
)

// leaseName names the lease of the certificate jobs in the store.
const leaseName = "acme_jobs"

// Manager runs the certificate jobs of reserved domains and agent
// ingresses: while it holds the lease it follows them in the store, and
// every Config.Interval runs the jobs due one after another (watch.go).
// Run it with Run.
type Manager struct {
	cfg       Config
	store     Store
	directory string // the directory URL
	dns       resolver
	jobs      *jobs  // the view of the jobs, while watch runs
	watch     *watch // nil unless this process holds the lease; Run's (tick's) alone
	ticker    ticker
	// service is the tick's check of the service domain's delegation,
	// made at most once a tick (serviceDelegation); Run's (tick's) alone.
	service serviceCheck
	// orders is the budget of the orders of names under the service
	// domain (budget.go); Run's (tick's) alone.
	orders *orderBudget
}

// New returns a Manager of the jobs in st. It starts nothing; it returns
// the error of cfg.Validate.
func New(st Store, cfg Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Manager{
		cfg: cfg, store: st, directory: DirectoryURL(cfg.Directory),
		dns:  resolver{addr: cfg.Resolver, timeout: 5 * time.Second},
		jobs: newJobs(), ticker: newTicker, orders: newOrderBudget(cfg.ServiceDomainOrders),
	}, nil
}

// Run runs the jobs due until ctx ends; it returns nil then.
func (m *Manager) Run(ctx context.Context) error {
	defer m.stopWatch()
	ticks, stop := m.ticker(m.cfg.Interval)
	defer stop()
	for {
		m.tick(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
		case <-m.loading(): // the lease's first tick: act now, not an interval later
		}
	}
}

// tick runs the jobs due, if this process holds the lease and the view
// of the jobs is loaded; it starts the watch when the lease is taken, and
// stops it when it is lost.
func (m *Manager) tick(ctx context.Context) {
	log := m.cfg.Logger
	held, err := m.store.TakeLease(ctx, leaseName, m.cfg.Holder, m.cfg.JobTimeout+2*m.cfg.Interval)
	if err != nil {
		log.Warn("taking the lease of the certificate jobs", "error", err)
		return // the lease may be held still: the watch goes on
	}
	if !held {
		m.stopWatch()
		return
	}
	m.sweepChallenges(ctx)
	if m.watch == nil {
		m.startWatch(ctx)
	}
	if !m.loaded() {
		return // Run ticks again once it is
	}
	m.service = serviceCheck{}
	for _, key := range m.jobs.dueDomains(m.due) {
		// The jobs before this one took time: it is run as the view
		// holds it now, if it is due still.
		d, ok := m.jobs.domain(key)
		if !ok || !m.due(d) {
			continue
		}
		if reason := m.serviceWait(ctx, d); reason != nil {
			// No order can start: the job waits, at the cost of no
			// query, and of no store write unless its msg changes.
			if !m.wait(ctx, d, reason) {
				return
			}
			continue
		}
		if !m.extendLease(ctx) {
			return
		}
		m.run(ctx, d)
	}
	for _, key := range m.jobs.dueIngresses(m.ingressDue) {
		a, ok := m.jobs.ingress(key)
		if !ok || !m.ingressDue(a) {
			continue
		}
		if !m.extendLease(ctx) {
			return
		}
		m.runIngress(ctx, a)
	}
}

// serviceWait returns why the job of a name under the service domain
// cannot order now: the service domain is not delegated (a
// *delegationError, checked once a tick), or the budget of orders is
// spent (a *budgetError); nil for any other domain, or when it can.
func (m *Manager) serviceWait(ctx context.Context, d store.ReservedDomain) error {
	if !m.underServiceDomain(d.Domain) {
		return nil
	}
	var waiting *delegationError
	if err := m.serviceDelegation(ctx); errors.As(err, &waiting) {
		return waiting
	}
	if full := m.orders.check(d.AccountID, m.cfg.Now()); full != nil {
		return full
	}
	return nil
}

// extendLease extends the lease before a job, so that no other process
// starts while this one runs; it reports whether this process still
// holds it and ctx has not ended.
func (m *Manager) extendLease(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	held, err := m.store.TakeLease(ctx, leaseName, m.cfg.Holder, m.cfg.JobTimeout+2*m.cfg.Interval)
	return err == nil && held
}

// due reports whether the domain has a job to run now: one whose job is
// new or in progress (waiting for the service domain's delegation, for a
// name under it), waiting for a DNS record or failed with an
// INTERNAL_ERROR whose retries_at has come, or whose renews_at has. A name under the service domain has no
// job without Config.NSTargets, which its delegation is checked against,
// and a name under another service domain none at all.
func (m *Manager) due(d store.ReservedDomain) bool {
	switch {
	case d.CertStatus == nil:
		return false
	case m.underServiceDomain(d.Domain):
		if len(m.cfg.NSTargets) == 0 {
			return false
		}
	case store.UnderServiceDomain(d.Domain, m.cfg.ServiceDomains):
		return false
	}
	now := m.cfg.Now()
	st := d.CertStatus
	switch job := st.ProvisioningJob; {
	case job == nil:
		return st.RenewsAt != nil && !now.Before(*st.RenewsAt)
	case job.ErrorCode == "":
		return job.RetriesAt == nil || !now.Before(*job.RetriesAt) // waiting for a record: at retries_at
	case job.ErrorCode == store.CertErrorInternal:
		return job.RetriesAt == nil || !now.Before(*job.RetriesAt)
	}
	return false // DNS_ERROR: the user fixes the record and sets the policy again
}

// underServiceDomain reports whether the domain is a name under the
// service domain, whose zone sluice's DNS serves.
func (m *Manager) underServiceDomain(domain string) bool {
	return store.UnderServiceDomain(domain, []string{m.cfg.ServiceDomain})
}

// run runs the domain's job once, and records how it ended. A job
// waiting for the service domain's delegation, or for the budget of
// orders of the names under it, stays in progress, without an error_code
// or retries_at, and counts no attempt: it is looked at again at the
// next tick, and written only when its msg changes (wait). A name
// under the service domain never ends DNS_ERROR, which waits for the
// user: the authority's DNS problem is an INTERNAL_ERROR there.
func (m *Manager) run(ctx context.Context, d store.ReservedDomain) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.JobTimeout)
	defer cancel()
	log := m.cfg.Logger.With("reserved_domain", d.ID, "domain", d.Domain)
	job, since := m.jobOf(d)
	job.Attempts++
	step := func(msg string) error {
		job.Msg = msg
		if err := m.store.SetDomainCertificateJob(ctx, d.AccountID, d.ID, since, job); err != nil {
			return err
		}
		since = job.StartedAt // a renewal's job is recorded now
		return nil
	}
	issued, err := m.obtain(ctx, d, step)
	if err == nil {
		_, err = m.store.SetDomainCertificate(ctx, d.AccountID, d.ID, since, issued, m.cfg.Events)
	}
	var dnsErr *DNSError
	var missing *RecordMissing
	var waiting *delegationError
	var full *budgetError
	switch {
	case err == nil:
		log.Info("certificate stored")
		return
	case errors.Is(err, store.ErrCertificateUnmanaged), errors.Is(err, store.ErrNotFound):
		return // the policy was set anew or to null, or the domain deleted, meanwhile
	case errors.As(err, &waiting), errors.As(err, &full):
		// The tick found no reason to wait (serviceWait) but the job
		// did: recorded as wait records it, under the job's since.
		job.Attempts--
		job.ErrorCode, job.Msg, job.RetriesAt = "", err.Error(), nil
		log.Info("certificate job waiting", "reason", err.Error())
	case errors.As(err, &missing):
		// The user's record, not made yet: looked at again with the
		// backoff of an INTERNAL_ERROR, without one.
		job.ErrorCode, job.Msg, job.RetriesAt = "", err.Error(), m.retryAt(job.Attempts)
		log.Info("certificate job waiting for a DNS record", "record", missing.Record, "found", missing.Found)
	default:
		// A DNS problem is the user's record to fix; under the service
		// domain, the DNS is the operator's, and the job retries as
		// after an INTERNAL_ERROR.
		usersDNS := (errors.As(err, &dnsErr) || isDNSProblem(err)) && !m.underServiceDomain(d.Domain)
		m.fail(&job, err, usersDNS, log)
	}
	if err := m.store.SetDomainCertificateJob(context.WithoutCancel(ctx), d.AccountID, d.ID, since, job); err != nil && !errors.Is(err, store.ErrCertificateUnmanaged) {
		log.Warn("recording the certificate job", "error", err)
	}
}

// jobOf returns the domain's job as the view holds it, to go on with, and
// its started_at, which the job's writes name (SetDomainCertificateJob):
// a new job starting now, and zero, for a renewal.
func (m *Manager) jobOf(d store.ReservedDomain) (job store.CertificateJob, since time.Time) {
	prev := d.CertStatus.ProvisioningJob
	if prev == nil {
		return store.CertificateJob{StartedAt: m.cfg.Now()}, time.Time{}
	}
	return store.CertificateJob{StartedAt: prev.StartedAt, Attempts: prev.Attempts}, prev.StartedAt
}

// fail records in the job that it failed with err: a DNS_ERROR, which
// waits for the user to fix their DNS and set the policy again, if dns,
// else an INTERNAL_ERROR, retried at retryAt.
func (m *Manager) fail(job *store.CertificateJob, err error, dns bool, log *slog.Logger) {
	job.ErrorCode, job.Msg, job.RetriesAt = store.CertErrorDNS, err.Error(), nil
	if !dns {
		job.ErrorCode, job.RetriesAt = store.CertErrorInternal, m.retryAt(job.Attempts)
	}
	log.Warn("certificate job failed", "error_code", job.ErrorCode, "error", err)
}

// retryAt is when a job retries after its attempt-th failure (see
// retryDelay).
func (m *Manager) retryAt(attempt int) *time.Time {
	at := m.cfg.Now().Add(m.retryDelay(attempt))
	return &at
}

// isDNSProblem reports whether the authority failed the challenge for a
// DNS reason (RFC 8555 6.7's dns and unauthorized problems), which the
// user's DNS must fix.
func isDNSProblem(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "urn:ietf:params:acme:error:dns") || strings.Contains(msg, "urn:ietf:params:acme:error:unauthorized")
}

// retryDelay is the delay before the retry after the attempt-th failure:
// exponential from RetryInterval, with jitter, at most 6 hours.
func (m *Manager) retryDelay(attempt int) time.Duration {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = m.cfg.RetryInterval
	b.MaxInterval = 6 * time.Hour
	b.MaxElapsedTime = 0
	b.Reset()
	delay := b.NextBackOff()
	for range attempt - 1 {
		delay = b.NextBackOff()
	}
	return delay
}

// renewsAt is when a certificate valid until notAfter is renewed.
func (m *Manager) renewsAt(notAfter time.Time) time.Time {
	return notAfter.Add(-m.cfg.RenewBefore)
}

// target is the acme_challenge_cname_target of the domain.
func (m *Manager) target(d store.ReservedDomain) string {
	return store.DomainToken(d.ID) + ".acme." + m.cfg.ServiceDomain
}

// cnameTarget is the cname_target of the domain.
func (m *Manager) cnameTarget(d store.ReservedDomain) string {
	return store.DomainToken(d.ID) + ".cname." + m.cfg.ServiceDomain
}
