package trafficpolicy

import (
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/parser"
)

// Names of the variables expressions see. Header maps are keyed by the
// header's name in lower case, each value a list of the header's values.
const (
	varMethod     = "req.method"
	varHost       = "req.host"
	varPath       = "req.url.path"
	varQuery      = "req.url.query"
	varReqHeaders = "req.headers"
	varClientIP   = "conn.client_ip"
	varAPIKeyID   = "api_key.id"
	varStatus     = "res.status_code"
	varResHeaders = "res.headers"
	varBucketKey  = "actions.service.rate_limit.bucket_key"
	varLimited    = "actions.service.rate_limit.limited"
	varErrCode    = "actions.service.rate_limit.error.code"
	varErrMessage = "actions.service.rate_limit.error.message"
	// The user the last openid-connect let through, "" before one did.
	varOIDCUserID    = "actions.service.oidc.user.id"
	varOIDCUserName  = "actions.service.oidc.user.name"
	varOIDCUserEmail = "actions.service.oidc.user.email"
)

// MaxExprCost bounds the cost of one evaluation of an expression with a
// loop (all, exists, map, filter), in CEL's units (about one per
// operation, and per character of a string operation); an evaluation past
// it counts as false.
const MaxExprCost = 100_000

// MaxExprLen is the longest expression, in bytes.
const MaxExprLen = 4096

// newEnv returns the CEL environment of the expressions of a phase: the
// variables of the request (api_key.id among them, see WithAPIKey), those
// of the response in on_http_response,
// the result variables of rate-limit, the macros getReqHeader and
// hasReqHeader, and CEL's string extensions.
func newEnv(ph phase) (*cel.Env, error) {
	if ph == phaseConnect {
		// A TCP connection has a client, and nothing of HTTP.
		return cel.NewEnv(cel.Variable(varClientIP, cel.StringType), ext.Strings())
	}
	headers := cel.MapType(cel.StringType, cel.ListType(cel.StringType))
	opts := []cel.EnvOption{
		cel.Variable(varMethod, cel.StringType),
		cel.Variable(varHost, cel.StringType),
		cel.Variable(varPath, cel.StringType),
		cel.Variable(varQuery, cel.StringType),
		cel.Variable(varReqHeaders, headers),
		cel.Variable(varClientIP, cel.StringType),
		cel.Variable(varAPIKeyID, cel.StringType),
		cel.Variable(varBucketKey, cel.StringType),
		cel.Variable(varLimited, cel.BoolType),
		cel.Variable(varErrCode, cel.StringType),
		cel.Variable(varErrMessage, cel.StringType),
		cel.Variable(varOIDCUserID, cel.StringType),
		cel.Variable(varOIDCUserName, cel.StringType),
		cel.Variable(varOIDCUserEmail, cel.StringType),
		cel.Macros(
			parser.NewGlobalMacro("getReqHeader", 1, expandGetReqHeader),
			parser.NewGlobalMacro("hasReqHeader", 1, expandHasReqHeader),
		),
		ext.Strings(),
	}
	if ph == phaseResponse {
		opts = append(opts, cel.Variable(varStatus, cel.IntType), cel.Variable(varResHeaders, headers))
	}
	return cel.NewEnv(opts...)
}

// headerName returns the lower-cased header name that the one argument of
// a header macro holds, which must be a string literal.
func headerName(eh parser.ExprHelper, macro string, args []ast.Expr) (string, *common.Error) {
	if args[0].Kind() == ast.LiteralKind {
		if s, ok := args[0].AsLiteral().(types.String); ok && validHeaderName(string(s)) {
			return strings.ToLower(string(s)), nil
		}
	}
	return "", eh.NewError(args[0].ID(), fmt.Sprintf("%s takes a header name as a string literal, such as %s('X-Api-Key')", macro, macro))
}

// expandGetReqHeader expands getReqHeader('Name') into the list of the
// values of the request's header Name, empty when it has none:
// "name" in req.headers ? req.headers["name"] : [].
func expandGetReqHeader(eh parser.ExprHelper, _ ast.Expr, args []ast.Expr) (ast.Expr, *common.Error) {
	name, err := headerName(eh, "getReqHeader", args)
	if err != nil {
		return nil, err
	}
	headers := func() ast.Expr { return eh.NewSelect(eh.NewIdent("req"), "headers") }
	key := func() ast.Expr { return eh.NewLiteral(types.String(name)) }
	return eh.NewCall(operators.Conditional,
		eh.NewCall(operators.In, key(), headers()),
		eh.NewCall(operators.Index, headers(), key()),
		eh.NewList()), nil
}

// expandHasReqHeader expands hasReqHeader('Name') into
// "name" in req.headers.
func expandHasReqHeader(eh parser.ExprHelper, _ ast.Expr, args []ast.Expr) (ast.Expr, *common.Error) {
	name, err := headerName(eh, "hasReqHeader", args)
	if err != nil {
		return nil, err
	}
	return eh.NewCall(operators.In, eh.NewLiteral(types.String(name)), eh.NewSelect(eh.NewIdent("req"), "headers")), nil
}

// validHeaderName reports whether name is an HTTP field name (RFC 9110 token).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// compileExpr compiles a rule's expression in env: it must be a boolean.
// The error quotes CEL's messages with their position in the expression.
func compileExpr(env *cel.Env, expr string) (cel.Program, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, fmt.Errorf("an expression must not be empty: write a boolean CEL expression such as req.url.path == '/events', or leave the rule's expressions out to run it always")
	}
	if len(expr) > MaxExprLen {
		return nil, fmt.Errorf("an expression must be at most %d bytes long, this one is %d", MaxExprLen, len(expr))
	}
	checked, iss := env.Compile(expr)
	if iss.Err() != nil {
		var msgs []string
		for _, e := range iss.Errors() {
			msgs = append(msgs, fmt.Sprintf("%d:%d: %s", e.Location.Line(), e.Location.Column()+1, e.Message))
		}
		return nil, fmt.Errorf("CEL %q does not compile: %s", expr, strings.Join(msgs, "; "))
	}
	if t := checked.OutputType(); !t.IsExactType(cel.BoolType) {
		return nil, fmt.Errorf("CEL %q is %s: an expression must be a boolean, such as req.method == 'POST'", expr, cel.FormatCELType(t))
	}
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	if hasComprehension(checked) {
		// Loops (all, exists, map, ...) over headers: bounded by cost.
		// Without a loop, an expression runs each of its operations once,
		// each bounded by the size of the request's headers (1 MiB by
		// default in net/http), and CEL's cost tracking, which allocates
		// at each evaluation, is left out.
		opts = append(opts, cel.CostLimit(MaxExprCost))
	}
	prg, err := env.Program(checked, opts...)
	if err != nil {
		return nil, fmt.Errorf("CEL %q cannot be evaluated: %w", expr, err)
	}
	return prg, nil
}

// hasComprehension reports whether the checked expression has a loop.
func hasComprehension(checked *cel.Ast) bool {
	found := false
	ast.PreOrderVisit(checked.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		found = found || e.Kind() == ast.ComprehensionKind
	}))
	return found
}
