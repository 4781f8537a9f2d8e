package family

import (
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/stats"
)

// Cell is one metric across the seeds of a family, for a report cell: the
// count of seeds with a value, their mean and their sample standard
// deviation (absent under two values).
type Cell struct {
	N    int
	Mean protocol.Value
	Std  protocol.Value
}

// Describe summarises the present values xs (in seed order).
func Describe(xs []float64) Cell {
	c := Cell{N: len(xs)}
	if len(xs) == 0 {
		c.Mean = protocol.None(ReasonNoSeedValue)
		c.Std = c.Mean
		return c
	}
	c.Mean = protocol.Finite(stats.Mean(xs))
	if sd, ok := stats.SampleStd(xs); ok {
		c.Std = protocol.Finite(sd)
	} else {
		c.Std = protocol.None(ReasonOneSeed)
	}
	return c
}

// KeyedSummary is a family's per-key view (keys are labels, tasks, …): for
// each key, in order of first appearance over the runs in run order, and
// each metric, the Cell over the runs that have a value.
type KeyedSummary struct {
	Keys []string
	// Cells[k][m] is key Keys[k], metric m of the metrics summarised.
	Cells [][]Cell
}

// SummarizeKeyed builds a KeyedSummary over runs: keys(r) lists run r's keys
// and value(r, k, m) gives run r's value of metric m for its k-th key.
func SummarizeKeyed(runs, metrics int, keys func(r int) []string, value func(r, k, m int) protocol.Value) KeyedSummary {
	var out KeyedSummary
	idx := map[string]int{}
	var vals [][][]float64
	for r := 0; r < runs; r++ {
		for k, key := range keys(r) {
			i, ok := idx[key]
			if !ok {
				i = len(out.Keys)
				idx[key] = i
				out.Keys = append(out.Keys, key)
				vals = append(vals, make([][]float64, metrics))
			}
			for m := 0; m < metrics; m++ {
				if v := value(r, k, m); v.OK {
					vals[i][m] = append(vals[i][m], v.V)
				}
			}
		}
	}
	out.Cells = make([][]Cell, len(out.Keys))
	for i := range out.Keys {
		out.Cells[i] = make([]Cell, metrics)
		for m := 0; m < metrics; m++ {
			out.Cells[i][m] = Describe(vals[i][m])
		}
	}
	return out
}
