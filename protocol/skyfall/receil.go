package skyfall

import "github.com/crlbatch/crlbatch/protocol"

// Receil sets the ceiling-dependent values of res, a result Score gave
// under another ceiling, to what Score gives under p's, bit for bit: the
// same float64 operations on the same operands. Given the rows, only each
// label's UpperBound and PerformanceGap (R_ub,k minus the tail mean of the
// label's first interval, PROTOCOLS 1.4, which no ceiling changes) depend
// on the ceiling, unless the anchor is the ceiling (--anchor ceiling: the
// adaptation speed and recovery time of every interval too, through the
// rows). It reports false, leaving res as it
// was, when it cannot: p's anchor is the ceiling (adaptation and recovery
// need the rows), or a label has no ceiling (Score fails; the caller
// scores the run again to report it).
func Receil(res *RunResult, p *Params) bool {
	if p.Anchor == AnchorCeiling {
		return false
	}
	ceil := make([]float64, len(res.Labels))
	first := make([]int, len(res.Labels))
	for l := range res.Labels {
		lr := &res.Labels[l]
		first[l] = -1
		for k := range res.Intervals {
			if res.Intervals[k].Label == lr.Label {
				first[l] = k
				break
			}
		}
		if first[l] < 0 {
			return false
		}
		if p.Ceiling != nil {
			v, err := p.Ceiling.For(lr.Label)
			if err != nil {
				return false
			}
			ceil[l] = v
		}
	}
	for l := range res.Labels {
		lr := &res.Labels[l]
		if p.Ceiling != nil {
			lr.UpperBound = protocol.Finite(ceil[l])
			lr.PerformanceGap = protocol.Finite(ceil[l] - res.Intervals[first[l]].TailMean.V)
		} else {
			lr.UpperBound = protocol.None(ReasonNoCeiling)
			lr.PerformanceGap = protocol.None(ReasonNoCeiling)
		}
	}
	return true
}
