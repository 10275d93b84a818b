package filters

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors. A *CompileError matches ErrInvalidFilter with errors.Is,
// and also the more precise sentinel of its Err field.
var (
	// ErrUnknownKind means the event kind is not in the catalogue.
	ErrUnknownKind = errors.New("unknown event kind")
	// ErrNotTraffic means a filter or field selection was given for an audit
	// kind; both apply only to traffic kinds.
	ErrNotTraffic = errors.New("filters and field selections apply only to traffic event kinds")

	// ErrInvalidFilter is matched by every *CompileError.
	ErrInvalidFilter = errors.New("invalid filter")
	// ErrEmptyFilter means the expression is empty or only white space.
	ErrEmptyFilter = errors.New("empty filter")
	// ErrFilterTooLong means the expression is longer than MaxExprLen bytes.
	ErrFilterTooLong = errors.New("filter too long")
	// ErrFilterTooCostly means the estimated cost of the expression is above MaxCost.
	ErrFilterTooCostly = errors.New("filter too costly")
	// ErrNotBoolean means the expression does not evaluate to a bool.
	ErrNotBoolean = errors.New("filter not boolean")

	// ErrCostLimit means an evaluation went over MaxCost, which only a
	// field far larger than the estimate assumes can cause.
	ErrCostLimit = errors.New("filter cost limit exceeded")
	// ErrListCostLimit means the evaluations of a filter of objects over
	// one list went over MaxObjectListCost in all.
	ErrListCostLimit = errors.New("filter cost limit of a list exceeded")
	// ErrEvalTimeout means an evaluation ran longer than MaxEvalTime.
	ErrEvalTimeout = errors.New("filter evaluation took too long")
	// ErrEvalPanic means an evaluation panicked; Match recovered.
	ErrEvalPanic = errors.New("filter evaluation panicked")

	// ErrNotFilterable means a value was set in Fields for a path that is
	// not a filterable field of the kind.
	ErrNotFilterable = errors.New("not a filterable field")
	// ErrFieldType means a value set in Fields does not have the field's type.
	ErrFieldType = errors.New("value does not have the field's type")
	// ErrFieldTooLong means a string set in Fields is longer than its
	// field's maximum, schemas.Field.MaxBytes.
	ErrFieldTooLong = errors.New("value longer than the field's maximum")

	// ErrInvalidField is matched by every *FieldError.
	ErrInvalidField = errors.New("invalid field")
)

// Issue is one problem CEL, or this package, found in an expression.
type Issue struct {
	// Line and Column are the 1-based position of the problem in the
	// expression, counted in characters; both are 0 when the problem is about
	// the whole expression (too long, too costly).
	Line, Column int
	// Msg says what is wrong.
	Msg string
}

// String formats the issue as CEL does: "ERROR: <input>:1:5: message".
func (i Issue) String() string {
	if i.Line == 0 {
		return "ERROR: <input>: " + i.Msg
	}
	return "ERROR: <input>:" + strconv.Itoa(i.Line) + ":" + strconv.Itoa(i.Column) + ": " + i.Msg
}

// CompileError is a filter expression that cannot be used: it does not parse,
// does not type-check, references a field a filter may not use, is not a
// boolean, is empty, too long or too costly. Its Error quotes CEL's messages
// with their positions, ready to show to whoever wrote the filter.
type CompileError struct {
	// Expr is the expression as written.
	Expr string
	// Issues are the problems found, in the order of their position.
	Issues []Issue
	// Err is the precise sentinel: ErrEmptyFilter, ErrFilterTooLong,
	// ErrFilterTooCostly, ErrNotBoolean, or ErrInvalidFilter for any problem
	// CEL's parser or checker reports.
	Err error
}

// Error returns "invalid filter: " followed by the issues, one per clause.
func (e *CompileError) Error() string {
	var b strings.Builder
	b.WriteString("invalid filter: ")
	for i, iss := range e.Issues {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(iss.String())
	}
	return b.String()
}

// Unwrap returns the precise sentinel.
func (e *CompileError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalidFilter; Unwrap covers the rest.
func (e *CompileError) Is(target error) bool { return target == ErrInvalidFilter }

// FieldError is a field selection path that cannot be used.
type FieldError struct {
	// Kind is the event kind the selection is for.
	Kind string
	// Path is the offending path, as given.
	Path string
	// Msg says what is wrong and lists some valid paths.
	Msg string
}

// Error returns the path and what is wrong with it.
func (e *FieldError) Error() string {
	return "invalid field " + strconv.Quote(e.Path) + " for " + e.Kind + ": " + e.Msg
}

// Is reports whether target is ErrInvalidField.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidField }
