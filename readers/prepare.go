package readers

import (
	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// A lighter pass over the runs, for a caller that reads little of each
// run's rows (a ceiling counting each label's rows): PlanRuns groups the
// parts of decoded objects into runs as AssembleEach does, reading no row;
// PartBuilder gives one part's rows, to be read on their own on any
// goroutine (the parts of a run are independent); and each PlannedRun
// gives the run's metadata and the --max-labels error that its assembly
// would report, so that the caller fails exactly where AssembleEach fails.

// PlannedRun is one run of PlanRuns: its key and its pieces in object
// order, as AssembleEach assembles it.
type PlannedRun struct {
	Key    string
	Pieces []PlannedPiece
	r      run
	max    int
}

// PlannedPiece is the part Part (an index in the parts of its object, in
// order of first row, as PartBuilder takes it) of objects[Object].
type PlannedPiece struct{ Object, Part int }

// PlanRuns plans the runs of objects (in bytewise key order, decoded with
// opts' Components and limits) in canonical order, as AssembleEach and
// AssembleEachKeep do, without reading a row. It fails as they fail before
// they first call fn (invalid options, objects out of order, decoded with
// other components or released, a run-key clash, --max-runs), with the
// same error. ok is false, with no runs, when a part's rows are not held in
// memory as decoded (a spilled object, a part read back from an encoding):
// the caller assembles then. Nothing is modified.
func PlanRuns(objects []*ObjectRuns, opts Options) (runs []PlannedRun, ok bool, err error) {
	opts, err = opts.normalize()
	if err != nil {
		return nil, false, err
	}
	planned, err := planRuns(objects, opts)
	if err != nil {
		return nil, false, err
	}
	objIdx := make(map[*ObjectRuns]int, len(objects))
	partIdx := map[*part]int{}
	for i, o := range objects {
		if o.spilled {
			return nil, false, nil
		}
		objIdx[o] = i
		for k, p := range o.parts {
			if p.b == nil {
				return nil, false, nil
			}
			partIdx[p] = k
		}
	}
	runs = make([]PlannedRun, len(planned))
	for i, r := range planned {
		pr := PlannedRun{Key: r.key, Pieces: make([]PlannedPiece, len(r.pieces)), r: r, max: opts.MaxLabels}
		for k, pc := range r.pieces {
			pr.Pieces[k] = PlannedPiece{Object: objIdx[pc.obj], Part: partIdx[pc.p]}
		}
		runs[i] = pr
	}
	return runs, true, nil
}

// Meta is the run's metadata as its assembled trace's Meta: the fields
// constant over its rows, rendered, and source.
func (r *PlannedRun) Meta() map[string]string { return r.r.meta() }

// CheckLabels returns the error with which AssembleEach stops at this run
// when its rows, across its pieces, hold labels distinct labels: the
// --max-labels limit of a run spanning objects (each part's labels were
// checked as it was decoded); nil for a run of one piece or within the
// limit.
func (r *PlannedRun) CheckLabels(labels int) error {
	if len(r.r.pieces) < 2 || labels <= r.max {
		return nil
	}
	pc := r.r.pieces[0]
	return tooManyLabels(pc.obj.URL, pc.p.firstLine, r.Key, r.max)
}

// PartBuilder is the builder holding the rows of part i of o (in order of
// first row, as PlannedPiece.Part), as AssembleEach appends it to its run:
// for reading only (its CountLabels, its Trace), never to add to or reset.
// The object must hold its rows in memory (PlanRuns ok). Different parts
// may be read at once on different goroutines.
func (o *ObjectRuns) PartBuilder(i int) *skyfall.Builder { return o.parts[i].b }
