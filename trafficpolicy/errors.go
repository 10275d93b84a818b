package trafficpolicy

import (
	"errors"
	"strconv"
	"strings"
)

// ErrInvalidPolicy is matched by every *PolicyError.
var ErrInvalidPolicy = errors.New("invalid traffic policy")

// Problem is one mistake in a policy document.
type Problem struct {
	// Path is the bad element, such as on_http_request[0].actions[1].config.rate,
	// empty for the document as a whole.
	Path string
	// Line and Column are the 1-based position of the element in the
	// document, 0 when unknown.
	Line, Column int
	// Msg says what is wrong and what is allowed.
	Msg string
}

// String returns "line L, column C: path: msg".
func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(p.Line))
		b.WriteString(", column ")
		b.WriteString(strconv.Itoa(p.Column))
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// PolicyError is a policy document that cannot be used, with every
// mistake found in it.
type PolicyError struct {
	// Problems are the mistakes, in the order of the document.
	Problems []Problem
}

// Error returns "invalid traffic policy: " and the problems, one per line
// after the first.
func (e *PolicyError) Error() string {
	var b strings.Builder
	b.WriteString("invalid traffic policy: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("\n  ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Is reports whether target is ErrInvalidPolicy.
func (e *PolicyError) Is(target error) bool { return target == ErrInvalidPolicy }
