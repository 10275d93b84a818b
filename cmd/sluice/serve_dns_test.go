package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
)

// TestDNSFlags: --dns-listen is off by default, needs --dns-edge-addrs
// of IP addresses unless --dev (which answers the loopback), and
// --dns-edge-addrs needs it.
func TestDNSFlags(t *testing.T) {
	parse := func(t *testing.T, args ...string) dnsFlags {
		t.Helper()
		var f dnsFlags
		fl := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		f.register(fl)
		if err := fl.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if f := parse(t); f.addr != "" || f.validate(false) != nil || f.validate(true) != nil {
		t.Fatalf("default: %+v, %v", f, f.validate(false))
	}
	f := parse(t, "--dns-listen", "127.0.0.1:5353")
	check.ErrorContains(t, f.validate(false), "--dns-listen needs --dns-edge-addrs")
	if err := f.validate(true); err != nil || !slices.Equal(f.addrs(true), []netip.Addr{netip.MustParseAddr("127.0.0.1")}) {
		t.Fatalf("--dev: %v, %v", err, f.addrs(true))
	}
	f = parse(t, "--dns-listen", "0.0.0.0:53", "--dns-edge-addrs", "203.0.113.10,2001:db8::10")
	if err := f.validate(false); err != nil || len(f.addrs(true)) != 2 || f.addrs(true)[1] != netip.MustParseAddr("2001:db8::10") {
		t.Fatalf("two addresses: %v, %v", err, f.addrs(true))
	}
	check.ErrorContains(t, parse(t, "--dns-listen", "0.0.0.0:53", "--dns-edge-addrs", "edge.example.com").validate(false), `--dns-edge-addrs "edge.example.com" is not an IPv4 or IPv6 address`)
	check.ErrorContains(t, parse(t, "--dns-listen", "53", "--dns-edge-addrs", "203.0.113.10").validate(false), `--dns-listen "53" is not HOST:PORT`)
	check.ErrorContains(t, parse(t, "--dns-edge-addrs", "203.0.113.10").validate(false), "give --dns-listen too")
}

// TestServeDNS: serve --dns-listen says where it answers, and answers
// the NS targets and region domains of an agent ingress created through
// the API, and the cname_target and acme_challenge_cname_target of a
// reserved wildcard domain, as the API shows them.
func TestServeDNS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const token = "sk_test_bootstrap_token_0123456789"
	p := startServe(t, buildSluice(t), t.TempDir(), "SLUICE_BOOTSTRAP_API_KEY="+token,
		"SLUICE_DNS_LISTEN=127.0.0.1:0", "SLUICE_DNS_EDGE_ADDRS=203.0.113.10,2001:db8::10",
		"SLUICE_INGRESS_NS_TARGETS=ns1.example.net,ns2.example.net", "SLUICE_SERVICE_DOMAINS=tunnels.example")
	addr := p.logAttr(t, "sluice is serving", "dns")
	waitReady(t, p.url)
	code, body := request(t, "POST", p.url+"/agent_ingresses", token, `{"domain":"ingress.example.com"}`)
	if code != 201 {
		t.Fatalf("creating the agent ingress: %d %s", code, body)
	}
	var ingress struct {
		NSTargets     []string `json:"ns_targets"`
		RegionDomains []string `json:"region_domains"`
	}
	if err := json.Unmarshal([]byte(body), &ingress); err != nil || len(ingress.RegionDomains) != 1 {
		t.Fatalf("the agent ingress: %v %s", err, body)
	}
	code, body = request(t, "POST", p.url+"/reserved_domains", token, `{"domain":"*.apps.example.com"}`)
	if code != 201 {
		t.Fatalf("reserving the domain: %d %s", code, body)
	}
	var reserved struct {
		CNAMETarget string `json:"cname_target"`
		ACMETarget  string `json:"acme_challenge_cname_target"`
	}
	if err := json.Unmarshal([]byte(body), &reserved); err != nil || reserved.ACMETarget == "" {
		t.Fatalf("the reserved domain: %v %s", err, body)
	}
	ask := func(net, name string, qtype uint16) (*dns.Msg, error) {
		q := new(dns.Msg)
		q.SetQuestion(dns.Fqdn(name), qtype)
		resp, _, err := (&dns.Client{Net: net, Timeout: 5 * time.Second}).Exchange(q, addr)
		return resp, err
	}
	values := func(resp *dns.Msg) []string {
		var out []string
		for _, rr := range resp.Answer {
			fields := strings.Fields(rr.String())
			out = append(out, strings.TrimSuffix(fields[len(fields)-1], "."))
		}
		slices.Sort(out)
		return out
	}
	for _, tt := range []struct {
		net, name string
		qtype     uint16
		want      []string
	}{
		{"udp", ingress.RegionDomains[0], dns.TypeA, []string{"203.0.113.10"}},
		{"tcp", ingress.RegionDomains[0], dns.TypeAAAA, []string{"2001:db8::10"}},
		{"udp", "ingress.example.com", dns.TypeNS, ingress.NSTargets},
		{"udp", reserved.CNAMETarget, dns.TypeA, []string{"203.0.113.10"}},
	} {
		check.Eventually(t, 10*time.Second, tt.net+" "+tt.name, func() ([]string, bool) {
			resp, err := ask(tt.net, tt.name, tt.qtype)
			if err != nil {
				return []string{err.Error()}, false
			}
			return values(resp), slices.Equal(values(resp), tt.want)
		})
	}
	resp, err := ask("udp", reserved.ACMETarget, dns.TypeTXT)
	if err != nil || resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 0 || !resp.Authoritative {
		t.Fatalf("the ACME challenge target with no challenge: %v %v", err, resp)
	}
	resp, err = ask("udp", "example.org", dns.TypeA)
	if err != nil || resp.Rcode != dns.RcodeRefused {
		t.Fatalf("a name outside the zones: %v %v", err, resp)
	}
}

// TestACMEChallengesCommand: sluice acme-challenges add and remove change
// the TXT values of the token of a reserved domain's id, or of a token
// given as it is, in the store of a running sluice.
func TestACMEChallengesCommand(t *testing.T) {
	url, seed, st := startStore(t)
	run := func(args ...string) (string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := newRootCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{"acme-challenges"}, append(args, "--nats-url", url, "--nats-nkey", seed)...))
		err := cmd.ExecuteContext(ctx)
		return out.String(), err
	}
	token := store.DomainToken("rd_test")
	values := make(chan []string, 16)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go st.FollowDNS(ctx, slog.New(slog.DiscardHandler), func(c store.DNSChange) {
		if c.Challenge != nil {
			values <- c.Challenge.Values
		} else if c.Deleted {
			values <- nil
		}
	}, nil)
	wait := func(want []string) {
		t.Helper()
		select {
		case got := <-values:
			if !slices.Equal(got, want) {
				t.Fatalf("the store holds %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the store did not change to %q", want)
		}
	}
	out, err := run("add", "rd_test", "first-value")
	if err != nil || !strings.Contains(out, "token "+token) {
		t.Fatalf("add: %v\n%s", err, out)
	}
	wait([]string{"first-value"})
	if out, err := run("add", token, "second-value"); err != nil {
		t.Fatalf("add by token: %v\n%s", err, out)
	}
	wait([]string{"first-value", "second-value"})
	if out, err := run("remove", "rd_test", "first-value"); err != nil {
		t.Fatalf("remove: %v\n%s", err, out)
	}
	wait([]string{"second-value"})
	_, err = run("add", "not-a-token", "v")
	check.ErrorContains(t, err, "token: is \"not-a-token\"")
}
