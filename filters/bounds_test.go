package filters

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/decls"
	"cel.dev/cel-go/common/operators"
	celtypes "cel.dev/cel-go/common/types"

	"github.com/sluicehq/sluice/schemas"
)

// The bounds every evaluation of a filter that compiles must stay within,
// with every field at its maximum size: generous (a filter at MaxCost takes
// about 4 ms and allocates well under a megabyte), but far below what one
// evaluation took before fields had a maximum (370 MB, 9 s).
const (
	maxEvalAlloc = 16 << 20
	maxEvalWall  = 250 * time.Millisecond
)

// filterGen generates filter expressions from the functions declared in a
// kind's CEL environment, every overload of every function, so that a
// function added to the environment is covered without listing it here.
type filterGen struct {
	rng       *rand.Rand
	overloads []overload
}

// overload is one way of calling a function of the environment.
type overload struct {
	function string
	decl     *decls.OverloadDecl
}

func newFilterGen(t testing.TB, ke *kindEnv, seed uint64) *filterGen {
	t.Helper()
	g := &filterGen{rng: rand.New(rand.NewPCG(seed, seed^0x5eed))}
	functions := ke.cel.Functions()
	names := make([]string, 0, len(functions))
	for name := range functions {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if strings.HasPrefix(name, "@") && name != operators.In {
			continue // internal helpers of macros, not callable in an expression
		}
		for _, o := range functions[name].OverloadDecls() {
			g.overloads = append(g.overloads, overload{function: name, decl: o})
		}
	}
	if len(g.overloads) < 100 {
		t.Fatalf("only %d overloads in the environment", len(g.overloads))
	}
	return g
}

// literal returns a string literal of n bytes that are awkward for string
// functions: format verbs, regular expression syntax, separators.
func (g *filterGen) literal(n int) string {
	const alphabet = "a%s.*(|)\\\\ -,x"
	var b strings.Builder
	b.WriteByte('\'')
	for b.Len() < n+1 {
		c := alphabet[g.rng.IntN(len(alphabet))]
		if c == '\\' {
			b.WriteString(`\\`)
			continue
		}
		b.WriteByte(c)
	}
	b.WriteByte('\'')
	return b.String()
}

// longLength is the length of an adversarial literal: up to what fits in
// MaxExprLen beside the rest of a filter.
func (g *filterGen) longLength() int {
	return []int{0, 1, 16, 390, 1000, 2000, 3900}[g.rng.IntN(7)]
}

// arg returns an expression of type t, calling a function of the
// environment while depth allows.
func (g *filterGen) arg(t *celtypes.Type, depth int) string {
	if depth > 0 && g.rng.IntN(3) == 0 {
		if call, ok := g.callOf(t, depth-1); ok {
			return call
		}
	}
	switch t.Kind() {
	case celtypes.StringKind:
		return pick(g.rng, "ev.conn.server_name", "ev.conn.client_ip", "ev.conn.server_ip", "''", "'%s'", g.literal(g.longLength()))
	case celtypes.IntKind:
		return pick(g.rng, "0", "1", "-1", "ev.conn.server_port", "4096", "9223372036854775807", "-9223372036854775808", "1000000")
	case celtypes.UintKind:
		return pick(g.rng, "0u", "1u", "18446744073709551615u")
	case celtypes.DoubleKind:
		return pick(g.rng, "0.0", "1e308", "-1.5", "1e-300")
	case celtypes.BoolKind:
		return pick(g.rng, "true", "false")
	case celtypes.BytesKind:
		return pick(g.rng, "b''", "b'abc'", "bytes(ev.conn.server_name)")
	case celtypes.NullTypeKind:
		return "null"
	case celtypes.TimestampKind:
		return pick(g.rng, "timestamp('2026-01-01T00:00:00Z')", "timestamp('9999-12-31T23:59:59Z')")
	case celtypes.DurationKind:
		return pick(g.rng, "duration('1h')", "duration('-87600h')")
	case celtypes.TypeKind:
		return pick(g.rng, "type(1)", "string")
	case celtypes.ListKind:
		elem := celtypes.DynType
		if p := t.Parameters(); len(p) == 1 {
			elem = p[0]
		}
		if elem.Kind() == celtypes.IntKind || g.rng.IntN(4) == 0 {
			return zeros(g.rng.IntN(200))
		}
		n := g.rng.IntN(4)
		elems := make([]string, n)
		for i := range elems {
			elems[i] = g.arg(elem, depth)
		}
		return "[" + strings.Join(elems, ", ") + "]"
	case celtypes.MapKind:
		return pick(g.rng, "{}", "{'a': 1}", "{'a': ev.conn.server_name, 'b': 'x'}", "{1: [0, 1]}")
	}
	// A type parameter, dyn or any: a value of some type.
	return g.arg(pick(g.rng, celtypes.StringType, celtypes.IntType, celtypes.NewListType(celtypes.StringType), celtypes.BoolType), depth)
}

