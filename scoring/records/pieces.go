package records

import (
	"fmt"

	"github.com/crlbatch/crlbatch/scoring"
)

// SplitRuns splits a decoded object into its run parts (for Beam).
func (d *Decoder) SplitRuns(o scoring.Object) ([]scoring.Piece, error) {
	ro, ok := o.(*Object)
	if !ok || ro.recs == nil {
		return nil, fmt.Errorf("records: cannot split a %T (or a released object)", o)
	}
	pcs, objs := ro.recs.SplitRuns()
	out := make([]scoring.Piece, len(pcs))
	for i, p := range pcs {
		out[i] = scoring.Piece{RunKey: p.RunKey, FirstLine: p.FirstLine, Object: &Object{recs: objs[i], rows: objs[i].Rows, runs: 1}}
	}
	return out, nil
}

var _ scoring.RunSplitter = (*Decoder)(nil)
