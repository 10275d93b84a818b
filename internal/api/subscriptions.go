package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// Subscriptions keeps the event subscriptions of accounts. *store.Store
// implements it; see its methods for the errors each returns.
type Subscriptions interface {
	CreateSubscription(ctx context.Context, accountID string, in store.Subscription, opts ...store.WriteOption) (store.Subscription, error)
	GetSubscription(ctx context.Context, accountID, id string) (store.Subscription, error)
	ListSubscriptions(ctx context.Context, accountID string, page store.Page) ([]store.Subscription, string, error)
	UpdateSubscription(ctx context.Context, accountID, id string, fn func(*store.Subscription) error, opts ...store.WriteOption) (store.Subscription, error)
	DeleteSubscription(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.Subscription, error)
}

// routeSubscriptions registers the /event_subscriptions routes, sources
// included.
func (s *Server) routeSubscriptions() {
	s.mux.Handle("POST /event_subscriptions", s.authenticated(http.HandlerFunc(s.createSubscription)))
	s.mux.Handle("GET /event_subscriptions", s.authenticated(http.HandlerFunc(s.listSubscriptions)))
	s.mux.Handle("GET /event_subscriptions/{id}", s.authenticated(http.HandlerFunc(s.getSubscription)))
	s.mux.Handle("PATCH /event_subscriptions/{id}", s.authenticated(http.HandlerFunc(s.updateSubscription)))
	s.mux.Handle("DELETE /event_subscriptions/{id}", s.authenticated(http.HandlerFunc(s.deleteSubscription)))
	s.routeSources()
}

// subscriptionInput is the body of a create or update: the fields sent are
// set, the others nil. Sources and DestinationIDs, when sent, replace the
// whole list.
type subscriptionInput struct {
	Description    *string         `json:"description"`
	Metadata       *string         `json:"metadata"`
	Sources        *[]store.Source `json:"sources"`
	DestinationIDs *[]string       `json:"destination_ids"`
}

func (in subscriptionInput) apply(sub *store.Subscription) {
	if in.Description != nil {
		sub.Description = *in.Description
	}
	if in.Metadata != nil {
		sub.Metadata = *in.Metadata
	}
	if in.Sources != nil {
		// A copy: the store normalizes sources in place, and may call an
		// update's function again on a fresh subscription.
		sub.Sources = make([]store.Source, len(*in.Sources))
		for i, src := range *in.Sources {
			src.Fields = slices.Clone(src.Fields)
			sub.Sources[i] = src
		}
	}
	if in.DestinationIDs != nil {
		sub.DestinationIDs = slices.Clone(*in.DestinationIDs)
	}
}

// subscriptionBody is a subscription as the API returns it (specification
// section 2.8), fields in the specification's order.
type subscriptionBody struct {
	ID           string        `json:"id"`
	URI          string        `json:"uri"`
	CreatedAt    string        `json:"created_at"`
	Metadata     string        `json:"metadata"`
	Description  string        `json:"description"`
	Sources      []sourceBody  `json:"sources"`
	Destinations []schemas.Ref `json:"destinations"`
}

// sourceBody is a source as the API returns it; Filter and Fields only when
// set.
type sourceBody struct {
	Type   string   `json:"type"`
	URI    string   `json:"uri"`
	Filter string   `json:"filter,omitempty"`
	Fields []string `json:"fields,omitempty"`
}

// subscriptionList is a page of subscriptions (specification section 2.11).
type subscriptionList struct {
	Subscriptions []subscriptionBody `json:"event_subscriptions"`
	URI           string             `json:"uri"`
	NextPageURI   *string            `json:"next_page_uri"`
}

// subscriptionPath is the path of the subscription in the API.
func subscriptionPath(id string) string { return "/event_subscriptions/" + id }

// sourcePath is the path of a source of the subscription in the API.
func sourcePath(subscriptionID, kind string) string {
	return subscriptionPath(subscriptionID) + "/sources/" + kind
}