func pick[T any](rng *rand.Rand, choices ...T) T { return choices[rng.IntN(len(choices))] }

// callOf returns a call of a random overload whose result has type t, or
// false if the tries found none.
func (g *filterGen) callOf(t *celtypes.Type, depth int) (string, bool) {
	for range 20 {
		o := g.overloads[g.rng.IntN(len(g.overloads))]
		if r := o.decl.ResultType(); r.Kind() == t.Kind() || t.IsAssignableType(r) {
			return g.call(o, depth), true
		}
	}
	return "", false
}

// call renders a call of the overload with generated arguments.
func (g *filterGen) call(o overload, depth int) string {
	argTypes := o.decl.ArgTypes()
	args := make([]string, len(argTypes))
	for i, t := range argTypes {
		args[i] = g.arg(t, depth)
	}
	switch {
	case o.function == operators.Conditional:
		return "(" + args[0] + " ? " + args[1] + " : " + args[2] + ")"
	case o.function == operators.Index:
		return "(" + args[0] + ")[" + args[1] + "]"
	case o.function == operators.In:
		return "(" + args[0] + " in " + args[1] + ")"
	}
	if op, ok := operators.FindReverse(o.function); ok && op != "" {
		if len(args) == 1 {
			return op + "(" + args[0] + ")"
		}
		return "(" + args[0] + " " + op + " " + args[1] + ")"
	}
	if o.decl.IsMemberFunction() {
		return "(" + args[0] + ")." + o.function + "(" + strings.Join(args[1:], ", ") + ")"
	}
	return o.function + "(" + strings.Join(args, ", ") + ")"
}

// filter returns a boolean filter evaluating expr, sometimes in a loop or a
// loop in a loop, the only constructs whose cost multiplies.
func (g *filterGen) filter(expr string) string {
	body := "[" + expr + "].size() == 1"
	switch g.rng.IntN(4) {
	case 0:
		return fmt.Sprintf("%s.all(i, %s)", zeros(1+g.rng.IntN(300)), body)
	case 1:
		return fmt.Sprintf("%s.exists(i, %s.exists(j, %s))", zeros(1+g.rng.IntN(100)), zeros(1+g.rng.IntN(100)), strings.Replace(body, "== 1", "== 2", 1))
	}
	return body
}

// next returns a generated filter: a call of the overload at index i, or
// of a random one when i is negative.
func (g *filterGen) next(i int) string {
	if i < 0 {
		i = g.rng.IntN(len(g.overloads))
	}
	return g.filter(g.call(g.overloads[i], 2))
}

