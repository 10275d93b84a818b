package acme

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/acmetest"
	"github.com/sluicehq/sluice/internal/store"
)

// TestServiceDomainCertificates: reserved domains under the service
// domain with a policy, a wildcard (its policy set on creation) and a
// name given one, wait while the service domain is not delegated to
// sluice's DNS: in progress, no error_code nor retries_at, the msg
// saying that the operator is to act and the tenant not, without the
// service domain's NS records, which the tick logs once, with those to
// set; due again at the next tick. Once its NS
// records are the ns_targets, each gets a certificate of its own name
// alone from Pebble through DNS-01, which sluice's DNS answers at
// _acme-challenge.<name> in the service domain's zone, and which an
// edge's table serves by SNI to a client trusting Pebble's root.
func TestServiceDomainCertificates(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	wildcard := e.reserve(t, "*.team."+serviceDomain)
	name := e.reserve(t, "mine."+serviceDomain)
	if _, err := e.store.UpdateReservedDomain(e.ctx, e.account, name.ID, func(d *store.ReservedDomain) error {
		d.CertPolicy = &store.CertificatePolicy{}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name  string
		ns    []string
		found string
	}{
		{"no NS records", nil, "sluice.test has no NS records"},
		{"delegated elsewhere", []string{"ns1.registrar.test", "ns1." + serviceDomain}, "its NS records are ns1.registrar.test, ns1.sluice.test"},
	} {
		t.Run(step.name, func(t *testing.T) {
			e.zone.NS(serviceDomain, step.ns...)
			e.logs.take()
			e.manager.tick(e.ctx)
			var warned []string
			for _, line := range e.logs.take() {
				if strings.Contains(line, "level=WARN") && strings.Contains(line, "not delegated") {
					warned = append(warned, line)
				}
			}
			if len(warned) != 1 {
				t.Fatalf("the tick warned %d times of the delegation, want once: %q", len(warned), warned)
			}
			for _, want := range []string{"--ingress-ns-targets", "service_domain=sluice.test", `ns_records_to_set="ns1.sluice.test, ns2.sluice.test"`, step.found} {
				if !strings.Contains(warned[0], want) {
					t.Errorf("the warning %q does not say %q", warned[0], want)
				}
			}
			for _, id := range []string{wildcard.ID, name.ID} {
				got := e.domain(t, id)
				job := got.CertStatus.ProvisioningJob
				want := "certificate provisioning is in progress: waiting for the service's operator to delegate the service domain sluice.test to sluice's DNS, which answers the certificate's validation; nothing to do on your side; checked again every 30s"
				if job == nil || job.Msg != want {
					t.Fatalf("%s: job %+v; want its msg %q", got.Domain, job, want)
				}
				if strings.Contains(job.Msg, "ns1.") || strings.Contains(job.Msg, "NS records") {
					t.Errorf("%s: the msg %q shows the tenant the operator's NS records", got.Domain, job.Msg)
				}
				if job.ErrorCode != "" || job.RetriesAt != nil || got.CertificateID != "" {
					t.Fatalf("%s: job %+v, certificate %q; want one in progress, no retries_at, no certificate", got.Domain, job, got.CertificateID)
				}
				if !e.manager.due(got) {
					t.Fatalf("%s: the waiting job is not due at the next tick", got.Domain)
				}
			}
		})
	}

	table := edge.NewCertificates()
	go e.store.Certificates().FollowTLSCertificates(e.ctx, slog.New(slog.DiscardHandler), func(key string, c *store.TLSCertificate) {
		_ = table.Apply(key, c)
	}, nil)
	e.zone.NS(serviceDomain, "NS2.sluice.test", "ns1.sluice.test")
	e.manager.tick(e.ctx)
	for _, tt := range []struct {
		d          store.ReservedDomain
		serverName string
		names      []string
	}{
		{wildcard, "x.team." + serviceDomain, []string{"*.team." + serviceDomain}},
		{name, "mine." + serviceDomain, []string{"mine." + serviceDomain}},
	} {
		got := e.domain(t, tt.d.ID)
		if got.CertStatus.ProvisioningJob != nil || got.CertStatus.RenewsAt == nil || got.CertificateID == "" {
			t.Fatalf("%s, delegated: job %+v, renews_at %v, certificate %q; want no job, a renews_at, a certificate",
				got.Domain, got.CertStatus.ProvisioningJob, got.CertStatus.RenewsAt, got.CertificateID)
		}
		if leaf := e.served(t, table, tt.serverName, ""); !slices.Equal(leaf.DNSNames, tt.names) {
			t.Errorf("%s: served the certificate of %q, want %q", tt.serverName, leaf.DNSNames, tt.names)
		}
	}
	resp, err := e.zone.Forward("_acme-challenge.team."+serviceDomain+".", dns.TypeTXT)
	if err != nil || resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 0 {
		t.Errorf("after the jobs, _acme-challenge.team answers %v (%v); want no TXT value left", resp, err)
	}
}

// TestDueUnderServiceDomains: a job in progress is due for a custom
// domain and a name under the first service domain, but not for a name
// under another service domain, whose zone sluice's DNS does not serve,
// nor under the first without NSTargets to check its delegation against.
func TestDueUnderServiceDomains(t *testing.T) {
	inProgress := &store.CertificateStatus{ProvisioningJob: &store.CertificateJob{Msg: "certificate provisioning is in progress"}}
	for _, tt := range []struct {
		domain    string
		nsTargets []string
		due       bool
	}{
		{"*.apps.example.com", nil, true},
		{"*.team." + serviceDomain, nsTargets, true},
		{"mine." + serviceDomain, nsTargets, true},
		{"*.team." + serviceDomain, nil, false},
		{"*.team.second.test", nsTargets, false},
		{"mine.second.test", nsTargets, false},
	} {
		m, err := New(nil, Config{
			Directory: LetsEncryptStaging, ServiceDomain: serviceDomain, ServiceDomains: []string{serviceDomain, "second.test"},
			Resolver: "127.0.0.1:53", Holder: "test", Events: noEvents, NSTargets: tt.nsTargets,
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.due(store.ReservedDomain{Domain: tt.domain, CertStatus: inProgress}); got != tt.due {
			t.Errorf("%s with NS targets %q: due %v, want %v", tt.domain, tt.nsTargets, got, tt.due)
		}
	}
}

// TestServiceDomainWaitingCost: while the service domain is not
// delegated, a tick asks the resolver for its NS records once, however
// many names under it are due, and neither extends the lease for each
// (a store read and write) nor writes a job whose msg is unchanged: the
// first tick writes each job's waiting msg once, the next ones nothing.
func TestServiceDomainWaitingCost(t *testing.T) {
	const waiting = 8
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	ids := make([]string, waiting)
	for i := range waiting {
		ids[i] = e.reserve(t, fmt.Sprintf("*.a%d.%s", i, serviceDomain)).ID
	}
	synced := e.manager.store.(*syncedStore)
	for tick := range 3 {
		e.sync(t)
		queries, leases := e.zone.Queries(serviceDomain, dns.TypeNS), synced.leases.Load()
		e.manager.tick(e.ctx)
		if got := e.zone.Queries(serviceDomain, dns.TypeNS) - queries; got != 1 {
			t.Errorf("tick %d: %d NS queries of the service domain, want 1", tick, got)
		}
		wantLeases := int64(1) // the tick's own
		if tick == 0 {
			wantLeases += waiting // one before each job's first waiting msg is written
		}
		if got := synced.leases.Load() - leases; got != wantLeases {
			t.Errorf("tick %d: the lease taken %d times, want %d", tick, got, wantLeases)
		}
	}
	for _, id := range ids {
		if job := e.domain(t, id).CertStatus.ProvisioningJob; job == nil || job.ErrorCode != "" || !strings.Contains(job.Msg, "waiting for the service's operator to delegate") {
			t.Errorf("%s: job %+v; want one waiting for the delegation", id, job)
		}
	}
}
