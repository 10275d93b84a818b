package api

import (
	"context"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apiconv"
	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
)

// auditReservedDomain is the family of the audit kinds of reserved
// domains: domain_created.v0, domain_updated.v0, domain_deleted.v0.
const auditReservedDomain = "domain"

// DefaultServiceDomains is the default of Config.ServiceDomains (serve
// --service-domains).
var DefaultServiceDomains = []string{"sluice.app"}

var reservedDomainResource = resource{noun: "reserved domain", listPath: apiwire.ReservedDomainsPath}

// routeReservedDomains serves the family of reserved domains
// (specification sections 2.2, 3 and 4.2) and DELETE
// /reserved_domains/{id}/certificate_management_policy. Every change
// emits domain_created.v0, domain_updated.v0 or domain_deleted.v0 with the
// resource as the API shows it, and a delete tls_certificate_deleted.v0 of
// the domain's certificate, by sluice, which deletes it.
func (s *Server) routeReservedDomains() {
	d := s.domains
	route(s, family[store.ReservedDomain, apiwire.ReservedDomainInput, apiwire.ReservedDomainInput, apiwire.ReservedDomain]{
		spec: declared.ReservedDomains(), res: reservedDomainResource, audit: auditReservedDomain,
		applyCreate: applyReservedDomain, applyUpdate: applyReservedDomain,
		create: func(ctx context.Context, accountID string, v store.ReservedDomain, opts ...store.WriteOption) (store.ReservedDomain, error) {
			domain, err := store.CheckReservedDomain(v.Domain)
			if err != nil {
				return store.ReservedDomain{}, err
			}
			if err := store.CheckNotServiceDomain(domain, s.cfg.ServiceDomains); err != nil {
				return store.ReservedDomain{}, err
			}
			return d.CreateReservedDomain(ctx, accountID, v, opts...)
		},
		get: d.GetReservedDomain, list: d.ListReservedDomains, update: d.UpdateReservedDomain,
		delete: func(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.ReservedDomain, error) {
			return d.DeleteReservedDomain(ctx, accountID, id, append(opts, store.WithCertificateAudit(s.certificateDeletedEvent))...)
		},
		body:  s.reservedDomainResponse,
		fixed: map[string]string{"domain": "reserve the new domain (POST /reserved_domains), move what uses this one to it, and delete this one"},
	})
	s.mux.Handle("DELETE "+apiwire.ReservedDomainsPath+"/{id}/certificate_management_policy", s.authenticated(http.HandlerFunc(s.deleteDomainCertPolicy)))
}

// deleteDomainCertPolicy stops the management of a reserved domain's
// certificate: its policy and status become null. 204, also when it had
// none.
func (s *Server) deleteDomainCertPolicy(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a := newAudit(s, r, auditReservedDomain, changeUpdated, func(d store.ReservedDomain) any { return s.reservedDomainResponse(r, d) })
	_, err := s.domains.UpdateReservedDomain(r.Context(), apiconv.RequestKey(r.Context()).AccountID, id, func(d *store.ReservedDomain) error {
		d.CertPolicy = nil
		return nil
	}, a.option())
	if err != nil {
		s.writeStoreError(w, r, err, reservedDomainResource, id)
		return
	}
	a.publish()
	w.WriteHeader(http.StatusNoContent)
}

