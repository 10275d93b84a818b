package filters

import (
	"cmp"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"
)

// maxRegexProgram is the largest regular expression a filter may hold, in
// instructions of its compiled program (regexp/syntax). Matching costs
// about the program's size per byte of input, and a short pattern can make
// a large program ("a{1000}" is 1,000 instructions), so the cost estimate
// charges a regular expression by its program size and this bounds it. A
// pattern of every host name of a long allow list stays under it.
const maxRegexProgram = 5000

// regexLib requires the regular expression of matches to be a string
// literal, compiles it once when the program is built, and bounds its size.
// example is a call of matches on a field, for its message; "" for an
// event's (ev.conn.server_name.matches('^api[.]')).
type regexLib struct{ example string }

// LibraryName makes the library a singleton in an environment.
func (regexLib) LibraryName() string { return "sluice.filters.regex" }

// CompileOptions declare the check of regular expressions.
func (l regexLib) CompileOptions() []cel.EnvOption {
	example := cmp.Or(l.example, "ev.conn.server_name.matches('^api[.]')")
	return []cel.EnvOption{
		cel.ASTValidators(regexLiterals{example: example}),
		cel.RegexProgramSizeLimit(maxRegexProgram),
	}
}

// ProgramOptions compile each regular expression once, when the program is
// built, rather than at each evaluation.
func (regexLib) ProgramOptions() []cel.ProgramOption {
	return []cel.ProgramOption{cel.OptimizeRegex(interpreter.MatchesRegexOptimization)}
}

func regexLibrary() cel.EnvOption { return cel.Lib(regexLib{}) }

// objectRegexLibrary is regexLibrary for filters of objects (ObjectEnv),
// whose message gives an example over obj.
func objectRegexLibrary() cel.EnvOption {
	return cel.Lib(regexLib{example: objectVar + ".description.matches('^prod-')"})
}

// regexArgument returns the position of the regular expression among the
// arguments of a function that takes one, counting the receiver of a
// method call as the first, and whether the function takes one. It lists
// the regular expression functions of cel-go (the standard matches and
// the regex extension's), so that adding a library of them to the
// environment keeps them checked; TestRegexFunctionsAreChecked fails when
// the environment has one this does not know.
func regexArgument(function string) (int, bool) {
	switch function {
	case "matches", "regex.extract", "regex.extractAll", "regex.replace":
		return 1, true
	}
	return 0, false
}

// regexLiterals rejects, when the filter is written, a regular expression
// that is not a string literal: one read from the event or computed would
// be compiled at each evaluation, at a cost that grows with the square of
// the field's size, and could not be checked before it runs.
type regexLiterals struct{ example string }

// Name names the validator.
func (regexLiterals) Name() string { return "sluice.filters.regex_literals" }

// Validate reports each regular expression argument that is not a string
// literal.
func (v regexLiterals) Validate(_ *cel.Env, _ cel.ValidatorConfig, a *ast.AST, iss *cel.Issues) {
	calls := ast.MatchDescendants(ast.NavigateAST(a), func(e ast.NavigableExpr) bool {
		if e.Kind() != ast.CallKind {
			return false
		}
		_, ok := regexArgument(e.AsCall().FunctionName())
		return ok
	})
	for _, call := range calls {
		c := call.AsCall()
		i, _ := regexArgument(c.FunctionName())
		if c.IsMemberFunction() {
			i--
		}
		args := c.Args()
		if i < 0 || i >= len(args) {
			continue
		}
		pattern := args[i]
		if pattern.Kind() == ast.LiteralKind {
			if _, ok := pattern.AsLiteral().(types.String); ok {
				continue
			}
		}
		iss.ReportErrorAtID(pattern.ID(),
			"the regular expression of %s must be a constant string, such as %s: "+
				"a pattern taken from the %s or computed is not allowed", c.FunctionName(), v.example, v.source())
	}
}

// source names what a filter reads, for messages: the event, or the
// resource for a filter of objects.
func (v regexLiterals) source() string {
	if strings.HasPrefix(v.example, objectVar+".") {
		return "resource"
	}
	return "event"
}
