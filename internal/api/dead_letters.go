package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
)

// DeadLetters reads, redrives and deletes the dead letters of
// destinations. *pipeline.Redriver implements it.
type DeadLetters interface {
	// List returns at most limit dead letters of the destination with a
	// sequence below before (0: from the newest), newest first, and
	// whether older ones remain.
	List(ctx context.Context, accountID, destinationID string, before uint64, limit int) ([]pipeline.DeadLetter, bool, error)
	// Redrive sends the dead letters of dest at seqs (none: all) to it
	// again, removing those it accepts.
	Redrive(ctx context.Context, dest store.Destination, seqs []uint64) (pipeline.RedriveReport, error)
	// Delete removes the dead letter of the destination at seq, or
	// returns an error wrapping pipeline.ErrDeadLetterNotFound.
	Delete(ctx context.Context, accountID, destinationID string, seq uint64) error
	// DeleteMatching removes the destination's dead letters that f
	// picks, after the sequence after, examining at most
	// pipeline.MaxDeleteScan.
	DeleteMatching(ctx context.Context, accountID, destinationID string, f pipeline.DeadLetterFilter, after uint64) (pipeline.DeleteReport, error)
}

// routeDeadLetters registers the dead-letter routes of destinations.
func (s *Server) routeDeadLetters() {
	s.mux.Handle("GET /event_destinations/{id}/dead_letters", s.authenticated(http.HandlerFunc(s.listDeadLetters)))
	s.takeQuery("GET /event_destinations/{id}/dead_letters", queryRule{takes: []string{"limit", "before_id"},
		unfiltered: "the dead letters of a destination", why: "they are read one by one by sequence, and a filter would read them all"})
	s.mux.Handle("POST /event_destinations/{id}/dead_letters/redrive", s.authenticated(http.HandlerFunc(s.redriveDeadLetters)))
	s.mux.Handle("DELETE /event_destinations/{id}/dead_letters/{dead_letter_id}", s.authenticated(http.HandlerFunc(s.deleteDeadLetter)))
	s.mux.Handle("POST /event_destinations/{id}/dead_letters/delete", s.authenticated(http.HandlerFunc(s.deleteDeadLetters)))
}

// deadLetterResponse is the dead letter d as the API returns it: its Event
// is the stored envelope, null when the stored bytes are not JSON.
func deadLetterResponse(d pipeline.DeadLetter) apiwire.DeadLetter {
	return apiwire.DeadLetter{
		ID:             d.ID(),
		EventID:        d.EventID,
		SubscriptionID: d.SubscriptionID,
		Class:          d.Class,
		Code:           d.Code,
		Message:        d.Message,
		Attempts:       d.Attempts,
		FirstFailureAt: d.FirstFailure.UTC().Format(createdAtLayout),
		DeadLetteredAt: d.DeadLetteredAt.UTC().Format(createdAtLayout),
		Event:          d.EventJSON(),
	}
}

// readDeadLetterPage reads ?limit= and ?before_id=, a dead letter id.
func readDeadLetterPage(r *http.Request) (limit int, before uint64, e *apiconv.Error) {
	q := r.URL.Query()
	limit = store.DefaultPageLimit
	if raw, ok := q["limit"]; ok {
		n, err := strconv.Atoi(raw[0])
		if err != nil || n < 1 || n > store.MaxPageLimit || len(raw) > 1 {
			return 0, 0, badParameter("limit", "?limit=%s is not a whole number from 1 to %d; send one, or leave limit out for %d", strings.Join(raw, ","), store.MaxPageLimit, store.DefaultPageLimit)
		}
		limit = n
	}
	if raw, ok := q["before_id"]; ok {
		seq, err := pipeline.ParseDeadLetterID(raw[0])
		if err != nil || len(raw) > 1 {
			return 0, 0, badParameter("before_id", "?before_id=%s is not a dead letter id (%s followed by a number); use the next_page_uri the list returned", strings.Join(raw, ","), pipeline.DeadLetterIDPrefix)
		}
		before = seq
	}
	return limit, before, nil
}

