package api

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"

	"github.com/sluicehq/sluice/apiwire"
	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
)

var tlsCertificateResource = resource{noun: "TLS certificate", listPath: apiwire.TLSCertificatesPath}

// tlsCertificatesMadeBy is the 405 of a create, update or delete of a TLS
// certificate.
const tlsCertificatesMadeBy = "TLS certificates are obtained and renewed by sluice for reserved domains and agent ingresses with a certificate_management_policy, " +
	"and deleted with them (DELETE /reserved_domains/{id}, DELETE /agent_ingresses/{id})"

// routeTLSCertificates serves the TLS certificates sluice obtained for
// reserved domains and agent ingresses: list and get only, without their private keys.
func (s *Server) routeTLSCertificates() {
	route(s, family[store.TLSCertificate, noBody, noBody, apiwire.TLSCertificate]{
		spec: declared.TLSCertificates(), res: tlsCertificateResource,
		get: s.domains.GetTLSCertificate, list: s.domains.ListTLSCertificates,
		body: s.tlsCertificateResponse, madeBy: tlsCertificatesMadeBy,
	})
}

// tlsCertificateResponse returns the certificate as the API shows it: the
// fields of its leaf, and never its private key.
func (s *Server) tlsCertificateResponse(r *http.Request, c store.TLSCertificate) apiwire.TLSCertificate {
	return TLSCertificateBody(s.resourceURI(r, apiwire.TLSCertificatesPath+"/"+c.ID), c)
}

// TLSCertificateBody returns the certificate as the API and its audit
// events show it, with uri its full URL: the fields of its leaf, and never
// its private key. A chain that does not parse leaves them empty.
func TLSCertificateBody(uri string, c store.TLSCertificate) apiwire.TLSCertificate {
	issued := c.IssuedAt.UTC().Format(createdAtLayout)
	body := apiwire.TLSCertificate{
		ID:                      c.ID,
		URI:                     uri,
		CreatedAt:               c.CreatedAt.UTC().Format(createdAtLayout),
		CertificatePEM:          c.CertificatePEM,
		IssuedAt:                &issued,
		PrivateKeyType:          c.PrivateKeyType,
		SubjectAlternativeNames: apiwire.SubjectAlternativeNames{DNSNames: []string{}, IPs: []string{}},
		KeyUsages:               []string{},
		ExtendedKeyUsages:       []string{},
	}
	block, _ := pem.Decode([]byte(c.CertificatePEM))
	if block == nil {
		return body
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return body
	}
	body.SubjectCommonName = leaf.Subject.CommonName
	body.SubjectAlternativeNames.DNSNames = append(body.SubjectAlternativeNames.DNSNames, leaf.DNSNames...)
	for _, ip := range leaf.IPAddresses {
		body.SubjectAlternativeNames.IPs = append(body.SubjectAlternativeNames.IPs, ip.String())
	}
	body.NotBefore = leaf.NotBefore.UTC().Format(createdAtLayout)
	body.NotAfter = leaf.NotAfter.UTC().Format(createdAtLayout)
	body.KeyUsages = keyUsages(leaf.KeyUsage)
	body.ExtendedKeyUsages = extKeyUsages(leaf.ExtKeyUsage)
	body.PrivateKeyType = publicKeyType(leaf, c.PrivateKeyType)
	body.IssuerCommonName = leaf.Issuer.CommonName
	body.SerialNumber = leaf.SerialNumber.Text(16)
	body.SubjectOrganization = first(leaf.Subject.Organization)
	body.SubjectOrganizationalUnit = first(leaf.Subject.OrganizationalUnit)
	body.SubjectLocality = first(leaf.Subject.Locality)
	body.SubjectProvince = first(leaf.Subject.Province)
	body.SubjectCountry = first(leaf.Subject.Country)
	return body
}

// publicKeyType is the type of the leaf's key, or stored if it is none
// of rsa, ecdsa and ed25519.
func publicKeyType(leaf *x509.Certificate, stored string) string {
	switch leaf.PublicKey.(type) {
	case *rsa.PublicKey:
		return store.KeyTypeRSA
	case *ecdsa.PublicKey:
		return store.KeyTypeECDSA
	case ed25519.PublicKey:
		return "ed25519"
	}
	return stored
}

func first(values []string) string {
	if len(values) == 0 {
		return ""
	}
	return values[0]
}

// keyUsageNames are the names of x509's key usages, in bit order.
var keyUsageNames = []struct {
	usage x509.KeyUsage
	name  string
}{
	{x509.KeyUsageDigitalSignature, "digital_signature"},
	{x509.KeyUsageContentCommitment, "content_commitment"},
	{x509.KeyUsageKeyEncipherment, "key_encipherment"},
	{x509.KeyUsageDataEncipherment, "data_encipherment"},
	{x509.KeyUsageKeyAgreement, "key_agreement"},
	{x509.KeyUsageCertSign, "cert_sign"},
	{x509.KeyUsageCRLSign, "crl_sign"},
	{x509.KeyUsageEncipherOnly, "encipher_only"},
	{x509.KeyUsageDecipherOnly, "decipher_only"},
}

func keyUsages(u x509.KeyUsage) []string {
	names := []string{}
	for _, k := range keyUsageNames {
		if u&k.usage != 0 {
			names = append(names, k.name)
		}
	}
	return names
}

func extKeyUsages(usages []x509.ExtKeyUsage) []string {
	names := []string{}
	for _, u := range usages {
		switch u {
		case x509.ExtKeyUsageServerAuth:
			names = append(names, "server_auth")
		case x509.ExtKeyUsageClientAuth:
			names = append(names, "client_auth")
		case x509.ExtKeyUsageAny:
			names = append(names, "any")
		default:
			names = append(names, "other")
		}
	}
	return names
}
