package stats

import (
	"math"
	"slices"
	"sync"
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
	h := float64(float64(n-1) * q)
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
// and q = qhi, qlo ≤ qhi, without sorting: it finds the few order
// statistics it needs (ranks i, i+1, j, j+1) and may reorder values. The
// results are identical to those of Quantile: an order statistic is one
// value whatever the way it is found. values must not hold NaN.
//
// From windowMin values on it first tries windows (quantileWindows); when
// a window misses its ranks, or on fewer values, it selects by quickselect
// (quantilePairQuick).
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
	if n >= windowMin {
		if lo, hi, ok := quantileWindows(values, i, t, j, u); ok {
			return lo, hi
		}
	}
	return quantilePairQuick(values, i, t, j, u)
}

// quantilePairQuick is quantilePairSelect by quickselect: order statistic i
// (and j), then i+1 (and j+1) as the minimum of what lies above it.
func quantilePairQuick(values []float64, i int, t float64, j int, u float64) (lo, hi float64) {
	n := len(values)
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

// Windows of quantileWindows: from windowMin values, a sample of
// windowSample of them.
const (
	windowMin    = 512
	windowSample = 128
)

// windowBufs holds quantileWindows' two buffers between calls (each call
// writes before it reads, so reuse changes no result).
var windowBufs = sync.Pool{New: func() any { return new([2][]float64) }}

// quantileWindows finds order statistics i, i+1, j and j+1 of values (as
// quantilePairQuick does, the same values) in one pass without a branch
// per value, where quickselect's partition mispredicts half its branches.
// A sorted sample of windowSample values (every n/windowSample-th) gives
// for each of the two ranks a window [a, b] that holds it with a margin of
// three standard deviations of the sample rank and more; the pass counts
// the values below a and copies those within [a, b] to a buffer, whose
// own selection is short. ok is false, values untouched, when a window
// turns out to miss its ranks (rarely, and on adversarial inputs): the
// caller then selects the ordinary way.
func quantileWindows(values []float64, i int, t float64, j int, u float64) (lo, hi float64, ok bool) {
	n := len(values)
	var sample [windowSample]float64
	for k := range sample {
		sample[k] = values[k*n/windowSample]
	}
	slices.Sort(sample[:])
	a1, b1 := window(&sample, n, i)
	a2, b2 := window(&sample, n, j)

	bufs := windowBufs.Get().(*[2][]float64)
	defer windowBufs.Put(bufs)
	w1, w2 := grow(&bufs[0], n), grow(&bufs[1], n)
	below1, k1, below2, k2 := 0, 0, 0, 0
	if math.IsInf(a1, -1) && math.IsInf(b2, 1) {
		// The usual case (a 95 % interval of 10,000 statistics): the
		// low window starts below every value and the high one ends
		// above, so half the comparisons are known; k2 is i − below2.
		for i, x := range values {
			w1[k1] = x
			k1 += b2i(x <= b1)
			w2[i-below2] = x
			below2 += b2i(x < a2)
		}
		k2 = n - below2
	} else {
		for _, x := range values {
			w1[k1] = x
			w2[k2] = x
			below1 += b2i(x < a1)
			k1 += b2i(x >= a1) & b2i(x <= b1)
			below2 += b2i(x < a2)
			k2 += b2i(x >= a2) & b2i(x <= b2)
		}
	}
	lo, ok1 := windowPick(w1[:k1], below1, n, i, t)
	hi, ok2 := windowPick(w2[:k2], below2, n, j, u)
	return lo, hi, ok1 && ok2
}

// window is the interval [a, b] of values that holds order statistics r
// and r+1 of n values with high probability, from the sorted sample; an
// end beyond the sample is infinite.
func window(sample *[windowSample]float64, n, r int) (a, b float64) {
	p := (float64(r) + 0.5) / float64(n)
	margin := int(3*math.Sqrt(windowSample*p*(1-p))) + 3
	lo := r*windowSample/n - margin
	hi := (r+1)*windowSample/n + 1 + margin
	a, b = math.Inf(-1), math.Inf(1)
	if lo >= 0 {
		a = sample[lo]
	}
	if hi < windowSample {
		b = sample[hi]
	}
	return a, b
}

// windowPick is order statistic r of n values, lerped at t with r+1 as
// Quantile does, from the window w of the values within [a, b] when below
// values lie under a; ok is false when w does not hold ranks r and r+1.
func windowPick(w []float64, below, n, r int, t float64) (v float64, ok bool) {
	need := r + 1 // the last rank needed
	if r == n-1 {
		need = r
	}
	if below > r || below+len(w) <= need {
		return 0, false
	}
	k := r - below
	v = selectKth(w, k)
	if r < n-1 {
		v = lerp(v, Min(w[k+1:]), t)
	}
	return v, true
}

// b2i is 1 for true and 0 for false, without a branch.
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
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
