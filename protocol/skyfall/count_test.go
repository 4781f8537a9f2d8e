package skyfall

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// countDense counts t's rows as CountLabels counts a builder's, from the
// dense columns: the reference.
func countDense(t *Trace, marks []string) LabelCounts {
	c := LabelCounts{Labels: t.LabelNames, Rows: make([]int, len(t.LabelNames)), Marked: make([]int, len(t.LabelNames)), Last: -1}
	for i, l := range t.Labels {
		c.Rows[l]++
		for _, m := range marks {
			if t.Components[m][i] != 0 {
				c.Marked[l]++
				break
			}
		}
	}
	if n := t.Len(); n > 0 {
		c.Last = int(t.Labels[n-1])
	}
	return c
}

// TestCountLabelsMatchesTrace: over rowGen's random rows (labels in runs
// and turned dense, components sparse with -0.0, NaN payloads, ±Inf and
// the smallest subnormals, components some rows leave out), added row by
// row or, for some, a column at a time, CountLabels gives what counting
// the materialised Trace gives, for no marking component, one, several,
// a name given twice and a component no row sets, midway and at the end;
// and the builder's Trace is unchanged by it.
func TestCountLabelsMatchesTrace(t *testing.T) {
	sizes := []int{0, 1, 2, 63, 64, 65, 200, chunkLen - 1, chunkLen, chunkLen + 1, 3*chunkLen + 17, 40_000}
	if !testing.Short() {
		sizes = append(sizes, 64*chunkLen+1)
	}
	comps := []string{"progress", "collision", "success", "never"}
	markSets := [][]string{nil, {"success"}, {"collision", "success"}, {"success", "success"}, {"never"},
		{"never", "progress"}, {"progress", "collision", "success", "never"}}
	seed := uint64(5000)
	dense := map[bool]int{} // builders whose labels ended dense, and in runs
	defer func() {
		if dense[true] == 0 || dense[false] == 0 {
			t.Errorf("labels dense in %d builders, in runs in %d: both forms must be tried", dense[true], dense[false])
		}
	}()
	for _, n := range sizes {
		for _, labels := range []int{1, 5, 3000} {
			seed++
			rng := rand.New(rand.NewPCG(seed, 11))
			what := fmt.Sprintf("%d rows, %d labels (seed %d)", n, labels, seed)
			g := &rowGen{rng: rng, nComps: 3, labels: labels} // "never" is never set
			b := NewBuilder("k", comps)
			check := func(when string) {
				tr := b.Trace(nil)
				for _, marks := range markSets {
					got, err := b.CountLabels(marks)
					if err != nil {
						t.Fatalf("%s, %s, marks %q: %v", what, when, marks, err)
					}
					if want := countDense(tr, marks); !reflect.DeepEqual(got, want) {
						t.Fatalf("%s, %s, marks %q:\n got  %+v\n want %+v", what, when, marks, got, want)
					}
				}
				checkSameTrace(t, what+", "+when+", after counting", b.Trace(nil), tr)
			}
			mid := rng.IntN(n + 1)
			var r Row
			for i := 0; i < n; {
				if i >= mid && mid >= 0 {
					check("midway")
					mid = -1
				}
				g.next(&r)
				if rng.IntN(8) > 0 || r.HasOrigin || r.HasAliasOf || r.Invalid > 1 || r.Invalid < -1 {
					b.Add(&r)
					i++
					continue
				}
				// A few rows of this one's label a column at a time.
				r.Comps = append([]float64(nil), r.Comps...)
				rows := []Row{r}
				for len(rows) < 1+rng.IntN(300) && i+len(rows) < n {
					var s Row
					g.next(&s)
					if s.Label != r.Label {
						break
					}
					s.Comps = append([]float64(nil), s.Comps...)
					s.HasOrigin, s.HasAliasOf = false, false
					s.Invalid = max(min(s.Invalid, 1), -1)
					rows = append(rows, s)
				}
				b.AddColumns(columnsOf(rng, rows, len(comps)))
				i += len(rows)
			}
			dense[b.labels.isDen]++
			check("at the end")
		}
	}
}

// TestCountLabelsValues: each value a component may hold, alone on a row
// of a word otherwise full or empty: marked unless it is ±0.
func TestCountLabelsValues(t *testing.T) {
	values := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64, -1, 1}
	for _, full := range []bool{false, true} {
		for _, v := range values {
			b := NewBuilder("k", []string{"e"})
			for i := range 130 {
				x := 0.0
				if full && i/64 == 1 {
					x = 2
				}
				if i == 70 {
					x = v
				}
				label := "a"
				if i >= 70 {
					label = "b"
				}
				b.Add(&Row{Label: label, Comps: []float64{x}, Invalid: -1})
			}
			c, err := b.CountLabels([]string{"e"})
			if err != nil {
				t.Fatal(err)
			}
			want := []int{0, 0}
			if full {
				want = []int{6, 57} // rows 64..69 are a's, 71..127 b's
			}
			if v != 0 || math.IsNaN(v) {
				want[1]++
			}
			if !reflect.DeepEqual(c.Marked, want) || !reflect.DeepEqual(c.Rows, []int{70, 60}) || c.Last != 1 {
				t.Errorf("%v (word full %v): %+v, want marked %v", v, full, c, want)
			}
		}
	}
}

// TestCountLabelsErrors: a marking name the builder does not keep fails,
// naming the trace and the first such name, on a builder with rows or
// without; no error for no marks on a builder without components.
func TestCountLabelsErrors(t *testing.T) {
	b := NewBuilder("run-7", []string{"a"})
	for _, rows := range []int{0, 3} {
		for range rows {
			b.Add(&Row{Label: "x", Comps: []float64{1}, Invalid: -1})
		}
		_, err := b.CountLabels([]string{"a", "missing", "other"})
		var nc *NoComponentError
		if !errors.As(err, &nc) || nc.Trace != "run-7" || nc.Component != "missing" ||
			err.Error() != `trace run-7: no column for component "missing"` {
			t.Errorf("%d rows: %v", rows, err)
		}
	}
	c, err := NewBuilder("k", nil).CountLabels(nil)
	if err != nil || c.Last != -1 || len(c.Labels) != 0 || c.Rows == nil {
		t.Errorf("empty builder: %+v, %v", c, err)
	}
}
