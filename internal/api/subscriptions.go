package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/sluicehq/sluice/apiwire"
	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// routeSubscriptions serves the family of event subscriptions, and the
// routes of their sources.
func (s *Server) routeSubscriptions() {
	sub := s.subscriptions
	route(s, family[store.Subscription, apiwire.SubscriptionInput, apiwire.SubscriptionInput, apiwire.Subscription]{
		spec: declared.EventSubscriptions(), res: subscriptionResource, audit: auditSubscription,
		create: sub.CreateSubscription, get: sub.GetSubscription, list: sub.ListSubscriptions, update: sub.UpdateSubscription, delete: sub.DeleteSubscription,
		applyCreate: applySubscription, applyUpdate: applySubscription,
		body: s.subscriptionResponse,
	})
	s.routeSources()
}

// applySubscription sets the fields of a create or an update sent.
// Sources and DestinationIDs, when sent, replace the whole list.
func applySubscription(in apiwire.SubscriptionInput, sub *store.Subscription) {
	setSent(&sub.Description, in.Description)
	setSent(&sub.Metadata, in.Metadata)
	if in.Sources != nil {
		// A copy: the store normalizes sources in place, and may call an
		// update's function again on a fresh subscription.
		sub.Sources = make([]store.Source, len(*in.Sources))
		for i, src := range *in.Sources {
			sub.Sources[i] = store.Source{Type: src.Type, Filter: src.Filter, Fields: slices.Clone(src.Fields)}
		}
	}
	if in.DestinationIDs != nil {
		sub.DestinationIDs = slices.Clone(*in.DestinationIDs)
	}
}

// subscriptionPath is the path of the subscription in the API.
func subscriptionPath(id string) string { return "/event_subscriptions/" + id }

// sourcePath is the path of a source of the subscription in the API.
func sourcePath(subscriptionID, kind string) string {
	return subscriptionPath(subscriptionID) + "/sources/" + kind
}

func (s *Server) subscriptionResponse(r *http.Request, sub store.Subscription) apiwire.Subscription {
	body := apiwire.Subscription{
		ID:           sub.ID,
		URI:          s.resourceURI(r, subscriptionPath(sub.ID)),
		CreatedAt:    sub.CreatedAt.UTC().Format(createdAtLayout),
		Metadata:     sub.Metadata,
		Description:  sub.Description,
		Sources:      make([]apiwire.Source, len(sub.Sources)),
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

func (s *Server) sourceResponse(r *http.Request, subscriptionID string, src store.Source) apiwire.Source {
	return apiwire.Source{
		Type:   src.Type,
		URI:    s.resourceURI(r, sourcePath(subscriptionID, src.Type)),
		Filter: src.Filter,
		Fields: src.Fields,
	}
}

// Subscriptions keeps the event subscriptions of accounts. *store.Store
// implements it; see its methods for the errors each returns.
type Subscriptions interface {
	CreateSubscription(ctx context.Context, accountID string, in store.Subscription, opts ...store.WriteOption) (store.Subscription, error)
	GetSubscription(ctx context.Context, accountID, id string) (store.Subscription, error)
	ListSubscriptions(ctx context.Context, accountID string, page store.Page) ([]store.Subscription, string, error)
	UpdateSubscription(ctx context.Context, accountID, id string, fn func(*store.Subscription) error, opts ...store.WriteOption) (store.Subscription, error)
	DeleteSubscription(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.Subscription, error)
}
