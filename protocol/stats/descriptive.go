package stats

import (
	"math"
	"slices"
)

// mustHave panics when xs is empty. Reducing an empty sample is a caller bug:
// a family metric with no seed values is absent, and the caller must say so
// before asking for a number.
func mustHave(xs []float64, fn string) {
	if len(xs) == 0 {
		panic("stats." + fn + " of no values")
	}
}

// sum adds xs left to right in one float64 accumulator.
func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// Mean is the sum of xs, accumulated in slice order, divided by len(xs).
// It panics on an empty slice.
func Mean(xs []float64) float64 {
	mustHave(xs, "Mean")
	return sum(xs) / float64(len(xs))
}

// SampleVariance is the unbiased (n−1) variance computed in two passes: first
// m = Σx/n, then Σ(x−m)²/(n−1), each sum accumulated in slice order. ok is
// false when there are fewer than two values; the variance is then absent,
// never zero.
func SampleVariance(xs []float64) (v float64, ok bool) {
	n := len(xs)
	if n < 2 {
		return 0, false
	}
	m := sum(xs) / float64(n)
	ss := 0.0
	for _, x := range xs {
		dx := x - m
		ss += float64(dx * dx) // the conversion forbids fusing into an FMA
	}
	return ss / float64(n-1), true
}

// SampleStd is the square root of SampleVariance, with the same ok.
func SampleStd(xs []float64) (s float64, ok bool) {
	v, ok := SampleVariance(xs)
	if !ok {
		return 0, false
	}
	return math.Sqrt(v), true
}

// sortedCopy returns xs sorted ascending in a new slice.
func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// Median is the middle value of xs, or for an even count (a+b)/2 of the two
// middle values, as numpy.median computes it. xs is not modified. It panics on
// an empty slice.
func Median(xs []float64) float64 {
	mustHave(xs, "Median")
	s := sortedCopy(xs)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// IQM is the interquartile mean as rliable computes it, that is
// scipy.stats.trim_mean(xs, 0.25): sort, drop ⌊n/4⌋ values from each end and
// average the rest (sum in ascending order, divided by the count kept). xs is
// not modified. It panics on an empty slice.
func IQM(xs []float64) float64 {
	mustHave(xs, "IQM")
	return IQMInPlace(slices.Clone(xs))
}

// IQMInPlace is IQM that sorts xs in place instead of copying it. It does not
// allocate, which makes it the statistic to hand to BootstrapCI.
func IQMInPlace(xs []float64) float64 {
	mustHave(xs, "IQMInPlace")
	sortInPlace(xs)
	return trimmedMeanSorted(xs)
}

// trimmedMeanSorted averages sorted without its ⌊n/4⌋ lowest and ⌊n/4⌋
// highest values. ⌊n/4⌋ is computed on integers, which equals scipy's
// int(0.25·n) for every n.
func trimmedMeanSorted(sorted []float64) float64 {
	n := len(sorted)
	cut := n / 4
	kept := sorted[cut : n-cut]
	return sum(kept) / float64(len(kept))
}

// sortInPlace sorts ascending: insertion sort for the short slices that
// bootstrap resamples usually are, slices.Sort otherwise.
func sortInPlace(xs []float64) {
	if len(xs) > 24 {
		slices.Sort(xs)
		return
	}
	for i := 1; i < len(xs); i++ {
		v := xs[i]
		j := i
		for j > 0 && xs[j-1] > v {
			xs[j] = xs[j-1]
			j--
		}
		xs[j] = v
	}
}

// Min is the smallest value of xs. It panics on an empty slice.
func Min(xs []float64) float64 {
	mustHave(xs, "Min")
	m := xs[0]
	for _, x := range xs[1:] {
		if x < m {
			m = x
		}
	}
	return m
}

// Max is the largest value of xs. It panics on an empty slice.
func Max(xs []float64) float64 {
	mustHave(xs, "Max")
	m := xs[0]
	for _, x := range xs[1:] {
		if x > m {
			m = x
		}
	}
	return m
}