func (s *Server) listDeadLetters(w http.ResponseWriter, r *http.Request) {
	limit, before, e := readDeadLetterPage(r)
	if e != nil {
		apiconv.WriteError(w, r, e)
		return
	}
	dest, ok := s.pathDestination(w, r)
	if !ok {
		return
	}
	letters, more, err := s.deadLetters.List(r.Context(), dest.AccountID, dest.ID, before, limit)
	if err != nil {
		s.writeDeadLetterError(w, r, err)
		return
	}
	list := apiwire.Page[apiwire.DeadLetter]{Key: "dead_letters", Items: make([]apiwire.DeadLetter, len(letters))}
	for i, d := range letters {
		list.Items[i] = deadLetterResponse(d)
	}
	list.URI = s.resourceURI(r, r.URL.Path)
	if r.URL.RawQuery != "" {
		list.URI += "?" + r.URL.RawQuery
	}
	if more {
		q := url.Values{"limit": {strconv.Itoa(limit)}, "before_id": {letters[len(letters)-1].ID()}}
		next := s.resourceURI(r, r.URL.Path) + "?" + q.Encode()
		list.NextPageURI = &next
	}
	apiconv.WriteJSON(w, http.StatusOK, list)
}

// redriveInput is the body of a redrive: the ids of the letters to send,
// or none for all.
type redriveInput struct {
	IDs *[]string `json:"ids"`
}

// readRedriveInput reads the optional body of a redrive and returns the
// sequences it names, nil for all.
func readRedriveInput(w http.ResponseWriter, r *http.Request) ([]uint64, *apiconv.Error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		return nil, bodyError(err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	if media, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || media != mediaJSON {
		return nil, apiconv.NewError(apiconv.CodeContentType, "Content-Type %q is not supported for a body; send %s, or no body to redrive every dead letter", r.Header.Get("Content-Type"), mediaJSON)
	}
	var in redriveInput
	if e := decodeObject(body, &in); e != nil {
		return nil, e
	}
	if in.IDs == nil {
		return nil, nil
	}
	ids := *in.IDs
	if len(ids) == 0 || len(ids) > pipeline.MaxRedrive {
		e := apiconv.NewError(apiconv.CodeInvalidField, "ids holds %d ids; send from 1 to %d, or leave ids out to redrive every dead letter", len(ids), pipeline.MaxRedrive)
		e.Details = map[string]string{"field": "ids"}
		return nil, e
	}
	seqs := make([]uint64, len(ids))
	for i, id := range ids {
		seq, err := pipeline.ParseDeadLetterID(id)
		if err != nil {
			e := apiconv.NewError(apiconv.CodeInvalidField, "ids[%d] %q is not a dead letter id (%s followed by a number); use the ids GET /event_destinations/{id}/dead_letters lists", i, id, pipeline.DeadLetterIDPrefix)
			e.Details = map[string]string{"field": fmt.Sprintf("ids[%d]", i)}
			return nil, e
		}
		seqs[i] = seq
	}
	return seqs, nil
}

func (s *Server) redriveDeadLetters(w http.ResponseWriter, r *http.Request) {
	seqs, e := readRedriveInput(w, r)
	if e != nil {
		apiconv.WriteError(w, r, e)
		return
	}
	dest, ok := s.pathDestination(w, r)
	if !ok {
		return
	}
	report, err := s.deadLetters.Redrive(r.Context(), dest, seqs)
	if err != nil {
		s.writeDeadLetterError(w, r, err)
		return
	}
	body := apiwire.Redrive{Redriven: report.Redriven, Failed: report.Failed, Remaining: int(report.Remaining), Failures: make([]apiwire.RedriveFailure, len(report.Failures))}
	for i, f := range report.Failures {
		body.Failures[i] = apiwire.RedriveFailure{ID: pipeline.DeadLetterID(f.Seq), Class: f.Class, Code: f.Code, Message: f.Message}
	}
	apiconv.WriteJSON(w, http.StatusOK, body)
}

// writeDeadLetterError answers a failure to read or change SLUICE_DLQ.
func (s *Server) writeDeadLetterError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client went away
	}
	s.log.Error("dead letters failed", "operation_id", apiconv.OperationID(r.Context()), "method", r.Method, "path", r.URL.Path, "error", err)
	w.Header().Set("Retry-After", "1")
	apiconv.WriteError(w, r, apiconv.NewError(apiconv.CodeDLQUnavailable, "sluice cannot read or change the dead-letter stream right now; retry shortly"))
}

// pathDestination returns the destination the path's {id} names in the
// key's account, or writes why there is none and returns false.
func (s *Server) pathDestination(w http.ResponseWriter, r *http.Request) (store.Destination, bool) {
	id := r.PathValue("id")
	dest, err := s.destinations.GetDestination(r.Context(), apiconv.RequestKey(r.Context()).AccountID, id)
	if err != nil {
		s.writeStoreError(w, r, err, destinationResource, id)
		return store.Destination{}, false
	}
	return dest, true
}
