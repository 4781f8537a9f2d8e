package skyfall

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// sameBuilders fails unless got and want hold the same rows in the same
// compact columns: the same Trace bit for bit, Len, NumLabels, MemBytes,
// label bookkeeping and columns.
func sameBuilders(t *testing.T, what string, got, want *Builder) {
	t.Helper()
	checkSameTrace(t, what, got.Trace(map[string]string{"m": "v"}), want.Trace(map[string]string{"m": "v"}))
	if got.Len() != want.Len() || got.NumLabels() != want.NumLabels() || got.MemBytes() != want.MemBytes() {
		t.Fatalf("%s: Len %d/%d, NumLabels %d/%d, MemBytes %d/%d", what,
			got.Len(), want.Len(), got.NumLabels(), want.NumLabels(), got.MemBytes(), want.MemBytes())
	}
	if !reflect.DeepEqual(got.labelIdx, want.labelIdx) || !reflect.DeepEqual(got.labelNames, want.labelNames) ||
		!reflect.DeepEqual(got.origin, want.origin) || !reflect.DeepEqual(got.hasOrigin, want.hasOrigin) ||
		!reflect.DeepEqual(got.alias, want.alias) || !reflect.DeepEqual(got.hasAlias, want.hasAlias) ||
		got.lastLabel != want.lastLabel || got.lastIdx != want.lastIdx {
		t.Fatalf("%s: the label bookkeeping differs", what)
	}
	if !reflect.DeepEqual(got.labels, want.labels) || !reflect.DeepEqual(got.steps, want.steps) ||
		!reflect.DeepEqual(got.invalid, want.invalid) || !reflect.DeepEqual(got.rank.mask, want.rank.mask) ||
		got.rank.vals.len() != want.rank.vals.len() ||
		got.anyStep != want.anyStep || got.anyInv != want.anyInv || got.anyRank != want.anyRank ||
		got.hasGamma != want.hasGamma {
		t.Fatalf("%s: the builders' columns differ", what)
	}
	for k := range got.comps {
		if !reflect.DeepEqual(got.comps[k].mask, want.comps[k].mask) || got.comps[k].vals.len() != want.comps[k].vals.len() {
			t.Fatalf("%s: component %d's column differs", what, k)
		}
	}
}

// appendCase starts a case of the append tests: two builders holding the
// same random rows (some or none), the component names to append by (the
// builders', or another order one short), and an origin function (random
// origins and aliases of some labels, or nil).
func appendCase(c *gridCase) (got, want *Builder, given []string, origin func(string) LabelOrigin) {
	n, labels, comps, rng, g := c.n, c.labels, c.comps, c.rng, c.gen
	got, want = NewBuilder("k", comps), NewBuilder("k", comps)
	var r Row
	for range rng.IntN(3) * rng.IntN(n+1) / 2 {
		g.next(&r)
		got.Add(&r)
		want.Add(&r)
	}
	given = comps
	if len(comps) == 3 && rng.IntN(2) == 0 {
		given = []string{"success", "progress"} // another order, one short
	}
	origins := map[string]LabelOrigin{}
	for range 1 + rng.IntN(8) {
		origins[fmt.Sprintf("L%d", rng.IntN(max(labels, 1)))] = LabelOrigin{
			Origin: fmt.Sprintf("P%d", rng.IntN(3)), HasOrigin: rng.IntN(2) == 0,
			AliasOf: fmt.Sprintf("B%d", rng.IntN(3)), HasAliasOf: rng.IntN(2) == 0,
		}
	}
	origin = func(l string) LabelOrigin { return origins[l] }
	if rng.IntN(4) == 0 {
		origin = nil
	}
	return got, want, given, origin
}

