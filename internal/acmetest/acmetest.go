// Package acmetest runs, in a test, what sluice's ACME jobs talk to:
// Pebble, Let's Encrypt's test ACME server (github.com/letsencrypt/pebble/v2
// as a Go module), and a DNS resolver playing the users' zones that
// forwards the acme. zone to sluice's DNS server. It is for tests only.
package acmetest

import (
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"

	"github.com/sluicehq/sluice/internal/dnsserver"
)

// Pebble is Let's Encrypt's test ACME server, run in the test: its
// directory, a client that trusts its HTTPS, and its root CA, which signs
// what it issues.
type Pebble struct {
	// Directory is the ACME directory URL.
	Directory string
	// Client trusts Pebble's HTTPS.
	Client *http.Client
	// Roots holds Pebble's root CA.
	Roots *x509.CertPool
	// TLSCertFile is a PEM file of the certificate of Pebble's HTTPS, for
	// lego's LEGO_CA_CERTIFICATES.
	TLSCertFile string
}

// StartPebble runs Pebble, until the test ends, validating DNS-01 through
// the resolver at resolverAddr, and HTTP-01 on the port httpPort of the
// addresses the resolver gives. It sets PEBBLE_VA_NOSLEEP, so the test
// cannot be parallel.
func StartPebble(t *testing.T, resolverAddr string, httpPort int) *Pebble {
	t.Helper()
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	logger := log.New(io.Discard, "", 0)
	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "default"}})
	validator := va.New(logger, httpPort, 0, false, resolverAddr, store)
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
	certFile := filepath.Join(t.TempDir(), "pebble-https.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: acmeSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &Pebble{Directory: acmeSrv.URL + wfe.DirectoryPath, Client: acmeSrv.Client(), Roots: roots, TLSCertFile: certFile}
}

// Zone is a recursive resolver of the tests: it plays the users' DNS,
// whose _acme-challenge names are CNAMEs of their targets (set with
// CNAME) and whose agent ingresses' domains are delegated (set with NS),
// and resolves the names under a delegated domain, the targets, and any
// name under acme.<service domain> by asking sluice's DNS server, as a
// recursive resolver would.
type Zone struct {
	serviceDomain string
	mu            sync.Mutex
	sluiceDNS     string              // HOST:PORT, over TCP
	cnames        map[string]string   // fqdn → fqdn
	ns            map[string][]string // fqdn → fqdns
	queries       map[dns.Question]int
}

// StartZone runs the resolver over UDP and TCP on one port until the test
// ends, and returns its address; it forwards the names under
// acme.<serviceDomain> to sluice's DNS server at sluiceDNS (which
// SetSluiceDNS may give later).
func StartZone(t *testing.T, serviceDomain, sluiceDNS string) (*Zone, string) {
	t.Helper()
	z := &Zone{serviceDomain: serviceDomain, sluiceDNS: sluiceDNS, cnames: make(map[string]string), ns: make(map[string][]string), queries: make(map[dns.Question]int)}
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

// SetSluiceDNS gives the address of sluice's DNS server, over TCP.
func (z *Zone) SetSluiceDNS(addr string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.sluiceDNS = addr
}

// CNAME makes name a CNAME of target.
func (z *Zone) CNAME(name, target string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.cnames[dns.Fqdn(name)] = dns.Fqdn(target)
}

// NS makes the NS records of name targets, as a delegation at its parent
// zone would; none: name has no NS records.
func (z *Zone) NS(name string, targets ...string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	fqdns := make([]string, len(targets))
	for i, t := range targets {
		fqdns[i] = dns.Fqdn(t)
	}
	z.ns[dns.Fqdn(name)] = fqdns
}

// Queries returns how many queries of qtype at name the resolver has
// answered.
func (z *Zone) Queries(name string, qtype uint16) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.queries[dns.Question{Name: strings.ToLower(dns.Fqdn(name)), Qtype: qtype, Qclass: dns.ClassINET}]
}

// ServeDNS answers a query as a recursive resolver would.
func (z *Zone) ServeDNS(w dns.ResponseWriter, q *dns.Msg) {
	answer := new(dns.Msg)
	answer.SetReply(q)
	answer.RecursionAvailable = true
	question := q.Question[0]
	name := strings.ToLower(question.Name)
	z.mu.Lock()
	z.queries[dns.Question{Name: name, Qtype: question.Qtype, Qclass: dns.ClassINET}]++
	target, ok := z.cnames[name]
	ns, delegated := z.ns[name]
	z.mu.Unlock()
	switch {
	case delegated && question.Qtype == dns.TypeNS:
		for _, target := range ns {
			answer.Answer = append(answer.Answer, &dns.NS{Hdr: dns.RR_Header{Name: question.Name, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 60}, Ns: target})
		}
	case ok:
		answer.Answer = append(answer.Answer, &dns.CNAME{Hdr: dns.RR_Header{Name: question.Name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 60}, Target: target})
		if question.Qtype != dns.TypeCNAME {
			if fwd, err := z.Forward(target, question.Qtype); err == nil {
				answer.Answer = append(answer.Answer, fwd.Answer...)
			}
		}
	case strings.HasSuffix(name, ".acme."+z.serviceDomain+".") || z.delegated(name):
		fwd, err := z.Forward(name, question.Qtype)
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

// delegated reports whether name is under a domain that NS gave NS
// records, whose names sluice's DNS answers.
func (z *Zone) delegated(name string) bool {
	z.mu.Lock()
	defer z.mu.Unlock()
	for domain, targets := range z.ns {
		if len(targets) > 0 && strings.HasSuffix(name, "."+domain) {
			return true
		}
	}
	return false
}

// Forward asks sluice's DNS server for the records of qtype at name.
func (z *Zone) Forward(name string, qtype uint16) (*dns.Msg, error) {
	z.mu.Lock()
	addr := z.sluiceDNS
	z.mu.Unlock()
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), qtype)
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
	resp, _, err := c.Exchange(q, addr)
	return resp, err
}
