package skyfall

import "github.com/crlbatch/crlbatch/protocol"

// CeilingMetrics are the per-label metrics (of LabelMetrics) whose values
// Receil changes.
var CeilingMetrics = []string{"performance_gap"}

// Receil sets the ceiling-dependent values of res, a result Score gave
// under another ceiling, to what Score gives under p's, bit for bit: the
// same float64 operations on the same operands. Given the rows, only each
// label's UpperBound and PerformanceGap (R_ub,k minus the tail mean of the
// label's first interval, PROTOCOLS 1.4, which no ceiling changes) depend
// on the ceiling, unless the anchor is the ceiling (--anchor ceiling: the
// adaptation speed and recovery time of every interval too, through the
// rows). It reports false, leaving res as it was, when it cannot: p's
// anchor is the ceiling (adaptation and recovery need the rows), or a label
// has no ceiling (Score fails; the caller scores the run again to report
// it). Of the per-label metrics, only those of CeilingMetrics change.
func Receil(res *RunResult, p *Params) bool {
	if p.Anchor == AnchorCeiling {
		return false
	}
	// Each label's first interval, in one pass (a run may have many
	// labels).
	firstOf := make(map[string]int, len(res.Labels))
	for k := range res.Intervals {
		if _, ok := firstOf[res.Intervals[k].Label]; !ok {
			firstOf[res.Intervals[k].Label] = k
		}
	}
	ceil := make([]float64, len(res.Labels))
	first := make([]int, len(res.Labels))
	for l := range res.Labels {
		lr := &res.Labels[l]
		k, ok := firstOf[lr.Label]
		if !ok {
			return false
		}
		first[l] = k
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
			if tm := res.Intervals[first[l]].TailMean; tm.OK {
				lr.PerformanceGap = protocol.Finite(ceil[l] - tm.V)
			} else {
				lr.PerformanceGap = protocol.None(tm.Reason)
			}
		} else {
			lr.UpperBound = protocol.None(ReasonNoCeiling)
			lr.PerformanceGap = protocol.None(ReasonNoCeiling)
		}
	}
	return true
}
