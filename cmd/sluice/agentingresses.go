package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/resource"
)

// agentIngressesFamily declares `sluice agent-ingresses`, a client of
// /agent_ingresses.
func agentIngressesFamily() family[apiwire.AgentIngress, apiwire.AgentIngressInput] {
	return family[apiwire.AgentIngress, apiwire.AgentIngressInput]{
		spec: resource.AgentIngresses(),
		kind: resourceKind{
			command: "agent-ingresses",
			plural:  "agent ingresses",
			columns: []string{"ID", "CREATED_AT", "DOMAIN", "CERTIFICATES", "DESCRIPTION"},
		},
		short: "Create, list, change and delete agent ingresses through the API of a running sluice",
		long: `Manage the agent ingresses of the account through the API of a running sluice
(/agent_ingresses). An agent ingress is a domain the account owns, delegated to
the service with the NS records of ns_targets; agents connect through its
region_domains, tunnel.<region>.<domain>. A domain belongs to one agent
ingress of one account, and cannot be changed after create.

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row: func(a apiwire.AgentIngress) []string {
			return []string{a.ID, a.CreatedAt, a.Domain, certificatesCell(a.CertificateManagementPolicy), a.Description}
		},
		fields: func(a apiwire.AgentIngress) []resourceField {
			return []resourceField{
				{"ID", a.ID}, {"URI", a.URI}, {"CREATED_AT", a.CreatedAt}, {"DOMAIN", a.Domain},
				{"NS_TARGETS", strings.Join(a.NSTargets, ",")}, {"REGION_DOMAINS", strings.Join(a.RegionDomains, ",")},
				{"CERTIFICATES", certificatesCell(a.CertificateManagementPolicy)},
				{"DESCRIPTION", a.Description}, {"METADATA", a.Metadata},
			}
		},
		body: func() bodyHook[apiwire.AgentIngress] { return &certificatePolicyFlags{} },
		create: verbHelp{
			short: "Create an agent ingress of a domain the account owns",
			long: `Create an agent ingress: POST /agent_ingresses. Delegate the domain to the
service with NS records of the ns_targets shown. Certificates are not managed
unless --certificate-authority or --private-key-type is given.`,
			example: `  sluice agent-ingresses create --domain ingress.example.com --private-key-type ecdsa`,
		},
		update: verbHelp{
			short:   "Change an agent ingress's description, metadata or certificate management",
			long:    "Change an agent ingress: PATCH /agent_ingresses/ID, with only the fields whose flags are given (or that --data holds). Its domain cannot be changed.",
			example: `  sluice agent-ingresses update agin_... --no-certificate-management`,
		},
		updateFlags: "--description, --metadata, --certificate-authority, --private-key-type or --no-certificate-management",
	}
}

// certificatesCell is the policy in a cell: "letsencrypt/rsa", or "off".
func certificatesCell(p *apiwire.CertificatePolicy) string {
	if p == nil {
		return "off"
	}
	return p.Authority + "/" + p.PrivateKeyType
}

// certificatePolicyFlags set an agent ingress's
// certificate_management_policy.
type certificatePolicyFlags struct {
	authority, keyType string
	off                bool
}

func (c *certificatePolicyFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&c.authority, "certificate-authority", "", `manage the domain's certificates with this authority: "letsencrypt", the only one`)
	fl.StringVar(&c.keyType, "private-key-type", "", `manage the domain's certificates with keys of this type: "rsa" (the default) or "ecdsa"`)
	fl.BoolVar(&c.off, "no-certificate-management", false, "do not manage the domain's certificates (a policy of null)")
}

// apply sets the policy of body from the flags given; on update, a flag
// not given keeps the stored policy's value.
func (c *certificatePolicyFlags) apply(fl *pflag.FlagSet, body map[string]any, stored func() (apiwire.AgentIngress, error)) error {
	authority, keyType := flagGiven(fl, "certificate-authority"), flagGiven(fl, "private-key-type")
	switch {
	case c.off && (authority || keyType):
		return errors.New("give --no-certificate-management, or --certificate-authority and --private-key-type, not both")
	case c.off:
		body["certificate_management_policy"] = nil
		return nil
	case !authority && !keyType:
		return nil
	}
	policy := map[string]any{}
	if stored != nil && (!authority || !keyType) {
		a, err := stored()
		if err != nil {
			return err
		}
		if p := a.CertificateManagementPolicy; p != nil {
			policy["authority"], policy["private_key_type"] = p.Authority, p.PrivateKeyType
		}
	}
	if authority {
		policy["authority"] = c.authority
	}
	if keyType {
		policy["private_key_type"] = c.keyType
	}
	body["certificate_management_policy"] = policy
	return nil
}

// newAgentIngressesCommand returns `sluice agent-ingresses`.
func newAgentIngressesCommand() *cobra.Command { return newFamilyCommand(agentIngressesFamily()) }
