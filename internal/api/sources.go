package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/store"
)

// routeSources registers the routes of the sources of subscriptions.
func (s *Server) routeSources() {
	s.mux.Handle("POST /event_subscriptions/{id}/sources", s.authenticated(http.HandlerFunc(s.createSource)))
	s.mux.Handle("GET /event_subscriptions/{id}/sources", s.authenticated(http.HandlerFunc(s.listSources)))
	s.takeQuery("GET /event_subscriptions/{id}/sources", queryRule{unfiltered: "the sources of a subscription", why: "they are one per event kind at most, all on one page"})
	s.mux.Handle("GET /event_subscriptions/{id}/sources/{type}", s.authenticated(http.HandlerFunc(s.getSource)))
	s.mux.Handle("PATCH /event_subscriptions/{id}/sources/{type}", s.authenticated(http.HandlerFunc(s.updateSource)))
	s.mux.Handle("DELETE /event_subscriptions/{id}/sources/{type}", s.authenticated(http.HandlerFunc(s.deleteSource)))
}

// Errors of a change of a source, returned by the function given to
// UpdateSubscription so that nothing is written.
var (
	errSourceExists = errors.New("the subscription has a source of this kind")
	errNoSource     = errors.New("the subscription has no source of this kind")
)

// sourceEchoes are the members a body of a source's PATCH may hold to
// repeat its path, as the official API clients send them: the
// subscription's id and the source's type, neither of which can change.
var sourceEchoes = []pathEcho{
	{member: "subscription_id", param: "id", instead: "add the source to the other subscription (POST /event_subscriptions/{id}/sources), and delete this one"},
	{member: "type", param: "type", instead: "add a source of the other type, and delete this one"},
}

func (s *Server) createSource(w http.ResponseWriter, r *http.Request) {
	var in apiwire.SourceInput
	if e := decodeBody(w, r, &in, sourceEchoes[0]); e != nil {
		apiconv.WriteError(w, r, e)
		return
	}
	s.changeSource(w, r, http.StatusCreated, in.Type, func(sub *store.Subscription) error {
		if _, ok := sub.Source(in.Type); ok {
			return errSourceExists
		}
		sub.Sources = append(sub.Sources, store.Source{Type: in.Type, Filter: in.Filter, Fields: slices.Clone(in.Fields)})
		return nil
	})
}

func (s *Server) listSources(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	sub, err := s.subscriptions.GetSubscription(r.Context(), apiconv.RequestKey(r.Context()).AccountID, id)
	if err != nil {
		s.writeStoreError(w, r, err, subscriptionResource, id)
		return
	}
	list := apiwire.SourceList{Sources: make([]apiwire.Source, len(sub.Sources)), URI: s.resourceURI(r, subscriptionPath(id)+"/sources")}
	for i, src := range sub.Sources {
		list.Sources[i] = s.sourceResponse(r, id, src)
	}
	apiconv.WriteJSON(w, http.StatusOK, list)
}

func (s *Server) getSource(w http.ResponseWriter, r *http.Request) {
	id, kind := r.PathValue("id"), r.PathValue("type")
	sub, err := s.subscriptions.GetSubscription(r.Context(), apiconv.RequestKey(r.Context()).AccountID, id)
	if err != nil {
		s.writeStoreError(w, r, err, subscriptionResource, id)
		return
	}
	src, ok := sub.Source(kind)
	if !ok {
		apiconv.WriteError(w, r, noSource(id, kind))
		return
	}
	apiconv.WriteJSON(w, http.StatusOK, s.sourceResponse(r, id, src))
}

func (s *Server) updateSource(w http.ResponseWriter, r *http.Request) {
	kind := r.PathValue("type")
	var in apiwire.SourceUpdate
	if e := decodeBody(w, r, &in, sourceEchoes...); e != nil {
		apiconv.WriteError(w, r, e)
		return
	}
	s.changeSource(w, r, http.StatusOK, kind, func(sub *store.Subscription) error {
		i := slices.IndexFunc(sub.Sources, func(src store.Source) bool { return src.Type == kind })
		if i < 0 {
			return errNoSource
		}
		if in.Filter != nil {
			sub.Sources[i].Filter = *in.Filter
		}
		if in.Fields != nil {
			sub.Sources[i].Fields = slices.Clone(*in.Fields)
		}
		return nil
	})
}

func (s *Server) deleteSource(w http.ResponseWriter, r *http.Request) {
	kind := r.PathValue("type")
	s.changeSource(w, r, http.StatusNoContent, kind, func(sub *store.Subscription) error {
		i := slices.IndexFunc(sub.Sources, func(src store.Source) bool { return src.Type == kind })
		if i < 0 {
			return errNoSource
		}
		sub.Sources = slices.Delete(sub.Sources, i, i+1)
		return nil
	})
}

// changeSource applies change to the subscription of the request's id,
// publishes the subscription's audit event and answers with status and the
// source of kind (no body for 204).
func (s *Server) changeSource(w http.ResponseWriter, r *http.Request, status int, kind string, change func(*store.Subscription) error) {
	id := r.PathValue("id")
	audit := newAudit(s, r, auditSubscription, changeUpdated, func(sub store.Subscription) any { return s.subscriptionResponse(r, sub) })
	sub, err := s.subscriptions.UpdateSubscription(r.Context(), apiconv.RequestKey(r.Context()).AccountID, id, change, audit.option())
	switch {
	case errors.Is(err, errSourceExists):
		apiconv.WriteError(w, r, apiconv.NewError(apiconv.CodeSourceExists, "event subscription %s has a source of %s already; change it with PATCH %s", id, kind, sourcePath(id, kind)))
		return
	case errors.Is(err, errNoSource):
		apiconv.WriteError(w, r, noSource(id, kind))
		return
	case err != nil:
		s.writeStoreError(w, r, sourceField(err, kind), subscriptionResource, id)
		return
	}
	audit.publish()
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	src, _ := sub.Source(kind)
	apiconv.WriteJSON(w, status, s.sourceResponse(r, id, src))
}

func noSource(id, kind string) *apiconv.Error {
	return apiconv.NewError(apiconv.CodeResourceNotFound, "event subscription %s has no source %q; list its sources with GET %s/sources", id, kind, subscriptionPath(id))
}

// sourceField returns err with the field of a *store.ValidationError about
// the source of kind named as the body of a source request names it:
// "filter" rather than "sources[2].filter". Other errors are returned as
// they are.
func sourceField(err error, kind string) error {
	var invalid *store.ValidationError
	if !errors.As(err, &invalid) || !strings.HasPrefix(invalid.Field, "sources[") {
		return err
	}
	_, rest, ok := strings.Cut(invalid.Field, "].")
	if !ok {
		return err
	}
	scoped := *invalid
	scoped.Field = rest
	scoped.Msg = fmt.Sprintf("%s (source %s)", invalid.Msg, kind)
	return &scoped
}
