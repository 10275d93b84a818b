package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/sluicehq/sluice/apiwire"
	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
)

// routeCredentials serves the family of tunnel credentials (specification
// sections 2.4 and 5). The token of a credential is shown once, in the
// answer to its creation, and is null in its audit events.
func (s *Server) routeCredentials() {
	c := s.credentials
	route(s, family[store.Credential, apiwire.CredentialInput, apiwire.CredentialInput, apiwire.Credential]{
		spec: declared.Credentials(), res: credentialResource, audit: auditCredential,
		create: c.CreateCredential, get: c.GetCredential, list: c.ListCredentials, update: c.UpdateCredential, delete: c.DeleteCredential,
		applyCreate: applyCredential, applyUpdate: applyCredential,
		body:        s.credentialResponse,
		auditObject: s.credentialAudit,
		created: func(w http.ResponseWriter, v store.Credential, body *apiwire.Credential) {
			body.Token = &v.Token
			w.Header().Set("Cache-Control", "no-store")
		},
	})
}

// applyCredential sets the fields of a create or an update sent. An
// empty owner_id removes the owner.
func applyCredential(in apiwire.CredentialInput, c *store.Credential) {
	setSent(&c.Description, in.Description)
	setSent(&c.Metadata, in.Metadata)
	if in.ACL != nil {
		c.ACL = slices.Clone(*in.ACL)
	}
	setSent(&c.OwnerID, in.OwnerID)
}

// credentialResponse returns the body of the credential, without its
// token.
func (s *Server) credentialResponse(r *http.Request, c store.Credential) apiwire.Credential {
	body := apiwire.Credential{
		ID:          c.ID,
		URI:         s.resourceURI(r, credentialResource.listPath+"/"+c.ID),
		CreatedAt:   c.CreatedAt.UTC().Format(createdAtLayout),
		Description: c.Description,
		Metadata:    c.Metadata,
		ACL:         append([]string{}, c.ACL...),
	}
	if c.OwnerID != "" {
		body.OwnerID = &c.OwnerID
	}
	return body
}

// credentialAudit is the object of a tunnel_credential_* event: the fields
// the catalogue gives the kinds (specification section 6.4), the token
// null.
func (s *Server) credentialAudit(r *http.Request, c store.Credential) any {
	body := s.credentialResponse(r, c)
	return struct {
		ID          string   `json:"id"`
		URI         string   `json:"uri"`
		CreatedAt   string   `json:"created_at"`
		Description string   `json:"description"`
		Metadata    string   `json:"metadata"`
		Token       *string  `json:"token"`
		ACL         []string `json:"acl"`
	}{body.ID, body.URI, body.CreatedAt, body.Description, body.Metadata, nil, body.ACL}
}

// Credentials keeps the tunnel credentials of accounts. *store.Store
// implements it; see its methods for the errors each returns.
type Credentials interface {
	CreateCredential(ctx context.Context, accountID string, in store.Credential, opts ...store.WriteOption) (store.Credential, error)
	GetCredential(ctx context.Context, accountID, id string) (store.Credential, error)
	ListCredentials(ctx context.Context, accountID string, page store.Page) ([]store.Credential, string, error)
	UpdateCredential(ctx context.Context, accountID, id string, fn func(*store.Credential) error, opts ...store.WriteOption) (store.Credential, error)
	DeleteCredential(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.Credential, error)
}
