package ingest

import (
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// ingest serves POST /events: admit the request through the front door,
// then validate the whole batch and store it. A request beyond the
// process's bounds (requests or body bytes in flight) is refused at once
// with 503, one beyond its account's share with 429, both with
// Retry-After, so that slow or large bodies pile up neither in memory nor
// in front of other accounts.
func (h *Handler) ingest(w http.ResponseWriter, r *http.Request) {
	t, ok := h.door.Admit(w, r)
	if !ok {
		return
	}
	defer t.Release()
	if e := h.ingestBatch(w, r, t); e != nil {
		apiconv.WriteError(w, r, e)
	}
}

// ingestBatch reads, validates and stores the batch of r, and sends the 202
// answer; it returns the error to send instead.
func (h *Handler) ingestBatch(w http.ResponseWriter, r *http.Request, t *apiconv.Ticket) *apiconv.Error {
	ndjson, e := ingestFraming(r.Header.Get("Content-Type"))
	if e != nil {
		return e
	}
	body, e := h.door.ReadBody(w, r, t)
	if e != nil {
		return e
	}
	key := apiconv.RequestKey(r.Context())
	batch, err := h.catalogue.DecodeBatch(body, schemas.DecodeOptions{
		AccountID:     key.AccountID,
		NDJSON:        ndjson,
		MaxEvents:     h.cfg.MaxEvents,
		MaxEventBytes: h.cfg.MaxEventBytes,
	})
	if err != nil {
		return decodeError(err)
	}
	if n := len(batch.Errors); n > 0 {
		h.metrics.rejected.WithLabelValues("invalid").Add(float64(n + len(batch.Events)))
		e := apiconv.NewError(apiconv.CodeInvalidEvents, "%d of %d events are invalid, so none was stored; details.errors says what is wrong with each: fix them and send the whole batch again", n, n+len(batch.Events))
		e.Details = map[string]string{"errors": apiconv.DetailJSON(batch.Errors)}
		return e
	}

	results := h.publisher.PublishEncoded(r.Context(), batch.Events)
	h.countStored(batch.Events, results)
	resp := response{EventIDs: make([]string, len(results))}
	var failed, tooLarge []int // indexes of events not stored
	for i, res := range results {
		resp.EventIDs[i] = res.EventID
		switch {
		case errors.Is(res.Err, nats.ErrMaxPayload):
			tooLarge = append(tooLarge, i)
		case res.Err != nil:
			failed = append(failed, i)
		case res.Duplicate:
			resp.Duplicates++
		default:
			resp.Stored++
		}
	}
	h.metrics.rejected.WithLabelValues("too_large").Add(float64(len(tooLarge)))
	h.metrics.rejected.WithLabelValues("unavailable").Add(float64(len(failed)))
	if len(tooLarge) > 0 {
		i := tooLarge[0]
		e := apiconv.NewError(apiconv.CodeEventTooLarge, "event %d (%s) is %d bytes in its envelope, more than the NATS server accepts (its max_payload), and was not stored; neither were %d other events of the batch. Make it smaller, then send the batch again with the ids in details.event_ids: within the stream's 2-minute duplicate window, events already stored are not stored twice", i, resp.EventIDs[i], len(batch.Events[i].Data), len(tooLarge)-1+len(failed))
		e.Details = map[string]string{"event_ids": apiconv.DetailJSON(resp.EventIDs)}
		return e
	}
	if len(failed) > 0 {
		firstErr := results[failed[0]].Err
		h.log.Warn("storing events", "operation_id", apiconv.OperationID(r.Context()), "failed", len(failed), "of", len(results), "error", firstErr)
		if apiconv.StorageError(r.Context(), h.storage, firstErr) != nil {
			e := apiconv.StorageFull(w, fmt.Sprintf("%d of %d events were not stored (details.event_ids lists the batch's ids)", len(failed), len(results)))
			e.Details = map[string]string{"event_ids": apiconv.DetailJSON(resp.EventIDs)}
			return e
		}
		w.Header().Set("Retry-After", "1")
		e := apiconv.NewError(apiconv.CodeUnavailable, "JetStream did not store %d of %d events (%v); send the batch again with the event ids in details.event_ids: within the stream's 2-minute duplicate window, events already stored are not stored twice", len(failed), len(results), firstErr)
		e.Details = map[string]string{"event_ids": apiconv.DetailJSON(resp.EventIDs)}
		return e
	}
	apiconv.WriteJSON(w, http.StatusAccepted, resp)
	return nil
}

// countStored adds the batch to the metrics, one update per event type.
func (h *Handler) countStored(events []schemas.Encoded, results []producer.Result) {
	stored := map[string]int{}
	unknown := map[string]int{}
	duplicates := 0
	for i := range events {
		switch {
		case results[i].Err != nil:
			continue
		case results[i].Duplicate:
			duplicates++
		default:
			stored[events[i].Type]++
			// Only stored events count: a duplicate's fields were counted
			// when it was stored.
			unknown[events[i].Type] += events[i].UnknownFields
		}
	}
	for t, n := range stored {
		h.metrics.events.WithLabelValues(t).Add(float64(n))
	}
	for t, n := range unknown {
		if n == 0 {
			continue
		}
		h.metrics.unknown.WithLabelValues(t).Add(float64(n))
	}
	h.metrics.duplicates.Add(float64(duplicates))
}

// ingestFraming tells a JSON array body from an NDJSON one by Content-Type.
func ingestFraming(contentType string) (ndjson bool, e *apiconv.Error) {
	media, _, err := mime.ParseMediaType(contentType)
	switch {
	case err == nil && media == mediaJSON:
		return false, nil
	case err == nil && (media == mediaNDJSON || media == "application/ndjson" || media == "application/jsonl"):
		return true, nil
	case contentType == "":
		return false, apiconv.NewError(apiconv.CodeContentType, "the Content-Type header is missing; send %s (a JSON array of events) or %s (one event per line)", mediaJSON, mediaNDJSON)
	}
	return false, apiconv.NewError(apiconv.CodeContentType, "Content-Type %q is not supported; send %s (a JSON array of events) or %s (one event per line)", contentType, mediaJSON, mediaNDJSON)
}

// decodeError maps a whole-batch decoding error to the API's error.
func decodeError(err error) *apiconv.Error {
	var syntax *schemas.SyntaxError
	var limit *schemas.LimitError
	switch {
	case errors.Is(err, schemas.ErrEmptyBatch):
		return apiconv.NewError(apiconv.CodeEmptyBatch, "%v", err)
	case errors.As(err, &limit) && limit.Index >= 0:
		return apiconv.NewError(apiconv.CodeEventTooLarge, "%v", err)
	case errors.As(err, &limit):
		return apiconv.NewError(apiconv.CodeTooManyEvents, "%v", err)
	case errors.As(err, &syntax):
		return apiconv.NewError(apiconv.CodeMalformedBody, "%v; nothing was stored", err)
	}
	return apiconv.NewError(apiconv.CodeMalformedBody, "%v", err)
}
