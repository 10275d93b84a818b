package api

import (
	"context"
	"net/http"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// APIKeys keeps the API keys of accounts. *store.Store implements it; see
// its methods for the errors each returns.
type APIKeys interface {
	CreateAPIKey(ctx context.Context, accountID string, in store.APIKeyInput, token string, opts ...store.WriteOption) (store.APIKey, error)
	GetAPIKey(ctx context.Context, accountID, id string) (store.APIKey, error)
	ListAPIKeys(ctx context.Context, accountID string, page store.Page) ([]store.APIKey, string, error)
	UpdateAPIKey(ctx context.Context, accountID, id string, fn func(*store.APIKey) error, opts ...store.WriteOption) (store.APIKey, error)
	DeleteAPIKey(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.APIKey, error)
}

// routeAPIKeys registers the /api_keys routes.
func (s *Server) routeAPIKeys() {
	s.mux.Handle("POST /api_keys", s.authenticated(http.HandlerFunc(s.createAPIKey)))
	s.mux.Handle("GET /api_keys", s.authenticated(http.HandlerFunc(s.listAPIKeys)))
	s.mux.Handle("GET /api_keys/{id}", s.authenticated(http.HandlerFunc(s.getAPIKey)))
	s.mux.Handle("PATCH /api_keys/{id}", s.authenticated(http.HandlerFunc(s.updateAPIKey)))
	s.mux.Handle("DELETE /api_keys/{id}", s.authenticated(http.HandlerFunc(s.deleteAPIKey)))
}

// apiKeyInput is the body of a create or update: the fields sent are set,
// the others nil.
type apiKeyInput struct {
	Description *string `json:"description"`
	Metadata    *string `json:"metadata"`
}

// apiKeyBody is an API key as the API returns it (specification section
// 5.3). Token is set only in the response to its creation, and null in
// every other response and in audit events.
type apiKeyBody struct {
	ID          string  `json:"id"`
	URI         string  `json:"uri"`
	Description string  `json:"description"`
	Metadata    string  `json:"metadata"`
	CreatedAt   string  `json:"created_at"`
	Token       *string `json:"token"`
}

// apiKeyList is a page of API keys.
type apiKeyList struct {
	APIKeys     []apiKeyBody `json:"api_keys"`
	URI         string       `json:"uri"`
	NextPageURI *string      `json:"next_page_uri"`
}

// apiKeyResponse returns the body of the key, without its token.
func (s *Server) apiKeyResponse(r *http.Request, k store.APIKey) apiKeyBody {
	return apiKeyBody{
		ID:          k.ID,
		URI:         s.resourceURI(r, "/api_keys/"+k.ID),
		Description: k.Description,
		Metadata:    k.Metadata,
		CreatedAt:   k.CreatedAt.UTC().Format(createdAtLayout),
	}
}

// apiKeyAudit returns the object of an API key's audit event: its body,
// without its token.
func (s *Server) apiKeyAudit(r *http.Request) func(store.APIKey) any {
	return func(k store.APIKey) any { return s.apiKeyResponse(r, k) }
}

func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request) {
	var in apiKeyInput
	if e := decodeBody(w, r, &in); e != nil {
		writeError(w, r, e)
		return
	}
	var fields store.APIKeyInput
	if in.Description != nil {
		fields.Description = *in.Description
	}
	if in.Metadata != nil {
		fields.Metadata = *in.Metadata
	}
	audit := newAudit(s, r, auditAPIKey, changeCreated, s.apiKeyAudit(r))
	created, err := s.apiKeys.CreateAPIKey(r.Context(), apiKey(r.Context()).AccountID, fields, "", audit.option())
	if err != nil {
		s.writeStoreError(w, r, err, apiKeyResource, "")
		return
	}
	audit.publish()
	body := s.apiKeyResponse(r, created)
	body.Token = &created.Token
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, body)
}

func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request) {
	page, e := readPage(r, schemas.PrefixAPIKey)
	if e != nil {
		writeError(w, r, e)
		return
	}
	items, next, err := s.apiKeys.ListAPIKeys(r.Context(), apiKey(r.Context()).AccountID, page)
	if err != nil {
		s.writeStoreError(w, r, err, apiKeyResource, "")
		return
	}
	list := apiKeyList{APIKeys: make([]apiKeyBody, len(items))}
	for i, k := range items {
		list.APIKeys[i] = s.apiKeyResponse(r, k)
	}
	list.URI, list.NextPageURI = s.listURIs(r, page, next)
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) getAPIKey(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	k, err := s.apiKeys.GetAPIKey(r.Context(), apiKey(r.Context()).AccountID, id)
	if err != nil {
		s.writeStoreError(w, r, err, apiKeyResource, id)
		return
	}
	writeJSON(w, http.StatusOK, s.apiKeyResponse(r, k))
}

func (s *Server) updateAPIKey(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var in apiKeyInput
	if e := decodeBody(w, r, &in); e != nil {
		writeError(w, r, e)
		return
	}
	audit := newAudit(s, r, auditAPIKey, changeUpdated, s.apiKeyAudit(r))
	k, err := s.apiKeys.UpdateAPIKey(r.Context(), apiKey(r.Context()).AccountID, id, func(k *store.APIKey) error {
		if in.Description != nil {
			k.Description = *in.Description
		}
		if in.Metadata != nil {
			k.Metadata = *in.Metadata
		}
		return nil
	}, audit.option())
	if err != nil {
		s.writeStoreError(w, r, err, apiKeyResource, id)
		return
	}
	audit.publish()
	writeJSON(w, http.StatusOK, s.apiKeyResponse(r, k))
}

func (s *Server) deleteAPIKey(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	audit := newAudit(s, r, auditAPIKey, changeDeleted, s.apiKeyAudit(r))
	if _, err := s.apiKeys.DeleteAPIKey(r.Context(), apiKey(r.Context()).AccountID, id, audit.option()); err != nil {
		s.writeStoreError(w, r, err, apiKeyResource, id)
		return
	}
	audit.publish()
	w.WriteHeader(http.StatusNoContent)
}
