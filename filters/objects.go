package filters

import (
	"container/list"
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
)

// Filters of objects: the filter parameter of the management API's lists,
// a CEL expression over each resource as the API shows it, bound to obj,
// such as obj.description.startsWith("prod").
//
// The expression is type-checked against the JSON fields of the body's Go
// type (cel-go's native types, by their json tags), so a field the body
// does not have is refused when the filter is compiled. How the body's Go
// types read in CEL:
//
//   - a string, bool or number is a CEL string, bool, int, uint or double;
//   - a nested struct is an object whose fields are its JSON fields;
//   - a pointer that may be null (JSON null) reads as what it points to:
//     has(obj.field) is false when it is null (or its zero value), and
//     reading it then gives the zero value ("" for a string, an object
//     whose fields are zero for a struct); comparing with null is refused,
//     as it could not tell a null field from a set one;
//   - a slice is a list, a map a map, a time.Time a timestamp;
//   - a type with its own JSON encoding and no exported field, such as a
//     destination's target, is an object with no field.
//
// Times the API shows as strings (created_at, RFC 3339 in UTC to the
// millisecond) are strings: of one fixed width, so that comparing them as
// strings compares the times (obj.created_at >= "2026-01-01"), and
// timestamp(obj.created_at) converts one for timestamp arithmetic.
const (
	// objectVar is the name of the resource in the expression.
	objectVar = "obj"

	// MaxObjectCost is the highest cost a filter of objects may have on one
	// object, in CEL's cost units (about 40 ns each; see MaxCost): its
	// estimate, checked by Compile, and the actual cost of each
	// evaluation. A list evaluates the filter once per resource of the
	// account at most, and stops at MaxObjectListCost in all; the filters
	// written for real, such as comparing a field (2 or 3), cost far
	// less.
	MaxObjectCost = 25_000

	// MaxObjectString and MaxObjectItems are the sizes the cost estimate
	// assumes of an object's strings (the longest text of a resource, its
	// metadata, is 4096 bytes) and of its lists and maps (an ACL has 100
	// rules at most). The actual cost of each evaluation is bounded by
	// MaxObjectCost whatever the sizes.
	MaxObjectString = 4096
	MaxObjectItems  = 100
)

// ObjectEnv is the CEL environment of the filters of objects of one Go
// struct type, the body of a resource family. It is immutable and safe for
// concurrent use.
type ObjectEnv struct {
	typ       reflect.Type
	name      string // the CEL name of the type, "client.BotUser"
	cel       *cel.Env
	fields    []string // the JSON names of the type's fields, in order
	example   string
	estimator sizeEstimator

	mu     sync.Mutex
	cached map[string]*list.Element // values are *ObjectProgram, by expression
	recent *list.List               // most recently used first
}

// ObjectCacheSize is how many compiled filters an ObjectEnv keeps for
// Program, the most recently used: compiling one takes about 130 µs, as
// long as 80 evaluations, and a client paging through a filtered list
// sends the same filter with each page.
const ObjectCacheSize = 64

// Program returns the compiled program of the filter expr, as Compile
// does, from the environment's cache of the ObjectCacheSize filters used
// last, compiling it on first use. Errors are not cached.
func (e *ObjectEnv) Program(expr string) (*ObjectProgram, error) {
	e.mu.Lock()
	if el, ok := e.cached[expr]; ok {
		e.recent.MoveToFront(el)
		e.mu.Unlock()
		return el.Value.(*ObjectProgram), nil
	}
	e.mu.Unlock()
	p, err := e.Compile(expr)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if el, ok := e.cached[expr]; ok { // compiled meanwhile by another caller
		return el.Value.(*ObjectProgram), nil
	}
	e.cached[expr] = e.recent.PushFront(p)
	for e.recent.Len() > ObjectCacheSize {
		delete(e.cached, e.recent.Remove(e.recent.Back()).(*ObjectProgram).expr)
	}
	return p, nil
}

// NewObjectEnv returns the environment of filters of objects of the struct
// type t (or pointer to struct), whose fields are those of its JSON
// encoding (json tags). It returns an error if t is not a struct or CEL
// cannot declare it.
func NewObjectEnv(t reflect.Type) (*ObjectEnv, error) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("filters of objects: %v is not a struct", t)
	}
	e := &ObjectEnv{typ: t, estimator: sizeEstimator{bound: objectSize}, cached: map[string]*list.Element{}, recent: list.New()}
	pkg := t.PkgPath()
	e.name = pkg[strings.LastIndex(pkg, "/")+1:] + "." + t.Name()
	stringFields := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		e.fields = append(e.fields, name)
		stringFields[name] = f.Type.Kind() == reflect.String
	}
	e.example = objectExample(stringFields)
	env, err := cel.NewEnv(
		ext.Strings(),
		ext.NativeTypes(t, ext.ParseStructTag("json")),
		cidrLibrary(),
		objectRegexLibrary(),
		cel.ExtendedValidations(),
		cel.Variable(objectVar, cel.ObjectType(e.name)),
	)
	if err != nil {
		return nil, fmt.Errorf("filters of %s: %w", e.name, err)
	}
	e.cel = env
	return e, nil
}

