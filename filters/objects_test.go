package filters

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testPolicy and testObject are a resource body as the API shows one: a
// nested object that may be null, a string that may be null, a list, a
// map, a time.
type testPolicy struct {
	Authority string `json:"authority"`
}

type testObject struct {
	ID          string            `json:"id"`
	Description string            `json:"description"`
	CreatedAt   string            `json:"created_at"`
	Region      *string           `json:"region"`
	Policy      *testPolicy       `json:"certificate_management_policy"`
	ACL         []string          `json:"acl"`
	Labels      map[string]string `json:"labels,omitempty"`
	Seen        time.Time         `json:"seen"`
	Active      bool              `json:"active"`
	Count       int               `json:"count"`
	secret      string            //lint:ignore U1000 an unexported field, which a filter cannot read
	Hidden      string            `json:"-"`
}

func newTestObjectEnv(t testing.TB) *ObjectEnv {
	t.Helper()
	env, err := NewObjectEnv(reflect.TypeFor[testObject]())
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestObjectEnvFields(t *testing.T) {
	env := newTestObjectEnv(t)
	want := []string{"id", "description", "created_at", "region", "certificate_management_policy", "acl", "labels", "seen", "active", "count"}
	if got := env.Fields(); !reflect.DeepEqual(got, want) {
		t.Errorf("Fields() = %v, want %v", got, want)
	}
	if got := env.Example(); got != `obj.description.startsWith("prod")` {
		t.Errorf("Example() = %q", got)
	}
	if _, err := env.Compile(env.Example()); err != nil {
		t.Errorf("the example does not compile: %v", err)
	}
	if _, err := NewObjectEnv(reflect.TypeFor[string]()); err == nil {
		t.Error("NewObjectEnv(string) succeeded")
	}
}

func TestObjectFilters(t *testing.T) {
	env := newTestObjectEnv(t)
	eu := "eu"
	full := testObject{
		ID: "x_1", Description: "prod-api", CreatedAt: "2026-03-01T10:00:00.000Z", Region: &eu,
		Policy: &testPolicy{Authority: "letsencrypt"}, ACL: []string{"bind:a.example.com", "*"},
		Labels: map[string]string{"team": "edge"}, Seen: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Active: true, Count: 3,
	}
	empty := testObject{ID: "x_2", Description: "dev"}
	for _, tc := range []struct {
		expr        string
		full, empty bool
	}{
		{`obj.description.startsWith("prod")`, true, false},
		{`obj.id == "x_2"`, false, true},
		{`obj.region == "eu"`, true, false},
		{`has(obj.region)`, true, false},
		{`!has(obj.region) || obj.region == ""`, false, true},
		{`!has(obj.certificate_management_policy)`, false, true},
		{`obj.certificate_management_policy.authority == "letsencrypt"`, true, false},
		{`has(obj.certificate_management_policy.authority)`, true, false},
		{`"*" in obj.acl`, true, false},
		{`obj.acl.exists(r, r.endsWith(".example.com"))`, true, false},
		{`obj.acl.size() == 0`, false, true},
		{`"team" in obj.labels && obj.labels.team == "edge"`, true, false},
		{`obj.created_at >= "2026-01-01"`, true, false},
		{`obj.created_at != "" && timestamp(obj.created_at) > timestamp("2026-02-01T00:00:00Z")`, true, false},
		{`obj.seen > timestamp("2026-01-01T00:00:00Z")`, true, false},
		{`obj.active && obj.count > 2`, true, false},
		{`obj.description.matches("^prod-")`, true, false},
	} {
		p, err := env.Compile(tc.expr)
		if err != nil {
			t.Errorf("Compile(%s): %v", tc.expr, err)
			continue
		}
		for _, c := range []struct {
			v    testObject
			want bool
		}{{full, tc.full}, {empty, tc.empty}} {
			got, err := p.Match(t.Context(), c.v)
			if err != nil || got != c.want {
				t.Errorf("%s on %s = %v, %v; want %v", tc.expr, c.v.ID, got, err, c.want)
			}
		}
	}
}

func TestObjectFilterErrors(t *testing.T) {
	env := newTestObjectEnv(t)
	for _, tc := range []struct {
		name, expr string
		err        error
		line, col  int    // of the first issue; 0: about the whole
		msg        string // in the error
	}{
		{"unknown field", `obj.descripton == "x"`, ErrInvalidFilter, 1, 4, "undefined field 'descripton'"},
		{"unexported field", `obj.secret == "x"`, ErrInvalidFilter, 1, 4, "undefined field 'secret'"},
		{"json dash field", `obj.Hidden == "x"`, ErrInvalidFilter, 1, 4, "undefined field 'Hidden'"},
		{"nested unknown field", `obj.certificate_management_policy.authorty == "x"`, ErrInvalidFilter, 1, 34, "undefined field 'authorty'"},
		{"unknown variable", `ev.conn.server_port == 443`, ErrInvalidFilter, 1, 1, "undeclared reference to 'ev'"},
		{"not boolean", `obj.description`, ErrNotBoolean, 1, 1, "must be a boolean expression, this one is string"},
		{"syntax error", `obj.description ==`, ErrInvalidFilter, 1, 19, "Syntax error"},
		{"null", `obj.certificate_management_policy == null`, ErrInvalidFilter, 1, 35, "!has(obj.certificate_management_policy)"},
		{"null on the left", `null != obj.region`, ErrInvalidFilter, 1, 6, "has(obj.region)"},
		{"wrong type", `obj.count == "3"`, ErrInvalidFilter, 1, 11, "no matching overload"},
		{"empty", `  `, ErrEmptyFilter, 0, 0, "must not be empty"},
		{"too long", `obj.id == "` + strings.Repeat("a", MaxExprLen) + `"`, ErrFilterTooLong, 0, 0, "at most 4096 bytes"},
		{"too costly", `obj.acl.all(a, obj.acl.all(b, a + b != obj.description))`, ErrFilterTooCostly, 0, 0, "above the limit of 25000"},
		{"computed regex", `obj.description.matches(obj.id)`, ErrInvalidFilter, 1, 28, "taken from the resource"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := env.Compile(tc.expr)
			var ce *CompileError
			if !errors.As(err, &ce) || !errors.Is(err, tc.err) || !errors.Is(err, ErrInvalidFilter) {
				t.Fatalf("Compile(%s) = %v, want a *CompileError of %v", tc.expr, err, tc.err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
			if iss := ce.Issues[0]; iss.Line != tc.line || iss.Column != tc.col {
				t.Errorf("first issue at %d:%d, want %d:%d (%v)", iss.Line, iss.Column, tc.line, tc.col, err)
			}
		})
	}
}

func TestObjectFilterRuntimeErrors(t *testing.T) {
	env := newTestObjectEnv(t)
	for _, expr := range []string{
		`obj.acl[3] == "x"`,
		`obj.labels.missing == "x"`,
		`10 / obj.count == 1`,
	} {
		p, err := env.Compile(expr)
		if err != nil {
			t.Fatalf("Compile(%s): %v", expr, err)
		}
		if ok, err := p.Match(t.Context(), testObject{}); err == nil {
			t.Errorf("%s on an empty object = %v, want an error", expr, ok)
		}
	}
	p, _ := env.Compile(`obj.id == ""`)
	if _, err := p.Match(t.Context(), &testObject{}); err == nil {
		t.Error("Match of a pointer: no error")
	}
}

// TestObjectFilterCostLimit checks that an evaluation on an object larger
// than the estimate assumes is stopped at MaxObjectCost.
func TestObjectFilterCostLimit(t *testing.T) {
	env := newTestObjectEnv(t)
	p, err := env.Compile(`obj.acl.exists(a, a.startsWith("x"))`)
	if err != nil {
		t.Fatal(err)
	}
	big := testObject{ACL: make([]string, 100*MaxObjectItems)}
	if _, err := p.Match(t.Context(), big); !errors.Is(err, ErrCostLimit) {
		t.Errorf("Match on a large object: %v, want ErrCostLimit", err)
	}
}

// FuzzObjectFilter checks that no expression makes Compile or Match of a
// filter of objects panic, and that Compile's errors are of the documented
// kinds.
func FuzzObjectFilter(f *testing.F) {
	for _, seed := range []string{
		`obj.description.startsWith("prod")`,
		`obj.certificate_management_policy.authority == "letsencrypt"`,
		`obj.acl.exists(a, a.matches("^bind:"))`,
		`obj.labels["x"] == "y"`,
		`obj.acl[5] == ""`,
		`has(obj.region) ? obj.region == "eu" : false`,
		`timestamp(obj.created_at) > now`,
		`obj ==`,
		`1 / obj.count == 0`,
	} {
		f.Add(seed)
	}
	env := newTestObjectEnv(f)
	eu := "eu"
	objects := []testObject{{}, {ID: "x", Region: &eu, Policy: &testPolicy{}, ACL: []string{"*"}, Labels: map[string]string{"x": "y"}, CreatedAt: "2026-01-01T00:00:00.000Z"}}
	f.Fuzz(func(t *testing.T, expr string) {
		p, err := env.Compile(expr)
		if err != nil {
			if !errors.Is(err, ErrInvalidFilter) {
				t.Fatalf("Compile(%q): error %v is not an ErrInvalidFilter", expr, err)
			}
			return
		}
		for _, v := range objects {
			_, _ = p.Match(t.Context(), v)
		}
	})
}

// BenchmarkObjectCompile measures compiling a typical list filter, which
// each filtered list request does (about 60 µs, against the milliseconds
// of reading the account's resources from the store).
func BenchmarkObjectCompile(b *testing.B) {
	env := newTestObjectEnv(b)
	for b.Loop() {
		if _, err := env.Compile(`obj.description.startsWith("prod") && "*" in obj.acl`); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkObjectMatch measures evaluating it on one object.
func BenchmarkObjectMatch(b *testing.B) {
	env := newTestObjectEnv(b)
	p, err := env.Compile(`obj.description.startsWith("prod") && "*" in obj.acl`)
	if err != nil {
		b.Fatal(err)
	}
	v := testObject{Description: "prod-1", ACL: []string{"bind:a.example.com", "*"}}
	for b.Loop() {
		if _, err := p.Match(b.Context(), v); err != nil {
			b.Fatal(err)
		}
	}
}

func TestObjectProgramCache(t *testing.T) {
	env := newTestObjectEnv(t)
	first, err := env.Program(`obj.id == "0"`)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := env.Program(`obj.id == "0"`); again != first {
		t.Error("the second Program of a filter compiled it again")
	}
	if _, err := env.Program(`obj.nope`); !errors.Is(err, ErrInvalidFilter) {
		t.Errorf("Program of a bad filter: %v", err)
	}
	for i := range ObjectCacheSize {
		if _, err := env.Program(`obj.id == "` + strings.Repeat("x", i+1) + `"`); err != nil {
			t.Fatal(err)
		}
	}
	if env.recent.Len() != ObjectCacheSize || len(env.cached) != ObjectCacheSize {
		t.Errorf("the cache holds %d, %d programs, want %d", env.recent.Len(), len(env.cached), ObjectCacheSize)
	}
	if again, _ := env.Program(`obj.id == "0"`); again == first {
		t.Error("the least recently used filter stayed in the cache")
	}
}

// TestObjectMatcherListCost: a Matcher fails with ErrListCostLimit once
// its evaluations cost MaxObjectListCost in all, and not before.
func TestObjectMatcherListCost(t *testing.T) {
	env := newTestObjectEnv(t)
	ints := "[" + strings.Repeat("1,", 54) + "1]"
	prg, err := env.Compile(ints + ".all(x, " + ints + ".all(y, x * y > 0)) && obj.id == \"\"")
	if err != nil {
		t.Fatal(err)
	}
	match := prg.Matcher(t.Context())
	evaluations := 0
	for ; evaluations < 1000; evaluations++ {
		if _, err = match(testObject{ID: "x"}); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrListCostLimit) || evaluations < MaxObjectListCost/MaxObjectCost {
		t.Fatalf("after %d evaluations: %v, want ErrListCostLimit after at least %d", evaluations, err, MaxObjectListCost/MaxObjectCost)
	}
	if _, err := prg.Matcher(t.Context())(testObject{ID: "x"}); err != nil {
		t.Fatalf("a new Matcher: %v", err)
	}
}

// TestObjectTimeZoneCost: a timestamp accessor given a time zone, which
// loads the zone at each call, costs at run time what the estimate
// charges, so that the cost limits of an evaluation and of a list count
// it rather than an addition.
func TestObjectTimeZoneCost(t *testing.T) {
	env := newTestObjectEnv(t)
	prg, err := env.Compile(`obj.seen.getHours("Europe/Paris") > 1`)
	if err != nil {
		t.Fatal(err)
	}
	if _, cost, err := prg.match(t.Context(), testObject{}); err != nil || cost < timeZoneCost {
		t.Fatalf("cost %d (%v), want at least %d", cost, err, timeZoneCost)
	}
}
