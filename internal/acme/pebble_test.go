package acme

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/acmetest"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/dnsserver"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// serviceDomain is the service domain of the tests: sluice's DNS serves
// acme.sluice.test.
const serviceDomain = "sluice.test"

// nsTargets are the ns_targets of the tests' agent ingresses, sluice's
// DNS servers.
var nsTargets = []string{"ns1." + serviceDomain, "ns2." + serviceDomain}

// env is a store on an in-process NATS server, sluice's DNS server on it,
// the users' zone, Pebble, and a Manager of the jobs, whose ticks the test
// runs: its watch of the jobs runs, and each tick's lease taken waits
// until its view of them is the store's (syncedStore); the store and the
// Manager share the test's clock.
type env struct {
	ctx     context.Context
	store   *store.Store
	account string
	zone    *acmetest.Zone
	pebble  *acmetest.Pebble
	clock   *check.Clock
	manager *Manager
	cfg     Config     // the manager's
	logs    *logBuffer // the manager's log
}

// logBuffer is a log's text, safe for concurrent use.
type logBuffer struct {
	mu   sync.Mutex
	text strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.text.Write(p)
}

// take returns the lines logged since the last take.
func (b *logBuffer) take() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	text := b.text.String()
	b.text.Reset()
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

func newEnv(t *testing.T, directory func(p *acmetest.Pebble) string) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_, js := natstest.Connect(t, natstest.Start(t))
	c := check.NewClock(time.Now())
	st, err := store.Open(ctx, js, store.Config{ServiceDomains: []string{serviceDomain}, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	account, err := st.CreateAccount(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	udp, tcp, err := dnsserver.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	srv, err := dnsserver.New(st, udp, tcp, dnsserver.Config{
		NSTargets: nsTargets, Regions: []string{"us"}, ServiceDomains: []string{serviceDomain},
		EdgeAddrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}, Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	zone, resolverAddr := acmetest.StartZone(t, serviceDomain, tcp.Addr().String())
	// The edge's HTTP listener, as far as HTTP-01 goes.
	edgeHTTP := httptest.NewServer(edge.ServeHTTPChallenges(st.Certificates(), http.NotFoundHandler()))
	t.Cleanup(edgeHTTP.Close)
	p := acmetest.StartPebble(t, resolverAddr, edgeHTTP.Listener.Addr().(*net.TCPAddr).Port)
	logs := &logBuffer{}
	cfg := Config{
		Directory: directory(p), ServiceDomain: serviceDomain, Resolver: resolverAddr, Holder: "test", NSTargets: nsTargets, Regions: []string{"us"},
		Events: noEvents, HTTPClient: p.Client, Now: c.Now, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		PropagationTimeout: 10 * time.Second, PollInterval: 50 * time.Millisecond, JobTimeout: time.Minute,
	}
	synced := &syncedStore{Certificates: st.Certificates(), st: st, t: t, account: account.ID}
	m, err := New(synced, cfg)
	if err != nil {
		t.Fatal(err)
	}
	synced.manager = m
	m.startWatch(ctx)
	t.Cleanup(m.stopWatch)
	e := &env{ctx: ctx, store: st, account: account.ID, zone: zone, pebble: p, clock: c, manager: m, cfg: cfg, logs: logs}
	check.Eventually(t, 10*time.Second, "sluice's DNS answering from the store", func() (string, bool) {
		resp, err := zone.Forward("acme."+serviceDomain+".", dns.TypeSOA)
		if err != nil {
			return err.Error(), false
		}
		return dns.RcodeToString[resp.Rcode], resp.Rcode == dns.RcodeSuccess
	})
	return e
}

// noEvents builds no audit events: package api's CertificateEvents, and
// its tests, build them.
func noEvents(string, store.TLSCertificate, store.ReservedDomain) ([]schemas.Encoded, error) {
	return nil, nil
}

func (e *env) reserve(t *testing.T, domain string) store.ReservedDomain {
	t.Helper()
	d, err := e.store.CreateReservedDomain(e.ctx, e.account, store.ReservedDomain{Domain: domain})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (e *env) domain(t *testing.T, id string) store.ReservedDomain {
	t.Helper()
	d, err := e.store.GetReservedDomain(e.ctx, e.account, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// served returns the certificate a TLS client that trusts Pebble's root
// gets for serverName from an edge's table of the store's certificates,
// once it has a certificate whose serial differs from not.
func (e *env) served(t *testing.T, table *edge.Certificates, serverName, not string) *x509.Certificate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = conn.Close() }()
				_ = tls.Server(conn, &tls.Config{GetCertificate: table.GetCertificate(nil), MinVersion: tls.VersionTLS12}).Handshake()
			}()
		}
	}()
	var leaf *x509.Certificate
	check.Eventually(t, 10*time.Second, "the edge serving the certificate of "+serverName, func() (string, bool) {
		conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{ServerName: serverName, RootCAs: e.pebble.Roots})
		if err != nil {
			return err.Error(), false
		}
		defer func() { _ = conn.Close() }()
		leaf = conn.ConnectionState().PeerCertificates[0]
		serial := leaf.SerialNumber.String()
		return "serial " + serial, serial != not
	})
	return leaf
}