// objectExample returns a filter over one of the string fields of a
// type, for messages.
func objectExample(stringFields map[string]bool) string {
	for _, name := range []string{"description", "name", "domain"} {
		if stringFields[name] {
			return objectVar + "." + name + `.startsWith("prod")`
		}
	}
	if stringFields["started_at"] { // a tunnel session's creation time
		return objectVar + `.started_at >= "2026-01-01"`
	}
	return objectVar + `.created_at >= "2026-01-01"`
}

// objectSize is the size the cost estimate assumes of a string, list or
// map of the object: MaxObjectString, MaxObjectItems.
func objectSize(n cost.AstNode) *cost.SizeEstimate {
	if p := n.Path(); len(p) == 0 || p[0] != objectVar || n.Type() == nil {
		return nil
	}
	switch n.Type().Kind() {
	case types.StringKind, types.BytesKind:
		return &cost.SizeEstimate{Min: 0, Max: MaxObjectString}
	case types.ListKind, types.MapKind:
		return &cost.SizeEstimate{Min: 0, Max: MaxObjectItems}
	}
	return nil
}

// Fields returns the JSON names of the object's fields, in the order of
// the type: those a filter reads as obj.<name>.
func (e *ObjectEnv) Fields() []string { return append([]string(nil), e.fields...) }

// Example returns a filter the environment compiles, for messages, such
// as obj.description.startsWith("prod").
func (e *ObjectEnv) Example() string { return e.example }

// Compile parses and type-checks the filter expr over objects of the
// environment's type, checks its limits (MaxExprLen, MaxObjectCost) and
// returns the program that evaluates it. The expression sees the object
// as obj; it may use the CEL standard library, the string extensions and
// inCIDR, as filters of events do, and must be a boolean.
//
// Compile returns a *CompileError whose Err is ErrEmptyFilter,
// ErrFilterTooLong, ErrNotBoolean, ErrFilterTooCostly, or ErrInvalidFilter
// when CEL rejects the expression, as for a field obj does not have.
func (e *ObjectEnv) Compile(expr string) (*ObjectProgram, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, wholeError(expr, ErrEmptyFilter, "a filter must not be empty: write a boolean expression over obj, such as "+e.example)
	}
	if len(expr) > MaxExprLen {
		return nil, wholeError(expr, ErrFilterTooLong,
			fmt.Sprintf("a filter must be at most %d bytes long, this one is %d", MaxExprLen, len(expr)))
	}
	parsed, iss := e.cel.Parse(expr)
	if iss.Err() != nil {
		return nil, &CompileError{Expr: expr, Issues: celIssues(iss), Err: ErrInvalidFilter}
	}
	if issues := nullComparisons(parsed); len(issues) > 0 {
		return nil, &CompileError{Expr: expr, Issues: issues, Err: ErrInvalidFilter}
	}
	start := startOf(parsed) // before Check, which rewrites the parsed expression
	checked, iss := e.cel.Check(parsed)
	if iss.Err() != nil {
		return nil, &CompileError{Expr: expr, Issues: celIssues(iss), Err: ErrInvalidFilter}
	}
	if t := checked.OutputType(); !t.IsExactType(cel.BoolType) {
		return nil, &CompileError{Expr: expr, Err: ErrNotBoolean, Issues: []Issue{issueAt(start,
			fmt.Sprintf("a filter must be a boolean expression, this one is %s: compare it, as in %s", cel.FormatCELType(t), e.example))}}
	}
	estimate, err := e.cel.EstimateCost(checked, e.estimator)
	if err != nil {
		return nil, fmt.Errorf("estimating the cost of filter %q: %w", expr, err)
	}
	if estimate.Max > MaxObjectCost {
		return nil, wholeError(expr, ErrFilterTooCostly, fmt.Sprintf(
			"the estimated cost of this filter on one resource, up to %d, is above the limit of %d: avoid loops in loops, "+
				"and large regular expressions (to match one of several values, write %s.id in [\"...\", \"...\"])",
			estimate.Max, MaxObjectCost, objectVar))
	}
	prg, err := e.cel.Program(checked,
		cel.CostLimit(MaxObjectCost),
		cel.CostTracking(e.estimator),
		cel.EvalOptions(cel.OptOptimize),
		cel.InterruptCheckFrequency(interruptCheckFrequency),
	)
	if err != nil {
		return nil, wholeError(expr, ErrInvalidFilter, "this filter cannot be evaluated: "+err.Error())
	}
	return &ObjectProgram{env: e, expr: expr, program: prg, loops: hasComprehension(checked), maxTime: MaxEvalTime}, nil
}