// TestAppendRowsMatchesAdd: random builders (rowGen's rows: regular and
// random stretches, -0.0 and NaN payloads, steps, invalid_action and
// effective_rank appearing mid-run, any invalid_action value, labels and
// steps turning dense, chunk and bitmap-word boundaries anywhere), appended
// one after another to a builder holding some rows or none, by AppendRows
// and row by row through Add, give the same builders (sameBuilders) after
// every part and after rows added on top; the parts are left as they were.
func TestAppendRowsMatchesAdd(t *testing.T) {
	sizes := []int{0, 1, 2, 63, 64, 65, 200, chunkLen - 1, chunkLen + 1, 3*chunkLen + 17}
	if !raceEnabled {
		sizes = append(sizes, 40_000)
		if !testing.Short() {
			sizes = append(sizes, 64*chunkLen+1)
		}
	}
	cases := eachGridCase(sizes, 5000, 11, func(c *gridCase) {
		n, comps, rng, what, g := c.n, c.comps, c.rng, c.what, c.gen
		got, want, given, origin := appendCase(c)
		var r Row
		part := NewBuilder("p", comps)
		for k := range 4 {
			part.Reset("p")
			m := rng.IntN(n + 1)
			if k == 0 {
				m = n
			}
			if rng.IntN(3) == 0 {
				// a fresh regime for the part
				g = &rowGen{rng: rng, nComps: len(comps), labels: c.labels}
			}
			for range m {
				g.next(&r)
				part.Add(&r)
			}
			before := part.Trace(nil)
			beforeMem := part.MemBytes()
			got.AppendRows(part, given, origin)
			want.AddTrace(part.Trace(nil), given, origin) // the row-by-row reference
			if k == 0 || k == 3 || m < 5000 {
				sameBuilders(t, fmt.Sprintf("%s, part %d of %d rows", what, k, m), got, want)
			} else if got.Len() != want.Len() || got.NumLabels() != want.NumLabels() || got.MemBytes() != want.MemBytes() {
				t.Fatalf("%s, part %d: Len %d/%d, NumLabels %d/%d, MemBytes %d/%d", what, k,
					got.Len(), want.Len(), got.NumLabels(), want.NumLabels(), got.MemBytes(), want.MemBytes())
			}
			checkSameTrace(t, what+", the part after", part.Trace(nil), before)
			if part.MemBytes() != beforeMem {
				t.Fatalf("%s: the part's MemBytes changed", what)
			}
			for range rng.IntN(50) {
				g.next(&r)
				got.Add(&r)
				want.Add(&r)
			}
			if k == 3 {
				sameBuilders(t, what+", rows after the last part", got, want)
			}
		}
	})
	t.Logf("%d cases", cases)
}

// TestAppendRowsEmpty: a part of no rows adds nothing, not even its gamma.
func TestAppendRowsEmpty(t *testing.T) {
	b, o := NewBuilder("k", []string{"a"}), NewBuilder("o", []string{"a"})
	o.Add(&Row{Label: "x", HasGamma: true, Gamma: 1, Invalid: 1})
	o.Reset("o")
	b.AppendRows(o, []string{"a"}, nil)
	if b.Len() != 0 || b.NumLabels() != 0 || b.hasGamma || b.anyInv {
		t.Fatalf("Len %d, NumLabels %d, gamma %v after no rows", b.Len(), b.NumLabels(), b.hasGamma)
	}
}

// TestAddTraceMatchesAdd: a dense trace added to a builder holding some
// rows or none, by AddTrace (a stretch of one label at a time through
// AddColumns) and row by row through Add (addTraceRows), gives the same
// builder (sameBuilders), over rowGen's random builders: steps, flags and
// ranks appearing mid-run, any invalid_action value (which AddTrace adds
// row by row), components given in another order or fewer, origins or
// none, rows added on top.
func TestAddTraceMatchesAdd(t *testing.T) {
	sizes := []int{0, 1, 2, 63, 64, 65, 200, chunkLen - 1, chunkLen + 1, 3*chunkLen + 17}
	if !raceEnabled {
		sizes = append(sizes, 40_000)
	}
	columnarCases := 0
	cases := eachGridCase(sizes, 5000, 11, func(c *gridCase) {
		n, comps, rng, what, g := c.n, c.comps, c.rng, c.what, c.gen
		got, want, given, origin := appendCase(c)
		var r Row
		part := NewBuilder("p", comps)
		for range n {
			g.next(&r)
			part.Add(&r)
		}
		tr := part.Trace(nil)
		if columnar(tr) {
			columnarCases++
		}
		got.AddTrace(tr, given, origin)
		// The reference: row by row.
		los := make([]LabelOrigin, len(tr.LabelNames))
		if origin != nil {
			for i, name := range tr.LabelNames {
				los[i] = origin(name)
			}
		}
		cols := make([][]float64, len(given))
		var carried uint64
		for j, name := range given {
			cols[j] = tr.Components[name]
			if tr.Uncarried == nil || !slices.Contains(tr.Uncarried, name) {
				carried |= CarriedBit(j)
			}
		}
		want.addTraceRows(tr, cols, los, carried)
		sameBuilders(t, what, got, want)
		for range rng.IntN(50) {
			g.next(&r)
			got.Add(&r)
			want.Add(&r)
		}
		sameBuilders(t, what+", rows after", got, want)
	})
	if columnarCases < cases/4 {
		t.Fatalf("%d of %d cases went through AddColumns", columnarCases, cases)
	}
	t.Logf("%d cases, %d through AddColumns", cases, columnarCases)
}
