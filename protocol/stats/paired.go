package stats

import (
	"math"
	"slices"
)

// SignFlipMaxPairs bounds SignFlip, which visits all 2ⁿ sign patterns.
const SignFlipMaxPairs = 30

// SignFlip is the exact two-sided sign-flip permutation test of the paired
// differences d. For each of the 2ⁿ patterns s ∈ {+1, −1}ⁿ it sums s_i·d_i in
// pair order; p is the share of patterns with
//
//	|Σ s_i·d_i| ≥ |Σ d_i| − 1e-9·max(1, Σ|d_i|)
//
// (every sum accumulated in pair order; the slack keeps rounding from
// dropping patterns that tie the observed sum). minP = 2/2ⁿ is the smallest
// p the test can give: the observed pattern and its mirror always count.
// Zero differences take part (flipping them changes nothing). It panics
// unless 1 ≤ len(d) ≤ SignFlipMaxPairs, every difference is finite and so is
// Σ|d_i| (past it the slack is +Inf, every comparison NaN and p would be 0;
// Paired reports ErrOverflow instead).
func SignFlip(d []float64) (p, minP float64) {
	n := len(d)
	if n < 1 || n > SignFlipMaxPairs {
		panic("stats.SignFlip needs 1 to 30 differences")
	}
	var obs, absSum float64
	for _, v := range d {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			// A NaN would make every comparison false and p silently 0.
			panic("stats.SignFlip of a non-finite difference")
		}
		obs += v
		absSum += math.Abs(v)
	}
	if math.IsInf(absSum, 0) {
		panic("stats.SignFlip of differences whose sums leave float64")
	}
	thr := math.Abs(obs) - float64(1e-9*math.Max(1, absSum))
	patterns := uint64(1) << n
	var hits uint64
	for mask := uint64(0); mask < patterns; mask++ {
		s := 0.0
		for i, v := range d {
			if mask&(1<<i) != 0 {
				s -= v
			} else {
				s += v
			}
		}
		if math.Abs(s) >= thr {
			hits++
		}
	}
	return float64(hits) / float64(patterns), 2 / float64(patterns)
}

// Names of the paired tests, as reported.
const (
	TestWilcoxon = "wilcoxon"
	TestSignFlip = "sign_flip"
)

// WilcoxonMinPairs is the number of pairs, zeros included, from which Paired
// uses the Wilcoxon test instead of the sign-flip test.
const WilcoxonMinPairs = 6

// PairedResult is the outcome of Paired.
type PairedResult struct {
	Test  string // TestWilcoxon or TestSignFlip
	Pairs int    // the number of pairs, zero differences included
	// P is the two-sided p value; nil when it is absent, and Reason then
	// says why.
	P      *float64
	Reason string
	// MinP is the smallest p the sign-flip test can reach with this many
	// pairs, 2/2ⁿ; nil for the Wilcoxon test.
	MinP *float64
	// PowerWarning is set when the test cannot reach p ≤ 0.05 whatever the
	// data, that is for the sign-flip test with fewer than 6 pairs.
	PowerWarning bool
	// Wilcoxon holds the details of a Wilcoxon test that gave a p value.
	Wilcoxon *WilcoxonResult
}

// Paired tests the paired differences d (family − baseline, in pair order)
// against zero as the skyfall protocol prescribes: with at least
// WilcoxonMinPairs pairs, counted before zero differences are dropped, the
// Wilcoxon signed-rank test; with fewer, the exact sign-flip test, with its
// smallest attainable p and a power warning. The p value is absent, with a
// reason, when there are no pairs, when a difference is not finite, and for
// the Wilcoxon test when every difference is zero (the sign-flip test then
// gives p = 1).
func Paired(d []float64) PairedResult {
	n := len(d)
	r := PairedResult{Pairs: n}
	for _, v := range d {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			r.Test = TestSignFlip
			if n >= WilcoxonMinPairs {
				r.Test = TestWilcoxon
			}
			r.Reason = ErrNonFinite.Error()
			return r
		}
	}
	if n >= WilcoxonMinPairs {
		r.Test = TestWilcoxon
		w, err := Wilcoxon(d)
		if err != nil {
			r.Reason = err.Error()
			return r
		}
		r.P = &w.P
		r.Wilcoxon = &w
		return r
	}
	r.Test = TestSignFlip
	if n == 0 {
		r.Reason = ErrNoPairs.Error()
		r.PowerWarning = true
		return r
	}
	minP := 2 / float64(uint64(1)<<n) // n < WilcoxonMinPairs here
	r.PowerWarning = minP > 0.05
	absSum := 0.0
	for _, v := range d {
		absSum += math.Abs(v)
	}
	if math.IsInf(absSum, 0) {
		// Finite differences whose pattern sums leave float64: no p in
		// float64 (docs/decisions.md), though the smallest attainable p,
		// a property of n alone, stands.
		r.MinP = &minP
		r.Reason = ErrOverflow.Error()
		return r
	}
	p, minP := SignFlip(d)
	r.P, r.MinP = &p, &minP
	return r
}

// BenjaminiHochberg returns the Benjamini–Hochberg (step-up, false discovery
// rate) adjusted p values, in the order of p: with the m values sorted
// ascending, p₍ᵢ₎ becomes min over j ≥ i of p₍ⱼ₎/(j/m), capped at 1 (the
// division as statsmodels' multipletests(method="fdr_bh") writes it; R's
// p.adjust(method="BH") gives the same up to rounding). NaN entries stand for
// absent p values: they stay NaN and are not counted in m, as R's p.adjust
// does with NA.
func BenjaminiHochberg(p []float64) []float64 {
	out := make([]float64, len(p))
	idx := make([]int, 0, len(p))
	for i, v := range p {
		if math.IsNaN(v) {
			out[i] = math.NaN()
			continue
		}
		idx = append(idx, i)
	}
	m := len(idx)
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	run := math.Inf(1)
	for j := m; j >= 1; j-- {
		i := idx[j-1]
		adj := p[i] / (float64(j) / float64(m))
		if adj < run {
			run = adj
		}
		out[i] = math.Min(run, 1)
	}
	return out
}

// ProbImprovement is the probability of improvement of x over y: over all
// len(x)·len(y) pairs (x_i, y_j), (count(x_i > y_j) + ½·count(x_i = y_j))
// divided by the number of pairs. It panics when x or y is empty; a NaN
// would count as neither greater nor equal, so callers drop absent values
// first.
func ProbImprovement(x, y []float64) float64 {
	if len(x) == 0 || len(y) == 0 {
		panic("stats.ProbImprovement of no values")
	}
	// Count with y sorted instead of over every pair, so that families of
	// thousands of runs cost n·log m, not n·m (issue 16). The counts are
	// integers, so the result is the same to the bit.
	ys := make([]float64, 0, len(y))
	for _, b := range y {
		if !math.IsNaN(b) {
			ys = append(ys, b)
		}
	}
	slices.Sort(ys)
	var gt, eq int
	for _, a := range x {
		if math.IsNaN(a) {
			continue
		}
		lt, _ := slices.BinarySearchFunc(ys, a, func(b, a float64) int {
			if b < a {
				return -1
			}
			return 1
		}) // ys[:lt] < a
		le, _ := slices.BinarySearchFunc(ys[lt:], a, func(b, a float64) int {
			if b <= a {
				return -1
			}
			return 1
		}) // ys[lt:lt+le] == a
		gt += lt
		eq += le
	}
	return (float64(gt) + float64(0.5*float64(eq))) / float64(len(x)*len(y))
}
