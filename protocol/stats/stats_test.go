package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// ---------------------------------------------------------------- by hand

func TestDescriptiveByHand(t *testing.T) {
	xs := []float64{8, 3, 1, 6, 2, 7, 5, 4}
	// Σ = 36, n = 8.
	if got := Mean(xs); got != 4.5 {
		t.Errorf("Mean = %v, want 4.5", got)
	}
	// Deviations from 4.5: ±0.5, ±1.5, ±2.5, ±3.5; squares sum to
	// 2·(0.25 + 2.25 + 6.25 + 12.25) = 42; 42/7 = 6.
	if v, ok := SampleVariance(xs); !ok || v != 6 {
		t.Errorf("SampleVariance = %v, %v; want 6, true", v, ok)
	}
	if s, ok := SampleStd(xs); !ok || s != math.Sqrt(6) {
		t.Errorf("SampleStd = %v, %v; want √6", s, ok)
	}
	// Sorted 1…8: the middle pair is 4, 5.
	if got := Median(xs); got != 4.5 {
		t.Errorf("Median = %v, want 4.5", got)
	}
	// ⌊8/4⌋ = 2 dropped at each end: (3+4+5+6)/4 = 4.5.
	if got := IQM(xs); got != 4.5 {
		t.Errorf("IQM = %v, want 4.5", got)
	}
	// n = 9: ⌊9/4⌋ = 2 dropped, mean of 3…7 over 5 values; with 100 as the
	// top value: 1 2 | 3 4 5 6 7 | 8 100 → 25/5 = 5.
	if got := IQM([]float64{100, 1, 2, 3, 4, 5, 6, 7, 8}); got != 5 {
		t.Errorf("IQM(n=9) = %v, want 5", got)
	}
	// n = 3: ⌊3/4⌋ = 0, the IQM is the mean.
	if got := IQM([]float64{1, 2, 6}); got != 3 {
		t.Errorf("IQM(n=3) = %v, want 3", got)
	}
	// n = 7: ⌊7/4⌋ = 1: 1 | 2 3 4 5 90 | 91 → 104/5 = 20.8.
	if got := IQM([]float64{91, 1, 2, 3, 4, 5, 90}); got != 104.0/5 {
		t.Errorf("IQM(n=7) = %v, want 20.8", got)
	}
	if Min(xs) != 1 || Max(xs) != 8 || Median([]float64{3, 1, 2}) != 2 {
		t.Error("Min, Max or odd Median wrong")
	}
	if !slices.Equal(xs, []float64{8, 3, 1, 6, 2, 7, 5, 4}) {
		t.Error("an input was modified")
	}
	if _, ok := SampleVariance([]float64{1}); ok {
		t.Error("SampleVariance of one value is present")
	}
	if _, ok := SampleStd(nil); ok {
		t.Error("SampleStd of no value is present")
	}
}

