package filters

import (
	"cel.dev/cel-go/common/cost"
)

// sizeEstimator gives CEL's cost estimate the sizes of the string fields a
// filter may use (without them every string operation on a field has an
// unbounded cost) and the cost of inCIDR.
type sizeEstimator struct {
	sizes map[string]uint64 // by variable name, such as "ev.conn.server_name"
}

// EstimateSize returns the assumed size of a string field, or nil to let CEL
// compute the size.
func (s sizeEstimator) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	if p := n.Path(); len(p) == 1 {
		if size, ok := s.sizes[p[0]]; ok {
			return &cost.SizeEstimate{Min: 0, Max: size}
		}
	}
	return nil
}

// EstimateCallCost returns the cost of inCIDR, or nil to let CEL estimate
// the cost of its own functions.
func (sizeEstimator) EstimateCallCost(_, overloadID string, _ *cost.AstNode, _ []cost.AstNode) *cost.CallEstimate {
	if overloadID == inCIDROverload {
		return &cost.CallEstimate{CostEstimate: cost.FixedCostEstimate(inCIDRCost)}
	}
	return nil
}
