package filters

import (
	"context"
	"errors"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types/ref"
)

// TestIssueReproductionReplace is the first filter of issue 11: its
// estimate assumed a server name of 253 bytes, but a million-byte one made
// one evaluation allocate 370 MB. Such a value is refused now, and at its
// maximum the evaluation is small.
func TestIssueReproductionReplace(t *testing.T) {
	env := newTestEnv(t)
	p := mustCompile(t, env, httpKind, `ev.conn.server_name.replace('', '`+strings.Repeat("x", 390)+`') == 'x'`)
	f := p.NewFields()
	if err := f.SetString("conn.server_name", strings.Repeat("a", 1_000_000)); !errors.Is(err, ErrFieldTooLong) {
		t.Fatalf("SetString of a million bytes: error %v, want ErrFieldTooLong", err)
	}
	if err := f.SetString("conn.server_name", strings.Repeat("a", 253)); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	ok, err := p.Match(t.Context(), f)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if ok || err != nil {
		t.Fatalf("Match = %v, %v; want false", ok, err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("one evaluation on a 253-byte server name: %d bytes allocated, %v", alloc, took)
	if alloc > 4<<20 {
		t.Errorf("one evaluation allocated %d bytes, want at most 4 MiB", alloc)
	}
}

// TestIssueReproductionMatches is the second filter of issue 11, whose
// cost grew with the square of the field: a regular expression must be a
// string literal, in every form.
func TestIssueReproductionMatches(t *testing.T) {
	env := newTestEnv(t)
	for _, expr := range []string{
		`ev.conn.server_name.matches(ev.conn.server_name)`,
		`matches(ev.conn.server_name, ev.conn.server_name)`,
		`'api.example.com'.matches(ev.conn.server_name)`,
		`ev.conn.server_name.matches('^' + 'api')`,
		`ev.conn.server_name.matches(ev.conn.client_ip.replace('.', '[.]'))`,
		`[ev.conn.server_name].exists(re, 'x'.matches(re))`,
	} {
		_, err := env.Compile(httpKind, expr)
		var ce *CompileError
		if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("Compile(%s): error %v, want a *CompileError", expr, err)
			continue
		}
		if !strings.Contains(err.Error(), "regular expression of matches must be a constant string") {
			t.Errorf("Compile(%s): error %q does not say the pattern must be a constant", expr, err)
		}
		if len(ce.Issues) == 0 || ce.Issues[0].Column == 0 {
			t.Errorf("Compile(%s): issues %v have no position", expr, ce.Issues)
		}
	}
	for _, expr := range []string{
		`ev.conn.server_name.matches('^api[.]')`,
		`matches(ev.conn.server_name, "example[.]com$")`,
	} {
		if _, err := env.Compile(httpKind, expr); err != nil {
			t.Errorf("Compile(%s): %v", expr, err)
		}
	}
}

// TestRegexCostIsItsProgram checks that a short pattern with a large
// program, whose matching takes milliseconds on a host name, is charged by
// its program, and refused past MaxCost.
func TestRegexCostIsItsProgram(t *testing.T) {
	env := newTestEnv(t)
	small := mustCompile(t, env, httpKind, `ev.conn.server_name.matches('^api[.]')`)
	if small.Cost() > 1000 {
		t.Errorf("cost of a short regular expression = %d, want under 1,000", small.Cost())
	}
	for _, expr := range []string{
		`ev.conn.server_name.matches('((a{100}){10}x)|b')`,
		`ev.conn.server_name.matches('(a{1000}){1000}')`,
	} {
		if p, err := env.Compile(httpKind, expr); !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("Compile(%s) = cost %v, error %v; want it refused", expr, p, err)
		}
	}
}

// TestRegexCompiledOnce checks that a regular expression is compiled with
// the program, not at each evaluation: compiling one allocates dozens of
// times.
func TestRegexCompiledOnce(t *testing.T) {
	env := newTestEnv(t)
	plain := mustCompile(t, env, httpKind, `ev.conn.server_name.startsWith('api')`)
	const pattern = `^(api|www|mail)[.][a-z]+[.](com|org|net)$`
	regex := mustCompile(t, env, httpKind, `ev.conn.server_name.matches('`+pattern+`')`)
	allocs := func(p *Program) float64 {
		f := p.NewFields()
		_ = f.SetString("conn.server_name", "api.example.com")
		return testing.AllocsPerRun(100, func() { _, _ = p.Match(context.Background(), f) })
	}
	compiling := testing.AllocsPerRun(10, func() { regexp.MustCompile(pattern) })
	if a, b := allocs(plain), allocs(regex); b >= a+compiling/2 {
		t.Errorf("a regex filter allocates %v times per evaluation, a plain one %v, compiling the pattern %v: the pattern is compiled each time", b, a, compiling)
	}
}

// panicking is a CEL program that panics when evaluated.
type panicking struct{ cel.Program }

func (panicking) Eval(any) (ref.Val, *cel.EvalDetails, error) { panic("boom") }
func (panicking) ContextEval(context.Context, any) (ref.Val, *cel.EvalDetails, error) {
	panic("boom")
}