func TestEmptyPanics(t *testing.T) {
	for name, fn := range map[string]func(){
		"Mean":            func() { Mean(nil) },
		"Median":          func() { Median(nil) },
		"IQM":             func() { IQM(nil) },
		"Min":             func() { Min(nil) },
		"Max":             func() { Max(nil) },
		"Quantile":        func() { Quantile(nil, 0.5) },
		"Quantile q>1":    func() { Quantile([]float64{1}, 1.5) },
		"Quantile NaN":    func() { Quantile([]float64{1}, math.NaN()) },
		"BootstrapCI":     func() { BootstrapCI(nil, StatMean, 10, 1, 0.95) },
		"BootstrapCI B":   func() { BootstrapCI([]float64{1}, StatMean, 0, 1, 0.95) },
		"BootstrapCI lvl": func() { BootstrapCI([]float64{1}, StatMean, 10, 1, 1) },
		"BootstrapCI NaN": func() { BootstrapCI([]float64{1, math.NaN()}, StatMean, 10, 1, 0.95) },
		"BootstrapCI Inf": func() { BootstrapCI([]float64{math.Inf(1)}, StatMean, 10, 1, 0.95) },
		"zero Statistic":  func() { BootstrapCI([]float64{1}, Statistic{}, 10, 1, 0.95) },
		"ProbImprovement": func() { ProbImprovement(nil, []float64{1}) },
		"SignFlip empty":  func() { SignFlip(nil) },
		"SignFlip 31":     func() { SignFlip(make([]float64, 31)) },
		"SignFlip NaN":    func() { SignFlip([]float64{1, math.NaN()}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			fn()
		}()
	}
}

func TestQuantileByHand(t *testing.T) {
	s := []float64{10, 20, 30, 40, 50}
	for _, c := range []struct{ q, want float64 }{
		{0, 10}, {1, 50}, {0.5, 30},
		{0.25, 20},  // h = 4·0.25 = 1
		{0.1, 14},   // h = 0.4: 10 + 0.4·10
		{0.9, 46},   // h = 3.6: t ≥ 0.5, 50 − 10·0.4
		{0.375, 25}, // h = 1.5: 30 − 10·0.5
	} {
		if got := Quantile(s, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if Quantile([]float64{7}, 0.3) != 7 {
		t.Error("Quantile of one value")
	}
}

// TestQuantileSelect checks that selection gives exactly Quantile of the
// sorted values, also with many ties and tiny slices.
func TestQuantileSelect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	qs := [][2]float64{{0.025000000000000022, 0.975}, {0, 1}, {0.5, 0.5}, {0.05, 0.95}, {0.3, 0.31}, {0, 0}, {1, 1}}
	for trial := 0; trial < 400; trial++ {
		n := 1 + rng.IntN(300)
		if trial%10 == 0 {
			n = 5000 + rng.IntN(6000)
		}
		v := make([]float64, n)
		distinct := 1 + rng.IntN(n+1)
		for i := range v {
			if trial%3 == 0 {
				v[i] = float64(rng.IntN(distinct)) // ties
			} else {
				v[i] = rng.NormFloat64()
			}
		}
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		for _, q := range qs {
			work := slices.Clone(v)
			lo, hi := quantilePairSelect(work, q[0], q[1])
			if lo != Quantile(sorted, q[0]) || hi != Quantile(sorted, q[1]) {
				t.Fatalf("n=%d q=%v: select %v, %v; sort %v, %v", n, q, lo, hi, Quantile(sorted, q[0]), Quantile(sorted, q[1]))
			}
			slices.Sort(work)
			if !slices.Equal(work, sorted) {
				t.Fatal("selection lost or invented values")
			}
		}
	}
	// A sorted and a reversed input, the classic quickselect traps.
	v := make([]float64, 20000)
	for i := range v {
		v[i] = float64(i)
	}
	if lo, hi := quantilePairSelect(slices.Clone(v), 0.025, 0.975); lo != Quantile(v, 0.025) || hi != Quantile(v, 0.975) {
		t.Error("sorted input")
	}
	slices.Reverse(v)
	w := slices.Clone(v)
	slices.Sort(w)
	if lo, hi := quantilePairSelect(v, 0.025, 0.975); lo != Quantile(w, 0.025) || hi != Quantile(w, 0.975) {
		t.Error("reversed input")
	}
}

func TestSignFlipByHand(t *testing.T) {
	// d = (2, 1, −1): Σd = 2, Σ|d| = 4, threshold 2 − 4e-9.
	// The 8 patterns (s₁, s₂, s₃) and Σ s_i·d_i:
	//   + + +:  2+1−1 =  2  counts     − + +: −2+1−1 = −2  counts
	//   + + −:  2+1+1 =  4  counts     − + −: −2+1+1 =  0
	//   + − +:  2−1−1 =  0             − − +: −2−1−1 = −4  counts
	//   + − −:  2−1+1 =  2  counts     − − −: −2−1+1 = −2  counts
	// 6 of 8: p = 0.75; minP = 2/8.
	p, minP := SignFlip([]float64{2, 1, -1})
	if p != 0.75 || minP != 0.25 {
		t.Errorf("SignFlip(2, 1, −1) = %v, %v; want 0.75, 0.25", p, minP)
	}
	// d = (3, 2, 1): only (+,+,+) and (−,−,−) reach |6|: p = minP = 0.25.
	if p, minP := SignFlip([]float64{3, 2, 1}); p != 0.25 || minP != 0.25 {
		t.Errorf("SignFlip(3, 2, 1) = %v, %v; want 0.25, 0.25", p, minP)
	}
	// The slack. d = (0.1, 0.2, −0.3, 0.6): in exact arithmetic flipping the
	// first three leaves the sum at 0.6, but in float64 the observed sum is
	// ((0.1+0.2)−0.3)+0.6 = 0.6000000000000001 while the flipped one is
	// ((−0.1−0.2)+0.3)+0.6 = 0.5999999999999999. With s₄ = +1 the exact sums
	// are 0.6+e, e ∈ {0, 0.6, −0.4, 0.2, −0.2, 0.4, −0.6, 0}, of which five
	// reach 0.6; the mirror adds five more: 10/16 = 0.625. Without the
	// 1e-9·max(1, Σ|d|) slack, one of them and its mirror would be lost
	// (p = 0.5).
	if p, _ := SignFlip([]float64{0.1, 0.2, -0.3, 0.6}); p != 0.625 {
		t.Errorf("SignFlip slack case = %v, want 0.625", p)
	}
	// All zero: every pattern ties: p = 1. One pair: p = minP = 1.
	if p, _ := SignFlip([]float64{0, 0, 0}); p != 1 {
		t.Errorf("SignFlip(zeros) = %v, want 1", p)
	}
	if p, minP := SignFlip([]float64{-3}); p != 1 || minP != 1 {
		t.Errorf("SignFlip(one pair) = %v, %v; want 1, 1", p, minP)
	}
}

func TestBenjaminiHochbergByHand(t *testing.T) {
	// p = (0.01, 0.04, 0.03, 0.2), m = 4. Sorted with ranks j:
	//   0.01 (1) → 0.01/(1/4) = 0.04
	//   0.03 (2) → 0.03/(2/4) = 0.06
	//   0.04 (3) → 0.04/(3/4) = 0.0533…
	//   0.2  (4) → 0.2/(4/4)  = 0.2
	// Step-up minimum from the top: 0.2, 0.0533…, min(0.06, 0.0533…) =
	// 0.0533…, min(0.04, 0.0533…) = 0.04. Back in input order:
	got := BenjaminiHochberg([]float64{0.01, 0.04, 0.03, 0.2})
	want := []float64{0.04, 0.04 / 0.75, 0.04 / 0.75, 0.2}
	if !slices.Equal(got, want) {
		t.Errorf("BH = %v, want %v", got, want)
	}
	// NaN is an absent p value: kept NaN, not counted (m = 2):
	// 0.01/(1/2) = 0.02, 0.04/(2/2) = 0.04.
	got = BenjaminiHochberg([]float64{0.01, math.NaN(), 0.04})
	if got[0] != 0.02 || !math.IsNaN(got[1]) || got[2] != 0.04 {
		t.Errorf("BH with NaN = %v, want [0.02 NaN 0.04]", got)
	}
	// Values above 1 (invalid, but possible from a caller's rounding) cap.
	if got := BenjaminiHochberg([]float64{1.5, 1.2}); got[0] != 1 || got[1] != 1 {
		t.Errorf("BH cap = %v", got)
	}
	if got := BenjaminiHochberg(nil); len(got) != 0 {
		t.Errorf("BH(nil) = %v", got)
	}
}

func TestProbImprovementByHand(t *testing.T) {
	// x = (1, 2, 3), y = (2, 2): the six pairs are 1<2, 1<2, 2=2, 2=2, 3>2,
	// 3>2: (2 + ½·2)/6 = 0.5.
	if got := ProbImprovement([]float64{1, 2, 3}, []float64{2, 2}); got != 0.5 {
		t.Errorf("got %v, want 0.5", got)
	}
	// x = (3, 2), y = (2, 1, 1): 3 beats all three; 2 ties 2 and beats 1, 1:
	// (5 + ½·1)/6 = 11/12.
	if got := ProbImprovement([]float64{3, 2}, []float64{2, 1, 1}); got != 5.5/6 {
		t.Errorf("got %v, want 11/12", got)
	}
	if got := ProbImprovement([]float64{4}, []float64{4}); got != 0.5 {
		t.Errorf("one tie: %v", got)
	}
}

func TestWilcoxonByHand(t *testing.T) {
	// d = 1…6, all positive: R+ = 21, the largest value; P(R+ ≥ 21) = 1/64,
	// p = 2/64 = 0.03125; T = R− = 0.
	r, err := Wilcoxon([]float64{1, 2, 3, 4, 5, 6})
	if err != nil || r.P != 0.03125 || r.Statistic != 0 || !r.Exact {
		t.Errorf("Wilcoxon(1…6) = %+v, %v", r, err)
	}
	// Five zeros and a 3: zeros force the normal approximation and are
	// dropped; n = 1, R+ = 1, T = 0, mean 1·2/4 = 0.5, σ = √(1·2·3/24) = 0.5,
	// z = −1, p = 2·P(Z > 1) = erfc(1/√2) = 0.31731050786291415.
	r, err = Wilcoxon([]float64{0, 0, 0, 0, 0, 3})
	if err != nil || r.Exact || r.N != 1 || r.Zeros != 5 || r.Z != -1 || !close(r.P, 0.31731050786291415) {
		t.Errorf("Wilcoxon(zeros, 3) = %+v, %v", r, err)
	}
	// The centre rule. n = 7: R+ ranges over 0…28, centre ⌊28/2⌋ = 14;
	// d = (1, 2, −3, 4, −5, −6, 7) has R+ = 1+2+4+7 = 14: p = 1.
	r, _ = Wilcoxon([]float64{1, 2, -3, 4, -5, -6, 7})
	if r.P != 1 {
		t.Errorf("centre case p = %v, want 1", r.P)
	}
	// Truncation. d = (1, −1, 2, 3, 4, 5, −6, 7, 8): |1| ties, ranks 1.5 each;
	// R+ = 1.5+3+4+5+6+8+9 = 36.5, R− = 1.5+7 = 8.5. SciPy uses R+ truncated
	// to 36: p = 2·P(R ≥ 36). For −d, R+ = 8.5 → 8: p = 2·P(R ≤ 8) =
	// 2·P(R ≥ 37) — a different p for the mirrored data.
	d := []float64{1, -1, 2, 3, 4, 5, -6, 7, 8}
	r1, _ := Wilcoxon(d)
	neg := make([]float64, len(d))
	for i, v := range d {
		neg[i] = -v
	}
	r2, _ := Wilcoxon(neg)
	if r1.Statistic != 8.5 || r2.Statistic != 8.5 || r1.P != 0.12890625 || r2.P != 0.09765625 {
		t.Errorf("truncation: %+v / %+v", r1, r2)
	}
	// Absences.
	if _, err := Wilcoxon(make([]float64, 7)); !errors.Is(err, ErrAllZero) {
		t.Errorf("all zero: %v", err)
	}
	if _, err := Wilcoxon(nil); !errors.Is(err, ErrNoPairs) {
		t.Errorf("empty: %v", err)
	}
	if _, err := Wilcoxon([]float64{1, 2, math.NaN(), 4, 5, 6}); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN: %v", err)
	}
}

// The exact null distribution: the counts are the number of subsets of
// {1…n} with each sum, so they sum to 2ⁿ and are symmetric; for n = 4 they
// are 1 1 1 2 2 2 2 2 1 1 1 (sums 0…10).
func TestSignedRankCounts(t *testing.T) {
	if got := signedRankCounts(4); !slices.Equal(got, []uint64{1, 1, 1, 2, 2, 2, 2, 2, 1, 1, 1}) {
		t.Errorf("n=4 counts %v", got)
	}
	for n := 1; n <= 50; n++ {
		c := signedRankCounts(n)
		var total uint64
		for s := range c {
			total += c[s]
			if c[s] != c[len(c)-1-s] {
				t.Fatalf("n=%d not symmetric at %d", n, s)
			}
		}
		if total != 1<<n {
			t.Fatalf("n=%d: counts sum to %d", n, total)
		}
	}
}

func TestPaired(t *testing.T) {
	// Five pairs: the sign-flip test, minP = 2/32, which cannot reach 0.05.
	r := Paired([]float64{1, 2, 3, 4, 5})
	if r.Test != TestSignFlip || r.Pairs != 5 || r.P == nil || *r.P != 0.0625 || r.MinP == nil || *r.MinP != 0.0625 || !r.PowerWarning || r.Wilcoxon != nil {
		t.Errorf("5 pairs: %+v", r)
	}
	// Six pairs, five of them zero: still Wilcoxon (pairs are counted before
	// zeros are dropped), by the normal approximation.
	r = Paired([]float64{0, 0, 0, 0, 0, 3})
	if r.Test != TestWilcoxon || r.P == nil || !close(*r.P, 0.31731050786291415) || r.MinP != nil || r.PowerWarning || r.Wilcoxon == nil || r.Wilcoxon.Exact {
		t.Errorf("6 pairs with zeros: %+v", r)
	}
	// Six zero differences: Wilcoxon, absent with a reason.
	r = Paired(make([]float64, 6))
	if r.Test != TestWilcoxon || r.P != nil || r.Reason != ErrAllZero.Error() {
		t.Errorf("6 zeros: %+v", r)
	}
	// Three zero differences: the sign-flip test gives p = 1.
	r = Paired(make([]float64, 3))
	if r.Test != TestSignFlip || r.P == nil || *r.P != 1 || *r.MinP != 0.25 {
		t.Errorf("3 zeros: %+v", r)
	}
	r = Paired(nil)
	if r.Test != TestSignFlip || r.P != nil || r.Reason != ErrNoPairs.Error() || r.Pairs != 0 {
		t.Errorf("no pairs: %+v", r)
	}
	r = Paired([]float64{1, math.Inf(1)})
	if r.P != nil || r.Reason != ErrNonFinite.Error() {
		t.Errorf("infinite: %+v", r)
	}
	// Seven distinct positive differences: exact Wilcoxon, p = 2/128.
	r = Paired([]float64{1, 2, 3, 4, 5, 6, 7})
	if r.Test != TestWilcoxon || *r.P != 2.0/128 || !r.Wilcoxon.Exact {
		t.Errorf("7 pairs: %+v", r)
	}
}

func TestFriedmanByHand(t *testing.T) {
	// Two benchmarks ranking three families 1, 2, 3 alike: R = (2, 4, 6),
	// Σ R² = 56; 12/(3·2·4) = 0.5; 0.5·56 − 3·2·4 = 4; no ties, c = 1.
	// With 2 degrees of freedom the chi-square tail is e^(−x/2): p = e^(−2).
	stat, p, err := Friedman([][]float64{{1, 2, 3}, {10, 20, 30}})
	if err != nil || stat != 4 || !close(p, math.Exp(-2)) {
		t.Errorf("Friedman = %v, %v, %v; want 4, e^-2", stat, p, err)
	}
	// Ties: benchmark 1 (5, 5, 1) ranks (2.5, 2.5, 1), benchmark 2 (1, 2, 3)
	// ranks (1, 2, 3). R = (3.5, 4.5, 4), Σ R² = 12.25+20.25+16 = 48.5;
	// 0.5·48.5 − 24 = 0.25. One pair tied: T = 2·(4−1) = 6,
	// c = 1 − 6/(3·8·2) = 0.875; statistic 0.25/0.875 = 2/7.
	stat, _, err = Friedman([][]float64{{5, 5, 1}, {1, 2, 3}})
	if err != nil || !close(stat, 2.0/7) {
		t.Errorf("tied Friedman = %v, %v; want 2/7", stat, err)
	}
	if _, _, err := Friedman([][]float64{{1, 2}, {2, 1}}); !errors.Is(err, ErrTooFewGroups) {
		t.Errorf("k = 2: %v", err)
	}
	if _, _, err := Friedman([][]float64{{1, 2, 3}, {2, 1}}); !errors.Is(err, ErrRagged) {
		t.Errorf("ragged: %v", err)
	}
	if _, _, err := Friedman(nil); !errors.Is(err, ErrNoBlocks) {
		t.Errorf("empty: %v", err)
	}
	if _, _, err := Friedman([][]float64{{1, 1, 1}, {2, 2, 2}}); !errors.Is(err, ErrAllTied) {
		t.Errorf("all tied: %v", err)
	}
	if _, _, err := Friedman([][]float64{{1, math.NaN(), 3}}); err == nil {
		t.Error("NaN accepted")
	}
}

func TestAverageRanksByHand(t *testing.T) {
	scores := [][]float64{{0.9, 0.5, 0.5}, {0.1, 0.3, 0.2}}
	// Higher is better. Benchmark 1: 0.9 → 1, the two 0.5 share (2+3)/2 =
	// 2.5. Benchmark 2: 0.3 → 1, 0.2 → 2, 0.1 → 3. Means: (1+3)/2 = 2,
	// (2.5+1)/2 = 1.75, (2.5+2)/2 = 2.25.
	got, err := AverageRanks(scores, true)
	if err != nil || !slices.Equal(got, []float64{2, 1.75, 2.25}) {
		t.Errorf("higher is better: %v, %v", got, err)
	}
	// Lower is better reverses each benchmark: k+1 − rank.
	got, err = AverageRanks(scores, false)
	if err != nil || !slices.Equal(got, []float64{2, 2.25, 1.75}) {
		t.Errorf("lower is better: %v, %v", got, err)
	}
}

func TestNemenyiCD(t *testing.T) {
	// k = 4, n = 10, α = 0.05: q = 2.569, √(4·5/(6·10)) = √(1/3):
	// CD = 1.4832128415481485.
	cd, err := NemenyiCD(4, 10, 0.05)
	if err != nil || !close(cd, 1.4832128415481485) {
		t.Errorf("NemenyiCD(4, 10) = %v, %v", cd, err)
	}
	// k = 2 at α = 0.10: q = 1.645, √(6/(6·3)) = √(1/3).
	cd, err = NemenyiCD(2, 3, 0.10)
	if err != nil || !close(cd, 1.645*math.Sqrt(1.0/3)) {
		t.Errorf("NemenyiCD(2, 3, 0.10) = %v, %v", cd, err)
	}
	for _, c := range []struct {
		k, n  int
		alpha float64
	}{{1, 5, 0.05}, {11, 5, 0.05}, {4, 0, 0.05}, {4, 5, 0.01}} {
		if _, err := NemenyiCD(c.k, c.n, c.alpha); err == nil {
			t.Errorf("NemenyiCD(%d, %d, %v) gave no error", c.k, c.n, c.alpha)
		}
	}
}

func TestSpecialFunctionsByHand(t *testing.T) {
	// df = 2: Q(1, x/2) = e^(−x/2). df = 1: erfc(√(x/2)).
	for _, x := range []float64{0.001, 0.5, 1, 3, 10, 50, 300, 1000} {
		if got, want := ChiSquareSF(x, 2), math.Exp(-x/2); !close(got, want) {
			t.Errorf("ChiSquareSF(%v, 2) = %v, want %v", x, got, want)
		}
		// (In the far tail erfc(√(x/2)) itself carries a relative error of
		// about x·ε from rounding √(x/2), hence 1e-12.)
		if got, want := ChiSquareSF(x, 1), math.Erfc(math.Sqrt(x/2)); !close(got, want) {
			t.Errorf("ChiSquareSF(%v, 1) = %v, want %v", x, got, want)
		}
		// df = 4: Q(2, y) = e^(−y)(1 + y), y = x/2.
		if got, want := ChiSquareSF(x, 4), math.Exp(-x/2)*(1+x/2); !close(got, want) {
			t.Errorf("ChiSquareSF(%v, 4) = %v, want %v", x, got, want)
		}
	}
	// Large df near its mean, where the Stirling prefactor is used: for
	// df = 2a even, Q(a, a) = e^(−a) Σ_{j<a} a^j/j!, summed here with
	// logarithms.
	for _, a := range []int{10, 25, 50, 100} {
		s := 0.0
		for j := 0; j < a; j++ {
			lg, _ := math.Lgamma(float64(j + 1))
			s += math.Exp(float64(j)*math.Log(float64(a)) - float64(a) - lg)
		}
		if got := ChiSquareSF(float64(2*a), float64(2*a)); math.Abs(got-s) > 1e-12*s {
			t.Errorf("ChiSquareSF(%d, %d) = %v, want %v", 2*a, 2*a, got, s)
		}
	}
	if ChiSquareSF(0, 3) != 1 || ChiSquareSF(-1, 3) != 1 || ChiSquareSF(math.Inf(1), 3) != 0 {
		t.Error("ChiSquareSF edges")
	}
	if !math.IsNaN(ChiSquareSF(math.NaN(), 3)) || !math.IsNaN(ChiSquareSF(1, 0)) {
		t.Error("ChiSquareSF NaN cases")
	}
	if NormalSF(0) != 0.5 || !close(NormalSF(1.959963984540054), 0.025) {
		t.Error("NormalSF")
	}
}

// ------------------------------------------------------------ properties

func randomSample(rng *rand.Rand) []float64 {
	n := 1 + rng.IntN(40)
	xs := make([]float64, n)
	scale := math.Pow(10, float64(rng.IntN(13)-6))
	offset := float64(rng.IntN(3)-1) * scale * float64(rng.IntN(1000))
	for i := range xs {
		switch rng.IntN(3) {
		case 0:
			xs[i] = float64(rng.IntN(5)) * scale // ties
		default:
			xs[i] = offset + rng.NormFloat64()*scale
		}
	}
	return xs
}

func TestDescriptiveProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 3000; trial++ {
		xs := randomSample(rng)
		lo, hi := Min(xs), Max(xs)
		if v, ok := SampleVariance(xs); ok && !(v >= 0) {
			t.Fatalf("variance %v < 0 for %v", v, xs)
		}
		for name, v := range map[string]float64{"IQM": IQM(xs), "Median": Median(xs), "Mean": Mean(xs)} {
			// A float64 mean can stray from [min, max] by rounding only.
			slack := 4e-16 * float64(len(xs)) * math.Max(math.Abs(lo), math.Abs(hi))
			if v < lo-slack || v > hi+slack {
				t.Fatalf("%s %v outside [%v, %v] for %v", name, v, lo, hi, xs)
			}
		}
		// Sorted input: IQMInPlace agrees with IQM.
		s := slices.Clone(xs)
		if IQMInPlace(s) != IQM(xs) || !slices.IsSorted(s) {
			t.Fatal("IQMInPlace differs from IQM or did not sort")
		}
	}
}

func TestBootstrapProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	stats := []Statistic{StatMean, StatIQM}
	for trial := 0; trial < 60; trial++ {
		xs := randomSample(rng)
		seed := SeedFor(uint64(trial), "fam", "metric")
		a := BootstrapCIs(xs, stats, 500, seed, 0.95)
		b := BootstrapCIs(slices.Clone(xs), stats, 500, seed, 0.95)
		if !slices.Equal(a, b) {
			t.Fatal("same seed, different intervals")
		}
		lo, hi := Min(xs), Max(xs)
		for i, iv := range a {
			if !(iv.Lo <= iv.Hi) {
				t.Fatalf("%s: lo %v > hi %v", stats[i].Name(), iv.Lo, iv.Hi)
			}
			slack := 4e-16 * float64(len(xs)) * math.Max(math.Abs(lo), math.Abs(hi))
			if iv.Lo < lo-slack || iv.Hi > hi+slack {
				t.Fatalf("%s: [%v, %v] outside the data [%v, %v]", stats[i].Name(), iv.Lo, iv.Hi, lo, hi)
			}
			// One statistic alone gives the same interval as in company.
			if l, h := BootstrapCI(xs, stats[i], 500, seed, 0.95); l != iv.Lo || h != iv.Hi {
				t.Fatalf("%s alone: [%v, %v], together [%v, %v]", stats[i].Name(), l, h, iv.Lo, iv.Hi)
			}
		}
		// The built-in fast paths equal the generic ones bit for bit.
		generic := []Statistic{
			NewStatistic("mean", Mean),
			NewStatistic("iqm", IQMInPlace),
			NewSortedStatistic("iqm-sorted", trimmedMeanSorted),
		}
		g := BootstrapCIs(xs, generic, 500, seed, 0.95)
		if g[0] != a[0] || g[1] != a[1] || g[2] != a[1] {
			t.Fatalf("generic %v, built-in %v", g, a)
		}
		// A level of 0.5 lies inside the 0.95 interval.
		for i, iv := range BootstrapCIs(xs, stats, 500, seed, 0.5) {
			if iv.Lo < a[i].Lo || iv.Hi > a[i].Hi {
				t.Fatalf("50 %% interval %v not inside 95 %% %v", iv, a[i])
			}
		}
	}
	// One value, or all values equal: a point interval.
	if lo, hi := BootstrapCI([]float64{3.5}, StatIQM, 100, 1, 0.95); lo != 3.5 || hi != 3.5 {
		t.Errorf("one value: [%v, %v]", lo, hi)
	}
	if lo, hi := BootstrapCI([]float64{0.1, 0.1, 0.1, 0.1}, StatIQM, 100, 1, 0.95); lo != 0.1 || hi != 0.1 {
		t.Errorf("equal values: [%v, %v]", lo, hi)
	}
}

