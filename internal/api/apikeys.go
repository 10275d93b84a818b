package api

import (
	"context"
	"net/http"

	"github.com/sluicehq/sluice/apiwire"
	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
)

// routeAPIKeys serves the family of API keys. The token of a key is shown
// once, in the answer to its creation; the account's last key cannot be
// deleted (the store refuses, and writeStoreError says why).
func (s *Server) routeAPIKeys() {
	k := s.apiKeys
	route(s, family[store.APIKey, apiwire.APIKeyInput, apiwire.APIKeyInput, apiwire.APIKey]{
		spec: declared.APIKeys(), res: apiKeyResource, audit: auditAPIKey,
		create: func(ctx context.Context, accountID string, v store.APIKey, opts ...store.WriteOption) (store.APIKey, error) {
			return k.CreateAPIKey(ctx, accountID, store.APIKeyInput{Description: v.Description, Metadata: v.Metadata}, "", opts...)
		},
		get: k.GetAPIKey, list: k.ListAPIKeys, update: k.UpdateAPIKey, delete: k.DeleteAPIKey,
		applyCreate: applyAPIKey, applyUpdate: applyAPIKey,
		body: s.apiKeyResponse,
		created: func(w http.ResponseWriter, v store.APIKey, body *apiwire.APIKey) {
			body.Token = &v.Token
			w.Header().Set("Cache-Control", "no-store")
		},
	})
}

// applyAPIKey sets the fields of a create or an update sent.
func applyAPIKey(in apiwire.APIKeyInput, k *store.APIKey) {
	setSent(&k.Description, in.Description)
	setSent(&k.Metadata, in.Metadata)
}

// apiKeyResponse returns the body of the key, without its token.
func (s *Server) apiKeyResponse(r *http.Request, k store.APIKey) apiwire.APIKey {
	return apiwire.APIKey{
		ID:          k.ID,
		URI:         s.resourceURI(r, "/api_keys/"+k.ID),
		Description: k.Description,
		Metadata:    k.Metadata,
		CreatedAt:   k.CreatedAt.UTC().Format(createdAtLayout),
	}
}

// APIKeys keeps the API keys of accounts. *store.Store implements it; see
// its methods for the errors each returns.
type APIKeys interface {
	CreateAPIKey(ctx context.Context, accountID string, in store.APIKeyInput, token string, opts ...store.WriteOption) (store.APIKey, error)
	GetAPIKey(ctx context.Context, accountID, id string) (store.APIKey, error)
	ListAPIKeys(ctx context.Context, accountID string, page store.Page) ([]store.APIKey, string, error)
	UpdateAPIKey(ctx context.Context, accountID, id string, fn func(*store.APIKey) error, opts ...store.WriteOption) (store.APIKey, error)
	DeleteAPIKey(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.APIKey, error)
}
