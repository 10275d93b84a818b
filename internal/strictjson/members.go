package strictjson

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// checkMembers reads the next JSON value of dec, which is to be decoded
// into a value of type t (nil: unknown, or not a struct, map or slice), and
// returns an *Error for the first member of an object that has no field
// of t by its exact name or appears twice, or for the first value of a
// JSON type or range its field does not take, with the value's JSON path,
// array indexes included (which encoding/json's own type errors lack), or
// the decoder's error for malformed JSON.
//
// depth is how deep the value is, 0 at the top; past MaxDepth it is
// refused, so that a body of nested arrays costs no more than its bytes
// (each level builds its path). top are the members an object at the top (path "") takes, by their
// types, in place of the fields of t; nil for the fields of t.
func checkMembers(dec *json.Decoder, t reflect.Type, path string, depth int, top map[string]reflect.Type) error {
	if depth > MaxDepth {
		return &Error{Kind: TooDeep, Member: clip(path)}
	}
	tok, err := dec.Token()
	if err != nil {
		return unexpectedEOF(err)
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if got, ok := takesToken(t, tok); !ok {
		return &Error{Kind: WrongType, Member: clip(path), Want: JSONType(t), Got: got}
	}
	if n, ok := tok.(json.Number); ok && t != nil {
		if want := numberRange(t, n); want != "" {
			return &Error{Kind: OutOfRange, Member: clip(path), Want: want, Got: "number " + clip(string(n))}
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
				return &Error{Kind: Duplicate, Member: clip(memberPath)}
			}
			seen[key] = true
			var memberType reflect.Type
			switch {
			case t != nil && t.Kind() == reflect.Map:
				memberType = t.Elem()
			case fields != nil:
				var ok bool
				if memberType, ok = fields[key]; !ok {
					if candidate := sameButCase(fields, key); candidate != "" {
						return &Error{Kind: SameButCase, Member: clip(memberPath), Candidate: candidate}
					}
					return &Error{Kind: UnknownMember, Member: clip(memberPath)}
				}
			}
			if err := checkMembers(dec, memberType, memberPath, depth+1, nil); err != nil {
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
			if err := checkMembers(dec, elem, fmt.Sprintf("%s[%d]", path, i), depth+1, nil); err != nil {
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
		return "number", JSONType(t) == "number"
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
		if name, ok := FieldName(f); ok {
			fields[name] = f.Type
		}
	}
	return fields
}

// FieldName returns the JSON name of the struct field f, as
// encoding/json names it (its tag's name, else its Go name), and false
// for a field that JSON leaves out (unexported, or tagged "-").
func FieldName(f reflect.StructField) (string, bool) {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if !f.IsExported() || name == "-" {
		return "", false
	}
	if name == "" {
		name = f.Name
	}
	return name, true
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

// JSONType names the JSON type that a Go type decodes from, such as
// "string" or "number"; "a value" for nil.
func JSONType(t reflect.Type) string {
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

// MaxDepth bounds how deep a body's values nest, as schemas bounds an
// event's: the management API's bodies nest a few levels.
const MaxDepth = 64
