package acme

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/dnsserver"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// serviceDomain is the service domain of the tests: sluice's DNS serves
// acme.sluice.test.
const serviceDomain = "sluice.test"

// pebble is Let's Encrypt's test ACME server, run in the test: its
// directory, a client that trusts its HTTPS, and its root CA, which signs
// what it issues.
type pebble struct {
	directory string
	client    *http.Client
	roots     *x509.CertPool
}

// startPebble runs Pebble validating DNS-01 through the resolver at
// resolverAddr.
func startPebble(t *testing.T, resolverAddr string) *pebble {
	t.Helper()
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	logger := log.New(io.Discard, "", 0)
	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "default"}})
	validator := va.New(logger, 0, 0, false, resolverAddr, store)
	front := wfe.New(logger, store, validator, authority, []string{"pebble.letsencrypt.org"}, false, false, 3, 5)
	acmeSrv := httptest.NewTLSServer(front.Handler())
	t.Cleanup(acmeSrv.Close)
	mgmt := httptest.NewTLSServer(front.ManagementHandler())
	t.Cleanup(mgmt.Close)
	resp, err := mgmt.Client().Get(mgmt.URL + wfe.RootCertPath + "0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	root, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(root) {
		t.Fatalf("Pebble's root is not PEM: %q", root)
	}
	return &pebble{directory: acmeSrv.URL + wfe.DirectoryPath, client: acmeSrv.Client(), roots: roots}
}

// userZone is the resolver of the tests: it plays the users' DNS, whose
// _acme-challenge names are CNAMEs of their targets (set with cname), and
// resolves the targets, and any name under acme.<service domain>, by
// asking sluice's DNS server, as a recursive resolver would.
type userZone struct {
	sluiceDNS string
	mu        sync.Mutex
	cnames    map[string]string // fqdn → fqdn
}