// TestIssueAndRenew: a custom wildcard domain whose _acme-challenge is a
// CNAME of its target gets a certificate from Pebble through sluice's DNS;
// the domain's status ends its job and sets renews_at 30 days before
// expiry, its certificate Ref names the stored certificate, which an
// edge's table serves by SNI to a client trusting Pebble's root; at
// renews_at, the renewal replaces it, keeping its id.
func TestIssueAndRenew(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	d := e.reserve(t, "*.apps.example.com")
	e.zone.CNAME("_acme-challenge.apps.example.com", e.manager.target(d))

	table := edge.NewCertificates()
	go e.store.Certificates().FollowTLSCertificates(e.ctx, slog.New(slog.DiscardHandler), func(key string, c *store.TLSCertificate) {
		_ = table.Apply(key, c)
	}, nil)

	e.manager.tick(e.ctx)
	got := e.domain(t, d.ID)
	st := got.CertStatus
	if st == nil || st.ProvisioningJob != nil || st.RenewsAt == nil || got.CertificateID == "" {
		t.Fatalf("after the job, the domain is %+v, status %+v; want no job, a renews_at and a certificate", got, st)
	}
	cert, err := e.store.GetTLSCertificate(e.ctx, e.account, got.CertificateID)
	if err != nil {
		t.Fatal(err)
	}
	if cert.PrivateKeyPEM == "" || cert.PrivateKeyType != store.KeyTypeECDSA {
		t.Errorf("the stored certificate has key type %q and a key of %d bytes", cert.PrivateKeyType, len(cert.PrivateKeyPEM))
	}
	leaf := e.served(t, table, "www.apps.example.com", "")
	if want := leaf.NotAfter.Add(-30 * 24 * time.Hour); !st.RenewsAt.Equal(want.UTC()) {
		t.Errorf("renews_at %s, want 30 days before expiry, %s", st.RenewsAt, want)
	}
	if challenge := e.challengeValues(t, d); len(challenge) != 0 {
		t.Errorf("the challenge's TXT values are still served: %q", challenge)
	}

	e.manager.tick(e.ctx) // not due: nothing changes
	if again := e.domain(t, d.ID); again.CertStatus.RenewsAt == nil || !again.CertStatus.RenewsAt.Equal(*st.RenewsAt) {
		t.Fatalf("a tick before renews_at changed the status to %+v", again.CertStatus)
	}

	e.clock.Set(st.RenewsAt.Add(time.Second))
	e.manager.tick(e.ctx)
	renewed := e.served(t, table, "www.apps.example.com", leaf.SerialNumber.String())
	if renewed.SerialNumber.Cmp(leaf.SerialNumber) == 0 {
		t.Fatal("the renewal served the same certificate")
	}
	after := e.domain(t, d.ID)
	if after.CertificateID != got.CertificateID || after.CertStatus.ProvisioningJob != nil || !after.CertStatus.RenewsAt.Equal(renewed.NotAfter.Add(-30*24*time.Hour).UTC()) {
		t.Errorf("after the renewal: certificate %s (was %s), status %+v", after.CertificateID, got.CertificateID, after.CertStatus)
	}
}

