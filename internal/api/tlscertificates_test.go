package api_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// testChain returns a self-signed leaf of names, in PEM, and its key.
func testChain(t *testing.T, names ...string) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(0xbeef), Subject: pkix.Name{CommonName: names[0], Organization: []string{"Sluice Test"}},
		Issuer: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2030, 4, 1, 0, 0, 0, 0, time.UTC),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}

// TestTLSCertificates: a certificate sluice stored for a wildcard domain
// is listed and shown with its leaf's fields and never its key; the
// domain's certificate names it; its events, tls_certificate_created.v0
// and domain_updated.v0 by sluice, fit the catalogue and hold no key;
// the API makes, changes and deletes none (405); the domain's delete
// deletes it, with its tls_certificate_deleted.v0.
func TestTLSCertificates(t *testing.T) {
	e := newTestEnv(t)
	d := e.createReservedDomain(t, e.token, "*.apps.example.com", "")
	chain, key := testChain(t, "*.apps.example.com")
	stored, err := e.store.GetReservedDomain(t.Context(), e.account, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := e.store.Certificates().SetDomainCertificate(t.Context(), e.account, d.ID, stored.CertStatus.ProvisioningJob.StartedAt, store.IssuedCertificate{
		CertificatePEM: chain, PrivateKeyPEM: key, PrivateKeyType: store.KeyTypeECDSA,
		IssuedAt: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), RenewsAt: time.Date(2030, 3, 2, 0, 0, 0, 0, time.UTC),
	}, e.server.CertificateEvents())
	if err != nil {
		t.Fatal(err)
	}

	resp, out := e.call(t, e.token, http.MethodGet, "/tls_certificates/"+cert.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if strings.Contains(string(out), "PRIVATE KEY") {
		t.Fatalf("the answer holds the private key: %s", out)
	}
	got := apitest.DecodeAs[apiwire.TLSCertificate](t, out)
	want := apiwire.TLSCertificate{
		ID: cert.ID, URI: e.url + "/tls_certificates/" + cert.ID, CreatedAt: got.CreatedAt, CertificatePEM: chain,
		SubjectCommonName: "*.apps.example.com", SubjectAlternativeNames: apiwire.SubjectAlternativeNames{DNSNames: []string{"*.apps.example.com"}, IPs: []string{}},
		NotBefore: "2030-01-01T00:00:00.000Z", NotAfter: "2030-04-01T00:00:00.000Z",
		KeyUsages: []string{"digital_signature"}, ExtendedKeyUsages: []string{"server_auth"}, PrivateKeyType: "ecdsa",
		IssuerCommonName: "*.apps.example.com", SerialNumber: "beef", SubjectOrganization: "Sluice Test",
	}
	gotJSON, _ := json.Marshal(got)
	want.IssuedAt = got.IssuedAt
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) || got.IssuedAt == nil || *got.IssuedAt != "2030-01-01T00:00:00.000Z" {
		t.Errorf("certificate\n %s\nwant\n %s", gotJSON, wantJSON)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/tls_certificates", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if !strings.Contains(string(out), cert.ID) || strings.Contains(string(out), "PRIVATE KEY") {
		t.Errorf("list %s", out)
	}
	resp, out = e.call(t, e.token, http.MethodGet, "/reserved_domains/"+d.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	domain := apitest.DecodeAs[apiwire.ReservedDomain](t, out)
	if domain.Certificate == nil || domain.Certificate.ID != cert.ID || domain.Certificate.URI != want.URI ||
		domain.CertificateManagementStatus.ProvisioningJob != nil || domain.CertificateManagementStatus.RenewsAt == nil || *domain.CertificateManagementStatus.RenewsAt != "2030-03-02T00:00:00.000Z" {
		t.Errorf("the domain %s", out)
	}

	pending, err := e.store.Outbox().PendingAudits(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, p := range pending {
		var ev schemas.Event
		if err := json.Unmarshal(p.Event.Data, &ev); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(ev.Object), "PRIVATE KEY") || !strings.Contains(string(ev.Principal), `"source":"sluice"`) {
			t.Errorf("%s: principal %s, object %s", ev.Type, ev.Principal, ev.Object)
		}
		if ev.Type == "domain_updated.v0" && !strings.Contains(string(ev.Object), `"certificate":{"id":"`+cert.ID) {
			t.Errorf("domain_updated.v0 without the certificate: %s", ev.Object)
		}
		types = append(types, ev.Type)
	}
	if strings.Join(types, " ") != "tls_certificate_created.v0 domain_updated.v0" { // the domain_created.v0 of the API is published
		t.Errorf("audit events %v", types)
	}

	for _, method := range []string{http.MethodPost, http.MethodPatch, http.MethodDelete} {
		path := "/tls_certificates"
		if method != http.MethodPost {
			path += "/" + cert.ID
		}
		resp, out := e.call(t, e.token, method, path, "{}")
		apitest.WantStatus(t, resp, out, http.StatusMethodNotAllowed)
	}

	resp, out = e.call(t, e.token, http.MethodDelete, "/reserved_domains/"+d.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	resp, out = e.call(t, e.token, http.MethodGet, "/tls_certificates/"+cert.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNotFound)
	if pending, err = e.store.Outbox().PendingAudits(t.Context()); err != nil {
		t.Fatal(err)
	}
	deleted := false
	for _, p := range pending {
		var ev schemas.Event
		if err := json.Unmarshal(p.Event.Data, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "tls_certificate_deleted.v0" {
			deleted = strings.Contains(string(ev.Object), `"id":"`+cert.ID) && !strings.Contains(string(ev.Object), "PRIVATE KEY")
		}
	}
	if !deleted {
		t.Errorf("no tls_certificate_deleted.v0 of %s pending after the domain's delete", cert.ID)
	}
}