// startUserZone runs the resolver over UDP and TCP on one port, and
// returns its address.
func startUserZone(t *testing.T, sluiceDNS string) (*userZone, string) {
	t.Helper()
	z := &userZone{sluiceDNS: sluiceDNS, cnames: make(map[string]string)}
	udp, tcp, err := dnsserver.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	for _, srv := range []*dns.Server{{PacketConn: udp, Handler: z}, {Listener: tcp, Handler: z}} {
		go func() { _ = srv.ActivateAndServe() }()
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return z, tcp.Addr().String()
}

func (z *userZone) cname(name, target string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.cnames[dns.Fqdn(name)] = dns.Fqdn(target)
}

// ServeDNS answers a query as a recursive resolver would.
func (z *userZone) ServeDNS(w dns.ResponseWriter, q *dns.Msg) {
	answer := new(dns.Msg)
	answer.SetReply(q)
	answer.RecursionAvailable = true
	question := q.Question[0]
	name := strings.ToLower(question.Name)
	z.mu.Lock()
	target, ok := z.cnames[name]
	z.mu.Unlock()
	switch {
	case ok:
		answer.Answer = append(answer.Answer, &dns.CNAME{Hdr: dns.RR_Header{Name: question.Name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 60}, Target: target})
		if question.Qtype != dns.TypeCNAME {
			if fwd, err := z.forward(target, question.Qtype); err == nil {
				answer.Answer = append(answer.Answer, fwd.Answer...)
			}
		}
	case strings.HasSuffix(name, ".acme."+serviceDomain+"."):
		fwd, err := z.forward(name, question.Qtype)
		if err != nil {
			answer.Rcode = dns.RcodeServerFailure
			break
		}
		answer.Rcode, answer.Answer = fwd.Rcode, fwd.Answer
	default:
		answer.Rcode = dns.RcodeNameError
	}
	_ = w.WriteMsg(answer)
}

func (z *userZone) forward(name string, qtype uint16) (*dns.Msg, error) {
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
	resp, _, err := c.Exchange(q, z.sluiceDNS)
	return resp, err
}

// clock is a clock the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// env is a store on an in-process NATS server, sluice's DNS server on it,
// the users' zone, Pebble, and a Manager of the jobs, whose ticks the test
// runs.
type env struct {
	ctx     context.Context
	store   *store.Store
	account string
	zone    *userZone
	pebble  *pebble
	clock   *clock
	manager *Manager
}

func newEnv(t *testing.T, directory func(p *pebble) string) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_, js := natstest.Connect(t, natstest.Start(t))
	st, err := store.Open(ctx, js, store.Config{ServiceDomains: []string{serviceDomain}})
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
		NSTargets: []string{"ns1." + serviceDomain}, Regions: []string{"us"}, ServiceDomains: []string{serviceDomain},
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
	zone, resolverAddr := startUserZone(t, tcp.Addr().String())
	p := startPebble(t, resolverAddr)
	c := &clock{now: time.Now()}
	m, err := New(st, Config{
		Directory: directory(p), ServiceDomain: serviceDomain, Resolver: resolverAddr, Holder: "test",
		Events: noEvents, HTTPClient: p.client, Now: c.Now, Logger: quiet,
		PropagationTimeout: 10 * time.Second, PollInterval: 50 * time.Millisecond, JobTimeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{ctx: ctx, store: st, account: account.ID, zone: zone, pebble: p, clock: c, manager: m}
	check.Eventually(t, 10*time.Second, "sluice's DNS answering from the store", func() (string, bool) {
		resp, err := zone.forward("acme."+serviceDomain+".", dns.TypeSOA)
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
		conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{ServerName: serverName, RootCAs: e.pebble.roots})
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
	e := newEnv(t, func(p *pebble) string { return p.directory })
	d := e.reserve(t, "*.apps.example.com")
	e.zone.cname("_acme-challenge.apps.example.com", e.manager.target(d))

	table := edge.NewCertificates()
	go e.store.FollowTLSCertificates(e.ctx, slog.New(slog.DiscardHandler), func(key string, c *store.TLSCertificate) {
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

	e.clock.set(st.RenewsAt.Add(time.Second))
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
	resp, err := e.zone.forward(e.manager.target(d)+".", dns.TypeTXT)
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

// TestMissingCNAME: a domain whose _acme-challenge is not a CNAME of its
// target ends DNS_ERROR, a message naming the record to create, no
// retries_at, and no further attempt; the policy sent again retries.
func TestMissingCNAME(t *testing.T) {
	e := newEnv(t, func(p *pebble) string { return p.directory })
	d := e.reserve(t, "*.nocname.example.com")
	e.manager.tick(e.ctx)
	job := e.domain(t, d.ID).CertStatus.ProvisioningJob
	record := "_acme-challenge.nocname.example.com CNAME " + e.manager.target(d)
	if job == nil || job.ErrorCode != store.CertErrorDNS || !strings.Contains(job.Msg, record) || job.RetriesAt != nil {
		t.Fatalf("job %+v; want DNS_ERROR naming %q, no retries_at", job, record)
	}
	if e.manager.due(e.domain(t, d.ID)) {
		t.Error("a DNS_ERROR job is due again without the user")
	}
	if _, err := e.store.UpdateReservedDomain(e.ctx, e.account, d.ID, func(d *store.ReservedDomain) error {
		p := *d.CertPolicy
		d.CertPolicy = &p
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if again := e.domain(t, d.ID).CertStatus.ProvisioningJob; again == nil || again.ErrorCode != "" {
		t.Errorf("after the policy is sent again, the job is %+v; want one in progress", again)
	}
}

// TestAuthorityFails: an authority that cannot be reached gives
// INTERNAL_ERROR with a retries_at, later at each failure; the job is not
// due before it.
func TestAuthorityFails(t *testing.T) {
	e := newEnv(t, func(p *pebble) string { return p.directory + "/missing" })
	d := e.reserve(t, "*.down.example.com")
	e.zone.cname("_acme-challenge.down.example.com", e.manager.target(d))
	e.manager.tick(e.ctx)
	first := e.domain(t, d.ID).CertStatus.ProvisioningJob
	if first == nil || first.ErrorCode != store.CertErrorInternal || first.RetriesAt == nil || !first.RetriesAt.After(e.clock.Now()) {
		t.Fatalf("job %+v; want INTERNAL_ERROR with a retries_at ahead", first)
	}
	if e.manager.due(e.domain(t, d.ID)) {
		t.Fatal("the job is due before its retries_at")
	}
	e.clock.set(first.RetriesAt.Add(time.Second))
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
	e := newEnv(t, func(p *pebble) string { return p.directory })
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
