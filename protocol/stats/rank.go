package stats

import (
	"cmp"
	"slices"
)

// rankAverage returns the ranks of xs, 1 for the smallest, tied values sharing
// the average of the ranks they span (scipy.stats.rankdata, method
// "average"). Every rank is an integer or a half-integer, so it is exact. It
// also returns Σ t(t²−1) over the groups of t tied values, the tie term of
// the Wilcoxon and Friedman variances. xs must not hold NaN.
func rankAverage(xs []float64) (ranks []float64, tieTerm int64) {
	n := len(xs)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(xs[i], xs[j]) })
	ranks = make([]float64, n)
	for start := 0; start < n; {
		end := start + 1
		for end < n && xs[order[end]] == xs[order[start]] {
			end++
		}
		// Positions start..end−1 hold ranks start+1..end; their mean is
		// (start+1+end)/2.
		r := float64(start+1+end) / 2
		for _, i := range order[start:end] {
			ranks[i] = r
		}
		t := int64(end - start)
		tieTerm += t * (t*t - 1)
		start = end
	}
	return ranks, tieTerm
}