// maxFields returns the fields of the kind with every string at its
// maximum length.
func maxFields(t testing.TB, p *Program, char byte) *Fields {
	t.Helper()
	f := p.NewFields()
	for _, v := range p.kind.vars {
		switch v.typ {
		case schemas.TypeString:
			if err := f.SetString(v.path, strings.Repeat(string(char), v.maxBytes)); err != nil {
				t.Fatal(err)
			}
		case schemas.TypeInt32, schemas.TypeInt64:
			if err := f.SetInt(v.path, 65535); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f
}

// trackedProgram returns p's expression planned to count its actual cost,
// as Compile plans only a filter with a loop: the cost of one without is
// the estimate's to bound, and checkBounds checks that it does.
func trackedProgram(t testing.TB, p *Program) cel.Program {
	t.Helper()
	checked, iss := p.kind.cel.Compile(p.expr)
	if iss.Err() != nil {
		t.Fatalf("%s: %v", p.expr, iss.Err())
	}
	prg, err := p.kind.cel.Program(checked, programOptions(true, p.kind.estimator)...)
	if err != nil {
		t.Fatalf("%s: %v", p.expr, err)
	}
	return prg
}

// checkBounds compiles expr and, if it compiles, evaluates it on fields at
// their maximum sizes, of 'a', of '%' and of backslashes (which
// strings.quote doubles): its actual cost must be within its estimate, it must
// not panic or time out, and it must stay within maxEvalAlloc and
// maxEvalWall (the best of three tries, for a shared machine).
func checkBounds(t *testing.T, env *Env, expr string) (compiled bool) {
	t.Helper()
	p, err := env.Compile(httpKind, expr)
	if err != nil {
		if !errors.Is(err, ErrInvalidFilter) {
			t.Fatalf("Compile(%q): error %v is not an ErrInvalidFilter", expr, err)
		}
		return false
	}
	tracked := trackedProgram(t, p)
	for _, char := range []byte{'a', '%', '\\'} {
		fields := maxFields(t, p, char)
		_, det, evalErr := tracked.Eval(fields)
		if evalErr != nil && strings.Contains(evalErr.Error(), "internal error") {
			t.Fatalf("%s: evaluation panicked: %v", expr, evalErr)
		}
		if det == nil || det.ActualCost() == nil {
			t.Fatalf("%s: no actual cost", expr)
		}
		if actual := *det.ActualCost(); actual > p.Cost() {
			t.Errorf("%s: actual cost %d is above the estimate %d", expr, actual, p.Cost())
		}
		alloc, wall := uint64(1<<63), time.Duration(1<<62)
		for range 3 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := p.Match(t.Context(), fields)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if errors.Is(err, ErrEvalPanic) || errors.Is(err, ErrCostLimit) || errors.Is(err, ErrEvalTimeout) {
				t.Fatalf("%s: Match: %v", expr, err)
			}
			alloc, wall = min(alloc, after.TotalAlloc-before.TotalAlloc), min(wall, took)
			if alloc <= maxEvalAlloc && wall <= maxEvalWall {
				break
			}
		}
		if alloc > maxEvalAlloc || wall > maxEvalWall {
			t.Errorf("%s (estimated cost %d): one evaluation allocated %d bytes in %v; the bounds are %d bytes and %v",
				expr, p.Cost(), alloc, wall, maxEvalAlloc, maxEvalWall)
		}
	}
	return true
}

// TestFiltersStayWithinBounds generates filters from every overload of the
// environment's functions, with adversarial literals and fields at their
// maximum sizes, and checks that each filter that compiles evaluates within
// its estimate and the bounds. It is seeded, so a failure repeats; run it
// longer with FuzzFilterBounds.
func TestFiltersStayWithinBounds(t *testing.T) {
	env := newTestEnv(t)
	ke, err := env.kind(httpKind)
	if err != nil {
		t.Fatal(err)
	}
	g := newFilterGen(t, ke, 11)
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	compiled, total := 0, 0
	for range rounds {
		for i := range g.overloads {
			expr := g.next(i)
			total++
			if checkBounds(t, env, expr) {
				compiled++
			}
		}
	}
	for range 200 {
		total++
		if checkBounds(t, env, g.next(-1)) {
			compiled++
		}
	}
	t.Logf("%d overloads; %d of %d generated filters compiled and stayed within the bounds", len(g.overloads), compiled, total)
	if compiled < total/4 {
		t.Errorf("only %d of %d generated filters compiled: the generator tests little", compiled, total)
	}
}

// FuzzFilterBounds is TestFiltersStayWithinBounds with the seed and the
// overload chosen by the fuzzer.
func FuzzFilterBounds(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed, int(seed)*7)
	}
	env := newTestEnv(f)
	ke, err := env.kind(httpKind)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, seed uint64, i int) {
		g := newFilterGen(t, ke, seed)
		checkBounds(t, env, g.next(i%len(g.overloads)))
	})
}

// TestRegexFunctionsAreChecked checks that every function of the
// environment that takes a regular expression is one regexArgument knows,
// so its pattern must be a literal.
func TestRegexFunctionsAreChecked(t *testing.T) {
	env := newTestEnv(t)
	ke, err := env.kind(httpKind)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for name := range ke.cel.Functions() {
		if name == "matches" || strings.HasPrefix(name, "regex.") || strings.Contains(strings.ToLower(name), "regex") {
			found = true
			if _, ok := regexArgument(name); !ok {
				t.Errorf("function %s takes a regular expression but regexArgument does not know it", name)
			}
		}
	}
	if !found {
		t.Error("no regular expression function in the environment: matches is missing")
	}
}
