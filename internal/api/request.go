package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/strictjson"
	"github.com/sluicehq/sluice/schemas"
)

// mediaJSON is the media type of management request bodies.
const mediaJSON = "application/json"

// maxRequestBytes bounds the body of a management request (not of ingest).
const maxRequestBytes = 1 << 20

// decodeBody reads the JSON object of a management request into v,
// strictly: the Content-Type must be JSON, the body at most 1 MiB, and it
// must hold exactly one JSON object whose members are all fields of v,
// named exactly (encoding/json alone would take "DESCRIPTION" for
// "description") and each once (it would keep the last of two), each of the
// right type. It returns the API error to send otherwise.
//
// Members named by echoes may repeat a value of the request's path, as
// the official API clients repeat the id of the resource they update:
// each is taken when it is the path's value (or null) and then dropped,
// and refused otherwise (pathEcho).
func decodeBody(w http.ResponseWriter, r *http.Request, v any, echoes ...pathEcho) *apiconv.Error {
	return decodeInput(w, r, v, nil, echoes...)
}

// decodeInput is decodeBody of a body that takes only the fields of v
// named by takes, nil for all: a member of another field of v is an
// unknown field, as if v had no such field, such as a field of an input
// type of package apiwire that an update takes but a create does not.
func decodeInput(w http.ResponseWriter, r *http.Request, v any, takes []string, echoes ...pathEcho) *apiconv.Error {
	contentType := r.Header.Get("Content-Type")
	if media, _, err := mime.ParseMediaType(contentType); err != nil || media != mediaJSON {
		if contentType == "" {
			return apiconv.NewError(apiconv.CodeContentType, "the Content-Type header is missing; send %s", mediaJSON)
		}
		return apiconv.NewError(apiconv.CodeContentType, "Content-Type %q is not supported; send %s", contentType, mediaJSON)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		return bodyError(err)
	}
	sent := make([]echoed, len(echoes))
	for i, e := range echoes {
		sent[i] = echoed{pathEcho: e, value: r.PathValue(e.param)}
	}
	return decodeFields(body, v, takes, sent...)
}

// pathEcho is a member of a body that repeats a value of the request's
// path, such as the id of the resource a PATCH updates, or the edge_id of
// a route: a member no body type has, which decodeBody takes when it
// equals the path's value and refuses otherwise, with 400
// ERR_SLUICE_340, since what a path names cannot be changed.
type pathEcho struct {
	member  string // the body's member, such as "id"
	param   string // the path's wildcard it repeats, such as "id"
	instead string // what to do to change it, such as "create the route on the other edge"; "": no way
}

// echoed is a pathEcho with the value of the request's path.
type echoed struct {
	pathEcho
	value string
}

// decodeObject decodes body into v as decodeBody does.
func decodeObject(body []byte, v any, echoes ...echoed) *apiconv.Error {
	return decodeFields(body, v, nil, echoes...)
}

// decodeFields decodes body into v as decodeInput does, with
// strictjson.Decode, the echoes' members as its extra members.
func decodeFields(body []byte, v any, takes []string, echoes ...echoed) *apiconv.Error {
	opts := strictjson.Options{Takes: takes, CheckText: schemas.CheckJSON}
	if len(echoes) > 0 {
		opts.Extra = make([]string, len(echoes))
		for i, e := range echoes {
			opts.Extra[i] = e.member
		}
		opts.Echo = func(member string, sent *string) error {
			for _, e := range echoes {
				if e.member == member && sent != nil && *sent != e.value {
					return e.changed(*sent)
				}
			}
			return nil
		}
	}
	if err := strictjson.Decode(body, v, opts); err != nil {
		return strictError(err)
	}
	return nil
}

