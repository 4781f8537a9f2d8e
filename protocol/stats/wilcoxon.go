package stats

import (
	"errors"
	"math"
)

// Errors of the paired tests. Each says why a p value is absent.
var (
	ErrNoPairs   = errors.New("no paired differences")
	ErrAllZero   = errors.New("all paired differences are zero")
	ErrNonFinite = errors.New("a paired difference is not a finite number")
	// ErrOverflow: the sign-flip test's sums of the differences leave
	// float64 (Σ|d| past MaxFloat64). Its text is protocol.ReasonOverflow.
	ErrOverflow = errors.New("the value overflows float64")
)

// WilcoxonExactMax is the largest number of differences for which Wilcoxon
// uses the exact null distribution (SciPy's method "auto" threshold).
const WilcoxonExactMax = 50

// WilcoxonResult is the outcome of Wilcoxon.
type WilcoxonResult struct {
	// Statistic is T = min(R+, R−), the smaller of the rank sums of the
	// positive and the negative differences (ranks of |d|, ties averaged).
	Statistic float64
	// P is the two-sided p value.
	P float64
	// Exact is true when P comes from the exact null distribution of R+,
	// false when it comes from the normal approximation.
	Exact bool
	// Z is the normal deviate (T − n(n+1)/4)/σ; zero when Exact.
	Z float64
	// N is the number of differences ranked (zeros dropped); Zeros the
	// number of zero differences dropped.
	N, Zeros int
}

// Wilcoxon is the two-sided Wilcoxon signed-rank test of the paired
// differences d, giving the p value of scipy.stats.wilcoxon(d) under the
// defaults of SciPy 1.10.1 (zero_method "wilcox", no continuity correction,
// method "auto"). The rules, in SciPy's order:
//
//  1. The exact distribution is chosen when len(d) ≤ 50, counted with the
//     zeros; otherwise the normal approximation.
//  2. Any zero difference switches to the normal approximation; the zeros are
//     then dropped (all of them zero: ErrAllZero).
//  3. |d| is ranked with ties averaged; R+ and R− are the rank sums of the
//     positive and the negative differences; T = min(R+, R−).
//  4. Normal approximation, with n the differences left: mean n(n+1)/4,
//     variance (n(n+1)(2n+1) − ½Σt(t²−1))/24 over the groups of t tied |d|,
//     z = (T − mean)/σ, p = 2·NormalSF(|z|).
//  5. Exact: R+ is truncated to an integer (ties can make it a half-integer;
//     the exact distribution is used all the same), r. If r is ⌊n(n+1)/4⌋,
//     the centre of the distribution, p = 1; otherwise
//     p = min(1, 2·min(P(R ≤ r), P(R ≥ r))) under the null distribution of
//     the sum of a random subset of {1, …, n}.
//
// Because of the truncation in 5 the p value of d and of −d can differ when
// |d| ties. An empty d gives ErrNoPairs, a NaN or infinite difference
// ErrNonFinite.
func Wilcoxon(d []float64) (WilcoxonResult, error) {
	n := len(d)
	if n == 0 {
		return WilcoxonResult{}, ErrNoPairs
	}
	zeros := 0
	for _, v := range d {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return WilcoxonResult{}, ErrNonFinite
		}
		if v == 0 {
			zeros++
		}
	}
	exact := n <= WilcoxonExactMax && zeros == 0
	if zeros == n {
		return WilcoxonResult{}, ErrAllZero
	}
	nz := make([]float64, 0, n-zeros)
	for _, v := range d {
		if v != 0 {
			nz = append(nz, v)
		}
	}
	abs := make([]float64, len(nz))
	for i, v := range nz {
		abs[i] = math.Abs(v)
	}
	ranks, tieTerm := rankAverage(abs)
	var rPlus, rMinus float64
	for i, v := range nz {
		if v > 0 {
			rPlus += ranks[i]
		} else {
			rMinus += ranks[i]
		}
	}
	res := WilcoxonResult{Statistic: math.Min(rPlus, rMinus), Exact: exact, N: len(nz), Zeros: zeros}
	if !exact {
		c := float64(len(nz))
		mn := float64(c * (c + 1) * 0.25)
		se := float64(c * (c + 1) * (float64(2*c) + 1))
		se -= float64(0.5 * float64(tieTerm))
		se = math.Sqrt(se / 24)
		res.Z = (res.Statistic - mn) / se
		res.P = 2 * NormalSF(math.Abs(res.Z))
		return res, nil
	}
	res.P = signedRankExactP(len(nz), int(rPlus))
	return res, nil
}

// signedRankExactP is the two-sided exact p value of R+ = r for n ranks
// without ties, with SciPy's centre rule. It counts, by dynamic programming
// in exact integers, the subsets of {1, …, n} with each sum; with n ≤ 50 the
// counts and their partial sums stay below 2⁵³, so dividing them by 2ⁿ is
// exact, as are SciPy's float64 probabilities.
func signedRankExactP(n, r int) float64 {
	total := n * (n + 1) / 2
	if r == total/2 {
		return 1
	}
	counts := signedRankCounts(n)
	var less, greater uint64
	for s, c := range counts {
		if s <= r {
			less += c
		}
		if s >= r {
			greater += c
		}
	}
	pLess := math.Ldexp(float64(less), -n)
	pGreater := math.Ldexp(float64(greater), -n)
	return math.Min(1, 2*math.Min(pLess, pGreater))
}

// signedRankCounts returns c[s], the number of subsets of {1, …, n} summing to
// s, for s = 0 … n(n+1)/2. It requires n ≤ 62 so that the counts fit.
func signedRankCounts(n int) []uint64 {
	total := n * (n + 1) / 2
	c := make([]uint64, total+1)
	c[0] = 1
	for k := 1; k <= n; k++ {
		for s := k * (k + 1) / 2; s >= k; s-- {
			c[s] += c[s-k]
		}
	}
	return c
}
