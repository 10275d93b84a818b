package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// principalSource is the principal's source of every change made through
// the API.
const principalSource = "API"

// Kinds of audit events, by resource family; the suffix says the change.
const (
	auditAPIKey       = "api_key"
	auditCredential   = "tunnel_credential"
	auditDestination  = "event_destination"
	auditSubscription = "event_subscription"
)

// Changes an audit event reports.
const (
	changeCreated = "created"
	changeUpdated = "updated"
	changeDeleted = "deleted"
)

// auditing is the audit event of one change a request makes. The store
// builds it, through option, when it writes the change, and stores both
// together or neither (store.WithAudit): the event waits in the store's
// outbox. Once the change is made, publish sends it to SLUICE_EVENTS right
// away; if that fails, or the process dies first, an AuditRelay (in every
// process serving the API) publishes it a little later. So no change is
// ever without its audit event.
type auditing[T any] struct {
	s      *Server
	r      *http.Request
	kind   string
	object func(T) any // the event's object: the resource in the API's JSON shape, secrets null
	// from returns the resource the store hands the event as a T, false
	// if it is none; by default the resource is a T.
	from  func(resource any) (T, bool)
	event schemas.Encoded
}

// newAudit returns the auditing of a change of family, such as
// ("event_destination", "created"), whose object is object(resource) with
// resource as it is after the change (before it, for a deletion). The
// principal is the API key of the request.
func newAudit[T any](s *Server, r *http.Request, family, change string, object func(T) any) *auditing[T] {
	from := func(resource any) (T, bool) {
		v, ok := resource.(T)
		return v, ok
	}
	return &auditing[T]{s: s, r: r, kind: family + "_" + change + ".v0", object: object, from: from}
}

// option is the store's option that writes the event with the change.
func (a *auditing[T]) option() store.WriteOption {
	return store.WithAudit(func(resource any) (schemas.Encoded, error) {
		v, ok := a.from(resource)
		if !ok {
			return schemas.Encoded{}, fmt.Errorf("audit event %s: the store gave a %T", a.kind, resource)
		}
		ev, err := a.s.auditEvent(a.r, a.kind, apiconv.RequestKey(a.r.Context()), a.object(v))
		if err != nil {
			// A bug: the API's own resources must fit the catalogue.
			a.s.log.Error("audit event does not fit the catalogue", "operation_id", apiconv.OperationID(a.r.Context()), "event_type", a.kind, "error", err)
			return schemas.Encoded{}, err
		}
		a.event = ev
		return ev, nil
	})
}

// publish sends the event of the change just made to SLUICE_EVENTS and
// takes it out of the outbox, trying once for at most Config.AuditTimeout
// (which runs on after the client hangs up). If that fails, the event stays
// in the outbox for the relay: it is logged and counted in
// sluice_audit_events_failed_total, and the request does not fail, as
// its change was made with its event.
//
// The event the store last built may not have been written: a change that
// found nothing to change writes nothing, and one whose compare-and-swap
// was lost is built again. So publish sends only an event that waits in
// the outbox, and nothing for a change that was not made.
func (a *auditing[T]) publish() {
	s, ev := a.s, a.event
	if ev.ID == "" {
		return // nothing was built: nothing changed
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.r.Context()), s.cfg.AuditTimeout)
	defer cancel()
	if s.outbox != nil {
		if pending, err := s.outbox.AuditPending(ctx, ev.ID); err == nil && !pending {
			return // not written with a change, or published already
		}
	}
	err := s.publisher.PublishEncoded(ctx, []schemas.Encoded{ev})[0].Err
	if err == nil && s.outbox != nil {
		err = s.outbox.AuditPublished(ctx, ev.ID)
	}
	if err != nil {
		s.log.Warn("audit event left in the outbox for the relay", "operation_id", apiconv.OperationID(a.r.Context()), "event_type", a.kind, "event_id", ev.ID, "error", err)
		s.metrics.auditFailed.WithLabelValues(a.kind).Inc()
		return
	}
	s.metrics.audited.WithLabelValues(a.kind).Inc()
}

// auditEvent returns the audit event of kind made by key, validated.
func (s *Server) auditEvent(r *http.Request, kind string, key store.APIKey, object any) (schemas.Encoded, error) {
	obj, err := json.Marshal(object)
	if err != nil {
		return schemas.Encoded{}, err
	}
	principal, err := json.Marshal(s.principal(r, key))
	if err != nil {
		return schemas.Encoded{}, err
	}
	// The kinds of sluice's own resources are refused at ingest: only this
	// way makes them.
	return s.catalogue.EncodeBySluice(schemas.Event{Type: kind, AccountID: key.AccountID, Principal: principal, Object: obj})
}

// principal is the API key as the principal of a change: its id, its
// description as the subject (the id when it has none), and the key as the
// credential used.
func (s *Server) principal(r *http.Request, key store.APIKey) schemas.Principal {
	subject := key.Description
	if subject == "" {
		subject = key.ID
	}
	return schemas.Principal{
		ID:         key.ID,
		Subject:    subject,
		Source:     principalSource,
		Credential: schemas.Ref{ID: key.ID, URI: s.resourceURI(r, "/api_keys/"+key.ID)},
	}
}
