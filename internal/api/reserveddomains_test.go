package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

type reservedDomainList struct {
	ReservedDomains []apiwire.ReservedDomain `json:"reserved_domains"`
	URI             string                   `json:"uri"`
	NextPageURI     *string                  `json:"next_page_uri"`
}

// createReservedDomain reserves the domain with the JSON body's other
// members, given as "member":value pairs.
func (e *testEnv) createReservedDomain(t *testing.T, token, domain, more string) apiwire.ReservedDomain {
	t.Helper()
	body := fmt.Sprintf(`{"domain":%q%s}`, domain, more)
	resp, out := e.call(t, token, http.MethodPost, "/reserved_domains", body)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	return apitest.DecodeAs[apiwire.ReservedDomain](t, out)
}

// TestReservedDomainRoundTrip reserves a custom wildcard, a custom plain
// domain and a name under the service's domain, and reads, updates and
// deletes them: fields in the specification's order, the CNAME targets
// of each case, the wildcard's certificate policy and provisioning job,
// and the audit event of each change with the resource as its object.
func TestReservedDomainRoundTrip(t *testing.T) {
	e := newTestEnv(t)
	w := e.createReservedDomain(t, e.token, "*.Sub.Example.com", `,"region":"eu","description":"wild"`)
	if !strings.HasPrefix(w.ID, "rd_") || w.URI != e.url+"/reserved_domains/"+w.ID || w.Domain != "*.sub.example.com" || w.Region == nil || *w.Region != "eu" ||
		w.CNAMETarget == nil || !strings.HasSuffix(*w.CNAMETarget, ".cname.sluice.app") ||
		w.ACMEChallengeCNAMETarget == nil || !strings.HasSuffix(*w.ACMEChallengeCNAMETarget, ".acme.sluice.app") ||
		w.Certificate != nil || w.HTTPEndpointConfiguration != nil || w.HTTPSEndpointConfiguration != nil {
		t.Fatalf("wildcard %+v", w)
	}
	if p := w.CertificateManagementPolicy; p == nil || *p != (apiwire.CertificatePolicy{Authority: "letsencrypt", PrivateKeyType: "ecdsa"}) {
		t.Fatalf("wildcard policy %+v", p)
	}
	st := w.CertificateManagementStatus
	if st == nil || st.RenewsAt != nil || st.ProvisioningJob == nil || !strings.Contains(st.ProvisioningJob.Msg, "in progress") || st.ProvisioningJob.StartedAt == "" {
		t.Fatalf("wildcard status %+v", st)
	}
	resp, out := e.call(t, e.token, http.MethodGet, "/reserved_domains/"+w.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	want := fmt.Sprintf(`{"id":%q,"uri":%q,"created_at":%q,"description":"wild","metadata":"","domain":"*.sub.example.com","region":"eu","cname_target":%q,`+
		`"http_endpoint_configuration":null,"https_endpoint_configuration":null,"certificate":null,`+
		`"certificate_management_policy":{"authority":"letsencrypt","private_key_type":"ecdsa"},`+
		`"certificate_management_status":{"renews_at":null,"provisioning_job":{"error_code":null,"msg":"certificate provisioning is in progress","started_at":%q,"retries_at":null}},`+
		`"acme_challenge_cname_target":%q}`+"\n", w.ID, w.URI, w.CreatedAt, *w.CNAMETarget, st.ProvisioningJob.StartedAt, *w.ACMEChallengeCNAMETarget)
	if string(out) != want {
		t.Fatalf("body\n %s\nwant\n %s", out, want)
	}

	plain := e.createReservedDomain(t, e.token, "app.example.com", "")
	if plain.CNAMETarget == nil || plain.ACMEChallengeCNAMETarget != nil || plain.CertificateManagementPolicy != nil || plain.CertificateManagementStatus != nil || plain.Region != nil {
		t.Fatalf("plain custom domain %+v; want a cname target only", plain)
	}
	own := e.createReservedDomain(t, e.token, "*.me.sluice.app", `,"certificate_management_policy":{"private_key_type":"rsa"}`)
	if own.CNAMETarget != nil || own.ACMEChallengeCNAMETarget != nil || own.CertificateManagementPolicy.PrivateKeyType != "rsa" {
		t.Fatalf("a wildcard under the service domain %+v; want no cname targets, rsa", own)
	}

	resp, out = e.call(t, e.token, http.MethodPatch, "/reserved_domains/"+plain.ID, `{"metadata":"{}","region":"us-cal-1","certificate_management_policy":{"authority":"letsencrypt"}}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	patched := apitest.DecodeAs[apiwire.ReservedDomain](t, out)
	if patched.Metadata != "{}" || *patched.Region != "us-cal-1" || patched.CertificateManagementPolicy.PrivateKeyType != "ecdsa" || patched.CertificateManagementStatus == nil {
		t.Fatalf("patched %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodDelete, "/reserved_domains/"+plain.ID+"/certificate_management_policy", "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	resp, out = e.call(t, e.token, http.MethodGet, "/reserved_domains/"+plain.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[apiwire.ReservedDomain](t, out); got.CertificateManagementPolicy != nil || got.CertificateManagementStatus != nil {
		t.Fatalf("after deleting the policy: %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodDelete, "/reserved_domains/rd_2Ed2q8zQnGAqCS4LCCXyqqmNuQK/certificate_management_policy", "")
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")

	for _, d := range []apiwire.ReservedDomain{w, plain, own} {
		resp, out = e.call(t, e.token, http.MethodDelete, "/reserved_domains/"+d.ID, "")
		apitest.WantStatus(t, resp, out, http.StatusNoContent)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/reserved_domains/"+w.ID, "")
	wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")

	events := e.storedEvents(t, e.account)
	var types []string
	for _, ev := range events {
		types = append(types, ev.Type)
	}
	wantTypes := "domain_created.v0 domain_created.v0 domain_created.v0 domain_updated.v0 domain_updated.v0 domain_deleted.v0 domain_deleted.v0 domain_deleted.v0"
	if strings.Join(types, " ") != wantTypes {
		t.Fatalf("events %v, want %s", types, wantTypes)
	}
	// The object is the resource as the API returned it.
	if obj := string(events[0].Object) + "\n"; obj != want {
		t.Fatalf("domain_created.v0 object\n %s\nwant\n %s", obj, want)
	}
	if obj := apitest.DecodeAs[apiwire.ReservedDomain](t, events[4].Object); obj.ID != plain.ID || obj.CertificateManagementPolicy != nil {
		t.Fatalf("the update of the policy's delete: %s", events[4].Object)
	}
}

// TestReservedDomainValidation: each bad field is a 400 naming it and
// saying what is allowed.
func TestReservedDomainValidation(t *testing.T) {
	e := newTestEnv(t)
	d := e.createReservedDomain(t, e.token, "ok.example.com", "")
	for _, tt := range []struct {
		name, method, path, body, code, field, says string
	}{
		{"no domain", http.MethodPost, "/reserved_domains", `{}`, "ERR_SLUICE_333", "domain", "required"},
		{"one label", http.MethodPost, "/reserved_domains", `{"domain":"localhost"}`, "ERR_SLUICE_333", "domain", "fully qualified"},
		{"underscore", http.MethodPost, "/reserved_domains", `{"domain":"a_b.example.com"}`, "ERR_SLUICE_333", "domain", "a-z, 0-9"},
		{"inner wildcard", http.MethodPost, "/reserved_domains", `{"domain":"a.*.example.com"}`, "ERR_SLUICE_333", "domain", "first label"},
		{"partial wildcard", http.MethodPost, "/reserved_domains", `{"domain":"*x.example.com"}`, "ERR_SLUICE_333", "domain", `exactly "*"`},
		{"public suffix", http.MethodPost, "/reserved_domains", `{"domain":"*.co.uk"}`, "ERR_SLUICE_333", "domain", "public suffix"},
		{"service domain", http.MethodPost, "/reserved_domains", `{"domain":"sluice.app"}`, "ERR_SLUICE_333", "domain", "service"},
		{"service wildcard", http.MethodPost, "/reserved_domains", `{"domain":"*.sluice.app"}`, "ERR_SLUICE_333", "domain", "covers the service"},
		{"region", http.MethodPost, "/reserved_domains", `{"domain":"r.example.com","region":"mars"}`, "ERR_SLUICE_333", "region", "au, eu, ap, us, us-cal-1, jp, in, sa"},
		{"authority", http.MethodPost, "/reserved_domains", `{"domain":"r.example.com","certificate_management_policy":{"authority":"zerossl"}}`, "ERR_SLUICE_333", "certificate_management_policy.authority", "letsencrypt"},
		{"key type", http.MethodPost, "/reserved_domains", `{"domain":"r.example.com","certificate_management_policy":{"private_key_type":"dsa"}}`, "ERR_SLUICE_333", "certificate_management_policy.private_key_type", "ecdsa"},
		{"policy field", http.MethodPost, "/reserved_domains", `{"domain":"r.example.com","certificate_management_policy":{"x":1}}`, "ERR_SLUICE_331", "", "x"},
		{"description", http.MethodPost, "/reserved_domains", `{"domain":"r.example.com","description":"` + strings.Repeat("x", 256) + `"}`, "ERR_SLUICE_333", "description", "255"},
		{"metadata", http.MethodPost, "/reserved_domains", `{"domain":"r.example.com","metadata":"` + strings.Repeat("x", 4097) + `"}`, "ERR_SLUICE_333", "metadata", "4096"},
		{"domain a number", http.MethodPost, "/reserved_domains", `{"domain":1}`, "ERR_SLUICE_332", "domain", "domain"},
		{"unknown", http.MethodPost, "/reserved_domains", `{"domain":"r.example.com","cname_target":"x"}`, "ERR_SLUICE_331", "", "cname_target"},
		{"patch domain", http.MethodPatch, "/reserved_domains/RD", `{"domain":"new.example.com"}`, "ERR_SLUICE_340", "domain", `field "domain" cannot be changed after create: reserve the new domain`},
		{"patch region", http.MethodPatch, "/reserved_domains/RD", `{"region":"EU"}`, "ERR_SLUICE_333", "region", "au, eu"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := e.call(t, e.token, tt.method, strings.Replace(tt.path, "RD", d.ID, 1), tt.body)
			if msg := wantError(t, resp, out, http.StatusBadRequest, tt.code, tt.field); !strings.Contains(msg, tt.says) {
				t.Fatalf("message %q does not say %q", msg, tt.says)
			}
		})
	}
	resp, out := e.call(t, e.token, http.MethodGet, "/reserved_domains", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[reservedDomainList](t, out).ReservedDomains; len(got) != 1 || got[0].ID != d.ID {
		t.Fatalf("after refused calls: %s", out)
	}
}

// TestReservedDomainAcrossAccounts: a domain reserved by one account is a
// 409 for every account, naming no other account, until it is deleted;
// another account finds none of the first's domains.
func TestReservedDomainAcrossAccounts(t *testing.T) {
	e := newTestEnv(t)
	d := e.createReservedDomain(t, e.token, "*.shared.example.com", "")
	other := e.otherAccountToken(t)
	for _, token := range []string{e.token, other} {
		resp, out := e.call(t, token, http.MethodPost, "/reserved_domains", `{"domain":"*.SHARED.example.com"}`)
		if msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_430", "domain"); strings.Contains(msg, e.account) || strings.Contains(msg, d.ID) {
			t.Fatalf("the conflict names the holder: %s", msg)
		}
	}
	for _, c := range []struct{ method, path, body string }{
		{http.MethodGet, "", ""}, {http.MethodPatch, "", `{"description":"x"}`}, {http.MethodDelete, "/certificate_management_policy", ""}, {http.MethodDelete, "", ""},
	} {
		resp, out := e.call(t, other, c.method, "/reserved_domains/"+d.ID+c.path, c.body)
		wantError(t, resp, out, http.StatusNotFound, "ERR_SLUICE_420", "")
	}
	resp, out := e.call(t, other, http.MethodGet, "/reserved_domains", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if n := len(apitest.DecodeAs[reservedDomainList](t, out).ReservedDomains); n != 0 {
		t.Fatalf("another account lists %d: %s", n, out)
	}
	resp, out = e.call(t, e.token, http.MethodDelete, "/reserved_domains/"+d.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	theirs := e.createReservedDomain(t, other, "*.shared.example.com", "")

	// The names under another account's wildcard are its too.
	for domain, says := range map[string]string{
		"app.shared.example.com": `overlaps "shared.example.com"`, "*.a.shared.example.com": `overlaps "shared.example.com"`,
		"shared.example.com": `overlaps "shared.example.com"`, "*.example.com": "covers names under example.com",
	} {
		resp, out := e.call(t, e.token, http.MethodPost, "/reserved_domains", `{"domain":"`+domain+`"}`)
		msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_430", "domain")
		if !strings.Contains(msg, says) || !strings.Contains(msg, "belong to one account") || strings.Contains(msg, theirs.ID) || strings.Contains(msg, schemas.PrefixAccount) {
			t.Fatalf("%s under another account's wildcard: %s; want the name taken and the rule, and not the holder", domain, msg)
		}
	}
	e.createReservedDomain(t, e.token, "other.example.com", "")

	// Under the service's domain, an account's wildcard keeps its names;
	// siblings of two accounts do not overlap.
	e.createReservedDomain(t, other, "*.team.sluice.app", "")
	resp, out = e.call(t, e.token, http.MethodPost, "/reserved_domains", `{"domain":"x.team.sluice.app"}`)
	wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_430", "domain")
	e.createReservedDomain(t, e.token, "mine.sluice.app", "")
}

// TestReservedDomainPagesAndLimit pages over 260 domains, newest first,
// refuses the next over the limit with 448, and loses no update of
// concurrent PATCHes.
func TestReservedDomainPagesAndLimit(t *testing.T) {
	t.Parallel()
	const n = 260
	e := newTestEnv(t, apitest.WithStoreConfig(store.Config{Limits: store.Limits{ReservedDomains: n}}))
	made := make([]string, n)
	for i := range n {
		d, err := e.store.CreateReservedDomain(t.Context(), e.account, store.ReservedDomain{Domain: fmt.Sprintf("d%d.example.com", i)})
		if err != nil {
			t.Fatal(err)
		}
		made[i] = d.ID
	}
	var got []string
	path := "/reserved_domains?limit=100"
	for path != "" {
		resp, out := e.call(t, e.token, http.MethodGet, path, "")
		apitest.WantStatus(t, resp, out, http.StatusOK)
		page := apitest.DecodeAs[reservedDomainList](t, out)
		for _, d := range page.ReservedDomains {
			got = append(got, d.ID)
		}
		path = ""
		if page.NextPageURI != nil {
			path = strings.TrimPrefix(*page.NextPageURI, e.url)
		}
	}
	if len(got) != n || got[0] != made[n-1] || got[n-1] != made[0] {
		t.Fatalf("paged %d domains, want %d newest first", len(got), n)
	}
	resp, out := e.call(t, e.token, http.MethodPost, "/reserved_domains", `{"domain":"over.example.com"}`)
	msg := wantError(t, resp, out, http.StatusConflict, "ERR_SLUICE_448", "")
	if !strings.Contains(msg, "--max-reserved-domains") || !strings.Contains(msg, "DELETE /reserved_domains/{id}") {
		t.Fatalf("over the limit: %s", msg)
	}

	// Concurrent PATCHes of different fields: each keeps the others' (the
	// store retries a compare-and-swap that lost), so none is lost.
	bodies := []string{`{"description":"d"}`, `{"metadata":"m"}`, `{"region":"jp"}`, `{"certificate_management_policy":{"private_key_type":"rsa"}}`}
	var wg sync.WaitGroup
	for _, body := range bodies {
		wg.Go(func() {
			resp, out := e.call(t, e.token, http.MethodPatch, "/reserved_domains/"+made[0], body)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("PATCH %s: %d %s", body, resp.StatusCode, out)
			}
		})
	}
	wg.Wait()
	resp, out = e.call(t, e.token, http.MethodGet, "/reserved_domains/"+made[0], "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	got2 := apitest.DecodeAs[apiwire.ReservedDomain](t, out)
	if got2.Description != "d" || got2.Metadata != "m" || got2.Region == nil || *got2.Region != "jp" || got2.CertificateManagementPolicy == nil || got2.CertificateManagementPolicy.PrivateKeyType != "rsa" {
		t.Fatalf("after concurrent PATCHes of four fields: %s", out)
	}
}

// TestReservedDomainServiceNames refuses, with 400 ERR_SLUICE_333 naming
// no account, the names sluice hands out as CNAME and ACME challenge
// targets and everything under them, another account's exact
// acme_challenge_cname_target included, as a reserved domain, an HTTPS
// edge's hostport or an agent ingress's domain; and IP addresses and
// bare public suffixes (issue 23, item 3).
func TestReservedDomainServiceNames(t *testing.T) {
	e := newTestEnv(t)
	w := e.createReservedDomain(t, e.token, "*.a-corp.com", "")
	other := e.otherAccountToken(t)
	for _, domain := range []string{
		*w.ACMEChallengeCNAMETarget, *w.CNAMETarget, "cname.sluice.app", "*.cname.sluice.app", "acme.sluice.app", "*.acme.sluice.app",
		"127.0.0.1", "co.uk", "github.io", "[::1]",
	} {
		resp, out := e.call(t, other, http.MethodPost, "/reserved_domains", fmt.Sprintf(`{"domain":%q}`, domain))
		msg := wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_333", "domain")
		if strings.Contains(msg, w.ID) || strings.Contains(msg, "ac_") {
			t.Errorf("the refusal of %s names an id: %s", domain, msg)
		}
		resp, out = e.call(t, other, http.MethodPost, "/agent_ingresses", fmt.Sprintf(`{"domain":%q}`, domain))
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("agent ingress %s: %d %s, want 400", domain, resp.StatusCode, out)
		}
	}
	resp, out := e.call(t, e.token, http.MethodPost, "/edges/https", fmt.Sprintf(`{"hostports":[%q]}`, *w.ACMEChallengeCNAMETarget+":443"))
	wantError(t, resp, out, http.StatusBadRequest, "ERR_SLUICE_333", "hostports[0]")
}
