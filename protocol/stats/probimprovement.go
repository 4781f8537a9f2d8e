package stats

import (
	"cmp"
	"math"
	"slices"
)

// ProbImprovementCI is the percentile-bootstrap confidence interval of
// ProbImprovement(x, y) at the given level, from a stratified bootstrap as
// rliable draws it (StratifiedIndependentBootstrap): every resample draws
// len(x) values of x and len(y) values of y with replacement, the two
// samples independently of each other, and evaluates ProbImprovement on the
// pair. One PRNG seeded by seed (see SeedFor) draws, per resample, the
// len(x) indices into x first and then the len(y) indices into y, each
// index as BootstrapCI draws one (the package documentation, steps 1–3);
// the interval is Quantile of the sorted statistics at (1−level)/2 and
// (1+level)/2, as for BootstrapCI.
//
// Each resample's statistic is counted exactly (integers of pairs greater
// and equal, as ProbImprovement counts them) in O(len(x)+len(y)), without
// materializing the pairs. It panics when x or y is empty or holds a NaN or
// an infinity, when resamples < 1, or when level is not strictly between 0
// and 1.
func ProbImprovementCI(x, y []float64, resamples int, seed uint64, level float64) (lo, hi float64) {
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