// challengeValues are the TXT values sluice's DNS serves at the domain's
// target.
func (e *env) challengeValues(t *testing.T, d store.ReservedDomain) []string {
	t.Helper()
	resp, err := e.zone.Forward(e.manager.target(d)+".", dns.TypeTXT)
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, rr := range resp.Answer {
		if txt, ok := rr.(*dns.TXT); ok {
			values = append(values, txt.Txt...)
		}
	}
	return values
}

// TestMissingCNAME: a domain whose _acme-challenge is not created yet
// waits for it: the job stays in progress, without an error_code, its msg
// naming the record to create, and runs again at its retries_at, later
// each time; the policy sent again runs it at once, and the record made
// then gets the certificate.
func TestMissingCNAME(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	d := e.reserve(t, "*.nocname.example.com")
	e.manager.tick(e.ctx)
	first := e.domain(t, d.ID).CertStatus.ProvisioningJob
	record := "_acme-challenge.nocname.example.com CNAME " + e.manager.target(d)
	if first == nil || first.ErrorCode != "" || !strings.Contains(first.Msg, record) || first.RetriesAt == nil || !first.RetriesAt.After(e.clock.Now()) {
		t.Fatalf("job %+v; want one in progress naming %q, with a retries_at ahead", first, record)
	}
	if e.manager.due(e.domain(t, d.ID)) {
		t.Error("a job waiting for its record is due before its retries_at")
	}
	e.clock.Set(first.RetriesAt.Add(time.Second))
	e.manager.tick(e.ctx)
	second := e.domain(t, d.ID).CertStatus.ProvisioningJob
	if second == nil || second.ErrorCode != "" || second.Attempts != 2 || second.RetriesAt == nil || !second.StartedAt.Equal(first.StartedAt) {
		t.Fatalf("after its retries_at, job %+v; want attempt 2 of the same job, waiting", second)
	}
	if gap, was := second.RetriesAt.Sub(e.clock.Now()), first.RetriesAt.Sub(first.StartedAt); gap <= was/2 {
		t.Errorf("the second wait is %s, the first was %s: no backoff", gap, was)
	}

	e.zone.CNAME("_acme-challenge.nocname.example.com", e.manager.target(d))
	e.setPolicy(t, d.ID, d.CertPolicy)
	if again := e.domain(t, d.ID).CertStatus.ProvisioningJob; again == nil || again.RetriesAt != nil || again.Attempts != 0 {
		t.Fatalf("after the policy is sent again, the job is %+v; want a new one, due now", again)
	}
	e.sync(t)
	e.manager.tick(e.ctx)
	if got := e.domain(t, d.ID); got.CertificateID == "" || got.CertStatus.ProvisioningJob != nil {
		t.Fatalf("after the record is made, the domain is %+v; want its certificate", got)
	}
}

// TestWrongCNAME: a domain whose _acme-challenge is a CNAME of another
// name than its target ends DNS_ERROR, a message naming the record to
// set, no retries_at, and no further attempt; the policy sent again
// retries.
func TestWrongCNAME(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	d := e.reserve(t, "*.wrong.example.com")
	e.zone.CNAME("_acme-challenge.wrong.example.com", "elsewhere.example.net")
	e.manager.tick(e.ctx)
	job := e.domain(t, d.ID).CertStatus.ProvisioningJob
	record := "_acme-challenge.wrong.example.com CNAME " + e.manager.target(d)
	if job == nil || job.ErrorCode != store.CertErrorDNS || !strings.Contains(job.Msg, record) || !strings.Contains(job.Msg, "elsewhere.example.net") || job.RetriesAt != nil {
		t.Fatalf("job %+v; want DNS_ERROR naming %q and what it found, no retries_at", job, record)
	}
	e.clock.Set(e.clock.Now().Add(24 * time.Hour))
	if e.manager.due(e.domain(t, d.ID)) {
		t.Error("a DNS_ERROR job is due again without the user")
	}
	e.setPolicy(t, d.ID, d.CertPolicy)
	if again := e.domain(t, d.ID).CertStatus.ProvisioningJob; again == nil || again.ErrorCode != "" {
		t.Errorf("after the policy is sent again, the job is %+v; want one in progress", again)
	}
}

