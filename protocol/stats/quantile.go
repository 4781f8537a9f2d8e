package stats

import (
	"math"
	"slices"
)

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of sorted, ascending values,
// interpolating linearly between the two nearest ranks as numpy.quantile does
// by default (method "linear"): h = (n−1)·q, then x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1]−x[⌊h⌋]).
// It panics on an empty slice and on q outside [0, 1] (numpy raises there).
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		panic("stats.Quantile of no values")
	}
	i, t := quantileIndex(n, q)
	if i == n-1 {
		return sorted[n-1]
	}
	return lerp(sorted[i], sorted[i+1], t)
}

// quantileIndex locates the q-quantile of n sorted values: between index i
// and i+1 at fraction t, or exactly at the last value when i = n−1 (numpy
// takes the last value whenever h ≥ n−1).
func quantileIndex(n int, q float64) (i int, t float64) {
	if !(q >= 0 && q <= 1) {
		panic("stats.Quantile: q must lie in [0, 1]")
	}
	h := float64(n-1) * q
	lo := math.Floor(h)
	i = int(lo)
	if i >= n-1 {
		return n - 1, 0
	}
	return i, h - lo
}

// lerp is numpy's _lerp: a + (b−a)·t, evaluated from the upper end when
// t ≥ 0.5 so that the result is exact at both ends. The float64 conversions
// keep the compiler from fusing the multiply and the add into one FMA, so the
// result is the same on every architecture.
func lerp(a, b, t float64) float64 {
	if t >= 0.5 {
		return b - float64((b-a)*(1-t))
	}
	return a + float64((b-a)*t)
}

// quantilePairSelect returns Quantile(sorted copy of values, q) for q = qlo
// and q = qhi, qlo ≤ qhi, without sorting: it reorders values, finding the
// few order statistics it needs by selection in linear expected time. The
// results are identical to those of Quantile. values must not hold NaN.
func quantilePairSelect(values []float64, qlo, qhi float64) (lo, hi float64) {
	n := len(values)
	if n == 0 {
		panic("stats.Quantile of no values")
	}
	i, t := quantileIndex(n, qlo)
	j, u := quantileIndex(n, qhi)
	if j < i {
		panic("stats.quantilePairSelect: qlo > qhi")
	}
	// After selectKth(v, k), v[k+1:] ≥ v[k], so order statistic k+1 is the
	// minimum of v[k+1:], and the search for j > i can skip v[:i+1].
	a := selectKth(values, i)
	lo = a
	if i < n-1 {
		lo = lerp(a, Min(values[i+1:]), t)
	}
	if j > i {
		a = selectKth(values[i+1:], j-i-1)
	}
	hi = a
	if j < n-1 {
		hi = lerp(a, Min(values[j+1:]), u)
	}
	return lo, hi
}

// selectKth reorders v so that v[k] is its k-th smallest value (from 0), every
// value before it ≤ v[k] and every value after it ≥ v[k], and returns v[k].
// It is a quickselect with a median-of-three pivot and a three-way partition
// (so runs of equal values cost nothing), falling back to sorting if the
// pivots keep failing.
func selectKth(v []float64, k int) float64 {
	lo, hi := 0, len(v) // k lies in v[lo:hi]
	for depth := 0; hi-lo > 12; depth++ {
		if depth > 60 {
			slices.Sort(v[lo:hi])
			return v[k]
		}
		p := median3(v[lo], v[lo+(hi-lo)/2], v[hi-1])
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch x := v[i]; {
			case x < p:
				v[lt], v[i] = x, v[lt]
				lt++
				i++
			case x > p:
				gt--
				v[i], v[gt] = v[gt], x
			default:
				i++
			}
		}
		// v[lo:lt] < p, v[lt:gt] == p, v[gt:hi] > p.
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return p
		}
	}
	sortInPlace(v[lo:hi])
	return v[k]
}

func median3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	if a > b {
		return a
	}
	return b
}
