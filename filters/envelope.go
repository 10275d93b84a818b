package filters

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
)

// envelopeCostLimit bounds the runtime cost of one evaluation of an
// envelope filter. Its expressions are typed by no catalogue, so their
// cost cannot be estimated when they are compiled.
const envelopeCostLimit = 1_000_000

// EnvelopeFilter is a CEL expression over a whole delivered event, for
// readers of what sluice delivered (sluice tail): ev is the envelope, as
// in ev.event_type == "http_request_complete.v0" &&
// ev.object.conn.server_port == 443. Unlike a subscription's filter it is
// not typed by the catalogue: any field can be named, and a field the
// event lacks makes the expression false, not an error. It is safe for
// concurrent use.
type EnvelopeFilter struct {
	expr    string
	program cel.Program
}

// CompileEnvelope compiles an envelope filter. It returns a *CompileError
// whose Err is ErrEmptyFilter, ErrFilterTooLong, ErrInvalidFilter or
// ErrNotBoolean.
func CompileEnvelope(expr string) (*EnvelopeFilter, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, wholeError(expr, ErrEmptyFilter, "a filter must not be empty: write a boolean expression over ev, the event")
	}
	if len(expr) > MaxExprLen {
		return nil, wholeError(expr, ErrFilterTooLong,
			fmt.Sprintf("a filter must be at most %d bytes long, this one is %d", MaxExprLen, len(expr)))
	}
	env, err := cel.NewEnv(
		ext.Strings(),
		cidrLibrary(),
		cel.Variable("ev", cel.MapType(cel.StringType, cel.DynType)),
	)
	if err != nil {
		return nil, fmt.Errorf("building the envelope filter environment: %w", err)
	}
	checked, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, &CompileError{Expr: expr, Issues: celIssues(iss), Err: ErrInvalidFilter}
	}
	if t := checked.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, &CompileError{Expr: expr, Err: ErrNotBoolean, Issues: []Issue{issueAt(startOf(checked),
			fmt.Sprintf("a filter must be a boolean expression, this one is %s", cel.FormatCELType(t)))}}
	}
	program, err := env.Program(checked, cel.CostLimit(envelopeCostLimit), cel.InterruptCheckFrequency(interruptCheckFrequency))
	if err != nil {
		return nil, fmt.Errorf("building the envelope filter program: %w", err)
	}
	return &EnvelopeFilter{expr: expr, program: program}, nil
}

// Expr returns the expression as written.
func (f *EnvelopeFilter) Expr() string { return f.expr }

// Match reports whether the event, decoded from JSON into maps, passes the
// filter. A field the event does not have, or a comparison of values of
// different types, makes it false. It returns an error wrapping
// ErrCostLimit when the evaluation costs too much, and ctx's error when
// ctx ends.
func (f *EnvelopeFilter) Match(ctx context.Context, event map[string]any) (bool, error) {
	out, _, err := f.program.ContextEval(ctx, map[string]any{"ev": event})
	if err != nil {
		var cancelled interpreter.EvalCancelledError
		switch {
		case errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded:
			return false, fmt.Errorf("evaluating %q: %w: %w", f.expr, ErrCostLimit, err)
		case ctx.Err() != nil:
			return false, fmt.Errorf("evaluating %q: %w", f.expr, ctx.Err())
		}
		// No such key, no such overload: the event is not one the filter
		// describes.
		return false, nil
	}
	b, ok := out.(types.Bool)
	return ok && bool(b), nil
}
