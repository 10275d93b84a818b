package api

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apiconv"
	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
)

// IngressConfig is the operator's configuration that agent ingresses show
// (specification section 2.1): read when the API answers, so that a region
// added shows on the agent ingresses that exist.
type IngressConfig struct {
	// NSTargets are the service's name servers, the NS records that
	// delegate an agent ingress's domain to it; default
	// DefaultIngressNSTargets.
	NSTargets []string
	// Regions are the regions the service runs; an agent ingress of
	// domain D shows tunnel.<region>.D for each. Default DefaultRegions.
	Regions []string
	// ServiceDomains are the service's own domains, which no agent
	// ingress may have, nor a name under one; default the host of
	// Config.BaseURL, when it is a name.
	ServiceDomains []string
}

// The defaults of IngressConfig: placeholders in the .invalid domain,
// which no one can own, until the operator names the service's name
// servers (serve --ingress-ns-targets), and the region us.
var (
	DefaultIngressNSTargets = []string{"ns1.sluice.invalid", "ns2.sluice.invalid"}
	DefaultRegions          = []string{"us"}
)

func (c *IngressConfig) setDefaults(baseURL string) {
	if len(c.NSTargets) == 0 {
		c.NSTargets = DefaultIngressNSTargets
	}
	if len(c.Regions) == 0 {
		c.Regions = DefaultRegions
	}
	if len(c.ServiceDomains) == 0 {
		if u, err := url.Parse(baseURL); err == nil && u.Hostname() != "" && net.ParseIP(u.Hostname()) == nil {
			c.ServiceDomains = []string{u.Hostname()}
		}
	}
}

// serviceDomain returns the service domain that domain is, or is under,
// or "".
func (c IngressConfig) serviceDomain(domain string) string {
	domain = strings.ToLower(strings.TrimSuffix(domain, "."))
	for _, own := range c.ServiceDomains {
		own = strings.ToLower(strings.TrimSuffix(own, "."))
		if domain == own || strings.HasSuffix(domain, "."+own) {
			return own
		}
	}
	return ""
}

// routeAgentIngresses serves the family of agent ingresses (specification
// sections 2.1 and 4.1). The catalogue has no audit kinds for them: their
// changes emit no audit event.
func (s *Server) routeAgentIngresses() {
	a := s.agentIngresses
	route(s, family[store.AgentIngress, apiwire.AgentIngressInput, apiwire.AgentIngressInput, apiwire.AgentIngress]{
		spec: declared.AgentIngresses(), res: agentIngressResource,
		create: s.createAgentIngress, get: a.GetAgentIngress, list: a.ListAgentIngresses, update: a.UpdateAgentIngress, delete: a.DeleteAgentIngress,
		applyCreate: createdAgentIngress, applyUpdate: updatedAgentIngress,
		body:  s.agentIngressResponse,
		fixed: map[string]string{"domain": "create another agent ingress with the new domain, and delete this one"},
	})
}

// createAgentIngress refuses a domain of the service's own, and otherwise
// creates the agent ingress.
func (s *Server) createAgentIngress(ctx context.Context, accountID string, in store.AgentIngress, opts ...store.WriteOption) (store.AgentIngress, error) {
	if own := s.cfg.Ingress.serviceDomain(in.Domain); own != "" {
		return store.AgentIngress{}, &serviceDomainError{domain: in.Domain, own: own}
	}
	return s.agentIngresses.CreateAgentIngress(ctx, accountID, in, opts...)
}

// serviceDomainError is a domain that is, or is under, one of the
// service's own.
type serviceDomainError struct{ domain, own string }

func (e *serviceDomainError) Error() string {
	return "domain " + strings.ToLower(e.domain) + " is the service's own domain " + e.own + ", or under it: give a domain your account owns"
}

// apiError is the 400 ERR_SLUICE_341 of e.
func (e *serviceDomainError) apiError() *apiconv.Error {
	err := apiconv.NewError(apiconv.CodeServiceDomain, "%s", e.Error())
	err.Details = map[string]string{"field": "domain"}
	return err
}

