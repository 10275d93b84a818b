package filters

import (
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// regexCostFactor is the cost charged for matching one character of input
// against one instruction of a regular expression's program. Go's regexp
// takes up to about 17 ns for each on its slowest path, and MaxCost is
// about 4 ms of evaluation, so a unit of cost is about 40 ns.
const regexCostFactor = 0.4

// timeZoneCost is the cost charged for a timestamp accessor given a time
// zone, such as getHours('Europe/Paris'): CEL loads the zone from the
// system's database at each call, about 80 µs and 40 KB, where the
// standard estimate charges it like an addition.
const timeZoneCost = 2500

// sizeEstimator gives CEL's cost estimate the sizes of the string fields a
// filter may use (without them every string operation on a field has an
// unbounded cost), the cost of inCIDR and the cost of a regular expression
// by the size of its program.
type sizeEstimator struct {
	sizes map[string]uint64 // by variable name, such as "ev.conn.server_name": schemas.Field.MaxBytes
	// bound, if set, gives the size of a node sizes does not know, such
	// as a field of an object (ObjectEnv); nil for CEL's own.
	bound func(n cost.AstNode) *cost.SizeEstimate
}

// EstimateSize returns the assumed size of a string field, or nil to let CEL
// compute the size.
func (s sizeEstimator) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	if p := n.Path(); len(p) == 1 {
		if size, ok := s.sizes[p[0]]; ok {
			return &cost.SizeEstimate{Min: 0, Max: size}
		}
	}
	if s.bound != nil {
		return s.bound(n)
	}
	return nil
}

// CallCost returns the actual cost of a call of inCIDR or of a timestamp
// accessor given a time zone, as EstimateCallCost charges them, or nil to
// let CEL count the call. Without it CEL counts such an accessor as an
// addition at run time, so that neither the cost limit of an evaluation
// nor that of a list (MaxObjectListCost) would see what it costs.
func (s sizeEstimator) CallCost(_, overloadID string, _ []ref.Val, _ ref.Val) *uint64 {
	var c uint64
	switch {
	case overloadID == inCIDROverload:
		c = inCIDRCost
	case timeZoneOverloads[overloadID]:
		c = timeZoneCost
	default:
		return nil
	}
	return &c
}

// timeZoneOverloads are the timestamp accessors given a time zone.
var timeZoneOverloads = map[string]bool{
	overloads.TimestampToYearWithTz: true, overloads.TimestampToMonthWithTz: true, overloads.TimestampToDayOfYearWithTz: true,
	overloads.TimestampToDayOfMonthZeroBasedWithTz: true, overloads.TimestampToDayOfMonthOneBasedWithTz: true,
	overloads.TimestampToDayOfWeekWithTz: true, overloads.TimestampToHoursWithTz: true, overloads.TimestampToMinutesWithTz: true,
	overloads.TimestampToSecondsWithTz: true, overloads.TimestampToMillisecondsWithTz: true,
}

// EstimateCallCost returns the cost of inCIDR, of matches and of the
// timestamp accessors given a time zone, or nil to let CEL estimate the
// cost of its own functions.
func (s sizeEstimator) EstimateCallCost(_, overloadID string, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	if c := s.CallCost("", overloadID, nil, nil); c != nil {
		return &cost.CallEstimate{CostEstimate: cost.FixedCostEstimate(*c)}
	}
	switch overloadID {
	case overloads.Matches:
		if len(args) == 2 {
			return s.matchesCost(args[0], args[1])
		}
	case overloads.MatchesString:
		if target != nil && len(args) == 1 {
			return s.matchesCost(*target, args[0])
		}
	}
	return nil
}

// matchesCost charges matching input against a constant pattern for each
// character of input and instruction of the pattern's program, which may be
// far larger than the pattern ("a{1000}"). It returns nil, for CEL's own
// estimate, when either is not known.
func (s sizeEstimator) matchesCost(input, pattern cost.AstNode) *cost.CallEstimate {
	e := pattern.Expr()
	if e == nil || e.Kind() != ast.LiteralKind {
		return nil
	}
	p, ok := e.AsLiteral().(types.String)
	if !ok {
		return nil
	}
	program, err := types.RegexProgramSize(string(p))
	if err != nil {
		return nil
	}
	size := s.EstimateSize(input)
	if size == nil {
		size = input.ComputedSize()
	}
	if size == nil {
		return nil
	}
	instructions := max(uint64(program), uint64(len(p)))
	return &cost.CallEstimate{CostEstimate: cost.RangedCostEstimate(1, size.Max+1).
		Multiply(cost.FixedCostEstimate(instructions)).
		MultiplyByCostFactor(regexCostFactor)}
}
