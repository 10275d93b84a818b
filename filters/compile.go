package filters

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	"cel.dev/cel-go/common/ast"
)

// Compile parses and type-checks the filter expression expr for events of the
// kind, checks its limits and returns the program that evaluates it. Call it
// when a subscription source is written; the delivery engine gets programs
// from a Cache.
//
// The expression sees the event's object as ev and may use only the
// filterable fields of the kind (ev.conn.client_ip, ev.conn.server_ip,
// ev.conn.server_name, ev.conn.server_port in the specification), the CEL
// standard library, the string extensions (cel-go ext.Strings) and
// inCIDR(ip, cidr). It must be a boolean. The regular expression of
// matches must be a string literal: it is compiled here, once.
//
// Compile returns ErrUnknownKind, ErrNotTraffic, or a *CompileError whose Err
// is ErrEmptyFilter, ErrFilterTooLong, ErrNotBoolean, ErrFilterTooCostly, or
// ErrInvalidFilter when CEL rejects the expression (also when a constant
// part of it, such as double('x'), cannot be evaluated).
func (e *Env) Compile(kind, expr string) (*Program, error) {
	ke, err := e.kind(kind)
	if err != nil {
		return nil, err
	}
	return ke.compile(expr)
}

func (ke *kindEnv) compile(expr string) (*Program, error) {
	return ke.compileIn(ke.cel, ke.estimator, expr)
}

// compileIn compiles expr in env, an environment of the kind (its own, or
// one extended with more variables), estimating sizes with est.
func (ke *kindEnv) compileIn(env *cel.Env, est sizeEstimator, expr string) (*Program, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, wholeError(expr, ErrEmptyFilter,
			"a filter must not be empty: write a boolean expression over "+ke.varList+", or leave the filter out to receive every event")
	}
	if len(expr) > MaxExprLen {
		return nil, wholeError(expr, ErrFilterTooLong,
			fmt.Sprintf("a filter must be at most %d bytes long, this one is %d", MaxExprLen, len(expr)))
	}
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return nil, &CompileError{Expr: expr, Issues: celIssues(iss), Err: ErrInvalidFilter}
	}
	// Check the references to ev first: CEL would say "undeclared reference
	// to 'ev'" where this can say which field is wrong and why.
	refIssues := ke.checkReferences(parsed)
	start := startOf(parsed) // before Check, which rewrites the parsed expression
	checked, iss := env.Check(parsed)
	if issues := mergeIssues(refIssues, celIssues(iss)); len(issues) > 0 {
		return nil, &CompileError{Expr: expr, Issues: issues, Err: ErrInvalidFilter}
	}
	if t := checked.OutputType(); !t.IsExactType(cel.BoolType) {
		return nil, &CompileError{Expr: expr, Err: ErrNotBoolean, Issues: []Issue{issueAt(start,
			fmt.Sprintf("a filter must be a boolean expression, this one is %s: compare it, as in ev.conn.server_port == 443", cel.FormatCELType(t)))}}
	}
	estimate, err := env.EstimateCost(checked, est)
	if err != nil {
		return nil, fmt.Errorf("estimating the cost of filter %q: %w", expr, err)
	}
	if estimate.Max > MaxCost {
		return nil, wholeError(expr, ErrFilterTooCostly, fmt.Sprintf(
			"the estimated cost of this filter, up to %d, is above the limit of %d: avoid loops over large lists, loops in loops, "+
				"and large regular expressions (to match one of many names, write ev.conn.server_name in [\"a.example.com\", \"b.example.com\"])",
			estimate.Max, MaxCost))
	}
	loops := hasComprehension(checked)
	prg, err := env.Program(checked, programOptions(loops, est)...)
	if err != nil {
		// Planning folds constants and compiles regular expressions: what
		// fails there is in the expression, such as double('x').
		return nil, wholeError(expr, ErrInvalidFilter, "this filter cannot be evaluated: "+err.Error())
	}
	return &Program{
		kind:    ke,
		expr:    expr,
		program: prg,
		fields:  ke.referencedFields(checked),
		cost:    estimate.Max,
		loops:   loops,
		maxTime: MaxEvalTime,
	}, nil
}

