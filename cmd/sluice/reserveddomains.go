package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/resource"
)

// reservedDomainsFamily declares `sluice reserved-domains`, a client of
// /reserved_domains.
func reservedDomainsFamily() family[apiwire.ReservedDomain, apiwire.ReservedDomainInput] {
	return family[apiwire.ReservedDomain, apiwire.ReservedDomainInput]{
		spec: resource.ReservedDomains(),
		kind: resourceKind{
			command: "reserved-domains",
			plural:  "reserved domains",
			columns: []string{"ID", "CREATED_AT", "DOMAIN", "CNAME_TARGET", "DESCRIPTION"},
		},
		short: "Reserve, list, change and release domains through the API of a running sluice",
		long: `Manage the reserved domains of the account through the API of a running sluice
(/reserved_domains). A domain, or a wildcard such as *.sub.example.com, is
reserved by one account at most, and the names under it are that account's
too: no other account may reserve them. A custom domain's CNAME record points at
its cname target; a custom wildcard's _acme-challenge at its ACME target.
--region is deprecated: traffic is served globally.

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row: func(d apiwire.ReservedDomain) []string {
			return []string{d.ID, d.CreatedAt, d.Domain, deref(d.CNAMETarget), d.Description}
		},
		fields: reservedDomainFields,
		body:   func() bodyHook[apiwire.ReservedDomain] { return &domainCertFlags{} },
		create: verbHelp{
			short: "Reserve a domain, or a wildcard of one",
			long: `Reserve a domain: POST /reserved_domains. A wildcard gets its certificate
managed by letsencrypt, with an ecdsa key unless --certificate-key-type rsa.`,
			example: `  sluice reserved-domains create --domain app.example.com
  sluice reserved-domains create --domain '*.sub.example.com' --certificate-key-type rsa`,
		},
		update: verbHelp{
			short:   "Change a reserved domain's description, metadata, region or certificate key type",
			long:    "Change a reserved domain: PATCH /reserved_domains/ID, with only the fields whose flags are given (or that --data holds). The domain cannot change.",
			example: `  sluice reserved-domains update rd_... --description production`,
		},
		updateFlags: "--description, --metadata, --region or --certificate-key-type",
		commands: func(f *resourceFlags) []*cobra.Command {
			return []*cobra.Command{newDeleteDomainCertPolicyCommand(f)}
		},
	}
}

// newReservedDomainsCommand returns `sluice reserved-domains`.
func newReservedDomainsCommand() *cobra.Command { return newFamilyCommand(reservedDomainsFamily()) }

func reservedDomainFields(d apiwire.ReservedDomain) []resourceField {
	fields := []resourceField{
		{"ID", d.ID}, {"URI", d.URI}, {"CREATED_AT", d.CreatedAt},
		{"DESCRIPTION", d.Description}, {"METADATA", d.Metadata}, {"DOMAIN", d.Domain},
		{"REGION", deref(d.Region)}, {"CNAME_TARGET", deref(d.CNAMETarget)},
		{"ACME_CHALLENGE_CNAME_TARGET", deref(d.ACMEChallengeCNAMETarget)},
	}
	if p := d.CertificateManagementPolicy; p != nil {
		fields = append(fields, resourceField{"CERTIFICATE_AUTHORITY", p.Authority}, resourceField{"CERTIFICATE_KEY_TYPE", p.PrivateKeyType})
	}
	if s := d.CertificateManagementStatus; s != nil {
		fields = append(fields, resourceField{"CERTIFICATE_RENEWS_AT", deref(s.RenewsAt)})
		if j := s.ProvisioningJob; j != nil {
			fields = append(fields, resourceField{"PROVISIONING", j.Msg}, resourceField{"PROVISIONING_STARTED_AT", j.StartedAt})
		}
	}
	return fields
}

// domainCertFlags sets certificate_management_policy with
// --certificate-key-type.
type domainCertFlags struct{ keyType string }

func (d *domainCertFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&d.keyType, "certificate-key-type", "", "manage the certificate with letsencrypt and a key of this type: rsa or ecdsa (a wildcard's default: ecdsa)")
}

func (d *domainCertFlags) apply(fl *pflag.FlagSet, body map[string]any, _ func() (apiwire.ReservedDomain, error)) error {
	if fl.Changed("certificate-key-type") {
		body["certificate_management_policy"] = map[string]any{"authority": "letsencrypt", "private_key_type": d.keyType}
	}
	return nil
}

// newDeleteDomainCertPolicyCommand returns `sluice reserved-domains
// delete-certificate-policy`.
func newDeleteDomainCertPolicyCommand(f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "delete-certificate-policy ID",
		Short: "Stop managing a reserved domain's certificate",
		Long: `Stop managing a reserved domain's certificate:
DELETE /reserved_domains/ID/certificate_management_policy. Its policy and
status become null.`,
		Example: `  sluice reserved-domains delete-certificate-policy rd_...`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if err := c.DeleteReservedDomainCertPolicy(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "stopped managing the certificate of", args[0])
			return nil
		},
	}
}

// tlsCertificatesFamily declares `sluice tls-certificates`, a client of
// /tls_certificates: list and get, as sluice obtains the certificates.
func tlsCertificatesFamily() family[apiwire.TLSCertificate, struct{}] {
	return family[apiwire.TLSCertificate, struct{}]{
		spec: resource.TLSCertificates(),
		kind: resourceKind{
			command: "tls-certificates",
			plural:  "TLS certificates",
			columns: []string{"ID", "CREATED_AT", "NAMES", "NOT_AFTER", "ISSUER"},
		},
		short: "List and show the TLS certificates sluice obtained for reserved domains, through the API of a running sluice",
		long: `List and show the TLS certificates of the account through the API of a
running sluice (/tls_certificates): those sluice obtains and renews through
ACME for reserved domains with a certificate_management_policy (serve
--acme-directory), and deletes with their domain. Their private keys are
never shown.

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row: func(c apiwire.TLSCertificate) []string {
			return []string{c.ID, c.CreatedAt, strings.Join(c.SubjectAlternativeNames.DNSNames, ","), c.NotAfter, c.IssuerCommonName}
		},
		fields: func(c apiwire.TLSCertificate) []resourceField {
			issued := "-"
			if c.IssuedAt != nil {
				issued = *c.IssuedAt
			}
			return []resourceField{
				{"ID", c.ID}, {"URI", c.URI}, {"CREATED_AT", c.CreatedAt}, {"NAMES", strings.Join(c.SubjectAlternativeNames.DNSNames, ",")},
				{"ISSUED_AT", issued}, {"NOT_BEFORE", c.NotBefore}, {"NOT_AFTER", c.NotAfter}, {"PRIVATE_KEY_TYPE", c.PrivateKeyType},
				{"ISSUER", c.IssuerCommonName}, {"SERIAL_NUMBER", c.SerialNumber},
			}
		},
	}
}

// newTLSCertificatesCommand returns `sluice tls-certificates`.
func newTLSCertificatesCommand() *cobra.Command { return newFamilyCommand(tlsCertificatesFamily()) }
