package skyfall

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// validOf returns a validity bitmap of has at a random offset, or a nil one
// when every row has a value and the coin says so.
func validOf(rng *rand.Rand, has []bool) Valid {
	all := true
	for _, h := range has {
		all = all && h
	}
	if all && rng.IntN(2) == 0 {
		return Valid{}
	}
	off := rng.IntN(20)
	bits := make([]byte, (off+len(has)+7)/8+rng.IntN(2))
	for i := range bits {
		bits[i] = byte(rng.Uint32()) // the bits around the rows' must not matter
	}
	for i, h := range has {
		k := off + i
		if h {
			bits[k>>3] |= 1 << (k & 7)
		} else {
			bits[k>>3] &^= 1 << (k & 7)
		}
	}
	return Valid{Bits: bits, Off: off}
}

// columnsOf returns rows as Columns (rows of one label, invalid_action -1,
// 0 or 1, Step 0 where absent; the first origin and alias among them), with
// the columns no row sets sometimes nil, sometimes present and all absent.
func columnsOf(rng *rand.Rand, rows []Row, nComps int) *Columns {
	c := &Columns{Label: rows[0].Label}
	var hasStep, hasInv, hasRank []bool
	anyStep, anyInv, anyRank := false, false, false
	for _, r := range rows {
		anyStep, anyInv, anyRank = anyStep || r.HasStep, anyInv || r.Invalid >= 0, anyRank || r.HasEffRank
	}
	keep := func(any bool) bool { return any || rng.IntN(3) == 0 }
	if keep(anyStep) {
		c.Steps = make([]int64, 0, len(rows))
	}
	if keep(anyInv) {
		c.Invalid = make([]bool, 0, len(rows))
	}
	if keep(anyRank) {
		c.EffRank = make([]float64, 0, len(rows))
	}
	c.Comps = make([][]float64, nComps+rng.IntN(2)) // sometimes one more than the builder's
	for k := range c.Comps {
		zero := true // no row sets component k: it may be nil
		for _, r := range rows {
			zero = zero && (k >= len(r.Comps) || math.Float64bits(r.Comps[k]) == 0)
		}
		if !zero || rng.IntN(3) > 0 {
			c.Comps[k] = make([]float64, len(rows))
		}
	}
	for i, r := range rows {
		c.Rewards = append(c.Rewards, r.Reward)
		if c.Steps != nil {
			c.Steps = append(c.Steps, r.Step)
			hasStep = append(hasStep, r.HasStep)
		}
		for k, col := range c.Comps {
			if col != nil && k < len(r.Comps) {
				col[i] = r.Comps[k]
			}
		}
		if c.Invalid != nil {
			c.Invalid = append(c.Invalid, r.Invalid == 1)
			hasInv = append(hasInv, r.Invalid >= 0)
		}
		if c.EffRank != nil {
			c.EffRank = append(c.EffRank, r.EffRank)
			hasRank = append(hasRank, r.HasEffRank)
		}
		if r.HasGamma && !c.HasGamma {
			c.Gamma, c.HasGamma = r.Gamma, true
		}
		if r.HasOrigin && !c.HasOrigin {
			c.Origin, c.HasOrigin = r.Origin, true
		}
		if r.HasAliasOf && !c.HasAliasOf {
			c.AliasOf, c.HasAliasOf = r.AliasOf, true
		}
	}
	if c.Steps != nil {
		c.StepsValid = validOf(rng, hasStep)
	}
	if c.Invalid != nil {
		c.InvalidValid = validOf(rng, hasInv)
	}
	if c.EffRank != nil {
		c.EffRankValid = validOf(rng, hasRank)
	}
	return c
}

