package figures

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestEnvelopeKeepsEveryColumnsExtremes: the PNG's ribbon keeps, in every
// pixel column, the highest top and the lowest bottom of the full line
// (computed here by a scan of each column), each at a step where the line
// has it, and the line's first and last step; one point per column, two
// more at most.
func TestEnvelopeKeepsEveryColumnsExtremes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, perColumn := range []float64{0.5, 1, 3.7, 40} {
		var pts plotter.XYs
		for i := range 2000 {
			y := math.Sin(float64(i) / 50)
			if rng.IntN(50) == 0 {
				y += 10 * (rng.Float64() - 0.5) // a spike
			}
			pts = append(pts, plotter.XY{X: float64(i), Y: y})
		}
		column := func(x float64) int64 { return int64(math.Floor(x / perColumn)) }
		for _, dir := range []struct {
			name   string
			beyond func(a, b float64) bool
		}{{"top", func(a, b float64) bool { return a > b }}, {"bottom", func(a, b float64) bool { return a < b }}} {
			got := envelope(pts, column, dir.beyond)
			want := map[int64]float64{}
			at := map[int64]map[float64]float64{} // column -> x -> y of the full line
			for _, p := range pts {
				c := column(p.X)
				if w, ok := want[c]; !ok || dir.beyond(p.Y, w) {
					want[c] = p.Y
				}
				if at[c] == nil {
					at[c] = map[float64]float64{}
				}
				at[c][p.X] = p.Y
			}
			seen := map[int64]int{}
			for i, p := range got {
				c := column(p.X)
				seen[c]++
				if p.Y != want[c] {
					t.Fatalf("%v per column, %s: point %d (%v) in column %d: y %v, the column's extreme is %v", perColumn, dir.name, i, p, c, p.Y, want[c])
				}
				if i > 0 && p.X <= got[i-1].X {
					t.Fatalf("%v per column, %s: x %v after %v", perColumn, dir.name, p.X, got[i-1].X)
				}
				if y, ok := at[c][p.X]; !ok || (y != p.Y && i != 0 && i != len(got)-1) {
					t.Fatalf("%v per column, %s: point %v is not the line's (%v)", perColumn, dir.name, p, y)
				}
			}
			if len(seen) != len(want) {
				t.Errorf("%v per column, %s: %d columns drawn of %d", perColumn, dir.name, len(seen), len(want))
			}
			for c, n := range seen {
				if n > 1 && c != column(pts[0].X) && c != column(pts[len(pts)-1].X) {
					t.Errorf("%v per column, %s: %d points in column %d", perColumn, dir.name, n, c)
				}
			}
			if got[0].X != pts[0].X || got[len(got)-1].X != pts[len(pts)-1].X {
				t.Errorf("%v per column, %s: spans %v..%v, the line %v..%v", perColumn, dir.name, got[0].X, got[len(got)-1].X, pts[0].X, pts[len(pts)-1].X)
			}
			if perColumn < 1 && len(got) != len(pts) {
				t.Errorf("%v per column, %s: %d points of %d; fewer than one a column must all stay", perColumn, dir.name, len(got), len(pts))
			}
		}
	}
}
