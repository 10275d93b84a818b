package store

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/internal/resource"
)

// ValidationError is an input the store refuses: one field breaks one rule.
// It matches ErrInvalid with errors.Is, and also Err when Err is set.
//
// Field is the JSON path of the field as the API shows it, such as
// "target.kinesis.stream_arn", "sources[1].filter" or "destination_ids[0]";
// Msg says what is wrong and how to fix it, ready to show to whoever sent
// the input.
type ValidationError struct {
	// Field is the JSON path of the offending field.
	Field string
	// Msg says what is wrong with the field and how to fix it.
	Msg string
	// Err is the more precise cause, or nil: ErrNotFound for a destination
	// id that names no destination of the account, a *filters.CompileError
	// for a filter CEL rejects (with its positions), a *filters.FieldError
	// for a field selection. Because such an error also matches
	// ErrNotFound, callers mapping errors to statuses check for a
	// *ValidationError (or ErrInvalid) first.
	Err error
}

// Error returns the field and what is wrong with it.
func (e *ValidationError) Error() string {
	return e.Field + ": " + e.Msg
}

// Unwrap returns ErrInvalid and, when set, Err.
func (e *ValidationError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.Err}
}

// invalid returns a *ValidationError of the field with a formatted message.
func invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// InUseError is a destination that cannot be deleted because subscriptions
// of its account deliver to it. It matches ErrConflict with errors.Is.
type InUseError struct {
	// DestinationID is the destination that was to be deleted.
	DestinationID string
	// Subscriptions are the ids of the subscriptions using it, sorted.
	Subscriptions []string
}

// Error names the destination and the subscriptions using it.
func (e *InUseError) Error() string {
	return fmt.Sprintf("destination %s is used by event subscriptions %s: remove it from their destination_ids, or delete them, first",
		e.DestinationID, strings.Join(e.Subscriptions, ", "))
}

// Unwrap returns ErrConflict.
func (e *InUseError) Unwrap() error { return ErrConflict }

// checkText checks a free-text field of a family against its declaration:
// its limit, in the unit it counts.
func checkText(f resource.Field, value string) error {
	if f.Unit == resource.Characters {
		return checkChars(f.Name, value, f.Max)
	}
	return checkBytes(f.Name, value, f.Max)
}

// checkBytes checks a free-text field limited in bytes (destinations, API
// keys).
func checkBytes(field, value string, limit int) error {
	if !utf8.ValidString(value) {
		return invalid(field, "must be UTF-8 text")
	}
	if len(value) > limit {
		return invalid(field, "must be at most %d bytes long, this one is %d: shorten it", limit, len(value))
	}
	return nil
}

// checkChars checks a free-text field limited in characters (event
// subscriptions).
func checkChars(field, value string, limit int) error {
	if !utf8.ValidString(value) {
		return invalid(field, "must be UTF-8 text")
	}
	if n := utf8.RuneCountInString(value); n > limit {
		return invalid(field, "must be at most %d characters long, this one is %d: shorten it", limit, n)
	}
	return nil
}

// positiveZero returns f, or 0 for -0. A float field stores 0 for -0:
// encoding/json writes -0 back as "-0", a value JSON readers take as 0 or
// as -0 (a sign that changes nothing the field means, but that makes two
// equal values differ where they are compared as text).
func positiveZero(f float64) float64 {
	if f == 0 {
		return 0
	}
	return f
}