func (s *Server) subscriptionResponse(r *http.Request, sub store.Subscription) subscriptionBody {
	body := subscriptionBody{
		ID:           sub.ID,
		URI:          s.resourceURI(r, subscriptionPath(sub.ID)),
		CreatedAt:    sub.CreatedAt.UTC().Format(createdAtLayout),
		Metadata:     sub.Metadata,
		Description:  sub.Description,
		Sources:      make([]sourceBody, len(sub.Sources)),
		Destinations: make([]schemas.Ref, len(sub.DestinationIDs)),
	}
	for i, src := range sub.Sources {
		body.Sources[i] = s.sourceResponse(r, sub.ID, src)
	}
	for i, id := range sub.DestinationIDs {
		body.Destinations[i] = schemas.Ref{ID: id, URI: s.resourceURI(r, "/event_destinations/"+id)}
	}
	return body
}

func (s *Server) sourceResponse(r *http.Request, subscriptionID string, src store.Source) sourceBody {
	return sourceBody{
		Type:   src.Type,
		URI:    s.resourceURI(r, sourcePath(subscriptionID, src.Type)),
		Filter: src.Filter,
		Fields: src.Fields,
	}
}

// subscriptionAudit returns the object of a subscription's audit event:
// its body.
func (s *Server) subscriptionAudit(r *http.Request) func(store.Subscription) any {
	return func(sub store.Subscription) any { return s.subscriptionResponse(r, sub) }
}

func (s *Server) createSubscription(w http.ResponseWriter, r *http.Request) {
	var in subscriptionInput
	if e := decodeBody(w, r, &in); e != nil {
		writeError(w, r, e)
		return
	}
	var sub store.Subscription
	in.apply(&sub)
	audit := newAudit(s, r, auditSubscription, changeCreated, s.subscriptionAudit(r))
	created, err := s.subscriptions.CreateSubscription(r.Context(), apiKey(r.Context()).AccountID, sub, audit.option())
	if err != nil {
		s.writeStoreError(w, r, err, subscriptionResource, "")
		return
	}
	audit.publish()
	writeJSON(w, http.StatusCreated, s.subscriptionResponse(r, created))
}

func (s *Server) listSubscriptions(w http.ResponseWriter, r *http.Request) {
	page, e := readPage(r, schemas.PrefixSubscription)
	if e != nil {
		writeError(w, r, e)
		return
	}
	items, next, err := s.subscriptions.ListSubscriptions(r.Context(), apiKey(r.Context()).AccountID, page)
	if err != nil {
		s.writeStoreError(w, r, err, subscriptionResource, "")
		return
	}
	list := subscriptionList{Subscriptions: make([]subscriptionBody, len(items))}
	for i, sub := range items {
		list.Subscriptions[i] = s.subscriptionResponse(r, sub)
	}
	list.URI, list.NextPageURI = s.listURIs(r, page, next)
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) getSubscription(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	sub, err := s.subscriptions.GetSubscription(r.Context(), apiKey(r.Context()).AccountID, id)
	if err != nil {
		s.writeStoreError(w, r, err, subscriptionResource, id)
		return
	}
	writeJSON(w, http.StatusOK, s.subscriptionResponse(r, sub))
}

func (s *Server) updateSubscription(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var in subscriptionInput
	if e := decodeBody(w, r, &in); e != nil {
		writeError(w, r, e)
		return
	}
	audit := newAudit(s, r, auditSubscription, changeUpdated, s.subscriptionAudit(r))
	sub, err := s.subscriptions.UpdateSubscription(r.Context(), apiKey(r.Context()).AccountID, id, func(sub *store.Subscription) error {
		in.apply(sub)
		return nil
	}, audit.option())
	if err != nil {
		s.writeStoreError(w, r, err, subscriptionResource, id)
		return
	}
	audit.publish()
	writeJSON(w, http.StatusOK, s.subscriptionResponse(r, sub))
}

func (s *Server) deleteSubscription(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	audit := newAudit(s, r, auditSubscription, changeDeleted, s.subscriptionAudit(r))
	if _, err := s.subscriptions.DeleteSubscription(r.Context(), apiKey(r.Context()).AccountID, id, audit.option()); err != nil {
		s.writeStoreError(w, r, err, subscriptionResource, id)
		return
	}
	audit.publish()
	w.WriteHeader(http.StatusNoContent)
}
