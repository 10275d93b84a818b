package filters

import (
	"net/netip"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// The inCIDR function: inCIDR(ip string, cidr string) bool.
const (
	inCIDRFunction = "inCIDR"
	inCIDROverload = "inCIDR_string_string"
	// inCIDRCost is the cost charged for one call in the static estimate:
	// parsing an address and a prefix, like a short string comparison.
	inCIDRCost = 2
)

// cidrLib is the CEL library of IP filtering functions.
type cidrLib struct{}

// LibraryName makes the library a singleton in an environment.
func (cidrLib) LibraryName() string { return "sluice.filters.cidr" }

// CompileOptions declares inCIDR and the check of its constant CIDR arguments.
func (cidrLib) CompileOptions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Function(inCIDRFunction,
			cel.Overload(inCIDROverload, []*cel.Type{cel.StringType, cel.StringType}, cel.BoolType,
				cel.BinaryBinding(inCIDR),
			),
		),
		cel.ASTValidators(cidrLiterals{}),
	}
}

// ProgramOptions returns nothing: the binding is declared with the function.
func (cidrLib) ProgramOptions() []cel.ProgramOption { return nil }

func cidrLibrary() cel.EnvOption { return cel.Lib(cidrLib{}) }

// inCIDR reports whether the IP address ip is in the CIDR range cidr, such as
// "203.0.113.0/24" or "2001:db8::/32". An ip that is not an address is not in
// any range; a cidr that is not a range is an error. An IPv4 address written
// as IPv4-mapped IPv6 ("::ffff:203.0.113.7") is in the IPv4 ranges; a zone
// ("fe80::1%eth0") is ignored.
func inCIDR(ipVal, cidrVal ref.Val) ref.Val {
	ip, ok := ipVal.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(ipVal)
	}
	cidr, ok := cidrVal.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(cidrVal)
	}
	prefix, err := netip.ParsePrefix(string(cidr))
	if err != nil {
		return types.NewErr("inCIDR: invalid CIDR range %q", string(cidr))
	}
	addr, err := netip.ParseAddr(string(ip))
	if err != nil {
		return types.False
	}
	addr = addr.WithZone("")
	if prefix.Addr().Is4() {
		addr = addr.Unmap()
	}
	return types.Bool(prefix.Contains(addr))
}

// cidrLiterals rejects, when the filter is written, a constant CIDR argument
// of inCIDR that is not a CIDR range.
type cidrLiterals struct{}

// Name names the validator.
func (cidrLiterals) Name() string { return "sluice.filters.cidr_literals" }

// Validate reports each constant second argument of inCIDR that does not parse.
func (cidrLiterals) Validate(_ *cel.Env, _ cel.ValidatorConfig, a *ast.AST, iss *cel.Issues) {
	calls := ast.MatchDescendants(ast.NavigateAST(a), ast.FunctionMatcher(inCIDRFunction))
	for _, call := range calls {
		args := call.AsCall().Args()
		if len(args) != 2 || args[1].Kind() != ast.LiteralKind {
			continue
		}
		s, ok := args[1].AsLiteral().(types.String)
		if !ok {
			continue
		}
		if _, err := netip.ParsePrefix(string(s)); err != nil {
			iss.ReportErrorAtID(args[1].ID(), "invalid CIDR range %q in inCIDR: write an address, a slash and a prefix length, such as \"203.0.113.0/24\"", string(s))
		}
	}
}
