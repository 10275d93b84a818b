package apiwire

// ReservedDomain is a reserved domain as the API returns it
// (specification section 2.2), its fields in the specification's order,
// with description and metadata (of its audit events) after created_at.
type ReservedDomain struct {
	ID          string `json:"id"`
	URI         string `json:"uri"` // its full URL
	CreatedAt   string `json:"created_at"`
	Description string `json:"description"`
	Metadata    string `json:"metadata"`
	//openapi:ref ReservedDomainName
	Domain string `json:"domain"` // lower case, possibly a wildcard such as *.sub.example.com
	// Deprecated; null by default.
	//
	//openapi:ref ReservedDomainRegion
	//openapi:schema {deprecated: true}
	Region *string `json:"region"` // au, eu, ap, us, us-cal-1, jp, in or sa
	// Where a custom domain's CNAME record points; null for a name under
	// a domain of the service.
	CNAMETarget *string `json:"cname_target"`
	// Always null (its structure is not specified).
	//
	//openapi:schema {type: "null"}
	HTTPEndpointConfiguration *Ref `json:"http_endpoint_configuration"`
	// Always null (its structure is not specified).
	//
	//openapi:schema {type: "null"}
	HTTPSEndpointConfiguration *Ref `json:"https_endpoint_configuration"`
	// The TLS certificate sluice obtained for the domain
	// (`/tls_certificates/{id}`); null until it has one.
	//
	//openapi:ref TLSCertificateRef
	Certificate                 *Ref               `json:"certificate"`
	CertificateManagementPolicy *CertificatePolicy `json:"certificate_management_policy"` // nil: not managed; a new wildcard domain has one
	CertificateManagementStatus *CertificateStatus `json:"certificate_management_status"`
	// Where `_acme-challenge.<domain>` points, for a wildcard custom
	// domain; null otherwise.
	ACMEChallengeCNAMETarget *string `json:"acme_challenge_cname_target"`
}

// Ref is a reference to another resource: its id and its full URL.
type Ref struct {
	ID  string `json:"id"`
	URI string `json:"uri"`
}

// ReservedDomainInput is the body of a reserved domain's create or update:
// the fields set are sent. Domain is taken by a create only.
type ReservedDomainInput struct {
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
	//openapi:ref ReservedDomainName
	Domain *string `json:"domain,omitempty"`
	//openapi:ref ReservedDomainRegion
	Region *string `json:"region,omitempty"`
	//openapi:ref CertificatePolicyInput
	CertificateManagementPolicy *CertificatePolicy `json:"certificate_management_policy,omitempty"`
}

// TLSCertificate is a certificate sluice obtained for a reserved domain,
// as the API returns it, read-only, and as its audit events carry it
// (specification section 6.4's tls_certificate_*), in the
// specification's order. Its private key is never shown.
type TLSCertificate struct {
	ID  string `json:"id"`
	URI string `json:"uri"` // its full URL
	// When sluice first stored a certificate for the domain (RFC 3339,
	// UTC).
	//
	//openapi:ref Timestamp
	CreatedAt   string `json:"created_at"`
	Description string `json:"description"`
	Metadata    string `json:"metadata"`
	// The chain in PEM, leaf first.
	CertificatePEM          string                  `json:"certificate_pem"`
	SubjectCommonName       string                  `json:"subject_common_name"`
	SubjectAlternativeNames SubjectAlternativeNames `json:"subject_alternative_names"`
	// When the authority issued it; null for a certificate a user
	// uploaded (none yet).
	//
	//openapi:schema {format: date-time}
	IssuedAt *string `json:"issued_at"`
	//openapi:ref Timestamp
	NotBefore string `json:"not_before"`
	//openapi:ref Timestamp
	NotAfter string `json:"not_after"`
	// Key usages of the leaf, such as digital_signature.
	KeyUsages []string `json:"key_usages"`
	// Extended key usages of the leaf, such as server_auth.
	ExtendedKeyUsages []string `json:"extended_key_usages"`
	//openapi:schema {enum: [rsa, ecdsa, ed25519]}
	PrivateKeyType   string `json:"private_key_type"`
	IssuerCommonName string `json:"issuer_common_name"`
	// The leaf's serial number in lower-case hex.
	SerialNumber              string `json:"serial_number"`
	SubjectOrganization       string `json:"subject_organization"`
	SubjectOrganizationalUnit string `json:"subject_organizational_unit"`
	SubjectLocality           string `json:"subject_locality"`
	SubjectProvince           string `json:"subject_province"`
	SubjectCountry            string `json:"subject_country"`
}

// SubjectAlternativeNames are the names a TLSCertificate's leaf holds.
type SubjectAlternativeNames struct {
	DNSNames []string `json:"dns_names"`
	IPs      []string `json:"ips"`
}
