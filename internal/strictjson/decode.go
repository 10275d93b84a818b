package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
)

// Options say what a body's top object takes besides the fields of the
// value it is decoded into, and how its text is checked.
type Options struct {
	// Takes names the fields of the value that the top object may hold;
	// nil for all. A member of another field is an UnknownMember, as if
	// the value had no such field.
	Takes []string
	// Extra names members that the top object may hold although the value
	// has no field of their names, as strings or null, such as a body's
	// repeat of a value of the request's path. Decode hands each one sent
	// to Echo, in the order of Extra, and drops it before decoding. A name
	// of a field of the value is left to the field.
	Extra []string
	// Echo is called with each member of Extra that the body holds and its
	// value, nil for null; an error it returns is Decode's, as returned.
	Echo func(member string, value *string) error
	// CheckText, if not nil, is called with a body whose structure Decode
	// has checked, before it decodes it; an error it returns is a BadText.
	CheckText func(body []byte) error
}

// Decode decodes body, which must hold exactly one JSON object, into v, a
// pointer to a struct, strictly: every member of the object must be a
// field of v named exactly and sent once, holding a value of the field's
// JSON type and range, and so on down, and nothing may follow the object.
// It returns an *Error saying what is wrong otherwise, or the error of
// opts.Echo.
func Decode(body []byte, v any, opts Options) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return &Error{Kind: Empty, Err: io.EOF}
	case trimmed[0] != '{':
		return &Error{Kind: NotObject, Start: trimmed[0]}
	}
	t := reflect.TypeOf(v)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // checkMembers checks a number's range against its field
	extra := notFields(t, opts.Extra)
	if err := checkMembers(dec, t, "", 0, topFields(t, opts.Takes, extra)); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		return &Error{Kind: Unreadable, Err: err}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &Error{Kind: Trailing, Offset: dec.InputOffset()}
	}
	if opts.CheckText != nil {
		if err := opts.CheckText(body); err != nil {
			return &Error{Kind: BadText, Err: err}
		}
	}
	if len(extra) > 0 {
		var err error
		if body, err = dropExtra(body, extra, opts.Echo); err != nil {
			return err
		}
	}
	typed := json.NewDecoder(bytes.NewReader(body))
	typed.DisallowUnknownFields()
	if err := typed.Decode(v); err != nil {
		return &Error{Kind: Unreadable, Err: err}
	}
	return nil
}

// topFields returns the members the top object of a body of type t (a
// pointer to a struct) takes, by their types: the fields of t named by
// takes (nil: all), and the extra members, which are strings; nil for
// the fields of t.
func topFields(t reflect.Type, takes []string, extra []string) map[string]reflect.Type {
	if takes == nil && len(extra) == 0 {
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
	for _, member := range extra {
		if _, ok := fields[member]; !ok {
			fields[member] = reflect.TypeFor[string]()
		}
	}
	return fields
}

// notFields returns the extra members that are not fields of the body
// type t (a pointer to a struct), which decodes the others itself.
func notFields(t reflect.Type, extra []string) []string {
	if len(extra) == 0 {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	fields := jsonFields(t)
	var out []string
	for _, member := range extra {
		if _, ok := fields[member]; !ok {
			out = append(out, member)
		}
	}
	return out
}

// dropExtra returns body, a JSON object whose members checkMembers has
// checked (the extra ones are strings or null, and none appears twice),
// without the extra members, after handing each one sent to echo.
func dropExtra(body []byte, extra []string, echo func(string, *string) error) ([]byte, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return nil, &Error{Kind: Unreadable, Err: err}
	}
	dropped := false
	for _, member := range extra {
		raw, ok := members[member]
		if !ok {
			continue
		}
		var sent *string
		if err := json.Unmarshal(raw, &sent); err != nil {
			return nil, &Error{Kind: Unreadable, Err: err}
		}
		if echo != nil {
			if err := echo(member, sent); err != nil {
				return nil, err
			}
		}
		delete(members, member)
		dropped = true
	}
	if !dropped {
		return body, nil
	}
	out, err := json.Marshal(members)
	if err != nil {
		return nil, &Error{Kind: Unreadable, Err: err}
	}
	return out, nil
}