// TestAuthorityFails: an authority that cannot be reached gives
// INTERNAL_ERROR with a retries_at, later at each failure; the job is not
// due before it.
func TestAuthorityFails(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory + "/missing" })
	d := e.reserve(t, "*.down.example.com")
	e.zone.CNAME("_acme-challenge.down.example.com", e.manager.target(d))
	e.manager.tick(e.ctx)
	first := e.domain(t, d.ID).CertStatus.ProvisioningJob
	if first == nil || first.ErrorCode != store.CertErrorInternal || first.RetriesAt == nil || !first.RetriesAt.After(e.clock.Now()) {
		t.Fatalf("job %+v; want INTERNAL_ERROR with a retries_at ahead", first)
	}
	if e.manager.due(e.domain(t, d.ID)) {
		t.Fatal("the job is due before its retries_at")
	}
	e.clock.Set(first.RetriesAt.Add(time.Second))
	e.manager.tick(e.ctx)
	second := e.domain(t, d.ID).CertStatus.ProvisioningJob
	if second == nil || second.ErrorCode != store.CertErrorInternal || second.RetriesAt == nil || second.Attempts != 2 || !second.StartedAt.Equal(first.StartedAt) {
		t.Fatalf("after the retry, job %+v; want INTERNAL_ERROR, attempt 2, the same started_at", second)
	}
	if gap, was := second.RetriesAt.Sub(e.clock.Now()), first.RetriesAt.Sub(first.StartedAt); gap <= was/2 {
		t.Errorf("the second retry is %s away, the first was %s: no backoff", gap, was)
	}
}

// TestPolicyRemoved: a policy set to null stops management: no job runs.
func TestPolicyRemoved(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	d := e.reserve(t, "*.stop.example.com")
	if _, err := e.store.UpdateReservedDomain(e.ctx, e.account, d.ID, func(d *store.ReservedDomain) error {
		d.CertPolicy = nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.manager.tick(e.ctx)
	if got := e.domain(t, d.ID); got.CertStatus != nil || got.CertificateID != "" {
		t.Errorf("a domain without a policy got status %+v, certificate %q", got.CertStatus, got.CertificateID)
	}
}

// TestIssueHTTP01: a custom domain that is no wildcard, CNAMEd to its
// cname_target, gets a certificate through HTTP-01, which the edges'
// HTTP listener answers from the store; without the CNAME its job waits,
// naming the record.
func TestIssueHTTP01(t *testing.T) {
	e := newEnv(t, func(p *acmetest.Pebble) string { return p.Directory })
	d := e.reserve(t, "shop.example.com")
	if _, err := e.store.UpdateReservedDomain(e.ctx, e.account, d.ID, func(d *store.ReservedDomain) error {
		d.CertPolicy = &store.CertificatePolicy{}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.manager.tick(e.ctx)
	job := e.domain(t, d.ID).CertStatus.ProvisioningJob
	record := "shop.example.com CNAME " + e.manager.cnameTarget(d)
	if job == nil || job.ErrorCode != "" || job.RetriesAt == nil || !strings.Contains(job.Msg, record) {
		t.Fatalf("without the CNAME, job %+v; want one waiting, naming %q", job, record)
	}

	e.zone.CNAME("shop.example.com", e.manager.cnameTarget(d))
	if _, err := e.store.UpdateReservedDomain(e.ctx, e.account, d.ID, func(d *store.ReservedDomain) error {
		p := *d.CertPolicy
		d.CertPolicy = &p // sent again: the DNS is fixed
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.manager.tick(e.ctx)
	got := e.domain(t, d.ID)
	if got.CertStatus.ProvisioningJob != nil || got.CertificateID == "" {
		t.Fatalf("after the CNAME, the status is %+v (job %+v)", got.CertStatus, got.CertStatus.ProvisioningJob)
	}
	table := edge.NewCertificates()
	go e.store.Certificates().FollowTLSCertificates(e.ctx, slog.New(slog.DiscardHandler), func(key string, c *store.TLSCertificate) {
		_ = table.Apply(key, c)
	}, nil)
	if leaf := e.served(t, table, "shop.example.com", ""); leaf.DNSNames[0] != "shop.example.com" {
		t.Errorf("served the certificate of %v", leaf.DNSNames)
	}
}
