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
