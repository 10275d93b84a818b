package acme

import (
	"context"
	"time"
)

// The jobs due are found in memory, in the view (jobs) that a watch of
// the store (store.FollowCertificateJobs) keeps, not by listing every
// reserved domain and agent ingress of every account at each tick: a
// tick's store reads and writes, and its DNS queries, grow with the jobs
// that act in it, not with the accounts, which anyone can make by
// signing up. Nor do they grow with the names under the service domain
// while it is not delegated to sluice's DNS: the tick asks for its NS
// records once (serviceDelegation), and each name waiting costs a
// comparison in memory, and a store write only when its msg changes
// (wait); the view's scan alone grows with the resources managed.
//
// The watch runs only while this process holds the lease: taken, it
// starts; lost, it stops and the view is forgotten. Every process serving
// the API with --acme-directory runs a Manager, and one holds the lease
// for as long as it lives; the others would each keep a consumer on the
// store, decode every write of every reserved domain and agent ingress,
// and hold the view and the watch's keys (every resource's, some 100
// bytes each) for nothing. What the lease holder pays instead at a
// takeover is one read of them all, as one tick used to, before its first
// tick acts: a takeover comes when a holder has stopped extending the
// lease for JobTimeout and two intervals (6 minutes by default), next to
// which the seconds of that read do not count.
//
// A job acts on the view, which can lag the store by the watch's delay:
// the store has the last word. Each write of a job is a compare-and-swap
// on the resource as the store holds it then (SetDomainCertificateJob,
// SetDomainCertificate, SetAgentIngressCertificateJob,
// SetAgentIngressCertificate), refused with ErrCertificateUnmanaged when
// its policy is null by then or set anew: each write names the job it
// belongs to by its started_at (a reserved domain's, or an agent
// ingress's ProvisioningSince), and a policy set anew starts a job with
// another. A view that lags, or a job that runs while the user changes
// the policy, writes no status on a resource no longer managed and
// overwrites no newer job; the new job runs at the next tick instead. The job's own writes come back through the watch as
// new revisions, within milliseconds, long before the next tick; only a
// watch away for a whole interval while the store takes writes (it
// watches again a second after it ends) could have a tick run a job once
// more from the resource as it was before its last run: an order too
// many, or a retry before its retries_at, stored as any other.

// watch is the running watch of the jobs: its goroutine applies the
// changes of store.FollowCertificateJobs to Manager.jobs until cancel.
type watch struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has returned
	ready  chan struct{} // closed once the initial values are in the view
}

// startWatch starts the watch of the jobs into m.jobs, until ctx ends or
// stopWatch.
func (m *Manager) startWatch(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	w := &watch{cancel: cancel, done: make(chan struct{}), ready: make(chan struct{})}
	go func() {
		defer close(w.done)
		m.store.FollowCertificateJobs(ctx, m.cfg.Logger, m.jobs.apply, func() { close(w.ready) })
	}()
	m.watch = w
}

// stopWatch stops the watch, if one runs, waits for its goroutine, and
// forgets the view.
func (m *Manager) stopWatch() {
	if m.watch == nil {
		return
	}
	m.watch.cancel()
	<-m.watch.done
	m.watch = nil
	m.jobs.reset()
}

// loaded reports whether the watch runs and its initial values are in
// the view: the jobs due can be found in it.
func (m *Manager) loaded() bool {
	if m.watch == nil {
		return false
	}
	select {
	case <-m.watch.ready:
		return true
	default:
		return false
	}
}

// loading is closed when the initial values of the watch are in the
// view; nil (a case of a select never taken) if no watch runs, or they
// are in already.
func (m *Manager) loading() <-chan struct{} {
	if m.watch == nil || m.loaded() {
		return nil
	}
	return m.watch.ready
}

// ticker ticks every d until stop: time.NewTicker's, replaced in tests.
type ticker func(d time.Duration) (ticks <-chan time.Time, stop func())

func newTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}
