package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
)

type agentIngressList struct {
	Ingresses   []apiwire.AgentIngress `json:"ingresses"`
	URI         string                 `json:"uri"`
	NextPageURI *string                `json:"next_page_uri"`
}

// createAgentIngress creates an agent ingress of the body.
func (e *testEnv) createAgentIngress(t *testing.T, token, body string) apiwire.AgentIngress {
	t.Helper()
	resp, out := e.call(t, token, http.MethodPost, "/agent_ingresses", body)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	return apitest.DecodeAs[apiwire.AgentIngress](t, out)
}

// ingressConfig is the operator's configuration of the tests.
var ingressConfig = apitest.WithConfig(api.Config{Ingress: api.IngressConfig{
	NSTargets: []string{"ns1.tunnels.test", "ns2.tunnels.test"}, Regions: []string{"us", "eu"}, ServiceDomains: []string{"tunnels.test"},
}})

// TestAgentIngressRoundTrip creates, reads, changes and deletes an agent
// ingress: the fields of specification section 2.1 in its order, uri its
// path, the operator's NS targets and regional domains, no policy and no
// status without a policy, a provisioning job with one; no audit event.
func TestAgentIngressRoundTrip(t *testing.T) {
	e := newTestEnv(t, ingressConfig)
	created := e.createAgentIngress(t, e.token, `{"description":"edge","metadata":"m","domain":"Ingress.Example.com"}`)
	if !strings.HasPrefix(created.ID, "agin_") || created.URI != "/agent_ingresses/"+created.ID || created.Domain != "ingress.example.com" {
		t.Fatalf("created %+v", created)
	}
	resp, out := e.call(t, e.token, http.MethodGet, "/agent_ingresses/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	want := fmt.Sprintf(`{"id":%q,"uri":"/agent_ingresses/%s","description":"edge","metadata":"m","domain":"ingress.example.com",`+
		`"ns_targets":["ns1.tunnels.test","ns2.tunnels.test"],"region_domains":["tunnel.us.ingress.example.com","tunnel.eu.ingress.example.com"],`+
		`"created_at":%q,"certificate_management_policy":null,"certificate_management_status":null}`+"\n", created.ID, created.ID, created.CreatedAt)
	if string(out) != want {
		t.Fatalf("body\n %s\nwant\n %s", out, want)
	}

	resp, out = e.call(t, e.token, http.MethodPatch, "/agent_ingresses/"+created.ID, `{"certificate_management_policy":{"authority":"letsencrypt"}}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	got := apitest.DecodeAs[apiwire.AgentIngress](t, out)
	status := got.CertificateManagementStatus
	if p := got.CertificateManagementPolicy; p == nil || *p != (apiwire.CertificatePolicy{Authority: "letsencrypt", PrivateKeyType: "rsa"}) ||
		status == nil || status.RenewsAt != nil || status.ProvisioningJob == nil || status.ProvisioningJob.Msg == "" ||
		!strings.HasSuffix(status.ProvisioningJob.StartedAt, "Z") || status.ProvisioningJob.ErrorCode != nil || status.ProvisioningJob.RetriesAt != nil {
		t.Fatalf("with a policy: %s", out)
	}
	if !strings.Contains(string(out), `"certificate_management_status":{"renews_at":null,"provisioning_job":{"error_code":null,"msg":"certificate provisioning is in progress","started_at":"`) {
		t.Fatalf("the status's shape: %s", out)
	}
	// The same policy again keeps the job; a description leaves the policy.
	resp, out = e.call(t, e.token, http.MethodPatch, "/agent_ingresses/"+created.ID, `{"description":"d2","certificate_management_policy":{"authority":"letsencrypt","private_key_type":"rsa"}}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if again := apitest.DecodeAs[apiwire.AgentIngress](t, out); again.Description != "d2" || again.CertificateManagementStatus.ProvisioningJob.StartedAt != status.ProvisioningJob.StartedAt {
		t.Fatalf("the same policy: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodPatch, "/agent_ingresses/"+created.ID, `{"certificate_management_policy":{"private_key_type":"ecdsa"}}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiwire.AgentIngress](t, out); got.CertificateManagementPolicy.PrivateKeyType != "ecdsa" || got.Domain != "ingress.example.com" {
		t.Fatalf("ecdsa: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodPatch, "/agent_ingresses/"+created.ID, `{"certificate_management_policy":null}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiwire.AgentIngress](t, out); got.CertificateManagementPolicy != nil || got.CertificateManagementStatus != nil || got.Description != "d2" {
		t.Fatalf("policy null: %s", out)
	}

	resp, out = e.call(t, e.token, http.MethodDelete, "/agent_ingresses/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	if len(out) != 0 {
		t.Fatalf("delete answered a body: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/agent_ingresses/"+created.ID, "")
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	// The catalogue has no audit kind of agent ingresses.
	if events := e.storedEvents(t, e.account); len(events) != 0 {
		t.Fatalf("agent ingresses' changes stored %d events, want none: %s", len(events), events[0].raw)
	}
}

// TestAgentIngressPolicyAtCreate: a policy at create starts provisioning
// (spec section 3), ecdsa kept; the regional domains follow the
// configuration the API answers with, so a region added shows on an
// ingress that exists.
func TestAgentIngressPolicyAtCreate(t *testing.T) {
	e := newTestEnv(t, ingressConfig)
	a := e.createAgentIngress(t, e.token, `{"domain":"x.example.org","certificate_management_policy":{"authority":"letsencrypt","private_key_type":"ecdsa"}}`)
	if a.CertificateManagementPolicy == nil || a.CertificateManagementPolicy.PrivateKeyType != "ecdsa" || a.CertificateManagementStatus == nil ||
		a.CertificateManagementStatus.RenewsAt != nil || a.CertificateManagementStatus.ProvisioningJob == nil {
		t.Fatalf("created %+v", a)
	}
	more := newTestEnv(t, apitest.WithConfig(api.Config{Ingress: api.IngressConfig{Regions: []string{"us", "eu", "ap"}}}))
	b := more.createAgentIngress(t, more.token, `{"domain":"y.example.org"}`)
	if strings.Join(b.RegionDomains, ",") != "tunnel.us.y.example.org,tunnel.eu.y.example.org,tunnel.ap.y.example.org" ||
		strings.Join(b.NSTargets, ",") != strings.Join(api.DefaultIngressNSTargets, ",") {
		t.Fatalf("regions us, eu, ap, default NS targets: %+v", b)
	}
}

// TestAgentIngressDomainTaken: a domain an agent ingress of any account has,
// ignoring case, is a 409 ERR_SLUICE_428 naming the field; a delete frees
// it.
func TestAgentIngressDomainTaken(t *testing.T) {
	e := newTestEnv(t, ingressConfig)
	a := e.createAgentIngress(t, e.token, `{"domain":"taken.example.com"}`)
	other := e.otherAccountToken(t)
	for _, token := range []string{e.token, other} {
		resp, out := e.call(t, token, http.MethodPost, "/agent_ingresses", `{"domain":"TAKEN.example.com."}`)
		if msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_428", "domain"); !strings.Contains(msg, `"taken.example.com"`) {
			t.Fatalf("the message does not name the domain: %s", msg)
		}
	}
	resp, out := e.call(t, e.token, http.MethodDelete, "/agent_ingresses/"+a.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	e.createAgentIngress(t, other, `{"domain":"taken.example.com"}`)
}

// TestAgentIngressOfAnotherAccount: another account's agent ingress is not
// found by any call, nor listed.
func TestAgentIngressOfAnotherAccount(t *testing.T) {
	e := newTestEnv(t, ingressConfig)
	a := e.createAgentIngress(t, e.token, `{"domain":"mine.example.com"}`)
	other := e.otherAccountToken(t)
	for _, c := range []struct{ method, body string }{{http.MethodGet, ""}, {http.MethodPatch, `{"description":"x"}`}, {http.MethodDelete, ""}} {
		resp, out := e.call(t, other, c.method, "/agent_ingresses/"+a.ID, c.body)
		wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	}
	resp, out := e.call(t, other, http.MethodGet, "/agent_ingresses", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if n := len(apitest.DecodeAs[agentIngressList](t, out).Ingresses); n != 0 {
		t.Fatalf("another account lists %d agent ingresses: %s", n, out)
	}
}

func TestAgentIngressValidation(t *testing.T) {
	e := newTestEnv(t, ingressConfig)
	a := e.createAgentIngress(t, e.token, `{"domain":"v.example.com"}`)
	tests := []struct {
		name, method, path, body, code, field string
	}{
		{"no domain", http.MethodPost, "/agent_ingresses", `{}`, "ERR_SLUICE_333", "domain"},
		{"one label", http.MethodPost, "/agent_ingresses", `{"domain":"localhost"}`, "ERR_SLUICE_333", "domain"},
		{"hyphen", http.MethodPost, "/agent_ingresses", `{"domain":"-a.example.com"}`, "ERR_SLUICE_333", "domain"},
		{"label of 64", http.MethodPost, "/agent_ingresses", `{"domain":"` + strings.Repeat("a", 64) + `.com"}`, "ERR_SLUICE_333", "domain"},
		{"over 253", http.MethodPost, "/agent_ingresses", `{"domain":"` + strings.Repeat("a.", 127) + `io"}`, "ERR_SLUICE_333", "domain"},
		{"service domain", http.MethodPost, "/agent_ingresses", `{"domain":"Tunnels.Test"}`, "ERR_SLUICE_341", "domain"},
		{"under a service domain", http.MethodPost, "/agent_ingresses", `{"domain":"a.tunnels.test"}`, "ERR_SLUICE_341", "domain"},
		{"description of 256", http.MethodPost, "/agent_ingresses", `{"domain":"d.example.com","description":"` + strings.Repeat("x", 256) + `"}`, "ERR_SLUICE_333", "description"},
		{"metadata of 4097", http.MethodPost, "/agent_ingresses", `{"domain":"d.example.com","metadata":"` + strings.Repeat("x", 4097) + `"}`, "ERR_SLUICE_333", "metadata"},
		{"authority", http.MethodPost, "/agent_ingresses", `{"domain":"d.example.com","certificate_management_policy":{"authority":"zerossl"}}`, "ERR_SLUICE_333", "certificate_management_policy.authority"},
		{"key type", http.MethodPost, "/agent_ingresses", `{"domain":"d.example.com","certificate_management_policy":{"private_key_type":"dsa"}}`, "ERR_SLUICE_333", "certificate_management_policy.private_key_type"},
		{"policy unknown field", http.MethodPost, "/agent_ingresses", `{"domain":"d.example.com","certificate_management_policy":{"kind":"x"}}`, "ERR_SLUICE_331", "certificate_management_policy.kind"},
		{"domain a number", http.MethodPost, "/agent_ingresses", `{"domain":1}`, "ERR_SLUICE_332", "domain"},
		{"unknown field", http.MethodPost, "/agent_ingresses", `{"domain":"d.example.com","region":"us"}`, "ERR_SLUICE_331", "region"},
		{"domain at update", http.MethodPatch, "/agent_ingresses/ID", `{"domain":"w.example.com"}`, "ERR_SLUICE_340", "domain"},
		{"policy a string at update", http.MethodPatch, "/agent_ingresses/ID", `{"certificate_management_policy":"on"}`, "ERR_SLUICE_332", "certificate_management_policy"},
		{"key type at update", http.MethodPatch, "/agent_ingresses/ID", `{"certificate_management_policy":{"private_key_type":"dsa"}}`, "ERR_SLUICE_333", "certificate_management_policy.private_key_type"},
		{"policy member a number at update", http.MethodPatch, "/agent_ingresses/ID", `{"certificate_management_policy":{"authority":1}}`, "ERR_SLUICE_332", "certificate_management_policy.authority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := e.call(t, e.token, tt.method, strings.Replace(tt.path, "ID", a.ID, 1), tt.body)
			msg := wantError(t, resp, out, http.StatusBadRequest, tt.code, tt.field)
			if tt.code == "ERR_SLUICE_340" && !strings.Contains(msg, `field "domain" cannot be changed after create: create another agent ingress`) {
				t.Fatalf("the message does not say the domain is fixed: %s", msg)
			}
		})
	}
	resp, out := e.call(t, e.token, http.MethodGet, "/agent_ingresses/"+a.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiwire.AgentIngress](t, out); got.Domain != "v.example.com" || got.CertificateManagementPolicy != nil {
		t.Fatalf("after refused calls: %s", out)
	}
}

// TestAgentIngressListAndLimit: over 250 agent ingresses page under
// ingresses, newest first, each once; the 251st over a limit of 251... a
// create over the limit is a 409 ERR_SLUICE_447 naming the flag.
func TestAgentIngressListAndLimit(t *testing.T) {
	t.Parallel()
	const n = 260
	e := newTestEnv(t, ingressConfig, apitest.WithStoreConfig(store.Config{Limits: store.Limits{AgentIngresses: n}}))
	made := make([]string, n)
	for i := range n {
		made[i] = e.createAgentIngress(t, e.token, fmt.Sprintf(`{"domain":"i%d.example.com"}`, i)).ID
	}
	resp, out := e.call(t, e.token, http.MethodPost, "/agent_ingresses", `{"domain":"over.example.com"}`)
	msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_447", "")
	if !strings.Contains(msg, "--max-agent-ingresses") || !strings.Contains(msg, "DELETE /agent_ingresses/{id}") {
		t.Fatalf("over the limit: %s", out)
	}
	var listed []string
	path := "/agent_ingresses?limit=100"
	for pages := 0; path != ""; pages++ {
		resp, out := e.call(t, e.token, http.MethodGet, path, "")
		apitest.WantStatus(t, resp, out, http.StatusOK)
		page := apitest.DecodeAs[agentIngressList](t, out)
		if page.URI != e.url+path || pages > 3 {
			t.Fatalf("page %d: %s", pages, out)
		}
		for _, a := range page.Ingresses {
			listed = append(listed, a.ID)
		}
		path = ""
		if page.NextPageURI != nil {
			path = strings.TrimPrefix(*page.NextPageURI, e.url)
		}
	}
	if len(listed) != n || listed[0] != made[n-1] || listed[n-1] != made[0] {
		t.Fatalf("listed %d, want %d newest first", len(listed), n)
	}
}

// TestAgentIngressConcurrentPatches: PATCHes of different fields at once
// lose none.
func TestAgentIngressConcurrentPatches(t *testing.T) {
	e := newTestEnv(t, ingressConfig)
	a := e.createAgentIngress(t, e.token, `{"domain":"c.example.com"}`)
	bodies := []string{`{"description":"d"}`, `{"metadata":"m"}`, `{"certificate_management_policy":{"private_key_type":"ecdsa"}}`}
	var wg sync.WaitGroup
	for _, body := range bodies {
		wg.Go(func() {
			resp, out := e.call(t, e.token, http.MethodPatch, "/agent_ingresses/"+a.ID, body)
			apitest.WantStatus(t, resp, out, http.StatusOK)
		})
	}
	wg.Wait()
	resp, out := e.call(t, e.token, http.MethodGet, "/agent_ingresses/"+a.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiwire.AgentIngress](t, out); got.Description != "d" || got.Metadata != "m" || got.CertificateManagementPolicy == nil {
		t.Fatalf("an update was lost: %s", out)
	}
}

// TestAgentIngressDomainTree answers the overlaps of issue 23 across
// agent ingresses and reserved domains with 409 ERR_SLUICE_430 naming
// the name taken and no id of the account that holds it.
func TestAgentIngressDomainTree(t *testing.T) {
	e := newTestEnv(t)
	w := e.createReservedDomain(t, e.token, "*.apps.a-corp.com", "")
	resp, out := e.call(t, e.token, http.MethodPost, "/agent_ingresses", `{"domain":"ingress.a-corp.com"}`)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	ingress := apitest.DecodeAs[apiwire.AgentIngress](t, out)
	other := e.otherAccountToken(t)
	for _, c := range []struct{ path, domain string }{
		{"/agent_ingresses", "apps.a-corp.com"},
		{"/agent_ingresses", "a-corp.com"},
		{"/reserved_domains", "tunnel.us.ingress.a-corp.com"},
		{"/reserved_domains", "*.a-corp.com"},
	} {
		resp, out := e.call(t, other, http.MethodPost, c.path, fmt.Sprintf(`{"domain":%q}`, c.domain))
		msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_430", "domain")
		if strings.Contains(msg, w.ID) || strings.Contains(msg, ingress.ID) || strings.Contains(msg, "ac_") {
			t.Errorf("POST %s %s: the refusal names an id: %s", c.path, c.domain, msg)
		}
	}
}
