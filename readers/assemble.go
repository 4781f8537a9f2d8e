package readers

import (
	"fmt"
	"slices"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// Assemble merges decoded objects into runs (PROTOCOLS 1.2). objects must be
// in bytewise key order, as the pipeline lists them; the result depends on
// that order only, never on the order in which objects were decoded.
//
//   - Rows with equal identity tuples form one run, across objects; all
//     anonymous rows of one object form the run anonymous:<key>.
//   - Runs are listed in order of their first row; a run's rows keep object
//     order, then line order.
//   - Metadata: every non-schema field present (non-null) on every row of
//     the run with one JSON value, rendered; plus source.
//   - Two distinct identities that render the same run key are an error
//     naming both.
//
// opts must be the options the objects were decoded with (Components and
// the limits), plus Traces if the caller lends columns. The traces share
// no memory with objects (each is materialised from its parts' compact
// columns); Assemble does not modify objects held in memory, so it may be
// called again on them.
// Spilled objects are read back and consumed as by AssembleEach.
func Assemble(objects []*ObjectRuns, opts Options) ([]*skyfall.Trace, error) {
	var traces []*skyfall.Trace
	err := assembleEach(objects, opts, true, func(n int) { traces = make([]*skyfall.Trace, n) },
		func(i int, t *skyfall.Trace) error {
			traces[i] = t
			return nil
		})
	if err != nil {
		return nil, err
	}
	return traces, nil
}

// piece is the part of a run held by one object; run is one run of the
// sweep, its key and its pieces in object order.
type (
	piece = pieceOf[*ObjectRuns, *part]
	run   = runOf[*ObjectRuns, *part]
)

// planRuns checks objects and opts (normalized) and groups the objects'
// parts into runs, in order of first row. It reads only the parts'
// headers, never their rows.
func planRuns(objects []*ObjectRuns, opts Options) ([]run, error) {
	return groupRuns("Assemble", objects, func(o *ObjectRuns) error {
		if !slices.Equal(o.comps, opts.Components) {
			return fmt.Errorf("readers: Assemble: %s was decoded with components %q, not %q", o.URL, o.comps, opts.Components)
		}
		if o.released {
			return fmt.Errorf("readers: Assemble: the rows of %s were released (by Release, or by an earlier assembly of the spilled object)", o.URL)
		}
		return nil
	}, opts.MaxRuns)
}

// build makes the trace of r, reading spilled pieces back through ld.
func build(r *run, ld *loader, opts Options) (*skyfall.Trace, error) {
	rendered := r.meta()
	var t *skyfall.Trace
	if len(r.pieces) == 1 {
		pc := r.pieces[0]
		pt, err := ld.columns(pc)
		if err != nil {
			return nil, err
		}
		ld.done(pc)
		t = pt
		t.Meta = rendered
	} else {
		b := skyfall.NewBuilder(r.key, opts.Components)
		for _, pc := range r.pieces {
			if pc.p.b != nil {
				// Held in memory: straight from the part's compact columns.
				b.AppendRows(pc.p.b, opts.Components, pc.p.origin)
				ld.done(pc)
				continue
			}
			pt, err := ld.columns(pc)
			if err != nil {
				return nil, err
			}
			b.AddTrace(pt, opts.Components, pc.p.origin) // read back: row by row
			opts.Traces.Put(pt)
			ld.done(pc)
		}
		t = b.TraceFrom(opts.Traces, rendered)
		if len(t.LabelNames) > opts.MaxLabels {
			pc := r.pieces[0]
			return nil, tooManyLabels(pc.obj.URL, pc.p.firstLine, r.key, opts.MaxLabels)
		}
	}
	t.Key = r.key
	return t, nil
}