func (s *Server) agentIngressResponse(_ *http.Request, a store.AgentIngress) apiwire.AgentIngress {
	body := apiwire.AgentIngress{
		ID:            a.ID,
		URI:           agentIngressResource.listPath + "/" + a.ID,
		Description:   a.Description,
		Metadata:      a.Metadata,
		Domain:        a.Domain,
		NSTargets:     append([]string{}, s.cfg.Ingress.NSTargets...),
		RegionDomains: make([]string, len(s.cfg.Ingress.Regions)),
		CreatedAt:     a.CreatedAt.UTC().Format(createdAtLayout),
	}
	for i, region := range s.cfg.Ingress.Regions {
		body.RegionDomains[i] = "tunnel." + region + "." + a.Domain
	}
	var status *store.CertificateStatus
	switch {
	case a.CertificatePolicy == nil || a.ProvisioningSince == nil:
	case a.CertJob != nil:
		status = &store.CertificateStatus{ProvisioningJob: a.CertJob}
	case a.RenewsAt != nil:
		status = &store.CertificateStatus{RenewsAt: a.RenewsAt}
	default:
		status = &store.CertificateStatus{ProvisioningJob: &store.CertificateJob{Msg: store.ProvisioningMsg, StartedAt: *a.ProvisioningSince}}
	}
	body.CertificateManagementPolicy, body.CertificateManagementStatus = certificateBodies(a.CertificatePolicy, status)
	return body
}

// createdAgentIngress sets the fields of a create sent; a policy of null
// is none.
func createdAgentIngress(in apiwire.AgentIngressInput, a *store.AgentIngress) {
	setSent(&a.Description, in.Description)
	setSent(&a.Metadata, in.Metadata)
	setSent(&a.Domain, in.Domain)
	if in.CertificateManagementPolicy != nil {
		a.CertificatePolicy = storedPolicy(*in.CertificateManagementPolicy)
	}
}

// storedPolicy returns the certificate policy sent as the store keeps
// it, nil for null.
func storedPolicy(p *apiwire.CertificatePolicy) *store.CertificatePolicy {
	if p == nil {
		return nil
	}
	return &store.CertificatePolicy{Authority: p.Authority, PrivateKeyType: p.PrivateKeyType}
}

// updatedAgentIngress sets the fields of an update sent. A policy sent,
// null included, replaces the policy, and a policy that changes starts
// its provisioning again. An update takes no domain (fixed).
func updatedAgentIngress(in apiwire.AgentIngressInput, a *store.AgentIngress) {
	setSent(&a.Description, in.Description)
	setSent(&a.Metadata, in.Metadata)
	if in.CertificateManagementPolicy == nil {
		return
	}
	p := storedPolicy(*in.CertificateManagementPolicy)
	if p != nil && p.PrivateKeyType == "" {
		p.PrivateKeyType = store.KeyTypeRSA
	}
	if p != nil && p.Authority == "" {
		p.Authority = store.AuthorityLetsEncrypt
	}
	if a.CertificatePolicy == nil || p == nil || *p != *a.CertificatePolicy {
		a.ProvisioningSince = nil
	}
	a.CertificatePolicy = p
}

// AgentIngresses keeps the agent ingresses of accounts. *store.Store
// implements it; see its methods for the errors each returns.
type AgentIngresses interface {
	CreateAgentIngress(ctx context.Context, accountID string, in store.AgentIngress, opts ...store.WriteOption) (store.AgentIngress, error)
	GetAgentIngress(ctx context.Context, accountID, id string) (store.AgentIngress, error)
	ListAgentIngresses(ctx context.Context, accountID string, page store.Page) ([]store.AgentIngress, string, error)
	UpdateAgentIngress(ctx context.Context, accountID, id string, fn func(*store.AgentIngress) error, opts ...store.WriteOption) (store.AgentIngress, error)
	DeleteAgentIngress(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.AgentIngress, error)
}
