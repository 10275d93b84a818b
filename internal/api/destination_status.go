package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks"
)

// DeliveryStatus reads the delivery status of destinations, merged from
// every sluice process that writes to them. *pipeline.StatusReader
// implements it.
type DeliveryStatus interface {
	// DestinationStatus returns the status of a destination of an
	// account, or the error of JetStream when it cannot be read.
	DestinationStatus(ctx context.Context, accountID, destinationID string) (pipeline.DestinationStatus, error)
}

// DestinationTrial writes one record to a destination now, without
// retries, with the sink delivery uses. *pipeline.Trial implements it.
type DestinationTrial interface {
	// Write writes rec to d and returns the outcome; every failure is in
	// the result.
	Write(ctx context.Context, d store.Destination, rec sinks.Record) pipeline.TrialResult
}

// trialEventType is the kind of the event POST /event_destinations/{id}/test
// writes: an event_destination_updated.v0 envelope whose object is the
// destination as it is (secret null), so that it is a valid event of a
// kind readers of the destination already know, rather than a kind of its
// own that no catalogue or consumer knows.
const trialEventType = auditDestination + "_" + changeUpdated + ".v0"

// routeDestinationStatus registers GET /event_destinations/{id}/status and
// POST /event_destinations/{id}/test, each when its dependency is set.
func (s *Server) routeDestinationStatus() {
	if s.deliveryStatus != nil {
		s.mux.Handle("GET /event_destinations/{id}/status", s.authenticated(http.HandlerFunc(s.getDestinationStatus)))
	}
	if s.destinationTrial != nil {
		s.mux.Handle("POST /event_destinations/{id}/test", s.authenticated(http.HandlerFunc(s.testDestination)))
	}
}

// optional returns nil for "", else &v.
func optional(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

func (s *Server) getDestinationStatus(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	account := apiconv.RequestKey(r.Context()).AccountID
	if _, err := s.destinations.GetDestination(r.Context(), account, id); err != nil {
		s.writeStoreError(w, r, err, destinationResource, id)
		return
	}
	st, err := s.deliveryStatus.DestinationStatus(r.Context(), account, id)
	if err != nil {
		s.log.Error("reading delivery status failed", "operation_id", apiconv.OperationID(r.Context()), "destination_id", id, "error", err)
		w.Header().Set("Retry-After", "1")
		apiconv.WriteError(w, r, apiconv.NewError(apiconv.CodeStatusUnavailable, "sluice cannot read the delivery status from JetStream right now; retry shortly"))
		return
	}
	body := apiwire.DestinationStatus{State: st.State, EventsPending: st.EventsPending, EventsDeadLettered: st.EventsDeadLettered}
	if !st.LastSuccessAt.IsZero() {
		body.LastSuccessAt = optional(st.LastSuccessAt.UTC().Format(createdAtLayout))
	}
	if e := st.LastError; e != nil {
		body.LastError = &apiwire.DeliveryError{Class: e.Class, Code: optional(e.Code), Message: e.Message, At: e.At.UTC().Format(createdAtLayout)}
	}
	apiconv.WriteJSON(w, http.StatusOK, body)
}

func (s *Server) testDestination(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	key := apiconv.RequestKey(r.Context())
	d, err := s.destinations.GetDestination(r.Context(), key.AccountID, id)
	if err != nil {
		s.writeStoreError(w, r, err, destinationResource, id)
		return
	}
	ev, err := s.auditEvent(r, trialEventType, key, s.destinationAudit(r, d))
	if err != nil {
		// A bug: the API's own resources must fit the catalogue.
		s.log.Error("test event does not fit the catalogue", "operation_id", apiconv.OperationID(r.Context()), "error", err)
		apiconv.WriteError(w, r, apiconv.NewError(apiconv.CodeInternal, "sluice failed unexpectedly; report operation id %s", apiconv.OperationID(r.Context())))
		return
	}
	rec := sinks.Record{ID: ev.ID, Data: ev.Data, Timestamp: time.Now()}
	if head, _, err := schemas.ReadHeader(ev.Data); err == nil {
		rec.Timestamp = head.Timestamp
	}
	res := s.destinationTrial.Write(r.Context(), d, rec)
	// The services' messages do not quote secrets; make sure of it.
	if secret := d.Target.Auth().Creds; secret != nil && secret.SecretAccessKey != "" {
		res.Message = strings.ReplaceAll(res.Message, secret.SecretAccessKey, "[redacted]")
	}
	s.log.Info("destination tested", "operation_id", apiconv.OperationID(r.Context()), "destination_id", id, "event_id", ev.ID, "result", res.Result, "class", res.Class, "code", res.Code)
	apiconv.WriteJSON(w, http.StatusOK, apiwire.DestinationTest{
		Result:     res.Result,
		Class:      optional(res.Class),
		Code:       optional(res.Code),
		Message:    optional(res.Message),
		DurationMS: res.Duration.Milliseconds(),
	})
}
