package api

import (
	"encoding/json"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// auditTLSCertificate is the family of the audit kinds of TLS
// certificates, which sluice emits as it obtains and renews them.
const auditTLSCertificate = "tls_certificate"

// sluicePrincipal is the principal of the changes sluice makes itself,
// such as a certificate obtained or renewed: no API key made them.
var sluicePrincipal = schemas.Principal{ID: "sluice", Subject: "sluice", Source: "sluice"}

// CertificateEvents returns what builds the audit events of a reserved
// domain's certificate stored by sluice's certificate jobs
// (store.SetDomainCertificate): tls_certificate_created.v0 or
// tls_certificate_updated.v0, and domain_updated.v0, with the resources
// as the API shows them and sluice as the principal.
func (s *Server) CertificateEvents() store.CertificateEvents {
	return func(change string, cert store.TLSCertificate, d store.ReservedDomain) ([]schemas.Encoded, error) {
		certEvent, err := s.sluiceEvent(auditTLSCertificate+"_"+change+".v0", cert.AccountID,
			TLSCertificateBody(s.resourceURI(nil, apiwire.TLSCertificatesPath+"/"+cert.ID), cert))
		if err != nil {
			return nil, err
		}
		domainEvent, err := s.sluiceEvent(auditReservedDomain+"_"+changeUpdated+".v0", d.AccountID, s.reservedDomainResponse(nil, d))
		if err != nil {
			return nil, err
		}
		return []schemas.Encoded{certEvent, domainEvent}, nil
	}
}

// certificateDeletedEvent is the tls_certificate_deleted.v0 of a
// certificate sluice deletes with its reserved domain.
func (s *Server) certificateDeletedEvent(cert store.TLSCertificate) (schemas.Encoded, error) {
	return s.sluiceEvent(auditTLSCertificate+"_"+changeDeleted+".v0", cert.AccountID,
		TLSCertificateBody(s.resourceURI(nil, apiwire.TLSCertificatesPath+"/"+cert.ID), cert))
}

// sluiceEvent returns the audit event of kind of a change sluice made
// itself, validated.
func (s *Server) sluiceEvent(kind, accountID string, object any) (schemas.Encoded, error) {
	obj, err := json.Marshal(object)
	if err != nil {
		return schemas.Encoded{}, err
	}
	principal, err := json.Marshal(sluicePrincipal)
	if err != nil {
		return schemas.Encoded{}, err
	}
	return s.catalogue.EncodeBySluice(schemas.Event{Type: kind, AccountID: accountID, Principal: principal, Object: obj})
}
