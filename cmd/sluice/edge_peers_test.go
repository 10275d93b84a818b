package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"golang.ngrok.com/ngrok/v2"

	"github.com/sluicehq/sluice/internal/check"
)

// TestServeEdgesForwardToEachOther runs two sluice processes with the
// edge role and a peer listener on one NATS, as behind a load balancer:
// the agent is connected to the first, and a public request that reaches
// the second is forwarded to the first and answered by the agent.
func TestServeEdgesForwardToEachOther(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs two sluice serve processes")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	const token = "sk_serve_edge_peers_0123456789abcdef"
	a := startServe(t, bin, t.TempDir(), "SLUICE_BOOTSTRAP_API_KEY="+token, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0",
		"SLUICE_NATS_LISTEN=127.0.0.1:0", "SLUICE_EDGE_PEER=127.0.0.1:0")
	a.waitLog(t, "the edge is serving")
	natsURL := a.logAttr(t, "the embedded NATS server is listening", "nats_url")
	seed := a.logAttr(t, "the embedded NATS server is listening", "nats_nkey")
	// B runs the edge alone, as a production edge does: its agents'
	// certificate is its own (no agent connects to it here).
	certFile, keyFile, _ := selfSigned(t, t.TempDir())
	b := startServe(t, bin, t.TempDir(), "SLUICE_ROLES=edge", "SLUICE_NATS_URL="+natsURL, "SLUICE_NATS_NKEY="+seed,
		"SLUICE_EDGE_AGENTS=127.0.0.1:0", "SLUICE_EDGE_AGENTS_CERT="+certFile, "SLUICE_EDGE_AGENTS_KEY="+keyFile,
		"SLUICE_EDGE_HTTP=127.0.0.1:0", "SLUICE_EDGE_DOMAIN=sluice.localhost", "SLUICE_EDGE_PEER=127.0.0.1:0")
	b.waitLog(t, "the edge is serving")
	if peer := b.logAttr(t, "the edge is serving", "peer_advertised"); !strings.HasPrefix(peer, "127.0.0.1:") || strings.HasSuffix(peer, ":0") {
		t.Fatalf("B advertises its peer listener at %q, want the port it got", peer)
	}

	agents := strings.TrimPrefix(a.logAttr(t, "the edge is serving", "agents"), "tls://")
	publicB := strings.TrimPrefix(b.logAttr(t, "the edge is serving", "http"), "http://")
	caPEM, err := os.ReadFile(a.logAttr(t, "the edge is serving", "agents_ca"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	createID(t, a.url+"/reserved_domains", token, `{"domain": "*.apps.example.test"}`)
	status, body := request(t, http.MethodPost, a.url+"/credentials", token, `{"acl": ["bind:*.apps.example.test"]}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the credential: %d %s", status, body)
	}
	var cred struct{ Token string }
	if err := json.Unmarshal([]byte(body), &cred); err != nil || cred.Token == "" {
		t.Fatalf("the credential's answer %s: %v", body, err)
	}
	credToken := cred.Token

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	agent, err := ngrok.NewAgent(ngrok.WithAuthtoken(credToken), ngrok.WithAgentConnectURL(agents), ngrok.WithAgentConnectCAs(pool))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Disconnect()
	ln, err := agent.Listen(ctx, ngrok.WithURL("http://demo.apps.example.test"))
	if err != nil {
		t.Fatalf("binding at A: %v", err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello %s", r.URL.Path)
		}))
	}()
	got := check.Eventually(t, 30*time.Second, "B forwarding to A's agent", func() (string, bool) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+publicB+"/via-b", nil)
		req.Host = "demo.apps.example.test"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err.Error(), false
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, resp.StatusCode, " ")
		buf := make([]byte, 256)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return b.String(), resp.StatusCode == http.StatusOK
	})
	if got != "200 hello /via-b" {
		t.Fatalf("through B: %q, want 200 hello /via-b", got)
	}
	_, metricsA := request(t, http.MethodGet, a.metricsURL+"/metrics", "", "")
	_, metricsB := request(t, http.MethodGet, b.metricsURL+"/metrics", "", "")
	if in, out := metricLine(metricsA, "sluice_edge_requests_forwarded_in_total"), metricLine(metricsB, "sluice_edge_requests_forwarded_total"); in == "" || in == "0" || in != out {
		t.Errorf("A took %q forwarded requests and B forwarded %q, want as many, at least one", in, out)
	}
}
