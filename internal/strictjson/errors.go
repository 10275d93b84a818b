package strictjson

import (
	"fmt"
	"unicode/utf8"
)

// Kind says what is wrong with a body.
type Kind int

// The kinds of Error.
const (
	// Empty is a body of nothing but white space; Err is io.EOF.
	Empty Kind = iota + 1
	// NotObject is a body whose JSON value is not an object; Start is its
	// first byte.
	NotObject
	// Trailing is a body with more after its object; Offset is where the
	// object ends.
	Trailing
	// UnknownMember is a member that no field of its object takes.
	UnknownMember
	// SameButCase is an unknown member named like a field but for case;
	// Candidate is the field's name.
	SameButCase
	// Duplicate is a member that appears twice in its object.
	Duplicate
	// WrongType is a value of a JSON type its field does not take; Want
	// and Got name the JSON types.
	WrongType
	// OutOfRange is a number its field cannot hold; Want says what the
	// field takes, Got is "number " and the number as sent.
	OutOfRange
	// BadText is a body that Options.CheckText refused; Err is its error.
	BadText
	// TooDeep is a value nested deeper than MaxDepth; Member is where.
	TooDeep
	// Unreadable is a body encoding/json refused; Err is its error, such
	// as a *json.SyntaxError, or io.ErrUnexpectedEOF for a body that ends
	// early.
	Unreadable
)

// MaxEcho bounds the bytes of the body an Error repeats (Member, and the
// number of an OutOfRange): a member's name or a number of a hostile body
// may be as long as the body, and an error quotes at most this much of
// it, cut at a character and followed by "…".
const MaxEcho = 128

// clip returns s, or its first MaxEcho bytes at most, cut at the start of
// a character, and "…".
func clip(s string) string {
	if len(s) <= MaxEcho {
		return s
	}
	cut := MaxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Error is a body Decode refuses, with what is wrong with it.
type Error struct {
	Kind Kind
	// Member is the JSON path of the member at fault, such as
	// sources[0].kind, for UnknownMember, SameButCase, Duplicate,
	// WrongType and OutOfRange; "" for the top value.
	Member    string
	Candidate string // SameButCase: the field's name
	Want      string // WrongType, OutOfRange: what the field takes
	Got       string // WrongType, OutOfRange: what was sent
	Start     byte   // NotObject: the body's first byte but white space
	Offset    int64  // Trailing: the offset of the end of the object
	Err       error  // Empty, BadText, Unreadable: the error underneath
}

// Error says what is wrong with the body, naming the member at fault.
func (e *Error) Error() string {
	switch e.Kind {
	case Empty:
		return "strictjson: the body is empty"
	case NotObject:
		return fmt.Sprintf("strictjson: the body is not a JSON object (it starts with %q)", e.Start)
	case Trailing:
		return fmt.Sprintf("strictjson: trailing data after byte %d", e.Offset)
	case UnknownMember, SameButCase:
		return fmt.Sprintf("strictjson: unknown member %s", e.Member)
	case Duplicate:
		return fmt.Sprintf("strictjson: member %s appears twice", e.Member)
	case WrongType, OutOfRange:
		return fmt.Sprintf("strictjson: member %s: expected %s, got %s", e.Member, e.Want, e.Got)
	case TooDeep:
		return fmt.Sprintf("strictjson: member %s nests deeper than %d levels", e.Member, MaxDepth)
	}
	return fmt.Sprintf("strictjson: %v", e.Err)
}

// Unwrap returns the error underneath, if any.
func (e *Error) Unwrap() error { return e.Err }