// referencedFields returns the paths of the filterable fields the checked
// expression references, sorted.
func (ke *kindEnv) referencedFields(checked *cel.Ast) []string {
	var paths []string
	for _, ref := range checked.NativeRep().ReferenceMap() {
		if i := ke.variableIndex(ref.Name); i >= 0 && !slices.Contains(paths, ke.vars[i].path) {
			paths = append(paths, ke.vars[i].path)
		}
	}
	slices.Sort(paths)
	return paths
}

// startOf returns the location of the first character of a parsed
// expression: CEL places an expression at its operator, which for
// ev.conn.server_port is the last dot. (Checking folds ev.conn.server_port
// into one node at that dot, hence the parsed expression.)
func startOf(a *cel.Ast) common.Location {
	info := a.NativeRep().SourceInfo()
	first := int32(-1)
	ast.PreOrderVisit(a.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if r, ok := info.GetOffsetRange(e.ID()); ok && (first < 0 || r.Start < first) {
			first = r.Start
		}
	}))
	if first < 0 {
		return common.NoLocation
	}
	return info.GetLocationByOffset(first)
}

// programOptions are the options of a filter's program. Only a program
// with a comprehension (a loop) counts its cost as it runs, stopping at
// MaxCost: without one, each of its operations runs at most once, on fields
// no longer than their maximum (SetString refuses longer ones), so its cost
// cannot go past the estimate Compile checked against MaxCost
// (TestFiltersStayWithinBounds and FuzzFilterBounds compare the two on
// filters made from every overload). Counting costs a cost tracker and its
// allocations at each evaluation: about a tenth of a filtered route's CPU
// per event.
func programOptions(loops bool, est sizeEstimator) []cel.ProgramOption {
	opts := []cel.ProgramOption{
		cel.EvalOptions(cel.OptOptimize),
		cel.InterruptCheckFrequency(interruptCheckFrequency),
	}
	if loops {
		opts = append(opts, cel.CostLimit(MaxCost), cel.CostTracking(est))
	}
	return opts
}

// hasComprehension reports whether the checked expression has a loop.
func hasComprehension(checked *cel.Ast) bool {
	found := false
	ast.PreOrderVisit(checked.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		found = found || e.Kind() == ast.ComprehensionKind
	}))
	return found
}

// wholeError is a CompileError about the whole expression.
func wholeError(expr string, sentinel error, msg string) *CompileError {
	return &CompileError{Expr: expr, Err: sentinel, Issues: []Issue{{Msg: msg}}}
}

// issueAt makes an Issue at a CEL location, whose column is 0-based.
func issueAt(loc common.Location, msg string) Issue {
	if loc == nil || loc.Line() <= 0 {
		return Issue{Msg: msg}
	}
	return Issue{Line: loc.Line(), Column: loc.Column() + 1, Msg: msg}
}

// celIssues converts CEL's issues.
func celIssues(iss *cel.Issues) []Issue {
	if iss == nil {
		return nil
	}
	var issues []Issue
	for _, e := range iss.Errors() {
		issues = append(issues, issueAt(e.Location, e.Message))
	}
	return issues
}

// mergeIssues returns the issues about references to ev followed by CEL's
// other issues, sorted by position. CEL's own complaints about undeclared
// references to ev are dropped when a reference issue says more.
func mergeIssues(refIssues, celIssues []Issue) []Issue {
	issues := slices.Clone(refIssues)
	for _, iss := range celIssues {
		if len(refIssues) > 0 && strings.HasPrefix(iss.Msg, "undeclared reference to 'ev") {
			continue
		}
		issues = append(issues, iss)
	}
	slices.SortStableFunc(issues, func(a, b Issue) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return issues
}
