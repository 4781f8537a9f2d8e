package skyfallscore

import (
	"fmt"

	"github.com/crlbatch/crlbatch/scoring"
)

// SplitRuns splits a decoded object into its run parts (for Beam).
func (d *decoder) SplitRuns(o scoring.Object) ([]scoring.Piece, error) {
	obj, ok := o.(object)
	if !ok {
		return nil, fmt.Errorf("skyfall: cannot split a %T", o)
	}
	pcs, objs := obj.SplitRuns()
	out := make([]scoring.Piece, len(pcs))
	for i, p := range pcs {
		out[i] = scoring.Piece{RunKey: p.RunKey, FirstLine: p.FirstLine, Object: object{objs[i]}}
	}
	return out, nil
}

var _ scoring.RunSplitter = (*decoder)(nil)
