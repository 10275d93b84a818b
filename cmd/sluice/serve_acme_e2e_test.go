package main

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/acmetest"
	"github.com/sluicehq/sluice/internal/check"
)

// TestServeACME: serve --dev with --dns-listen and --acme-directory at a
// Pebble gets a certificate for a custom wildcard domain whose
// _acme-challenge the user's zone CNAMEs to its acme_challenge_cname_target,
// through sluice's own DNS server; the API shows it, and the edge's
// --edge-https serves it by SNI to a client that trusts Pebble's root. An
// agent ingress whose domain the user's zone delegates to its ns_targets
// gets a certificate of tunnel.us.<domain>, which --edge-agents serves by
// SNI.
func TestServeACME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	clearSluiceEnv(t)
	const token = "sk_test_bootstrap_token_0123456789"
	zone, resolver := acmetest.StartZone(t, "tunnels.example", "")
	pebble := acmetest.StartPebble(t, resolver, 0) // DNS-01 only
	p := startServe(t, buildSluice(t), t.TempDir(), "SLUICE_BOOTSTRAP_API_KEY="+token, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0",
		"SLUICE_DNS_LISTEN=127.0.0.1:0", "SLUICE_SERVICE_DOMAINS=tunnels.example",
		"SLUICE_ACME_DIRECTORY="+pebble.Directory, "SLUICE_ACME_DNS_RESOLVER="+resolver, "SLUICE_ACME_INTERVAL=200ms",
		"LEGO_CA_CERTIFICATES="+pebble.TLSCertFile)
	zone.SetSluiceDNS(p.logAttr(t, "sluice is serving", "dns"))
	p.waitLog(t, "the edge is serving")
	public := strings.TrimPrefix(p.logAttr(t, "the edge is serving", "https"), "https://")
	waitReady(t, p.url)

	code, body := request(t, "POST", p.url+"/reserved_domains", token, `{"domain":"*.apps.example.com"}`)
	if code != http.StatusCreated {
		t.Fatalf("reserving the domain: %d %s", code, body)
	}
	var reserved struct {
		ID         string `json:"id"`
		ACMETarget string `json:"acme_challenge_cname_target"`
	}
	if err := json.Unmarshal([]byte(body), &reserved); err != nil || reserved.ACMETarget == "" {
		t.Fatalf("the reserved domain: %v %s", err, body)
	}
	zone.CNAME("_acme-challenge.apps.example.com", reserved.ACMETarget)
	// The record is made after the domain, whose job may have looked for
	// it already and be waiting for its retries_at: the policy sent again
	// has it look at once, as the job's msg tells a user.
	if code, body := request(t, "PATCH", p.url+"/reserved_domains/"+reserved.ID, token, `{"certificate_management_policy":{"authority":"letsencrypt","private_key_type":"ecdsa"}}`); code != http.StatusOK {
		t.Fatalf("sending the policy again: %d %s", code, body)
	}

	certID := check.Eventually(t, 3*time.Minute, "the domain's certificate", func() (string, bool) {
		_, body := request(t, "GET", p.url+"/reserved_domains/"+reserved.ID, token, "")
		var d struct {
			Certificate *struct{ ID string } `json:"certificate"`
		}
		if json.Unmarshal([]byte(body), &d) != nil || d.Certificate == nil {
			return body, false
		}
		return d.Certificate.ID, true
	})
	if code, body := request(t, "GET", p.url+"/tls_certificates/"+certID, token, ""); code != http.StatusOK || !strings.Contains(body, `"*.apps.example.com"`) || strings.Contains(body, "PRIVATE KEY") {
		t.Fatalf("GET /tls_certificates/%s: %d %s", certID, code, body)
	}

	check.Eventually(t, 10*time.Second, "the edge serving the certificate", func() (string, bool) {
		conn, err := tls.Dial("tcp", public, &tls.Config{ServerName: "www.apps.example.com", RootCAs: pebble.Roots})
		if err != nil {
			return err.Error(), false
		}
		defer func() { _ = conn.Close() }()
		return conn.ConnectionState().PeerCertificates[0].DNSNames[0], true
	})

	// An agent ingress delegated to sluice's DNS: its region domain's
	// certificate, on the agents' listener.
	code, body = request(t, "POST", p.url+"/agent_ingresses", token, `{"domain":"agents.example.com","certificate_management_policy":{"authority":"letsencrypt"}}`)
	if code != http.StatusCreated {
		t.Fatalf("creating the agent ingress: %d %s", code, body)
	}
	var ingress struct {
		ID        string   `json:"id"`
		NSTargets []string `json:"ns_targets"`
	}
	if err := json.Unmarshal([]byte(body), &ingress); err != nil || len(ingress.NSTargets) == 0 {
		t.Fatalf("the agent ingress: %v %s", err, body)
	}
	zone.NS("agents.example.com", ingress.NSTargets...)
	check.Eventually(t, 3*time.Minute, "the agent ingress's certificate", func() (string, bool) {
		_, body := request(t, "GET", p.url+"/agent_ingresses/"+ingress.ID, token, "")
		return body, strings.Contains(body, `"provisioning_job":null`) && !strings.Contains(body, `"renews_at":null`)
	})
	agents := p.logAttr(t, "the edge is serving", "agents")
	check.Eventually(t, 10*time.Second, "the agents' listener serving the ingress's certificate", func() (string, bool) {
		conn, err := tls.Dial("tcp", agents, &tls.Config{ServerName: "tunnel.us.agents.example.com", RootCAs: pebble.Roots})
		if err != nil {
			return err.Error(), false
		}
		defer func() { _ = conn.Close() }()
		return conn.ConnectionState().PeerCertificates[0].DNSNames[0], true
	})
	// Each listener serves its own kind only: the agents' listener no
	// reserved domain's certificate, the public one no ingress's.
	for _, c := range []struct{ addr, name string }{{agents, "www.apps.example.com"}, {public, "tunnel.us.agents.example.com"}} {
		if conn, err := tls.Dial("tcp", c.addr, &tls.Config{ServerName: c.name, RootCAs: pebble.Roots}); err == nil {
			_ = conn.Close()
			t.Errorf("%s served a certificate of %s that Pebble issued (%v); want the listener's own, which Pebble's root does not sign", c.addr, c.name, conn.ConnectionState().PeerCertificates[0].DNSNames)
		}
	}
}
