package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
)

// maxRequestBytes bounds the body of a management request (not of ingest).
const maxRequestBytes = 1 << 20

// decodeBody reads the JSON object of a management request into v,
// strictly: the Content-Type must be JSON, the body at most 1 MiB, and it
// must hold exactly one JSON value whose fields are all fields of v, each
// of the right type. It returns the API error to send otherwise.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) *Error {
	contentType := r.Header.Get("Content-Type")
	if media, _, err := mime.ParseMediaType(contentType); err != nil || media != mediaJSON {
		if contentType == "" {
			return newError(CodeContentType, "the Content-Type header is missing; send %s", mediaJSON)
		}
		return newError(CodeContentType, "Content-Type %q is not supported; send %s", contentType, mediaJSON)
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return bodyError(err)
		}
		return newError(CodeMalformedRequest, "the body holds more than one JSON value (trailing data after byte %d); send a single JSON object", dec.InputOffset())
	}
	return nil
}

// bodyError turns an error of json.Decoder.Decode into the API error
// saying what is wrong with the body.
func bodyError(err error) *Error {
	var (
		syntax    *json.SyntaxError
		wrongType *json.UnmarshalTypeError
		tooLarge  *http.MaxBytesError
	)
	switch {
	case errors.As(err, &tooLarge):
		return newError(CodeRequestTooLarge, "the body is over %d bytes; send a smaller one", tooLarge.Limit)
	case errors.Is(err, io.EOF):
		return newError(CodeMalformedRequest, "the body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return newError(CodeMalformedRequest, "the body is not well-formed JSON: it ends early")
	case errors.As(err, &syntax):
		return newError(CodeMalformedRequest, "the body is not well-formed JSON at byte %d: %s", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &wrongType):
		field := wrongType.Field
		if field == "" {
			field = "(the body)"
		}
		e := newError(CodeWrongType, "field %s: expected %s, got %s", field, jsonType(wrongType.Type), wrongType.Value)
		e.Details = map[string]any{"field": wrongType.Field}
		return e
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no type for this error; its text is stable.
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return newError(CodeUnknownField, "unknown field %s; remove it (see docs/openapi.yaml for the fields this call takes)", name)
	}
	return newError(CodeMalformedRequest, "the body cannot be read: %v", err)
}

// jsonType names the JSON type that a Go type decodes from.
func jsonType(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	}
	return fmt.Sprint(t)
}