// nullComparisons returns an issue for each comparison with null in the
// parsed expression: a field that may be null reads as its zero value, so
// that such a comparison would be false (or not compile) where has() says
// what was meant.
func nullComparisons(parsed *cel.Ast) []Issue {
	a := parsed.NativeRep()
	calls := ast.MatchDescendants(ast.NavigateAST(a), func(e ast.NavigableExpr) bool {
		if e.Kind() != ast.CallKind {
			return false
		}
		fn := e.AsCall().FunctionName()
		return fn == operators.Equals || fn == operators.NotEquals
	})
	var issues []Issue
	for _, call := range calls {
		args := call.AsCall().Args()
		for i, arg := range args {
			if len(args) != 2 || arg.Kind() != ast.LiteralKind || arg.AsLiteral() != types.NullValue {
				continue
			}
			field, ok := selectPath(args[1-i])
			if !ok {
				field = objectVar + ".<field>"
			}
			issues = append(issues, issueAt(a.SourceInfo().GetStartLocation(call.ID()), fmt.Sprintf(
				"a filter cannot compare with null (a field that is null reads as its zero value): "+
					"write !has(%s) for one that is null or empty, has(%s) for one that is set", field, field)))
			break
		}
	}
	return issues
}

// selectPath returns the text of a chain of field selections, such as
// obj.certificate_management_policy.authority.
func selectPath(e ast.Expr) (string, bool) {
	switch e.Kind() {
	case ast.IdentKind:
		return e.AsIdent(), true
	case ast.SelectKind:
		operand, ok := selectPath(e.AsSelect().Operand())
		return operand + "." + e.AsSelect().FieldName(), ok
	}
	return "", false
}

// ObjectProgram is a compiled filter of objects of one type. It is
// immutable and safe for concurrent use.
type ObjectProgram struct {
	env     *ObjectEnv
	expr    string
	program cel.Program
	loops   bool
	maxTime time.Duration
}

// Match reports whether the object v, of the environment's type, passes
// the filter. Like Program.Match, every evaluation is bounded (by
// MaxObjectCost, and by MaxEvalTime for a filter with a loop), a panic is
// recovered, and an error at run time is returned, such as ErrCostLimit,
// an index out of range, a division by zero or a key a map lacks: the
// filter could not decide.
func (p *ObjectProgram) Match(ctx context.Context, v any) (bool, error) {
	ok, _, err := p.match(ctx, v)
	return ok, err
}

// match is Match, which also returns the actual cost of the evaluation.
func (p *ObjectProgram) match(ctx context.Context, v any) (bool, uint64, error) {
	if t := reflect.TypeOf(v); t != p.env.typ {
		return false, 0, fmt.Errorf("an object of %v given to a filter of %s", t, p.env.name)
	}
	act, err := interpreter.NewActivation(map[string]any{objectVar: v})
	if err != nil {
		return false, 0, err
	}
	return evaluate(ctx, p.program, p.loops, p.maxTime, "filter", act)
}

// MaxObjectListCost is the most the evaluations of a filter over one list
// may cost in all, in CEL's cost units: about 65 ms of one core. A list of
// 100 resources may spend MaxObjectCost on each, one of 1,000 (the
// application sessions of an account) a tenth of it on each, on average.
// Without it, a list of 1,000 resources could cost a second of one core
// per request, and one account's requests every core.
const MaxObjectListCost = 2_500_000

// Matcher returns a function that reports whether each object of one
// list passes the filter, as Match does, and that fails with an error
// wrapping ErrListCostLimit once the evaluations it made cost more than
// MaxObjectListCost in all. It is not safe for concurrent use.
func (p *ObjectProgram) Matcher(ctx context.Context) func(v any) (bool, error) {
	var spent uint64
	return func(v any) (bool, error) {
		ok, cost, err := p.match(ctx, v)
		if spent += cost; err == nil && spent > MaxObjectListCost {
			return false, fmt.Errorf("evaluating filter: %w: over %d", ErrListCostLimit, MaxObjectListCost)
		}
		return ok, err
	}
}
