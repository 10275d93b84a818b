package api

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/pipeline"
)

func (s *Server) deleteDeadLetter(w http.ResponseWriter, r *http.Request) {
	letterID := r.PathValue("dead_letter_id")
	dest, ok := s.pathDestination(w, r)
	if !ok {
		return
	}
	seq, err := pipeline.ParseDeadLetterID(letterID)
	if err == nil {
		err = s.deadLetters.Delete(r.Context(), dest.AccountID, dest.ID, seq)
	}
	switch {
	case errors.Is(err, pipeline.ErrDeadLetterID), errors.Is(err, pipeline.ErrDeadLetterNotFound):
		apiconv.WriteError(w, r, apiconv.NewError(apiconv.CodeResourceNotFound, "destination %s has no dead letter %q: it was deleted, redriven or expired already, or the id is not one (%s followed by a number); list them with GET /event_destinations/%s/dead_letters", dest.ID, letterID, pipeline.DeadLetterIDPrefix, dest.ID))
	case err != nil:
		s.writeDeadLetterError(w, r, err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// deleteInput is the body of a bulk delete of dead letters: the fields
// set pick the letters; none picks every letter.
type deleteInput struct {
	SubscriptionID *string `json:"subscription_id"`
	Class          *string `json:"class"`
	EventID        *string `json:"event_id"`
	AfterID        *string `json:"after_id"`
}

// readDeleteInput reads the body of a bulk delete, which must be a JSON
// object, {} to delete every letter, so that no request deletes them all
// by leaving its body out.
func readDeleteInput(w http.ResponseWriter, r *http.Request) (pipeline.DeadLetterFilter, uint64, *apiconv.Error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		return pipeline.DeadLetterFilter{}, 0, bodyError(err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return pipeline.DeadLetterFilter{}, 0, apiconv.NewError(apiconv.CodeMalformedRequest, `the body is empty; send a JSON object of the letters to delete, such as {"class": "too_large"}, or {} to delete every dead letter of the destination`)
	}
	if media, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || media != mediaJSON {
		return pipeline.DeadLetterFilter{}, 0, apiconv.NewError(apiconv.CodeContentType, "Content-Type %q is not supported; send %s", r.Header.Get("Content-Type"), mediaJSON)
	}
	var in deleteInput
	if e := decodeObject(body, &in); e != nil {
		return pipeline.DeadLetterFilter{}, 0, e
	}
	var f pipeline.DeadLetterFilter
	for _, field := range []struct {
		name, prefix string
		value        *string
		into         *string
	}{
		{"subscription_id", "esb_", in.SubscriptionID, &f.SubscriptionID},
		{"event_id", "ev_", in.EventID, &f.EventID},
	} {
		if field.value == nil {
			continue
		}
		if !strings.HasPrefix(*field.value, field.prefix) || len(*field.value) == len(field.prefix) {
			return pipeline.DeadLetterFilter{}, 0, invalidField(field.name, "%s %q is not an id of the kind (%s...); send one, or leave %s out to match any", field.name, *field.value, field.prefix, field.name)
		}
		*field.into = *field.value
	}
	if in.Class != nil {
		if !slices.Contains(pipeline.DeadLetterClasses, *in.Class) {
			return pipeline.DeadLetterFilter{}, 0, invalidField("class", "class %q is not a class of dead letters; send one of %s, or leave class out to match any", *in.Class, strings.Join(pipeline.DeadLetterClasses, ", "))
		}
		f.Class = *in.Class
	}
	var after uint64
	if in.AfterID != nil {
		seq, err := pipeline.ParseDeadLetterID(*in.AfterID)
		if err != nil {
			return pipeline.DeadLetterFilter{}, 0, invalidField("after_id", "after_id %q is not a dead letter id (%s followed by a number); send the next_after_id of the previous delete, or leave after_id out to start from the oldest letter", *in.AfterID, pipeline.DeadLetterIDPrefix)
		}
		after = seq
	}
	return f, after, nil
}

// invalidField is a 400 about a field of the body, named in details.field.
func invalidField(field, format string, args ...any) *apiconv.Error {
	e := apiconv.NewError(apiconv.CodeInvalidField, format, args...)
	e.Details = map[string]string{"field": field}
	return e
}

func (s *Server) deleteDeadLetters(w http.ResponseWriter, r *http.Request) {
	f, after, e := readDeleteInput(w, r)
	if e != nil {
		apiconv.WriteError(w, r, e)
		return
	}
	dest, ok := s.pathDestination(w, r)
	if !ok {
		return
	}
	report, err := s.deadLetters.DeleteMatching(r.Context(), dest.AccountID, dest.ID, f, after)
	if err != nil {
		s.writeDeadLetterError(w, r, err)
		return
	}
	body := apiwire.DeadLetterDeletion{Deleted: report.Deleted, Remaining: int(report.Remaining)}
	if report.Next > 0 {
		next := pipeline.DeadLetterID(report.Next)
		body.NextAfterID = &next
	}
	apiconv.WriteJSON(w, http.StatusOK, body)
}
