package filters

import (
	"math"

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

// The overloads of the strings extension that CEL does not price by the
// size of what they make.
const (
	quoteOverload  = "strings_quote"
	formatOverload = "string_format"
)

// formatClauseBytes is the most bytes one clause of format writes for a
// number: %f with the largest precision CEL takes (100) of a double of 309
// digits, its sign and point. Writing them costs about 7 µs, as much as
// 175 units of MaxCost's 4 ms.
const formatClauseBytes = 412

// EstimateCallCost returns the cost of inCIDR, of matches, of the
// timestamp accessors given a time zone and of strings.quote and format,
// or nil to let CEL estimate the cost of its own functions.
func (s sizeEstimator) EstimateCallCost(_, overloadID string, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	if c := s.CallCost("", overloadID, nil, nil); c != nil {
		return &cost.CallEstimate{CostEstimate: cost.FixedCostEstimate(*c)}
	}
	switch overloadID {
	case quoteOverload:
		if len(args) == 1 {
			return s.quoteCost(args[0])
		}
	case formatOverload:
		if target != nil {
			return s.formatCost(*target)
		}
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

// sizeOf returns the most bytes of the string n, or false when neither the
// fields' sizes nor CEL know it.
func (s sizeEstimator) sizeOf(n cost.AstNode) (uint64, bool) {
	size := s.EstimateSize(n)
	if size == nil {
		size = n.ComputedSize()
	}
	if size == nil {
		return 0, false
	}
	return size.Max, true
}

// unknownCost is the cost of a call whose input has no known size: more
// than any filter may cost, so that Compile refuses it.
const unknownCost = math.MaxUint32

// quoteCost charges strings.quote for each byte it reads and writes, and
// gives the size of its result: at most 3 bytes for each of its input (a
// byte that is not UTF-8 becomes U+FFFD), and the quotes. CEL charges it a
// tenth of a unit for each byte read and does not know that its result
// grows, so that quote of quote of ... a field of backslashes was priced
// far below its cost.
func (s sizeEstimator) quoteCost(input cost.AstNode) *cost.CallEstimate {
	n, ok := s.sizeOf(input)
	if !ok || n > math.MaxUint32 {
		return &cost.CallEstimate{CostEstimate: cost.FixedCostEstimate(unknownCost)}
	}
	out := 3*n + 2
	return &cost.CallEstimate{
		CostEstimate: cost.FixedCostEstimate(n + out),
		ResultSize:   &cost.SizeEstimate{Min: 2, Max: out},
	}
}

// formatCost charges format by what its format string can make write: each
// clause (at least two bytes, "%f") up to formatClauseBytes for a number or
// the longest string field for a %s, the format's own bytes too; it gives
// that as the size of its result. CEL charges it like a short string
// operation, so that a format of a few hundred %.100f clauses cost 2 ms an
// event at an estimate of 192.
func (s sizeEstimator) formatCost(format cost.AstNode) *cost.CallEstimate {
	n, ok := s.sizeOf(format)
	if !ok || n > math.MaxUint32 {
		return &cost.CallEstimate{CostEstimate: cost.FixedCostEstimate(unknownCost)}
	}
	clause := uint64(formatClauseBytes)
	for _, size := range s.sizes {
		clause = max(clause, size)
	}
	out := n + (n/2+1)*clause
	return &cost.CallEstimate{
		CostEstimate: cost.FixedCostEstimate(out),
		ResultSize:   &cost.SizeEstimate{Min: 0, Max: out},
	}
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