// TestMatchBoundsErrors checks the errors of an evaluation that goes past
// a bound: the cost limit, the wall-clock limit, a panic, and that a
// cancelled caller's context is not taken for a filter too slow.
func TestMatchBoundsErrors(t *testing.T) {
	env := newTestEnv(t)
	ke, err := env.kind(httpKind)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("cost limit", func(t *testing.T) {
		p := mustCompile(t, env, httpKind, `ev.conn.server_name.split('a').size() > 1`)
		checked, iss := ke.cel.Compile(p.expr)
		if iss.Err() != nil {
			t.Fatal(iss.Err())
		}
		if p.program, err = ke.cel.Program(checked, cel.CostLimit(10)); err != nil {
			t.Fatal(err)
		}
		_, err := p.Match(t.Context(), maxFields(t, p, 'a'))
		if !errors.Is(err, ErrCostLimit) {
			t.Errorf("error %v, want ErrCostLimit", err)
		}
	})
	t.Run("wall clock", func(t *testing.T) {
		p := mustCompile(t, env, httpKind, zeros(1000)+`.all(i, i == 0)`)
		p.maxTime = time.Nanosecond
		if _, err := p.Match(t.Context(), nil); !errors.Is(err, ErrEvalTimeout) {
			t.Errorf("error %v, want ErrEvalTimeout", err)
		}
	})
	t.Run("caller cancelled", func(t *testing.T) {
		p := mustCompile(t, env, httpKind, `[1, 2].exists(x, x == ev.conn.server_port)`)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := p.Match(ctx, nil)
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrEvalTimeout) {
			t.Errorf("error %v, want context.Canceled and not ErrEvalTimeout", err)
		}
	})
	t.Run("panic", func(t *testing.T) {
		for _, expr := range []string{`ev.conn.server_port == 1`, `[1].exists(x, x == ev.conn.server_port)`} {
			p := mustCompile(t, env, httpKind, expr)
			p.program = panicking{p.program}
			ok, err := p.Match(t.Context(), nil)
			if ok || !errors.Is(err, ErrEvalPanic) || !strings.Contains(err.Error(), "boom") {
				t.Errorf("%s: Match = %v, %v; want ErrEvalPanic saying boom", expr, ok, err)
			}
		}
	})
}

// TestConstantErrorsAreInvalidFilters checks that a constant that cannot
// be evaluated, found when the program is planned, is an invalid filter
// (a 400 to whoever wrote it), not an internal error.
func TestConstantErrorsAreInvalidFilters(t *testing.T) {
	env := newTestEnv(t)
	for _, expr := range []string{`[double('')].size() == 1`, `int('x') == 1`} {
		if _, err := env.Compile(httpKind, expr); !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("Compile(%s): error %v, want ErrInvalidFilter", expr, err)
		}
	}
}

// TestTimeZoneAccessorsAreCharged checks the cost of a timestamp accessor
// given a time zone, which loads the zone at each call: in a loop it used
// to allocate 180 MB in one evaluation while estimated under MaxCost.
func TestTimeZoneAccessorsAreCharged(t *testing.T) {
	env := newTestEnv(t)
	expr := zeros(90) + `.exists(i, ` + zeros(50) + `.exists(j, timestamp('2026-01-01T00:00:00Z').getMinutes('Europe/Paris') == 61))`
	if _, err := env.Compile(httpKind, expr); !errors.Is(err, ErrFilterTooCostly) {
		t.Errorf("Compile: error %v, want ErrFilterTooCostly", err)
	}
	mustCompile(t, env, httpKind, `timestamp('2026-01-01T00:00:00Z').getHours('Europe/Paris') == 1`)
}

// TestQuoteAndFormatAreCharged checks the cost of strings.quote and format,
// which CEL prices like a short string operation: a quote of a quote of ...
// a field of backslashes doubles at each level (11 levels took 26 ms and
// 15 MB an event at an estimate under MaxCost), and a format of a few
// hundred %.100f clauses took 2 ms at an estimate of 192. Both are refused
// now; a plain quote or format compiles, and a filter of quotes that
// compiles evaluates within the bounds on fields of backslashes.
func TestQuoteAndFormatAreCharged(t *testing.T) {
	env := newTestEnv(t)
	quote := func(levels int, x string) string {
		for range levels {
			x = "strings.quote(" + x + ")"
		}
		return x
	}
	for _, expr := range []string{
		quote(11, "ev.conn.server_name") + ".size() == 0",
		quote(8, "ev.conn.server_name") + ".size() == 0",
		"'" + strings.Repeat("%.100f", 300) + "'.format([" + strings.Repeat("1e308, ", 299) + "1e308]) == ''",
	} {
		if _, err := env.Compile(httpKind, expr); !errors.Is(err, ErrFilterTooCostly) {
			t.Errorf("Compile(%.60s...): error %v, want ErrFilterTooCostly", expr, err)
		}
	}
	mustCompile(t, env, httpKind, `'%s:%d'.format([ev.conn.server_name, ev.conn.server_port]) == 'a.example.com:443'`)
	mustCompile(t, env, httpKind, quote(1, "ev.conn.server_name")+` == '"a.example.com"'`)
	for _, char := range []byte{'\\', '"', 'a'} {
		p := mustCompile(t, env, httpKind, quote(4, "ev.conn.server_name")+`.size() == 0`)
		start := time.Now()
		if _, err := p.Match(t.Context(), maxFields(t, p, char)); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > maxEvalWall {
			t.Errorf("4 quotes of a field of %q took %v, above %v", char, took, maxEvalWall)
		}
	}
}