// firstDraws returns the first k indices in [0, n) that a seed draws.
func firstDraws(seed uint64, n uint64, k int) []uint64 {
	src := newIndexSource(seed)
	out := make([]uint64, k)
	for i := range out {
		out[i] = src.intN(n)
	}
	return out
}

func TestSeedsDifferByName(t *testing.T) {
	names := []string{"", "a", "b", "ab", "ppo", "PPO", "ppo ", "sac", "dqn", "family-1", "family-10"}
	seen := map[uint64]string{}
	draws := map[string]string{}
	for _, fam := range names {
		for _, met := range names {
			key := strconv.Quote(fam) + "/" + strconv.Quote(met)
			seed := SeedFor(0, fam, met)
			if other, dup := seen[seed]; dup {
				t.Fatalf("%s and %s share seed %d", key, other, seed)
			}
			seen[seed] = key
			d := firstDraws(seed, 10, 24)
			sig := ""
			for _, x := range d {
				sig += strconv.FormatUint(x, 10) + ","
			}
			if other, dup := draws[sig]; dup {
				t.Fatalf("%s and %s draw the same indices", key, other)
			}
			draws[sig] = key
		}
	}
	// The separator keeps ("ab", "") apart from ("a", "b"), and the base
	// seed matters.
	if SeedFor(0, "ab", "") == SeedFor(0, "a", "b") || SeedFor(0, "a") == SeedFor(1, "a") {
		t.Error("seed collisions")
	}
}

