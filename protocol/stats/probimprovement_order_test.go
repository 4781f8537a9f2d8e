package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// probImprovementCIDrawOrder is ProbImprovementCI as issue 14 wrote it:
// every resample's x indices kept in draw order and the pairs summed over
// them. The counting version must give its bits.
func probImprovementCIDrawOrder(x, y []float64, resamples int, seed uint64, level float64) (lo, hi float64) {
	n, m := len(x), len(y)
	switch {
	case n == 0 || m == 0:
		panic("stats.ProbImprovementCI of no values")
	case resamples < 1:
		panic("stats.ProbImprovementCI needs at least one resample")
	case !(level > 0 && level < 1):
		panic("stats.ProbImprovementCI level must lie strictly between 0 and 1")
	}
	for _, v := range [][]float64{x, y} {
		for _, a := range v {
			if math.IsNaN(a) || math.IsInf(a, 0) {
				panic("stats.ProbImprovementCI of a non-finite value")
			}
		}
	}
	// posY[j] is where y[j] sits in y sorted; below[i] and upTo[i] count
	// the sorted y values < x[i] and ≤ x[i].
	order := make([]int32, m)
	for j := range order {
		order[j] = int32(j)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(y[a], y[b]) })
	sortedY := make([]float64, m)
	posY := make([]int32, m)
	for p, j := range order {
		sortedY[p] = y[j]
		posY[j] = int32(p)
	}
	below := make([]int32, n)
	upTo := make([]int32, n)
	for i, a := range x {
		lt, _ := slices.BinarySearchFunc(sortedY, a, func(b, a float64) int {
			if b < a {
				return -1
			}
			return 1
		})
		le, _ := slices.BinarySearchFunc(sortedY, a, func(b, a float64) int {
			if b <= a {
				return -1
			}
			return 1
		})
		below[i], upTo[i] = int32(lt), int32(le)
	}

	drawX := make([]int32, n)
	// cum[p] counts the drawn y values at sorted positions < p.
	cum := make([]int64, m+1)
	values := make([]float64, resamples)
	pairs := float64(n) * float64(m)
	src := newIndexSource(seed)
	un, um := uint64(n), uint64(m)
	for b := range values {
		for i := range drawX {
			drawX[i] = int32(src.intN(un))
		}
		clear(cum)
		for range m {
			cum[posY[src.intN(um)]+1]++
		}
		for p := 1; p <= m; p++ {
			cum[p] += cum[p-1]
		}
		var gt, eq int64
		for _, i := range drawX {
			l, u := cum[below[i]], cum[upTo[i]]
			gt += l
			eq += u - l
		}
		values[b] = (float64(gt) + 0.5*float64(eq)) / pairs
	}
	return quantilePairSelect(values, (1-level)/2, (1+level)/2)
}

// TestProbImprovementCICountsEqualDrawOrder: counting the draws per sorted
// position (issue 16) gives the interval of the draw-order sum to the bit,
// on samples with ties, of sizes powers of two or not, up to 3,000 seeds.
func TestProbImprovementCICountsEqualDrawOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 14))
	for trial := range 90 {
		n, m := 1+rng.IntN(64), 1+rng.IntN(64)
		if trial%8 == 0 {
			n, m = 1000+rng.IntN(2000), 1000+rng.IntN(2000)
		}
		if trial%5 == 0 {
			n, m = 32, 128
		}
		x, y := make([]float64, n), make([]float64, m)
		// Values on a grid of halves (pairs equal), or continuous (none:
		// the path without ties).
		grid := func() float64 { return math.Round(rng.NormFloat64()*4) / 2 }
		if trial%3 == 1 {
			grid = rng.NormFloat64
		}
		for i := range x {
			x[i] = grid()
		}
		for j := range y {
			y[j] = grid()
		}
		res := 1 + rng.IntN(300)
		if n < 100 && m < 100 && trial%2 == 0 {
			res = windowMin + rng.IntN(2000) // the interval's windows
		}
		seed := rng.Uint64()
		lo, hi := ProbImprovementCI(x, y, res, seed, 0.95)
		wlo, whi := probImprovementCIDrawOrder(x, y, res, seed, 0.95)
		if math.Float64bits(lo) != math.Float64bits(wlo) || math.Float64bits(hi) != math.Float64bits(whi) {
			t.Fatalf("trial %d (n %d, m %d): [%v, %v], in draw order [%v, %v]", trial, n, m, lo, hi, wlo, whi)
		}
	}
}

