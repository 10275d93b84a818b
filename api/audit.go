package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/store"
)

// principalSource is the principal's source of every change made through
// the API.
const principalSource = "API"

// Kinds of audit events, by resource family; the suffix says the change.
const (
	auditAPIKey       = "api_key"
	auditDestination  = "event_destination"
	auditSubscription = "event_subscription"
)

// Changes an audit event reports.
const (
	changeCreated = "created"
	changeUpdated = "updated"
	changeDeleted = "deleted"
)

// audit stores the audit event of a change the request made, such as
// ("event_destination", "created"), whose object is the resource as it was
// after the change (before it, for a deletion) in the JSON shape of the
// API, with secrets null. The principal is the API key of the request.
//
// The change is made when audit runs, so it does not fail the request: an
// event JetStream does not store within Config.AuditTimeout (which runs on
// after the client hangs up) is logged, with its
// id and object, and counted in sluice_audit_events_failed_total.
func (s *Server) audit(r *http.Request, family, change string, object any) {
	kind := family + "_" + change + ".v0"
	key := apiKey(r.Context())
	log := s.log.With("operation_id", operationID(r.Context()), "event_type", kind, "account_id", key.AccountID)
	ev, err := s.auditEvent(r, kind, key, object)
	if err != nil {
		// A bug: the API's own resources must fit the catalogue.
		log.Error("audit event does not fit the catalogue", "error", err)
		s.metrics.auditFailed.WithLabelValues(kind).Inc()
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.cfg.AuditTimeout)
	defer cancel()
	policy := backoff.WithContext(backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(50*time.Millisecond),
		backoff.WithMaxInterval(2*time.Second),
		backoff.WithMaxElapsedTime(0), // the context bounds it
	), ctx)
	err = backoff.Retry(func() error {
		// The same event id each time: a publish that was stored but whose
		// ack was lost is not stored twice.
		res := s.publisher.PublishEncoded(ctx, []schemas.Encoded{ev})[0]
		if res.Err != nil && !errors.Is(res.Err, producer.ErrNotStored) {
			return backoff.Permanent(res.Err)
		}
		return res.Err
	}, policy)
	if err != nil {
		log.Error("audit event not stored", "event_id", ev.ID, "object", json.RawMessage(eventObject(ev)), "error", err)
		s.metrics.auditFailed.WithLabelValues(kind).Inc()
		return
	}
	s.metrics.audited.WithLabelValues(kind).Inc()
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

// eventObject returns the object of a stored event, for the log line of an
// event that could not be stored.
func eventObject(ev schemas.Encoded) []byte {
	var envelope struct {
		Object json.RawMessage `json:"object"`
	}
	if json.Unmarshal(ev.Data, &envelope) != nil {
		return []byte("null")
	}
	return envelope.Object
}