// The result of a family's CI depends on its name and values only, not on
// which families are computed before it.
func TestBootstrapOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	families := []string{"ppo", "sac", "dqn", "a2c", "impala"}
	values := map[string][]float64{}
	for _, f := range families {
		values[f] = randomSample(rng)
	}
	compute := func(order []string) map[string][]Interval {
		out := map[string][]Interval{}
		for _, f := range order {
			out[f] = BootstrapCIs(values[f], []Statistic{StatMean, StatIQM}, 1000, SeedFor(42, f, "reward"), 0.95)
		}
		return out
	}
	want := compute(families)
	for trial := 0; trial < 10; trial++ {
		order := slices.Clone(families)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		got := compute(order)
		for _, f := range families {
			if !slices.Equal(got[f], want[f]) {
				t.Fatalf("order %v changed %s: %v vs %v", order, f, got[f], want[f])
			}
		}
	}
}

// On 64-bit platforms the index draw is exactly (*rand.Rand).IntN, which
// is Uint64N there.
func TestIndexDrawMatchesIntN(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("rand.IntN and Uint64N take their 32-bit paths here")
	}
	r := rand.New(rand.NewPCG(7, 0))
	src := newIndexSource(7)
	for i := 0; i < 1000; i++ {
		if a, b := src.intN(10), r.IntN(10); int(a) != b {
			t.Fatalf("draw %d: %d vs rand.IntN %d", i, a, b)
		}
	}
	for _, seed := range []uint64{0, 1, 42, SeedFor(0, "ppo", "forgetting")} {
		for _, n := range []uint64{1, 2, 3, 7, 8, 10, 1000, 1 << 40, 1<<62 + 3} {
			r := rand.New(rand.NewPCG(seed, 0))
			src := newIndexSource(seed)
			for i := 0; i < 200; i++ {
				if a, b := src.intN(n), r.Uint64N(n); a != b {
					t.Fatalf("seed %d n %d draw %d: %d vs rand.IntN %d", seed, n, i, a, b)
				}
			}
		}
	}
}

func TestWilcoxonProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 500; trial++ {
		n := 1 + rng.IntN(70)
		d := make([]float64, n)
		ties := trial%2 == 0
		for i := range d {
			if ties {
				d[i] = float64(rng.IntN(7) - 3)
			} else {
				d[i] = rng.NormFloat64() + 0.2
			}
		}
		r, err := Wilcoxon(d)
		if err != nil {
			if !errors.Is(err, ErrAllZero) {
				t.Fatal(err)
			}
			continue
		}
		if !(r.P >= 0 && r.P <= 1) {
			t.Fatalf("p = %v", r.P)
		}
		// Invariant under reordering and positive scaling.
		perm := slices.Clone(d)
		rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		for i := range perm {
			perm[i] *= 4
		}
		r2, _ := Wilcoxon(perm)
		if r2.P != r.P || r2.Statistic != r.Statistic {
			t.Fatalf("reorder/scale changed p: %v vs %v", r2.P, r.P)
		}
		// Without ties, mirroring leaves p unchanged (with ties it need not,
		// see TestWilcoxonByHand).
		if !ties {
			neg := slices.Clone(d)
			for i := range neg {
				neg[i] = -neg[i]
			}
			if r3, _ := Wilcoxon(neg); r3.P != r.P {
				t.Fatalf("mirror changed p without ties: %v vs %v", r3.P, r.P)
			}
		}
	}
}

func TestSignFlipProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(10)
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(rng.IntN(9) - 4) // integers: every sum is exact
		}
		p, minP := SignFlip(d)
		if p < minP || p > 1 || minP != math.Ldexp(1, 1-n) {
			t.Fatalf("SignFlip(%v) = %v, %v", d, p, minP)
		}
		neg := slices.Clone(d)
		for i := range neg {
			neg[i] = -neg[i]
		}
		rng.Shuffle(n, func(i, j int) { neg[i], neg[j] = neg[j], neg[i] })
		if p2, _ := SignFlip(neg); p2 != p {
			t.Fatalf("mirror/reorder changed p: %v vs %v", p2, p)
		}
	}
}

func TestBenjaminiHochbergProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for trial := 0; trial < 500; trial++ {
		m := 1 + rng.IntN(30)
		p := make([]float64, m)
		for i := range p {
			p[i] = math.Pow(rng.Float64(), 3)
			if rng.IntN(5) == 0 {
				p[i] = math.Round(p[i]*10) / 10 // ties
			}
		}
		adj := BenjaminiHochberg(p)
		order := make([]int, m)
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmpFloat(p[a], p[b]) })
		for k, i := range order {
			if adj[i] < p[i] || adj[i] > 1 {
				t.Fatalf("adjusted %v for p %v", adj[i], p[i])
			}
			if k > 0 && adj[i] < adj[order[k-1]] {
				t.Fatal("adjusted p values not monotone in p")
			}
		}
		// The largest p is never changed.
		if i := order[m-1]; adj[i] != p[i] {
			t.Fatalf("largest p %v adjusted to %v", p[i], adj[i])
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestProbImprovementProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for trial := 0; trial < 300; trial++ {
		x, y := randomSample(rng), randomSample(rng)
		a, b := ProbImprovement(x, y), ProbImprovement(y, x)
		if a < 0 || a > 1 || math.Abs(a+b-1) > 1e-15 {
			t.Fatalf("P(x>y) = %v, P(y>x) = %v", a, b)
		}
		if ProbImprovement(x, x) != 0.5 {
			t.Fatal("P(x > x) ≠ ½")
		}
	}
}

func TestFriedmanProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for trial := 0; trial < 300; trial++ {
		k, n := 3+rng.IntN(8), 1+rng.IntN(20)
		scores := make([][]float64, n)
		for b := range scores {
			scores[b] = make([]float64, k)
			for j := range scores[b] {
				scores[b][j] = float64(rng.IntN(4)) + float64(j)*0.3
			}
		}
		stat, p, err := Friedman(scores)
		if errors.Is(err, ErrAllTied) {
			continue
		}
		if err != nil || stat < -1e-9 || p < 0 || p > 1 {
			t.Fatalf("Friedman = %v, %v, %v", stat, p, err)
		}
		// Monotone transforms of a benchmark and reversing every benchmark
		// leave the statistic alone; so does permuting the families.
		perm := rng.Perm(k)
		tr := make([][]float64, n)
		for b := range scores {
			tr[b] = make([]float64, k)
			for j, pj := range perm {
				tr[b][j] = -math.Exp(scores[b][pj]) * 3
			}
		}
		stat2, _, err := Friedman(tr)
		if err != nil || stat2 != stat {
			t.Fatalf("transformed statistic %v vs %v", stat2, stat)
		}
		// Average ranks average to (k+1)/2 and reverse with the direction.
		hi, _ := AverageRanks(scores, true)
		lo, _ := AverageRanks(scores, false)
		sum := 0.0
		for j := range hi {
			sum += hi[j]
			if math.Abs(hi[j]+lo[j]-float64(k+1)) > 1e-12 {
				t.Fatalf("ranks %v and %v do not mirror", hi[j], lo[j])
			}
		}
		if math.Abs(sum/float64(k)-float64(k+1)/2) > 1e-12 {
			t.Fatalf("mean rank %v", sum/float64(k))
		}
	}
}