// TestProbImprovementCIUntilStops: a stop that says yes ends the bootstrap
// with ok false; one that never does leaves the result as ProbImprovementCI's.
func TestProbImprovementCIUntilStops(t *testing.T) {
	x, y := []float64{1, 2, 3, 4, 5}, []float64{2, 3, 3}
	asked := 0
	if _, _, ok := ProbImprovementCIUntil(x, y, 1000, 3, 0.95, func() bool { asked++; return asked > 2 }); ok || asked != 3 {
		t.Errorf("stopped: ok %v after %d asks, want false after 3", ok, asked)
	}
	lo, hi, ok := ProbImprovementCIUntil(x, y, 1000, 3, 0.95, func() bool { return false })
	wlo, whi := ProbImprovementCI(x, y, 1000, 3, 0.95)
	if !ok || lo != wlo || hi != whi {
		t.Errorf("not stopped: [%v, %v] %v, want [%v, %v]", lo, hi, ok, wlo, whi)
	}
}

// TestProbImprovementCISeparatedDrawsNothing: when every x lies above every
// y, or below, or all values are one (a constant metric on both sides),
// every resample's statistic is the same (1, 0, ½) and the interval is
// found without a draw (stop is never asked), to the bit of the draws.
// Samples that touch (the least x equal to the greatest y, among others)
// still draw, with the same result as in draw order.
func TestProbImprovementCISeparatedDrawsNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 20))
	sample := func(n int, lo, hi float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = lo + (hi-lo)*rng.Float64()
		}
		return v
	}
	for _, c := range []struct {
		name  string
		x, y  []float64
		draws bool
		want  float64
	}{
		{"above", sample(37, 2, 3), sample(50, -1, 1.5), false, 1},
		{"above, constants", []float64{4, 4, 4}, []float64{-2, -2}, false, 1},
		{"above, one x", sample(64, 1, 2), []float64{0.5, 0.25}, false, 1},
		{"below", sample(33, -5, -4), sample(29, -3.5, 9), false, 0},
		{"below, constants", []float64{0, 0}, []float64{1, 1, 1, 1}, false, 0},
		{"one value", []float64{7, 7, 7, 7, 7}, []float64{7, 7, 7}, false, 0.5},
		{"one value, signed zeros", []float64{0, math.Copysign(0, -1)}, []float64{0, 0, 0}, false, 0.5},
		{"touching from above", append(sample(20, 2, 3), 1), append(sample(20, 0, 0.5), 1), true, 0},
		{"touching from below", append(sample(20, 0, 0.5), 1), append(sample(20, 2, 3), 1), true, 0},
		{"constant x inside y", []float64{1, 1, 1}, []float64{0, 2, 3}, true, 0},
		{"one value and one other", []float64{7, 7, 7}, []float64{7, 7, 8}, true, 0},
	} {
		for _, res := range []int{1, 17, windowMin + 5, 2000} {
			seed := rng.Uint64()
			asked := 0
			lo, hi, ok := ProbImprovementCIUntil(c.x, c.y, res, seed, 0.95, func() bool { asked++; return false })
			wlo, whi := probImprovementCIDrawOrder(c.x, c.y, res, seed, 0.95)
			if !ok || math.Float64bits(lo) != math.Float64bits(wlo) || math.Float64bits(hi) != math.Float64bits(whi) {
				t.Fatalf("%s, %d resamples: [%v, %v] (ok %v), in draw order [%v, %v]", c.name, res, lo, hi, ok, wlo, whi)
			}
			if drew := asked > 0; drew != c.draws {
				t.Errorf("%s, %d resamples: stop asked %d times, want draws %v", c.name, res, asked, c.draws)
			}
			if !c.draws && (lo != c.want || hi != c.want) {
				t.Errorf("%s, %d resamples: [%v, %v], want [%v, %v]", c.name, res, lo, hi, c.want, c.want)
			}
		}
	}
	// The stop a caller gives does not change a result that needs no draw.
	if lo, hi, ok := ProbImprovementCIUntil([]float64{3, 4}, []float64{1, 2}, 100, 1, 0.95, func() bool { return true }); !ok || lo != 1 || hi != 1 {
		t.Errorf("separated with stop: [%v, %v] ok %v, want [1, 1] true", lo, hi, ok)
	}
}
