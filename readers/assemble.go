package readers

import (
	"fmt"
	"slices"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// SourceField is the metadata field Assemble adds to every run: the key of
// the object holding the run's first row.
const SourceField = "source"

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
// the limits). The traces may share memory with objects; Assemble does not
// modify objects held in memory, so it may be called again on them.
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

// piece is the part of a run held by one object.
type piece struct {
	obj *ObjectRuns
	p   *part
}

// run is one run of the sweep: its key and its pieces in object order.
type run struct {
	key    string
	pieces []piece
}

// planRuns checks objects and opts (normalized) and groups the objects'
// parts into runs, in order of first row. It reads only the parts'
// headers, never their rows.
func planRuns(objects []*ObjectRuns, opts Options) ([]*run, error) {
	for i, o := range objects {
		if i > 0 && objects[i-1].Key >= o.Key {
			return nil, fmt.Errorf("readers: Assemble: objects out of bytewise key order or repeated: %q then %q", objects[i-1].Key, o.Key)
		}
		if !slices.Equal(o.comps, opts.Components) {
			return nil, fmt.Errorf("readers: Assemble: %s was decoded with components %q, not %q", o.URL, o.comps, opts.Components)
		}
		if o.released {
			return nil, fmt.Errorf("readers: Assemble: the rows of %s were released (by Release, or by an earlier assembly of the spilled object)", o.URL)
		}
	}
	var runs []*run
	byIdent := map[string]*run{}
	byKey := map[string]*run{}
	for _, o := range objects {
		for _, p := range o.parts {
			var r *run
			if !p.anon {
				r = byIdent[p.identKey]
			}
			if r == nil {
				if prev := byKey[p.runKey]; prev != nil {
					q := prev.pieces[0]
					return nil, &DataError{URL: o.URL, Line: p.firstLine, Msg: fmt.Sprintf(
						"run key %q stands for two distinct identities: %s (first at %s line %d) and %s (first here)",
						p.runKey, describeIdent(q.p.ident), q.obj.URL, q.p.firstLine, describeIdent(p.ident))}
				}
				if len(runs) >= opts.MaxRuns {
					return nil, &DataError{URL: o.URL, Line: p.firstLine,
						Msg: fmt.Sprintf("more than %d runs (the limit set by --max-runs)", opts.MaxRuns), Err: ErrLimit}
				}
				r = &run{key: p.runKey}
				runs = append(runs, r)
				byKey[r.key] = r
				if !p.anon {
					byIdent[p.identKey] = r
				}
			}
			r.pieces = append(r.pieces, piece{o, p})
		}
	}
	return runs, nil
}

// meta is the run's metadata, rendered: constant within every piece, and
// equal across pieces; plus source.
func (r *run) meta() map[string]string {
	meta := r.pieces[0].p.meta()
	for _, pc := range r.pieces[1:] {
		m := pc.p.meta()
		for k, v := range meta {
			if m[k] != v {
				delete(meta, k)
			}
		}
	}
	rendered := make(map[string]string, len(meta)+1)
	for k, v := range meta {
		rendered[k] = render(v)
	}
	rendered[SourceField] = r.pieces[0].obj.Key
	return rendered
}

// build makes the run's trace, reading spilled pieces back through ld.
func (r *run) build(ld *loader, opts Options) (*skyfall.Trace, error) {
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
			pt, err := ld.columns(pc)
			if err != nil {
				return nil, err
			}
			appendPart(b, pt, pc.p.origins, opts.Components)
			ld.done(pc)
		}
		t = b.Trace(rendered)
		if len(t.LabelNames) > opts.MaxLabels {
			pc := r.pieces[0]
			return nil, &DataError{URL: pc.obj.URL, Line: pc.p.firstLine, Field: "regime_id",
				Msg: fmt.Sprintf("run %s has more than %d labels (the limit set by --max-labels)", r.key, opts.MaxLabels), Err: ErrLimit}
		}
	}
	t.Key = r.key
	return t, nil
}

// appendPart adds the rows of one part, pt, to b, in line order. po holds
// the first origin and alias of each label within the part (part.origins).
func appendPart(b *skyfall.Builder, pt *skyfall.Trace, po map[string]labelOrigin, comps []string) {
	// Per label of the part: its first origin and alias within the part.
	origins := make([]labelOrigin, len(pt.LabelNames))
	for i, name := range pt.LabelNames {
		origins[i] = po[name]
	}
	cols := make([][]float64, len(comps))
	for j, c := range comps {
		cols[j] = pt.Components[c]
	}
	row := skyfall.Row{Comps: make([]float64, len(comps))}
	for i := range pt.Rewards {
		li := pt.Labels[i]
		lo := origins[li]
		row.Reward = pt.Rewards[i]
		row.Label = pt.LabelNames[li]
		row.Origin, row.HasOrigin = lo.origin, lo.hasOrigin
		row.AliasOf, row.HasAliasOf = lo.alias, lo.hasAlias
		row.Step, row.HasStep = 0, false
		if pt.Steps != nil {
			row.Step, row.HasStep = pt.Steps[i], pt.HasStep[i]
		}
		for j := range cols {
			row.Comps[j] = cols[j][i]
		}
		row.Invalid = -1
		if pt.Invalid != nil {
			row.Invalid = pt.Invalid[i]
		}
		row.EffRank, row.HasEffRank = 0, false
		if pt.EffRank != nil {
			row.EffRank, row.HasEffRank = pt.EffRank[i], pt.HasEffRank[i]
		}
		row.Gamma, row.HasGamma = pt.Gamma, pt.HasGamma && i == 0
		b.Add(&row)
	}
}