// TestProbImprovementCountsEveryPair: the sorted count agrees with the
// definition, pair by pair, on ties, signed zeros, NaNs (counted as neither)
// and random values.
func TestProbImprovementCountsEveryPair(t *testing.T) {
	byPairs := func(x, y []float64) float64 {
		var gt, eq int
		for _, a := range x {
			for _, b := range y {
				switch {
				case a > b:
					gt++
				case a == b:
					eq++
				}
			}
		}
		return (float64(gt) + 0.5*float64(eq)) / float64(len(x)*len(y))
	}
	rng := rand.New(rand.NewPCG(16, 16))
	cases := [][2][]float64{
		{{0}, {math.Copysign(0, -1)}},
		{{math.Copysign(0, -1), 1, math.NaN()}, {0, 0, math.NaN(), -1}},
		{{2, 2, 2}, {2, 1, 3, 2}},
	}
	for range 200 {
		x, y := make([]float64, 1+rng.IntN(40)), make([]float64, 1+rng.IntN(40))
		for _, s := range [][]float64{x, y} {
			for i := range s {
				s[i] = float64(rng.IntN(12)) / 4 // many ties
			}
		}
		cases = append(cases, [2][]float64{x, y})
	}
	for _, c := range cases {
		if got, want := ProbImprovement(c[0], c[1]), byPairs(c[0], c[1]); got != want {
			t.Errorf("ProbImprovement(%v, %v) = %v, want %v", c[0], c[1], got, want)
		}
	}
}

// The windows of quantilePairSelect give exactly Quantile of the sorted
// values at the bootstrap's sizes, with ties, constant runs, infinities and
// a sample that misleads them (every sampled position holding a value far
// above the rest, so that a window misses its ranks and the quickselect
// takes over); quantileWindows itself reports the miss.
func TestQuantileWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	qs := [][2]float64{{0.025000000000000022, 0.975}, {0, 1}, {0.5, 0.5}, {0.05, 0.95}, {0.4999, 0.5001}, {0, 0.001}, {0.999, 1}}
	check := func(v []float64, what string) {
		t.Helper()
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		for _, q := range qs {
			work := slices.Clone(v)
			lo, hi := quantilePairSelect(work, q[0], q[1])
			same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) } // lerp(−∞, x, 0) is NaN
			if !same(lo, Quantile(sorted, q[0])) || !same(hi, Quantile(sorted, q[1])) {
				t.Fatalf("%s n=%d q=%v: select %v, %v; sort %v, %v", what, len(v), q, lo, hi, Quantile(sorted, q[0]), Quantile(sorted, q[1]))
			}
		}
	}
	for trial := 0; trial < 300; trial++ {
		n := windowMin + rng.IntN(12000)
		if trial%7 == 0 {
			n = 10000
		}
		v := make([]float64, n)
		distinct := 1 + rng.IntN(n)
		for i := range v {
			switch trial % 4 {
			case 0:
				v[i] = float64(rng.IntN(distinct)) // ties
			case 1:
				v[i] = float64(rng.IntN(3)) // a few values, long runs
			default:
				v[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(5)))
			}
		}
		if trial%9 == 0 {
			v[rng.IntN(n)], v[rng.IntN(n)] = math.Inf(1), math.Inf(-1)
		}
		check(v, "random")
	}
	for _, n := range []int{windowMin, 10000, 10007} {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		i, ti := quantileIndex(n, 0.025)
		j, tj := quantileIndex(n, 0.975)
		if _, _, ok := quantileWindows(slices.Clone(v), i, ti, j, tj); !ok {
			t.Errorf("n=%d: the windows of a normal sample missed", n)
		}
		for k := range windowSample {
			v[k*n/windowSample] = 1e9 + float64(k)
		}
		if _, _, ok := quantileWindows(slices.Clone(v), i, ti, j, tj); ok {
			t.Errorf("n=%d: the windows of a misleading sample did not miss", n)
		}
		check(v, "misleading sample")
		slices.Sort(v)
		check(v, "sorted")
		slices.Reverse(v)
		check(v, "reversed")
	}
}

// TestSignFlipSumsPastFloat64: finite differences whose pattern sums leave
// float64 (Σ|d| past MaxFloat64) have no sign-flip p in float64: the slack
// 1e-9·Σ|d| became +Inf, every comparison NaN, and p = 0, which the test can
// never give (the observed pattern and its mirror always count). The p value
// is absent with ErrOverflow; below the edge it is a number.
func TestSignFlipSumsPastFloat64(t *testing.T) {
	for _, c := range []struct {
		d    []float64
		want float64 // NaN: absent
	}{
		{[]float64{1.5e308, 1e308}, math.NaN()},
		{[]float64{1.5e308, 1e308, -0.9e308}, math.NaN()},
		{[]float64{1.7e308, 1.7e308, 1.7e308}, math.NaN()},
		{[]float64{1e308, -1e308, 1e308}, math.NaN()},
		// Σ|d| = 1.6e308: every pattern sum is finite; |Σd| = 1.6e308 is
		// reached by the observed pattern and its mirror only.
		{[]float64{0.8e308, 0.8e308}, 0.5},
	} {
		r := Paired(c.d)
		switch {
		case math.IsNaN(c.want):
			if r.P != nil || r.Reason != ErrOverflow.Error() {
				t.Errorf("%v: p %v reason %q, want absent: %v", c.d, deref(r.P), r.Reason, ErrOverflow)
			}
		case r.P == nil || *r.P != c.want:
			t.Errorf("%v: p %v (%s), want %v", c.d, deref(r.P), r.Reason, c.want)
		}
		if r.Test != TestSignFlip {
			t.Errorf("%v: test %q", c.d, r.Test)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
