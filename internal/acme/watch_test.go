package acme

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/acmetest"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
)

// syncedStore is the store of env's Manager: each lease it takes waits
// until the manager's view of the jobs is loaded and is the store's, so
// that a test's writes are seen by the tick it runs next, as in
// production the watch sees them within milliseconds, an interval before.
// A view that does not get there in 10 s fails the test.
type syncedStore struct {
	store.Certificates
	st      *store.Store
	t       *testing.T
	account string
	manager *Manager     // whose goroutine alone takes the lease
	leases  atomic.Int64 // the calls of TakeLease
}

func (s *syncedStore) TakeLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	s.leases.Add(1)
	held, err := s.Certificates.TakeLease(ctx, name, holder, ttl)
	if err != nil || !held || s.manager == nil || s.manager.watch == nil {
		return held, err
	}
	return held, s.waitSynced(ctx)
}

// waitSynced waits until the manager's view is the store's.
func (s *syncedStore) waitSynced(ctx context.Context) error {
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	for {
		diff, err := s.diff(ctx)
		if err != nil || diff == "" {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			s.t.Errorf("after 10 s, the manager's view of the jobs is not the store's: %s", diff)
			return errors.New("the view of the jobs is behind")
		case <-poll.C:
		}
	}
}

// diff says how the manager's view differs from the managed resources of
// the account in the store; "" if it does not.
func (s *syncedStore) diff(ctx context.Context) (string, error) {
	if !s.manager.loaded() {
		return "not loaded", nil
	}
	domains, _, err := s.st.ListReservedDomains(ctx, s.account, store.Page{Limit: store.MaxPageLimit})
	if err != nil {
		return "", err
	}
	ingresses, _, err := s.st.ListAgentIngresses(ctx, s.account, store.Page{Limit: store.MaxPageLimit})
	if err != nil {
		return "", err
	}
	want := map[string]any{}
	for _, d := range domains {
		if d.CertPolicy != nil {
			want["reserved_domains."+d.AccountID+"."+d.ID] = jobDomain(d)
		}
	}
	for _, a := range ingresses {
		if a.CertificatePolicy != nil {
			want["agent_ingresses."+a.AccountID+"."+a.ID] = jobIngress(a)
		}
	}
	got := s.manager.jobs.all()
	for key, w := range want {
		g, ok := got[key]
		if !ok {
			return key + " missing", nil
		}
		gv, _ := json.Marshal(g)
		wv, _ := json.Marshal(w)
		if !bytes.Equal(gv, wv) {
			return fmt.Sprintf("%s is %s, want %s", key, gv, wv), nil
		}
	}
	for key := range got {
		if _, ok := want[key]; !ok {
			return key + " held, not managed", nil
		}
	}
	return "", nil
}

// all returns the view, by key.
func (j *jobs) all() map[string]any {
	j.mu.Lock()
	defer j.mu.Unlock()
	all := make(map[string]any, len(j.domains)+len(j.ingresses))
	for k, d := range j.domains {
		all[k] = d
	}
	for k, a := range j.ingresses {
		all[k] = a
	}
	return all
}