// reservedDomainResponse returns the domain as the API shows it. A domain
// under one of the service's domains needs no CNAME; a custom one points
// its CNAME at a name under the first service domain made of its id, and a
// custom wildcard its _acme-challenge too.
func (s *Server) reservedDomainResponse(r *http.Request, d store.ReservedDomain) apiwire.ReservedDomain {
	body := apiwire.ReservedDomain{
		ID:          d.ID,
		URI:         s.resourceURI(r, apiwire.ReservedDomainsPath+"/"+d.ID),
		CreatedAt:   d.CreatedAt.UTC().Format(createdAtLayout),
		Description: d.Description,
		Metadata:    d.Metadata,
		Domain:      d.Domain,
	}
	if d.Region != "" {
		body.Region = &d.Region
	}
	if !store.UnderServiceDomain(d.Domain, s.cfg.ServiceDomains) && len(s.cfg.ServiceDomains) > 0 {
		token := store.DomainToken(d.ID)
		cname := token + ".cname." + s.cfg.ServiceDomains[0]
		body.CNAMETarget = &cname
		if store.IsWildcardDomain(d.Domain) {
			acme := token + ".acme." + s.cfg.ServiceDomains[0]
			body.ACMEChallengeCNAMETarget = &acme
		}
	}
	if d.CertificateID != "" {
		body.Certificate = &apiwire.Ref{ID: d.CertificateID, URI: s.resourceURI(r, apiwire.TLSCertificatesPath+"/"+d.CertificateID)}
	}
	body.CertificateManagementPolicy, body.CertificateManagementStatus = certificateBodies(d.CertPolicy, d.CertStatus)
	return body
}

// certificateBodies are a certificate policy and its status as the API
// shows them, an agent ingress's or a reserved domain's; nil for nil.
func certificateBodies(p *store.CertificatePolicy, st *store.CertificateStatus) (*apiwire.CertificatePolicy, *apiwire.CertificateStatus) {
	var policy *apiwire.CertificatePolicy
	if p != nil {
		policy = &apiwire.CertificatePolicy{Authority: p.Authority, PrivateKeyType: p.PrivateKeyType}
	}
	if st == nil {
		return policy, nil
	}
	status := &apiwire.CertificateStatus{RenewsAt: timeText(st.RenewsAt)}
	if j := st.ProvisioningJob; j != nil {
		status.ProvisioningJob = &apiwire.CertificateJob{Msg: j.Msg, StartedAt: j.StartedAt.UTC().Format(createdAtLayout), RetriesAt: timeText(j.RetriesAt)}
		if j.ErrorCode != "" {
			status.ProvisioningJob.ErrorCode = &j.ErrorCode
		}
	}
	return policy, status
}

// timeText is t as the API writes times, or nil for nil.
func timeText(t *time.Time) *string {
	if t == nil {
		return nil
	}
	text := t.UTC().Format(createdAtLayout)
	return &text
}

// applyReservedDomain sets the fields of a create or an update sent. An
// update takes no domain, which cannot change (fixed: 400
// ERR_SLUICE_340, as an agent ingress's); a policy of null is none sent,
// and DELETE .../certificate_management_policy removes the policy.
func applyReservedDomain(in apiwire.ReservedDomainInput, d *store.ReservedDomain) {
	setSent(&d.Description, in.Description)
	setSent(&d.Metadata, in.Metadata)
	setSent(&d.Domain, in.Domain)
	setSent(&d.Region, in.Region)
	if in.CertificateManagementPolicy != nil {
		d.CertPolicy = storedPolicy(in.CertificateManagementPolicy)
	}
}

// ReservedDomains keeps the reserved domains of accounts. *store.Store
// implements it; see its methods for the errors each returns.
type ReservedDomains interface {
	CreateReservedDomain(ctx context.Context, accountID string, in store.ReservedDomain, opts ...store.WriteOption) (store.ReservedDomain, error)
	GetReservedDomain(ctx context.Context, accountID, id string) (store.ReservedDomain, error)
	ListReservedDomains(ctx context.Context, accountID string, page store.Page) ([]store.ReservedDomain, string, error)
	UpdateReservedDomain(ctx context.Context, accountID, id string, fn func(*store.ReservedDomain) error, opts ...store.WriteOption) (store.ReservedDomain, error)
	DeleteReservedDomain(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.ReservedDomain, error)
	// GetTLSCertificate and ListTLSCertificates read the certificates
	// sluice obtained for the reserved domains (/tls_certificates).
	GetTLSCertificate(ctx context.Context, accountID, id string) (store.TLSCertificate, error)
	ListTLSCertificates(ctx context.Context, accountID string, page store.Page) ([]store.TLSCertificate, string, error)
}
