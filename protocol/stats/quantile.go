package stats

import "math"

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of sorted, ascending values,
// interpolating linearly between the two nearest ranks as numpy.quantile does
// by default (method "linear"): h = (n−1)·q, then x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1]−x[⌊h⌋]).
// It panics on an empty slice.
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		panic("stats.Quantile of no values")
	}
	h := float64(n-1) * q
	lo := math.Floor(h)
	i := int(lo)
	if i >= n-1 {
		return sorted[n-1]
	}
	if i < 0 {
		return sorted[0]
	}
	t := h - lo
	a, b := sorted[i], sorted[i+1]
	// numpy's _lerp: a + (b−a)·t, evaluated from the upper end when t ≥ 0.5
	// so that the result is exact at both ends.
	if t >= 0.5 {
		return b - (b-a)*(1-t)
	}
	return a + (b-a)*t
}