// keys returns the keys the view holds, in order.
func (j *jobs) keys() []string {
	all := j.all()
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sync waits until the env's manager's view of the jobs is the store's.
func (e *env) sync(t *testing.T) {
	t.Helper()
	if err := e.manager.store.(*syncedStore).waitSynced(e.ctx); err != nil {
		t.Fatal(err)
	}
}

func (e *env) domainKey(d store.ReservedDomain) string {
	return "reserved_domains." + e.account + "." + d.ID
}

func (e *env) setPolicy(t *testing.T, id string, p *store.CertificatePolicy) {
	t.Helper()
	if _, err := e.store.UpdateReservedDomain(e.ctx, e.account, id, func(d *store.ReservedDomain) error {
		d.CertPolicy = p
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestViewFollowsPolicies: the manager's view of the jobs holds a
// reserved domain once its policy is set, after the manager started, and
// its next tick runs its job; it drops a domain whose policy is set to
// null, a domain deleted, and an agent ingress whose policy is set to
// null; it keeps no description or metadata.
func TestViewFollowsPolicies(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	holds := func(want ...string) {
		t.Helper()
		e.sync(t)
		if got := e.manager.jobs.keys(); !slices.Equal(got, want) {
			t.Fatalf("the view holds %q, want %q", got, want)
		}
	}
	late, err := e.store.CreateReservedDomain(e.ctx, e.account, store.ReservedDomain{Domain: "late.example.com", Metadata: "kept in the store only"})
	if err != nil {
		t.Fatal(err)
	}
	holds()
	e.setPolicy(t, late.ID, &store.CertificatePolicy{})
	holds(e.domainKey(late))
	if d, _ := e.manager.jobs.domain(e.domainKey(late)); d.Metadata != "" || d.Domain != "late.example.com" {
		t.Errorf("the view holds %+v; want the domain without its metadata", d)
	}
	e.manager.tick(e.ctx)
	if job := e.domain(t, late.ID).CertStatus.ProvisioningJob; job == nil || job.ErrorCode != "" || job.RetriesAt == nil {
		t.Fatalf("after the tick, job %+v; want one waiting for the CNAME, with a retries_at", job)
	}
	e.setPolicy(t, late.ID, nil)
	holds()

	wildcard := e.reserve(t, "*.gone.example.com")
	a, err := e.store.CreateAgentIngress(e.ctx, e.account, store.AgentIngress{
		Domain: "agents.example.com", CertificatePolicy: &store.CertificatePolicy{},
	})
	if err != nil {
		t.Fatal(err)
	}
	ingressKey := "agent_ingresses." + e.account + "." + a.ID
	holds(ingressKey, e.domainKey(wildcard))
	if _, err := e.store.DeleteReservedDomain(e.ctx, e.account, wildcard.ID); err != nil {
		t.Fatal(err)
	}
	holds(ingressKey)
	if _, err := e.store.UpdateAgentIngress(e.ctx, e.account, a.ID, func(a *store.AgentIngress) error {
		a.CertificatePolicy = nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	holds()
}

// gatedStore holds back the ready of the watch until gate is closed,
// counts the leases taken and the jobs recorded, and fails to take the
// lease while away.
type gatedStore struct {
	store.Certificates
	gate         chan struct{}
	leases, jobs atomic.Int32
	away         atomic.Bool
}

func (s *gatedStore) FollowCertificateJobs(ctx context.Context, log *slog.Logger, apply func(store.CertificateChange), ready func()) {
	s.Certificates.FollowCertificateJobs(ctx, log, apply, func() {
		select {
		case <-s.gate:
			ready()
		case <-ctx.Done():
		}
	})
}

func (s *gatedStore) TakeLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	s.leases.Add(1)
	if s.away.Load() {
		return false, errors.New("the store is away (the test says)")
	}
	return s.Certificates.TakeLease(ctx, name, holder, ttl)
}

func (s *gatedStore) SetDomainCertificateJob(ctx context.Context, accountID, domainID string, since time.Time, job store.CertificateJob) error {
	s.jobs.Add(1)
	return s.Certificates.SetDomainCertificateJob(ctx, accountID, domainID, since, job)
}

// TestFirstTickWaitsForView: a manager that takes the lease runs no job
// while its watch's initial values are not all in, even with the due
// domain in its view already, however many ticks come; once they are, it
// runs the job at once, without waiting for the next tick.
func TestFirstTickWaitsForView(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	d := e.reserve(t, "*.gated.example.com") // due: its job is new
	gated := &gatedStore{Certificates: e.store.Certificates(), gate: make(chan struct{})}
	m, err := New(gated, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ticks := make(chan time.Time) // sent only when the test says
	m.ticker = func(time.Duration) (<-chan time.Time, func()) { return ticks, func() {} }
	// A tick sent is taken once the one before has returned.
	tick := func() {
		t.Helper()
		select {
		case ticks <- time.Now():
		case <-time.After(10 * time.Second):
			t.Fatal("Run takes no tick")
		}
	}
	leases := func(n int32) {
		t.Helper()
		check.Eventually(t, 10*time.Second, fmt.Sprintf("%d leases taken", n), func() (int32, bool) {
			got := gated.leases.Load()
			return got, got >= n
		})
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	leases(1)
	check.Eventually(t, 10*time.Second, "the view holding the domain", func() ([]string, bool) {
		_, ok := m.jobs.domain(e.domainKey(d))
		return m.jobs.keys(), ok
	})
	tick()
	tick() // the second tick has returned
	if n := gated.jobs.Load(); n != 0 {
		t.Fatalf("%d job steps recorded before the view was loaded", n)
	}
	// A tick that cannot take the lease returns without a look at the
	// view: once the fourth has failed to, Run waits.
	gated.away.Store(true)
	tick()
	leases(4)
	gated.away.Store(false)
	close(gated.gate)
	check.Eventually(t, 10*time.Second, "the job run without another tick", func() (*store.CertificateJob, bool) {
		job := e.domain(t, d.ID).CertStatus.ProvisioningJob
		return job, job != nil && job.RetriesAt != nil // waiting for the CNAME: the job has run
	})
}

// leaseStore has or has not the lease, as held says.
type leaseStore struct {
	store.Certificates
	held atomic.Bool
}

func (s *leaseStore) TakeLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if !s.held.Load() {
		return false, nil
	}
	return s.Certificates.TakeLease(ctx, name, holder, ttl)
}

// TestLeaseLost: a manager starts its watch when it takes the lease,
// stops it and forgets its view when it loses it, and starts anew when it
// takes it again.
func TestLeaseLost(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	d := e.reserve(t, "*.lease.example.com")
	lease := &leaseStore{Certificates: e.store.Certificates()}
	m, err := New(lease, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.stopWatch)
	m.tick(e.ctx)
	if m.watch != nil {
		t.Fatal("a watch runs without the lease")
	}
	for _, round := range []string{"first", "again"} {
		lease.held.Store(true)
		m.tick(e.ctx)
		if m.watch == nil {
			t.Fatalf("%s: no watch with the lease", round)
		}
		check.Eventually(t, 10*time.Second, round+": the view loaded", func() ([]string, bool) {
			return m.jobs.keys(), m.loaded() && slices.Equal(m.jobs.keys(), []string{e.domainKey(d)})
		})
		lease.held.Store(false)
		m.tick(e.ctx)
		if m.watch != nil || len(m.jobs.keys()) != 0 {
			t.Fatalf("%s: with the lease lost, watch %v, view %q; want none", round, m.watch != nil, m.jobs.keys())
		}
	}
}

// TestStaleView: a job run from a view that lags the store writes
// nothing when the domain's policy was set to null meanwhile: the store
// refuses (ErrCertificateUnmanaged).
func TestStaleView(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	d := e.reserve(t, "*.stale.example.com")
	m, err := New(e.store.Certificates(), e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.stopWatch)
	m.startWatch(e.ctx)
	check.Eventually(t, 10*time.Second, "the view loaded", func() ([]string, bool) {
		return m.jobs.keys(), m.loaded() && len(m.jobs.keys()) == 1
	})
	// The watch stops; the view stays as it was, loaded.
	m.watch.cancel()
	<-m.watch.done
	e.setPolicy(t, d.ID, nil)
	if held, ok := m.jobs.domain(e.domainKey(d)); !ok || !m.due(held) {
		t.Fatalf("the stale view holds %+v (%v); want the domain due", held, ok)
	}
	m.tick(e.ctx)
	if got := e.domain(t, d.ID); got.CertPolicy != nil || got.CertStatus != nil {
		t.Errorf("after a tick on the stale view, policy %+v, status %+v; want none", got.CertPolicy, got.CertStatus)
	}
}