// strictError turns an error of strictjson.Decode into the API error
// saying what is wrong with the body: a *strictjson.Error, or the *apiconv.Error
// of an echo whose member is not the path's value.
func strictError(err error) *apiconv.Error {
	var (
		e      *strictjson.Error
		answer *apiconv.Error
	)
	if !errors.As(err, &e) {
		if errors.As(err, &answer) {
			return answer
		}
		return bodyError(err)
	}
	switch e.Kind {
	case strictjson.NotObject:
		return apiconv.NewError(apiconv.CodeMalformedRequest, "the body is not a JSON object (it starts with %q); send one, such as {\"description\": \"...\"}", []byte{e.Start})
	case strictjson.Trailing:
		return apiconv.NewError(apiconv.CodeMalformedRequest, "the body holds more than one JSON value (trailing data after byte %d); send a single JSON object", e.Offset)
	case strictjson.Duplicate:
		return withField(apiconv.NewError(apiconv.CodeMalformedRequest, "field %s appears twice; send it once", e.Member), e.Member)
	case strictjson.UnknownMember, strictjson.SameButCase:
		hint := ""
		if e.Kind == strictjson.SameButCase {
			hint = fmt.Sprintf(" (did you mean %q? field names are case-sensitive)", e.Candidate)
		}
		return withField(apiconv.NewError(apiconv.CodeUnknownField, "unknown field %q%s; remove it (see docs/openapi.yaml for the fields this call takes)", e.Member, hint), e.Member)
	case strictjson.WrongType, strictjson.OutOfRange:
		return withField(apiconv.NewError(apiconv.CodeWrongType, "field %s: expected %s, got %s", e.Member, e.Want, e.Got), e.Member)
	case strictjson.BadText:
		return textError(e.Err)
	case strictjson.TooDeep:
		return withField(apiconv.NewError(apiconv.CodeMalformedRequest, "field %s nests deeper than %d levels; no field of this API nests so deep", e.Member, strictjson.MaxDepth), e.Member)
	}
	return bodyError(e.Err)
}

// withField returns e with the member at fault as its details.field.
func withField(e *apiconv.Error, member string) *apiconv.Error {
	e.Details = map[string]string{"field": member}
	return e
}

// changed is the 400 ERR_SLUICE_340 of a body whose member of the echo is
// sent, a value other than the path's.
func (e echoed) changed(sent string) *apiconv.Error {
	how := "send the path's value, or leave the field out"
	if e.instead != "" {
		how += "; to change it, " + e.instead
	}
	err := apiconv.NewError(apiconv.CodeFieldFixed, "field %q is %q, but the path names %q, and it cannot be changed: %s", e.member, sent, e.value, how)
	err.Details = map[string]string{"field": e.member}
	return err
}

// textError turns an error of schemas.CheckJSON, which refuses, as
// ingest refuses them, the bodies encoding/json would read other than as
// sent (invalid UTF-8 and lone surrogates, which it reads as U+FFFD, so
// that two names would be stored the same, and numbers beyond float64's
// range), into the API error saying so.
func textError(err error) *apiconv.Error {
	var (
		syntax *schemas.SyntaxError
		field  *schemas.FieldError
	)
	switch {
	case errors.As(err, &syntax):
		return apiconv.NewError(apiconv.CodeMalformedRequest, "the body is not well-formed JSON at byte %d: %s; send text in UTF-8", syntax.Offset, syntax.Msg)
	case errors.As(err, &field):
		e := apiconv.NewError(apiconv.CodeMalformedRequest, "field %s", field.Error())
		e.Details = map[string]string{"field": field.Path}
		return e
	}
	return apiconv.NewError(apiconv.CodeMalformedRequest, "the body cannot be read: %v", err)
}

// bodyError turns an error of reading the body or of json.Decoder.Decode
// into the API error saying what is wrong with the body.
func bodyError(err error) *apiconv.Error {
	var (
		syntax    *json.SyntaxError
		wrongType *json.UnmarshalTypeError
		tooLarge  *http.MaxBytesError
		cut       *apiconv.Error
	)
	switch {
	case errors.As(err, &cut):
		// The front door cut the body (admitBody).
		return cut
	case errors.As(err, &tooLarge):
		return apiconv.NewError(apiconv.CodeRequestTooLarge, "the body is over %d bytes; send a smaller one", tooLarge.Limit)
	case errors.Is(err, io.EOF):
		return apiconv.NewError(apiconv.CodeMalformedRequest, "the body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apiconv.NewError(apiconv.CodeMalformedRequest, "the body is not well-formed JSON: it ends early")
	case errors.As(err, &syntax):
		return apiconv.NewError(apiconv.CodeMalformedRequest, "the body is not well-formed JSON at byte %d: %s", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &wrongType):
		field := wrongType.Field
		if field == "" {
			field = "(the body)"
		}
		e := apiconv.NewError(apiconv.CodeWrongType, "field %s: expected %s, got %s", field, strictjson.JSONType(wrongType.Type), wrongType.Value)
		e.Details = map[string]string{"field": wrongType.Field}
		return e
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no type for this error; its text is stable.
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return apiconv.NewError(apiconv.CodeUnknownField, "unknown field %s; remove it (see docs/openapi.yaml for the fields this call takes)", name)
	}
	return apiconv.NewError(apiconv.CodeMalformedRequest, "the body cannot be read: %v", err)
}