// TestAddColumnsMatchesAdd: over random rows whose columns switch between
// regular and random stretches (rowGen's: -0.0, NaN payloads, fields
// appearing mid-run, runs of steps turning dense, labels turning dense),
// a builder given some of its rows by AddColumns, in batches of any length
// across chunk and bitmap word boundaries, and the others by Add, holds
// exactly what a builder given every row by Add holds: the same Trace bit
// for bit (also midway), Len, NumLabels, MemBytes, and the same label, step,
// invalid_action and bitmap columns.
func TestAddColumnsMatchesAdd(t *testing.T) {
	sizes := []int{1, 2, 63, 64, 65, 200, chunkLen - 1, chunkLen, chunkLen + 1, 3*chunkLen + 17, 40_000}
	if !testing.Short() {
		sizes = append(sizes, 64*chunkLen+1)
	}
	cases := eachGridCase(sizes, 1000, 7, func(c *gridCase) {
		n, comps, rng, what, g := c.n, c.comps, c.rng, c.what, c.gen
		rows := make([]Row, n)
		for i := range rows {
			g.next(&rows[i])
			rows[i].Comps = append([]float64(nil), rows[i].Comps...)
			if rng.IntN(3) > 0 { // most rows fit Columns
				if rng.IntN(2) == 0 {
					rows[i].HasOrigin, rows[i].HasAliasOf = false, false
					rows[i].Origin, rows[i].AliasOf = "", ""
				}
				if rows[i].Invalid > 1 || rows[i].Invalid < -1 {
					rows[i].Invalid = 1
				}
			}
		}
		got, want := NewBuilder("k", comps), NewBuilder("k", comps)
		mid := rng.IntN(n + 1)
		batches := 0
		for i := 0; i < n; {
			r := rows[i]
			fits := r.Invalid >= -1 && r.Invalid <= 1
			if !fits || rng.IntN(4) == 0 {
				want.Add(&rows[i])
				got.Add(&rows[i])
				i++
			} else {
				e := i + 1
				limit := i + 1 + rng.IntN([]int{3, 70, 5000}[rng.IntN(3)])
				for e < n && e < limit && rows[e].Label == r.Label && rows[e].Invalid >= -1 && rows[e].Invalid <= 1 {
					e++
				}
				for k := i; k < e; k++ {
					if !rows[k].HasStep {
						rows[k].Step = 0 // Columns hold no step where none is carried
					}
					want.Add(&rows[k])
				}
				got.AddColumns(columnsOf(rng, rows[i:e], len(comps)))
				batches++
				i = e
			}
			if i >= mid && mid >= 0 {
				checkSameTrace(t, what+", midway", got.Trace(nil), want.Trace(nil))
				mid = -1
			}
			if got.Len() != want.Len() || got.NumLabels() != want.NumLabels() || got.MemBytes() != want.MemBytes() {
				t.Fatalf("%s: after row %d: Len %d/%d, NumLabels %d/%d, MemBytes %d/%d", what, i,
					got.Len(), want.Len(), got.NumLabels(), want.NumLabels(), got.MemBytes(), want.MemBytes())
			}
		}
		if n >= 64 && batches == 0 {
			t.Fatalf("%s: no batch", what)
		}
		checkSameTrace(t, what, got.Trace(map[string]string{"m": "v"}), want.Trace(map[string]string{"m": "v"}))
		if !reflect.DeepEqual(got.labels, want.labels) || !reflect.DeepEqual(got.steps, want.steps) ||
			!reflect.DeepEqual(got.invalid, want.invalid) || !reflect.DeepEqual(got.rank.mask, want.rank.mask) ||
			got.anyStep != want.anyStep || got.anyInv != want.anyInv || got.anyRank != want.anyRank {
			t.Fatalf("%s: the builders' columns differ", what)
		}
		for k := range comps {
			if !reflect.DeepEqual(got.comps[k].mask, want.comps[k].mask) || got.comps[k].vals.len() != want.comps[k].vals.len() {
				t.Fatalf("%s: component %d's column differs", what, k)
			}
		}
	})
	t.Logf("%d cases", cases)
}

// TestAddColumnsEmpty: no rows add nothing, not even a label.
func TestAddColumnsEmpty(t *testing.T) {
	b := NewBuilder("k", []string{"a"})
	b.AddColumns(&Columns{Label: "x", HasGamma: true, Gamma: 1})
	if b.Len() != 0 || b.NumLabels() != 0 || b.hasGamma {
		t.Fatalf("Len %d, NumLabels %d, gamma %v after no rows", b.Len(), b.NumLabels(), b.hasGamma)
	}
}
