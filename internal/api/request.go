package api

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

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
func decodeBody(w http.ResponseWriter, r *http.Request, v any, echoes ...pathEcho) *Error {
	return decodeInput(w, r, v, nil, echoes...)
}

// decodeInput is decodeBody of a body that takes only the fields of v
// named by takes, nil for all: a member of another field of v is an
// unknown field, as if v had no such field, such as a field of an input
// type of package apiwire that an update takes but a create does not.
func decodeInput(w http.ResponseWriter, r *http.Request, v any, takes []string, echoes ...pathEcho) *Error {
	contentType := r.Header.Get("Content-Type")
	if media, _, err := mime.ParseMediaType(contentType); err != nil || media != mediaJSON {
		if contentType == "" {
			return NewError(CodeContentType, "the Content-Type header is missing; send %s", mediaJSON)
		}
		return NewError(CodeContentType, "Content-Type %q is not supported; send %s", contentType, mediaJSON)
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
func decodeObject(body []byte, v any, echoes ...echoed) *Error {
	return decodeFields(body, v, nil, echoes...)
}

// decodeFields decodes body into v as decodeInput does.
func decodeFields(body []byte, v any, takes []string, echoes ...echoed) *Error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return bodyError(io.EOF)
	case trimmed[0] != '{':
		return NewError(CodeMalformedRequest, "the body is not a JSON object (it starts with %q); send one, such as {\"description\": \"...\"}", trimmed[:1])
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // checkMembers checks a number's range against its field
	echoes = notFields(reflect.TypeOf(v), echoes)
	if err := checkMembers(dec, reflect.TypeOf(v), "", topFields(reflect.TypeOf(v), takes, echoes)); err != nil {
		var (
			member    *memberError
			wrongType *memberTypeError
		)
		switch {
		case errors.As(err, &member):
			return member.apiError()
		case errors.As(err, &wrongType):
			return wrongType.apiError()
		}
		return bodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return NewError(CodeMalformedRequest, "the body holds more than one JSON value (trailing data after byte %d); send a single JSON object", dec.InputOffset())
	}
	if e := checkText(body); e != nil {
		return e
	}
	if len(echoes) > 0 {
		var e *Error
		if body, e = dropEchoes(body, echoes); e != nil {
			return e
		}
	}
	typed := json.NewDecoder(bytes.NewReader(body))
	typed.DisallowUnknownFields()
	if err := typed.Decode(v); err != nil {
		return bodyError(err)
	}
	return nil
}

// topFields returns the members the top object of a body of type t (a
// pointer to a struct) takes, by their types: the fields of t named by
// takes (nil: all), and the echoes' members, which are strings; nil for
// the fields of t.
func topFields(t reflect.Type, takes []string, echoes []echoed) map[string]reflect.Type {
	if takes == nil && len(echoes) == 0 {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	fields := jsonFields(t)
	if fields == nil {
		return nil
	}
	if takes != nil {
		for name := range fields {
			if !slices.Contains(takes, name) {
				delete(fields, name)
			}
		}
	}
	for _, e := range echoes {
		if _, ok := fields[e.member]; !ok {
			fields[e.member] = reflect.TypeFor[string]()
		}
	}
	return fields
}

// notFields returns the echoes whose members are not fields of the body
// type t (a pointer to a struct), which decodes the others itself.
func notFields(t reflect.Type, echoes []echoed) []echoed {
	if len(echoes) == 0 {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	fields := jsonFields(t)
	var out []echoed
	for _, e := range echoes {
		if _, ok := fields[e.member]; !ok {
			out = append(out, e)
		}
	}
	return out
}

// dropEchoes returns body, a JSON object whose members checkMembers has
// checked (the echoes' are strings or null, and none appears twice),
// without the members of the echoes, or the 400 ERR_SLUICE_340 of the
// first whose value is not the path's.
func dropEchoes(body []byte, echoes []echoed) ([]byte, *Error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return nil, bodyError(err)
	}
	dropped := false
	for _, e := range echoes {
		raw, ok := members[e.member]
		if !ok {
			continue
		}
		var sent *string
		if err := json.Unmarshal(raw, &sent); err != nil {
			return nil, bodyError(err)
		}
		if sent != nil && *sent != e.value {
			return nil, e.changed(*sent)
		}
		delete(members, e.member)
		dropped = true
	}
	if !dropped {
		return body, nil
	}
	out, err := json.Marshal(members)
	if err != nil {
		return nil, NewError(CodeMalformedRequest, "the body cannot be read: %v", err)
	}
	return out, nil
}

// changed is the 400 ERR_SLUICE_340 of a body whose member of the echo is
// sent, a value other than the path's.
func (e echoed) changed(sent string) *Error {
	how := "send the path's value, or leave the field out"
	if e.instead != "" {
		how += "; to change it, " + e.instead
	}
	err := NewError(CodeFieldFixed, "field %q is %q, but the path names %q, and it cannot be changed: %s", e.member, sent, e.value, how)
	err.Details = map[string]string{"field": e.member}
	return err
}

// checkText refuses, as ingest refuses them (schemas.CheckJSON), the
// bodies encoding/json would read other than as sent: invalid UTF-8 and
// lone surrogates, which it reads as U+FFFD (so that two names would be
// stored the same), and numbers beyond float64's range.
func checkText(body []byte) *Error {
	err := schemas.CheckJSON(body)
	var (
		syntax *schemas.SyntaxError
		field  *schemas.FieldError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syntax):
		return NewError(CodeMalformedRequest, "the body is not well-formed JSON at byte %d: %s; send text in UTF-8", syntax.Offset, syntax.Msg)
	case errors.As(err, &field):
		e := NewError(CodeMalformedRequest, "field %s", field.Error())
		e.Details = map[string]string{"field": field.Path}
		return e
	}
	return NewError(CodeMalformedRequest, "the body cannot be read: %v", err)
}

// memberError is an object member that has no field of the same name, or
// that appears twice in its object.
type memberError struct {
	path      string // JSON path of the member, such as sources[0].kind
	twice     bool
	candidate string // the field named like it but for case, or ""
}

func (e *memberError) Error() string { return "member " + e.path }

func (e *memberError) apiError() *Error {
	if e.twice {
		err := NewError(CodeMalformedRequest, "field %s appears twice; send it once", e.path)
		err.Details = map[string]string{"field": e.path}
		return err
	}
	hint := ""
	if e.candidate != "" {
		hint = fmt.Sprintf(" (did you mean %q? field names are case-sensitive)", e.candidate)
	}
	err := NewError(CodeUnknownField, "unknown field %q%s; remove it (see docs/openapi.yaml for the fields this call takes)", e.path, hint)
	err.Details = map[string]string{"field": e.path}
	return err
}

// memberTypeError is a value whose JSON type its field does not take.
type memberTypeError struct {
	path string // JSON path of the value, such as sources[1].type
	want string // the JSON type the field takes, such as "string"
	got  string // the JSON type sent, such as "number"
}

func (e *memberTypeError) Error() string { return "member " + e.path + " is a " + e.got }

func (e *memberTypeError) apiError() *Error {
	err := NewError(CodeWrongType, "field %s: expected %s, got %s", e.path, e.want, e.got)
	err.Details = map[string]string{"field": e.path}
	return err
}

// checkMembers reads the next JSON value of dec, which is to be decoded
// into a value of type t (nil: unknown, or not a struct, map or slice), and
// returns a *memberError for the first member of an object that has no
// field of t by its exact name or appears twice, a *memberTypeError for the
// first value of a JSON type its field does not take, both with the
// value's JSON path, array indexes included (which encoding/json's own
// type errors lack), or the decoder's error for malformed JSON.
//
// top are the members an object at the top (path "") takes, by their
// types, in place of the fields of t; nil for the fields of t.
func checkMembers(dec *json.Decoder, t reflect.Type, path string, top map[string]reflect.Type) error {
	tok, err := dec.Token()
	if err != nil {
		return unexpectedEOF(err)
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if got, ok := takesToken(t, tok); !ok {
		return &memberTypeError{path: path, want: jsonType(t), got: got}
	}
	if n, ok := tok.(json.Number); ok && t != nil {
		if want := numberRange(t, n); want != "" {
			return &memberTypeError{path: path, want: want, got: "number " + string(n)}
		}
	}
	switch tok {
	case json.Delim('{'):
		fields := top
		if fields == nil {
			fields = jsonFields(t)
		}
		seen := make(map[string]bool)
		for dec.More() {
			keyTok, err := dec.Token()
			if err != nil {
				return unexpectedEOF(err)
			}
			key, _ := keyTok.(string)
			memberPath := key
			if path != "" {
				memberPath = path + "." + key
			}
			if seen[key] {
				return &memberError{path: memberPath, twice: true}
			}
			seen[key] = true
			var memberType reflect.Type
			switch {
			case t != nil && t.Kind() == reflect.Map:
				memberType = t.Elem()
			case fields != nil:
				var ok bool
				if memberType, ok = fields[key]; !ok {
					return &memberError{path: memberPath, candidate: sameButCase(fields, key)}
				}
			}
			if err := checkMembers(dec, memberType, memberPath, nil); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return unexpectedEOF(err)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := checkMembers(dec, elem, fmt.Sprintf("%s[%d]", path, i), nil); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return unexpectedEOF(err)
	}
	return nil
}

// takesToken reports whether a value of type t (nil: any) can be decoded
// from a JSON value that starts with tok, and names tok's JSON type as
// encoding/json does. null is taken by every type, as encoding/json takes
// it; so is anything by a type that decodes itself.
func takesToken(t reflect.Type, tok json.Token) (string, bool) {
	if t == nil || tok == nil || t.Kind() == reflect.Interface ||
		t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		reflect.PointerTo(t).Implements(textUnmarshaler) {
		return "null", true
	}
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '[' {
			return "array", t.Kind() == reflect.Slice || t.Kind() == reflect.Array
		}
		return "object", t.Kind() == reflect.Struct || t.Kind() == reflect.Map
	case string:
		return "string", t.Kind() == reflect.String
	case bool:
		return "bool", t.Kind() == reflect.Bool
	case float64, json.Number:
		return "number", jsonType(t) == "number"
	}
	return fmt.Sprintf("%T", tok), false
}

// numberRange returns "" if the JSON number n fits the number type t
// (encoding/json takes an integer only as written without fraction or
// exponent), or else what t takes, such as "a whole number from 0 to
// 4294967295", so that a body's number out of range is answered naming
// its field (encoding/json's own error names none for a float).
func numberRange(t reflect.Type, n json.Number) string {
	bits := t.Bits
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if _, err := strconv.ParseInt(string(n), 10, bits()); err != nil {
			lim := int64(1)<<(bits()-1) - 1
			return fmt.Sprintf("a whole number from %d to %d", -lim-1, lim)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if _, err := strconv.ParseUint(string(n), 10, bits()); err != nil {
			return fmt.Sprintf("a whole number from 0 to %d", uint64(1)<<bits()-1)
		}
	case reflect.Float32, reflect.Float64:
		if _, err := strconv.ParseFloat(string(n), bits()); err != nil {
			return fmt.Sprintf("a number of at most %g in magnitude", maxFloat(bits()))
		}
	}
	return ""
}

// maxFloat returns the largest finite float of the bits, 32 or 64.
func maxFloat(bits int) float64 {
	if bits == 32 {
		return math.MaxFloat32
	}
	return math.MaxFloat64
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// unexpectedEOF returns io.ErrUnexpectedEOF for io.EOF: within a value, the
// end of the body is early.
func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// jsonFields returns the fields of the struct type t by their JSON names,
// or nil if t is not a struct (any member name is left to decoding).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	fields := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}

// sameButCase returns the field named key but for case, or "".
func sameButCase(fields map[string]reflect.Type, key string) string {
	for name := range fields {
		if strings.EqualFold(name, key) {
			return name
		}
	}
	return ""
}

// bodyError turns an error of reading the body or of json.Decoder.Decode
// into the API error saying what is wrong with the body.
func bodyError(err error) *Error {
	var (
		syntax    *json.SyntaxError
		wrongType *json.UnmarshalTypeError
		tooLarge  *http.MaxBytesError
		cut       *Error
	)
	switch {
	case errors.As(err, &cut):
		// The front door cut the body (admitBody).
		return cut
	case errors.As(err, &tooLarge):
		return NewError(CodeRequestTooLarge, "the body is over %d bytes; send a smaller one", tooLarge.Limit)
	case errors.Is(err, io.EOF):
		return NewError(CodeMalformedRequest, "the body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return NewError(CodeMalformedRequest, "the body is not well-formed JSON: it ends early")
	case errors.As(err, &syntax):
		return NewError(CodeMalformedRequest, "the body is not well-formed JSON at byte %d: %s", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &wrongType):
		field := wrongType.Field
		if field == "" {
			field = "(the body)"
		}
		e := NewError(CodeWrongType, "field %s: expected %s, got %s", field, jsonType(wrongType.Type), wrongType.Value)
		e.Details = map[string]string{"field": wrongType.Field}
		return e
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no type for this error; its text is stable.
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return NewError(CodeUnknownField, "unknown field %s; remove it (see docs/openapi.yaml for the fields this call takes)", name)
	}
	return NewError(CodeMalformedRequest, "the body cannot be read: %v", err)
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
