package dnsserver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/dnsserver"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
)

// serviceDomain is the service domain of the tests: its zones are
// sluice.test, and cname.sluice.test and acme.sluice.test under it.
const serviceDomain = "sluice.test"

// env is a DNS server running on a store on an in-process NATS server,
// with an account to create records in.
type env struct {
	ctx     context.Context
	store   *store.Store
	account string
	addr    string // HOST:PORT, over UDP and TCP
}

// start starts a DNS server of cfg, with the NS targets, regions and
// service domain of the tests where cfg has none, and waits until it
// answers from the store.
func start(t testing.TB, cfg dnsserver.Config) *env {
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
	if cfg.NSTargets == nil {
		cfg.NSTargets = []string{"ns1.sluice.test", "NS2.sluice.test."}
	}
	if cfg.Regions == nil {
		cfg.Regions = []string{"us", "eu"}
	}
	if cfg.ServiceDomains == nil {
		cfg.ServiceDomains = []string{serviceDomain}
	}
	if cfg.EdgeAddrs == nil {
		cfg.EdgeAddrs = []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")}
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	udp, tcp, err := dnsserver.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := dnsserver.New(st, udp, tcp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	e := &env{ctx: ctx, store: st, account: account.ID, addr: tcp.Addr().String()}
	check.Eventually(t, 10*time.Second, "the server answering from the store", func() (string, bool) {
		resp, err := e.ask("udp", "cname."+serviceDomain+".", dns.TypeSOA, nil)
		if err != nil {
			return err.Error(), false
		}
		return dns.RcodeToString[resp.Rcode], resp.Rcode == dns.RcodeSuccess
	})
	return e
}

// ask sends one query of name and qtype over net ("udp" or "tcp"), after
// edit when not nil.
func (e *env) ask(net, name string, qtype uint16, edit func(*dns.Msg)) (*dns.Msg, error) {
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	if edit != nil {
		edit(q)
	}
	c := &dns.Client{Net: net, Timeout: 5 * time.Second}
	resp, _, err := c.Exchange(q, e.addr)
	return resp, err
}

// answer is what a test expects of an answer: its rcode, the records of
// its answer section as their text without owner and TTL ("A 192.0.2.1"),
// in any order, and the type of its authority section's record, if any.
type answer struct {
	rcode     int
	records   []string
	authority uint16 // dns.TypeSOA or 0
}

// summary is resp as an answer.
func summary(resp *dns.Msg) answer {
	a := answer{rcode: resp.Rcode}
	for _, rr := range resp.Answer {
		fields := strings.Fields(rr.String()) // name ttl class type data...
		a.records = append(a.records, strings.Join(append([]string{fields[3]}, fields[4:]...), " "))
	}
	slices.Sort(a.records)
	if len(resp.Ns) > 0 {
		a.authority = resp.Ns[0].Header().Rrtype
	}
	return a
}

func (a answer) String() string {
	return fmt.Sprintf("%s %q authority %s", dns.RcodeToString[a.rcode], a.records, dns.TypeToString[a.authority])
}

func (a answer) equal(b answer) bool {
	return a.rcode == b.rcode && slices.Equal(a.records, b.records) && a.authority == b.authority
}

// TestZones: an agent ingress's zone (SOA and NS at its domain, the
// edge's addresses at its region domains, NXDOMAIN below), the zones of
// CNAME and ACME challenge targets, the service domain's zone around
// them (the edge's addresses at every host name, the _acme-challenge
// names of the reserved domains under it, NXDOMAIN at other names with
// a "_" label), and REFUSED outside, over UDP and TCP, whatever the case
// of the name asked.
func TestZones(t *testing.T) {
	e := start(t, dnsserver.Config{})
	if _, err := e.store.CreateAgentIngress(e.ctx, e.account, store.AgentIngress{Domain: "Ingress.Example.com"}); err != nil {
		t.Fatal(err)
	}
	custom, err := e.store.CreateReservedDomain(e.ctx, e.account, store.ReservedDomain{Domain: "app.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	wildcard, err := e.store.CreateReservedDomain(e.ctx, e.account, store.ReservedDomain{Domain: "*.apps.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	own, err := e.store.CreateReservedDomain(e.ctx, e.account, store.ReservedDomain{Domain: "mine." + serviceDomain})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateReservedDomain(e.ctx, e.account, store.ReservedDomain{Domain: "*.team." + serviceDomain}); err != nil {
		t.Fatal(err)
	}
	cname := func(d store.ReservedDomain) string { return store.DomainToken(d.ID) + ".cname." + serviceDomain + "." }
	acme := func(d store.ReservedDomain) string { return store.DomainToken(d.ID) + ".acme." + serviceDomain + "." }
	check.Eventually(t, 10*time.Second, "the agent ingress and the reserved domains served", func() (string, bool) {
		a, err := e.ask("udp", "tunnel.us.ingress.example.com.", dns.TypeA, nil)
		if err != nil {
			return err.Error(), false
		}
		b, err := e.ask("udp", acme(wildcard), dns.TypeTXT, nil)
		if err != nil {
			return err.Error(), false
		}
		c, err := e.ask("udp", "_acme-challenge.team."+serviceDomain+".", dns.TypeTXT, nil)
		if err != nil {
			return err.Error(), false
		}
		return summary(a).String() + "; " + summary(b).String() + "; " + summary(c).String(),
			a.Rcode == dns.RcodeSuccess && b.Rcode == dns.RcodeSuccess && c.Rcode == dns.RcodeSuccess
	})
	soa := dns.TypeSOA
	for _, tt := range []struct {
		name  string
		qtype uint16
		want  answer
	}{
		{"ingress.example.com.", dns.TypeSOA, answer{records: []string{"SOA ns1.sluice.test. hostmaster.sluice.test."}}},
		{"ingress.example.com.", dns.TypeNS, answer{records: []string{"NS ns1.sluice.test.", "NS ns2.sluice.test."}}},
		{"INGRESS.example.COM.", dns.TypeNS, answer{records: []string{"NS ns1.sluice.test.", "NS ns2.sluice.test."}}},
		{"ingress.example.com.", dns.TypeA, answer{authority: soa}},
		{"tunnel.us.ingress.example.com.", dns.TypeA, answer{records: []string{"A 192.0.2.1"}}},
		{"Tunnel.EU.ingress.example.com.", dns.TypeAAAA, answer{records: []string{"AAAA 2001:db8::1"}}},
		{"tunnel.us.ingress.example.com.", dns.TypeTXT, answer{authority: soa}},
		{"us.ingress.example.com.", dns.TypeA, answer{authority: soa}}, // a name with one under it
		{"tunnel.ap.ingress.example.com.", dns.TypeA, answer{rcode: dns.RcodeNameError, authority: soa}},
		{"www.ingress.example.com.", dns.TypeA, answer{rcode: dns.RcodeNameError, authority: soa}},
		{"x.tunnel.us.ingress.example.com.", dns.TypeA, answer{rcode: dns.RcodeNameError, authority: soa}},
		{"tunnel.us.ingress.example.com.", dns.TypeANY, answer{records: []string{`HINFO "RFC8482" ""`}}},
		{"cname." + serviceDomain + ".", dns.TypeNS, answer{records: []string{"NS ns1.sluice.test.", "NS ns2.sluice.test."}}},
		{cname(custom), dns.TypeA, answer{records: []string{"A 192.0.2.1"}}},
		{strings.ToUpper(cname(wildcard)), dns.TypeAAAA, answer{records: []string{"AAAA 2001:db8::1"}}},
		{cname(own), dns.TypeA, answer{rcode: dns.RcodeNameError, authority: soa}}, // under the service domain: no target
		{acme(wildcard), dns.TypeTXT, answer{authority: soa}},                      // no challenge pending
		{acme(custom), dns.TypeTXT, answer{rcode: dns.RcodeNameError, authority: soa}},
		{"acme." + serviceDomain + ".", dns.TypeSOA, answer{records: []string{"SOA ns1.sluice.test. hostmaster.sluice.test."}}},
		{serviceDomain + ".", dns.TypeSOA, answer{records: []string{"SOA ns1.sluice.test. hostmaster.sluice.test."}}},
		{"SLUICE.test.", dns.TypeNS, answer{records: []string{"NS ns1.sluice.test.", "NS ns2.sluice.test."}}},
		{serviceDomain + ".", dns.TypeA, answer{authority: soa}}, // the apex is no endpoint's
		{"mine." + serviceDomain + ".", dns.TypeA, answer{records: []string{"A 192.0.2.1"}}},
		{"www." + serviceDomain + ".", dns.TypeAAAA, answer{records: []string{"AAAA 2001:db8::1"}}}, // reserved or not
		{"x.team." + serviceDomain + ".", dns.TypeA, answer{records: []string{"A 192.0.2.1"}}},
		{"a.b.c." + serviceDomain + ".", dns.TypeA, answer{records: []string{"A 192.0.2.1"}}},
		{"www." + serviceDomain + ".", dns.TypeTXT, answer{authority: soa}},
		{"ns1." + serviceDomain + ".", dns.TypeA, answer{authority: soa}},                    // a name server: not the edge
		{"_acme-challenge.mine." + serviceDomain + ".", dns.TypeTXT, answer{authority: soa}}, // reserved, none pending
		{"_ACME-challenge.team." + serviceDomain + ".", dns.TypeTXT, answer{authority: soa}}, // its wildcard reserved
		{"_acme-challenge.mine." + serviceDomain + ".", dns.TypeA, answer{authority: soa}},
		{"_acme-challenge.nobody." + serviceDomain + ".", dns.TypeTXT, answer{rcode: dns.RcodeNameError, authority: soa}},
		{"_acme-challenge.x.team." + serviceDomain + ".", dns.TypeTXT, answer{rcode: dns.RcodeNameError, authority: soa}},
		{"x._acme-challenge.mine." + serviceDomain + ".", dns.TypeA, answer{rcode: dns.RcodeNameError, authority: soa}},
		{"_dmarc." + serviceDomain + ".", dns.TypeTXT, answer{rcode: dns.RcodeNameError, authority: soa}},
		{"www.cname." + serviceDomain + ".", dns.TypeA, answer{rcode: dns.RcodeNameError, authority: soa}}, // the cname zone's, as before
		{"www.acme." + serviceDomain + ".", dns.TypeTXT, answer{rcode: dns.RcodeNameError, authority: soa}},
		{"other.test.", dns.TypeA, answer{rcode: dns.RcodeRefused}},
		{"example.com.", dns.TypeNS, answer{rcode: dns.RcodeRefused}},
		{"www.google.com.", dns.TypeA, answer{rcode: dns.RcodeRefused}},
		{".", dns.TypeNS, answer{rcode: dns.RcodeRefused}},
	} {
		for _, net := range []string{"udp", "tcp"} {
			t.Run(net+" "+tt.name+" "+dns.TypeToString[tt.qtype], func(t *testing.T) {
				resp, err := e.ask(net, tt.name, tt.qtype, nil)
				if err != nil {
					t.Fatal(err)
				}
				got := summary(resp)
				// The SOA's serial and timers are the store's: compare its names.
				for i, r := range got.records {
					if strings.HasPrefix(r, "SOA ") {
						got.records[i] = strings.Join(strings.Fields(r)[:3], " ")
					}
				}
				if !got.equal(tt.want) {
					t.Fatalf("got %s, want %s", got, tt.want)
				}
				if resp.Authoritative != (tt.want.rcode != dns.RcodeRefused) || resp.RecursionAvailable || resp.Truncated {
					t.Fatalf("flags: aa %v, ra %v, tc %v", resp.Authoritative, resp.RecursionAvailable, resp.Truncated)
				}
				if len(resp.Answer) > 0 && resp.Answer[0].Header().Name != tt.name {
					t.Fatalf("the answer's owner is %q, not the name asked, %q", resp.Answer[0].Header().Name, tt.name)
				}
			})
		}
	}
}

// TestAnswersFollowTheStore: an ACME challenge's TXT values added and
// removed, and an agent ingress deleted, show in the answers within a
// bounded wait.
func TestAnswersFollowTheStore(t *testing.T) {
	e := start(t, dnsserver.Config{})
	ingress, err := e.store.CreateAgentIngress(e.ctx, e.account, store.AgentIngress{Domain: "ingress.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	wildcard, err := e.store.CreateReservedDomain(e.ctx, e.account, store.ReservedDomain{Domain: "*.apps.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	token := store.DomainToken(wildcard.ID)
	name := token + ".acme." + serviceDomain + "."
	answers := func(what, name string, qtype uint16, want answer) {
		t.Helper()
		check.Eventually(t, 5*time.Second, what, func() (string, bool) {
			resp, err := e.ask("udp", name, qtype, nil)
			if err != nil {
				return err.Error(), false
			}
			return summary(resp).String(), summary(resp).equal(want)
		})
	}
	answers("no challenge yet", name, dns.TypeTXT, answer{authority: dns.TypeSOA})
	const first, second = "LoqXcYV8q5ONbJQxbmR7SCTNo3tiAXDfowyjxAjEuX0", "ZsAa0vMOhXYr4Efp4hGfTo8oqqjLd4VU5mTjhPcS3Ng"
	if err := e.store.Certificates().AddACMEChallenge(e.ctx, token, first); err != nil {
		t.Fatal(err)
	}
	answers("the challenge written", name, dns.TypeTXT, answer{records: []string{`TXT "` + first + `"`}})
	if err := e.store.Certificates().AddACMEChallenge(e.ctx, token, second); err != nil {
		t.Fatal(err)
	}
	answers("both challenges", name, dns.TypeTXT, answer{records: []string{`TXT "` + first + `"`, `TXT "` + second + `"`}})
	if err := e.store.Certificates().RemoveACMEChallenge(e.ctx, token, first); err != nil {
		t.Fatal(err)
	}
	answers("the first removed", name, dns.TypeTXT, answer{records: []string{`TXT "` + second + `"`}})
	if err := e.store.Certificates().RemoveACMEChallenge(e.ctx, token, second); err != nil {
		t.Fatal(err)
	}
	answers("none left", name, dns.TypeTXT, answer{authority: dns.TypeSOA})
	if _, err := e.store.DeleteAgentIngress(e.ctx, e.account, ingress.ID); err != nil {
		t.Fatal(err)
	}
	answers("the agent ingress deleted", "tunnel.us.ingress.example.com.", dns.TypeA, answer{rcode: dns.RcodeRefused})
	if _, err := e.store.DeleteReservedDomain(e.ctx, e.account, wildcard.ID); err != nil {
		t.Fatal(err)
	}
	answers("the reserved domain deleted", name, dns.TypeTXT, answer{rcode: dns.RcodeNameError, authority: dns.TypeSOA})
}

// TestTruncation: an answer larger than a UDP client takes is truncated
// (TC), to 512 bytes without EDNS and to the smaller of the client's EDNS
// size and MaxUDPSize with it, and comes whole over TCP.
func TestTruncation(t *testing.T) {
	var addrs []netip.Addr
	for i := range 100 { // 100 AAAA records, 2,800 bytes of them
		addrs = append(addrs, netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(i)}))
	}
	e := start(t, dnsserver.Config{EdgeAddrs: addrs})
	if _, err := e.store.CreateAgentIngress(e.ctx, e.account, store.AgentIngress{Domain: "ingress.example.com"}); err != nil {
		t.Fatal(err)
	}
	const name = "tunnel.us.ingress.example.com."
	check.Eventually(t, 10*time.Second, "the agent ingress served", func() (string, bool) {
		resp, err := e.ask("tcp", name, dns.TypeAAAA, nil)
		if err != nil {
			return err.Error(), false
		}
		return summary(resp).String(), len(resp.Answer) == len(addrs)
	})
	for _, tt := range []struct {
		what     string
		net      string
		edns     uint16 // 0: none
		max      int    // bytes
		complete bool
	}{
		{"UDP without EDNS", "udp", 0, dns.MinMsgSize, false},
		{"UDP with EDNS 1000", "udp", 1000, 1000, false},
		{"UDP with EDNS 4096", "udp", 4096, dnsserver.DefaultMaxUDPSize, false},
		{"TCP", "tcp", 0, dns.MaxMsgSize, true},
	} {
		t.Run(tt.what, func(t *testing.T) {
			resp, err := e.ask(tt.net, name, dns.TypeAAAA, func(m *dns.Msg) {
				if tt.edns > 0 {
					m.SetEdns0(tt.edns, false)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			resp.Compress = true // as it came
			if size := resp.Len(); size > tt.max {
				t.Fatalf("the answer has %d bytes, more than %d", size, tt.max)
			}
			if resp.Truncated == tt.complete || (len(resp.Answer) == len(addrs)) != tt.complete {
				t.Fatalf("tc %v with %d of %d records", resp.Truncated, len(resp.Answer), len(addrs))
			}
		})
	}
}

// TestRefusedAndMalformed: zone transfers and classes other than IN are
// refused, a NOTIFY is not implemented, and an EDNS version past 0 gets
// BADVERS.
func TestRefusedAndMalformed(t *testing.T) {
	e := start(t, dnsserver.Config{})
	zone := "cname." + serviceDomain + "."
	for _, tt := range []struct {
		what  string
		qtype uint16
		edit  func(*dns.Msg)
		rcode int
	}{
		{"AXFR", dns.TypeAXFR, nil, dns.RcodeRefused},
		{"IXFR", dns.TypeIXFR, nil, dns.RcodeRefused},
		{"class CH", dns.TypeTXT, func(m *dns.Msg) { m.Question[0].Qclass = dns.ClassCHAOS }, dns.RcodeRefused},
		{"NOTIFY", dns.TypeSOA, func(m *dns.Msg) { m.Opcode = dns.OpcodeNotify }, dns.RcodeNotImplemented},
		{"EDNS version 1", dns.TypeSOA, func(m *dns.Msg) { m.SetEdns0(1232, false); m.IsEdns0().SetVersion(1) }, dns.RcodeBadVers},
	} {
		t.Run(tt.what, func(t *testing.T) {
			resp, err := e.ask("tcp", zone, tt.qtype, tt.edit)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Rcode != tt.rcode || len(resp.Answer) > 0 {
				t.Fatalf("rcode %s with %d records, want %s", dns.RcodeToString[resp.Rcode], len(resp.Answer), dns.RcodeToString[tt.rcode])
			}
		})
	}
}

// TestTCPBounds: past TCPConnections, a connection waits to be served
// until one closes; one that sends no query is closed after TCPTimeout.
func TestTCPBounds(t *testing.T) {
	e := start(t, dnsserver.Config{TCPConnections: 1, TCPTimeout: 300 * time.Millisecond, TCPIdleTimeout: 300 * time.Millisecond})
	silent, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	began := time.Now()
	resp, err := e.ask("tcp", "cname."+serviceDomain+".", dns.TypeSOA, nil)
	waited := time.Since(began)
	if err != nil || resp.Rcode != dns.RcodeSuccess {
		t.Fatalf("the second connection, once the first closed: %v %v", err, resp)
	}
	if waited < 200*time.Millisecond {
		t.Fatalf("the second connection was served after %s, beside the first", waited)
	}
	if err := silent.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := silent.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the silent connection: %v, want it closed by the server", err)
	}
}

// TestIngressChallenges: the TXT values of an agent ingress's region
// domain's challenges are answered at _acme-challenge.tunnel.<region>.<domain>
// in its zone, those of another region or ingress are not, nor those of
// a region not configured, and the name is gone with its last value.
func TestIngressChallenges(t *testing.T) {
	e := start(t, dnsserver.Config{})
	ingress, err := e.store.CreateAgentIngress(e.ctx, e.account, store.AgentIngress{Domain: "ingress.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.store.CreateAgentIngress(e.ctx, e.account, store.AgentIngress{Domain: "other.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	const name, value = "_acme-challenge.tunnel.us.ingress.example.com.", "LoqXcYV8q5ONbJQxbmR7SCTNo3tiAXDfowyjxAjEuX0"
	answers := func(what, name string, want answer) {
		t.Helper()
		check.Eventually(t, 5*time.Second, what, func() (string, bool) {
			resp, err := e.ask("udp", name, dns.TypeTXT, nil)
			if err != nil {
				return err.Error(), false
			}
			return summary(resp).String(), summary(resp).equal(want)
		})
	}
	nxdomain := answer{rcode: dns.RcodeNameError, authority: dns.TypeSOA}
	answers("no challenge yet", name, nxdomain)
	for _, token := range []string{store.IngressChallengeToken(other.ID, "us"), store.IngressChallengeToken(ingress.ID, "eu"), store.IngressChallengeToken(ingress.ID, "ap")} {
		if err := e.store.Certificates().AddACMEChallenge(e.ctx, token, value); err != nil {
			t.Fatal(err)
		}
	}
	token := store.IngressChallengeToken(ingress.ID, "us")
	if err := e.store.Certificates().AddACMEChallenge(e.ctx, token, value); err != nil {
		t.Fatal(err)
	}
	answers("the challenge written", name, answer{records: []string{`TXT "` + value + `"`}})
	answers("another ingress's challenge, at its own name", "_acme-challenge.tunnel.us.other.example.com.", answer{records: []string{`TXT "` + value + `"`}})
	answers("a region not configured", "_acme-challenge.tunnel.ap.ingress.example.com.", nxdomain)
	if err := e.store.Certificates().RemoveACMEChallenge(e.ctx, token, value); err != nil {
		t.Fatal(err)
	}
	answers("the value removed", name, nxdomain)
	answers("another region's value, kept", "_acme-challenge.tunnel.eu.ingress.example.com.", answer{records: []string{`TXT "` + value + `"`}})
}

// TestServiceDomainChallenges: _acme-challenge.<name>.<service domain>
// answers the TXT values pending under the tokens of the reserved
// domains <name>.<service domain> and *.<name>.<service domain>, both
// when both are pending, NODATA when none is, and NXDOMAIN once neither
// is reserved; a token of another reserved domain is not answered there.
func TestServiceDomainChallenges(t *testing.T) {
	e := start(t, dnsserver.Config{})
	reserve := func(domain string) store.ReservedDomain {
		t.Helper()
		d, err := e.store.CreateReservedDomain(e.ctx, e.account, store.ReservedDomain{Domain: domain})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	wildcard, base, other := reserve("*.team."+serviceDomain), reserve("team."+serviceDomain), reserve("other."+serviceDomain)
	const name = "_acme-challenge.team." + serviceDomain + "."
	answers := func(what string, want answer) {
		t.Helper()
		check.Eventually(t, 5*time.Second, what, func() (string, bool) {
			resp, err := e.ask("udp", name, dns.TypeTXT, nil)
			if err != nil {
				return err.Error(), false
			}
			return summary(resp).String(), summary(resp).equal(want)
		})
	}
	txt := func(values ...string) answer {
		a := answer{}
		for _, v := range values {
			a.records = append(a.records, `TXT "`+v+`"`)
		}
		slices.Sort(a.records)
		return a
	}
	const first, second, third = "LoqXcYV8q5ONbJQxbmR7SCTNo3tiAXDfowyjxAjEuX0", "ZsAa0vMOhXYr4Efp4hGfTo8oqqjLd4VU5mTjhPcS3Ng", "Tl8tXbL0Wg1O3cX5o9oG0vjqkMKCwX3KyoxUMk6Yv2M"
	add := func(d store.ReservedDomain, value string) {
		t.Helper()
		if err := e.store.Certificates().AddACMEChallenge(e.ctx, store.DomainToken(d.ID), value); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(d store.ReservedDomain, value string) {
		t.Helper()
		if err := e.store.Certificates().RemoveACMEChallenge(e.ctx, store.DomainToken(d.ID), value); err != nil {
			t.Fatal(err)
		}
	}
	answers("none pending", answer{authority: dns.TypeSOA})
	add(other, third)
	add(wildcard, first)
	answers("the wildcard's value", txt(first))
	add(base, second)
	answers("the wildcard's and the name's", txt(first, second))
	remove(wildcard, first)
	answers("the name's left", txt(second))
	remove(base, second)
	answers("none left", answer{authority: dns.TypeSOA})
	for _, d := range []store.ReservedDomain{wildcard, base} {
		if _, err := e.store.DeleteReservedDomain(e.ctx, e.account, d.ID); err != nil {
			t.Fatal(err)
		}
	}
	answers("neither reserved", answer{rcode: dns.RcodeNameError, authority: dns.TypeSOA})
}

// TestWarnsOfNameServersUnderTheServiceDomain: a name server named under
// the service domain, which the server answers with no address, is
// logged at start; one outside it is not.
func TestWarnsOfNameServersUnderTheServiceDomain(t *testing.T) {
	for _, tc := range []struct {
		ns   string
		warn bool
	}{{"ns1." + serviceDomain, true}, {"NS1." + serviceDomain + ".", true}, {"ns1.example.net", false}} {
		var logged bytes.Buffer
		_, err := dnsserver.New(nil, nil, nil, dnsserver.Config{
			NSTargets: []string{tc.ns}, Regions: []string{"us"}, ServiceDomains: []string{serviceDomain},
			EdgeAddrs: []netip.Addr{netip.MustParseAddr("192.0.2.1")}, Logger: slog.New(slog.NewTextHandler(&logged, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(logged.String(), "name server is named under the service domain"); got != tc.warn {
			t.Errorf("name server %s: warned %v, want %v (log %q)", tc.ns, got, tc.warn, logged.String())
		}
	}
}
