package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// naiveBootstrap is the procedure of the package documentation done the
// plain way, sharing no code with BootstrapCIs: each resample drawn with
// (*rand.Rand).Uint64N from PCG(seed, 0) and built in full, its mean summed
// in draw order, its IQM from a sorted copy (⌊n/4⌋ dropped at each end, the
// rest summed ascending), and the interval from the fully sorted resample
// statistics by numpy's linear quantile.
func naiveBootstrap(xs []float64, resamples int, seed uint64, level float64) (mean, iqm Interval) {
	n := len(xs)
	r := rand.New(rand.NewPCG(seed, 0))
	means := make([]float64, resamples)
	iqms := make([]float64, resamples)
	res := make([]float64, n)
	for b := range resamples {
		for i := range res {
			res[i] = xs[r.Uint64N(uint64(n))]
		}
		s := 0.0
		for _, x := range res {
			s += x
		}
		means[b] = s / float64(n)
		slices.Sort(res)
		cut := n / 4
		s = 0.0
		for _, x := range res[cut : n-cut] {
			s += x
		}
		iqms[b] = s / float64(n-2*cut)
	}
	interval := func(v []float64) Interval {
		slices.Sort(v)
		q := func(q float64) float64 {
			h := float64(len(v)-1) * q
			i := int(math.Floor(h))
			if i >= len(v)-1 {
				return v[len(v)-1]
			}
			t := h - float64(i)
			a, b := v[i], v[i+1]
			if t >= 0.5 {
				return b - float64((b-a)*(1-t))
			}
			return a + float64((b-a)*t)
		}
		return Interval{q((1 - level) / 2), q((1 + level) / 2)}
	}
	return interval(means), interval(iqms)
}

// The bootstrap equals the plain procedure bit for bit, at sizes on both
// sides of every fast path (powers of two, where an index is the low bits of
// a draw; the sizes of large families), with ties and values of every scale.
func TestBootstrapEqualsNaive(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("rand.Uint64N takes its 32-bit path here")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	sizes := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 31, 32, 33, 64, 100, 255, 256, 257, 1000, 1024, 2500, 4096, 5001}
	// Every size with varied values, then some with one value repeated
	// (no draw needed: constantCIs), 0.1 so that the sums round, and
	// zeros of both signs.
	constant := []float64{0.1, 1.0 / 3, -7.25, 0, math.Copysign(0, -1)}
	for k := range len(sizes) + 2*len(constant) {
		n := sizes[k%len(sizes)]
		xs := make([]float64, n)
		scale := math.Pow(10, float64(rng.IntN(9)-4))
		for i := range xs {
			switch {
			case k >= len(sizes):
				xs[i] = constant[(k-len(sizes))%len(constant)]
				if xs[i] == 0 && i%2 == 1 {
					xs[i] = -xs[i]
				}
			case rng.IntN(4) == 0:
				xs[i] = float64(rng.IntN(3)) * scale // ties
			default:
				xs[i] = (rng.NormFloat64() + 0.3) * scale
			}
		}
		resamples := 400
		switch {
		case n > 1000:
			resamples = 60
		case n <= 64:
			resamples = 2000 // past windowMin: the interval's windows
		}
		seed := SeedFor(uint64(k), "family", strconv.Itoa(n))
		for _, level := range []float64{0.95, 0.5} {
			wantMean, wantIQM := naiveBootstrap(xs, resamples, seed, level)
			got := BootstrapCIs(xs, []Statistic{StatMean, StatIQM}, resamples, seed, level)
			if got[0] != wantMean || got[1] != wantIQM || !sameBits(got[0], wantMean) || !sameBits(got[1], wantIQM) {
				t.Fatalf("n=%d level %v: mean %v iqm %v, plain procedure %v %v", n, level, got[0], got[1], wantMean, wantIQM)
			}
			lo, hi := BootstrapCI(xs, StatMean, resamples, seed, level)
			if (Interval{lo, hi}) != wantMean {
				t.Fatalf("n=%d level %v: mean alone [%v, %v], plain procedure %v", n, level, lo, hi, wantMean)
			}
			lo, hi = BootstrapCI(xs, StatIQM, resamples, seed, level)
			if (Interval{lo, hi}) != wantIQM {
				t.Fatalf("n=%d level %v: IQM alone [%v, %v], plain procedure %v", n, level, lo, hi, wantIQM)
			}
		}
	}
}

// sameBits also tells +0 from −0.
func sameBits(a, b Interval) bool {
	return math.Float64bits(a.Lo) == math.Float64bits(b.Lo) && math.Float64bits(a.Hi) == math.Float64bits(b.Hi)
}

// BootstrapCIsUntil: a stop that never fires changes nothing; one that
// fires is asked every 16 resamples and ends the bootstrap at once.
func TestBootstrapCIsUntil(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	xs := make([]float64, 300)
	for i := range xs {
		xs[i] = rng.NormFloat64()
	}
	stats := []Statistic{StatMean, StatIQM}
	want := BootstrapCIs(xs, stats, 1000, 5, 0.95)
	asked := 0
	got, ok := BootstrapCIsUntil(xs, stats, 1000, 5, 0.95, func() bool { asked++; return false })
	if !ok || !slices.Equal(got, want) {
		t.Fatalf("with a stop that never fires: %v %v, want %v", got, ok, want)
	}
	if asked != 1000/16+1 { // before resamples 0, 16, …, 992
		t.Errorf("stop asked %d times over 1,000 resamples, want %d", asked, 1000/16+1)
	}
	asked = 0
	got, ok = BootstrapCIsUntil(xs, stats, 1000, 5, 0.95, func() bool { asked++; return asked == 3 })
	if ok || got != nil || asked != 3 {
		t.Errorf("stopped on the third check: %v %v after %d checks, want nil false 3", got, ok, asked)
	}
	// A few values (drawn in chunks of 16 resamples where the stream
	// draws), a number of resamples that is not a multiple of 16.
	small := xs[:5]
	for _, stats := range [][]Statistic{{StatMean, StatIQM}, {StatMean}, {StatIQM}} {
		want := BootstrapCIs(small, stats, 1001, 5, 0.95)
		asked = 0
		got, ok := BootstrapCIsUntil(small, stats, 1001, 5, 0.95, func() bool { asked++; return false })
		if !ok || !slices.Equal(got, want) || asked != 1001/16+1 {
			t.Fatalf("5 values, a stop that never fires: %v %v after %d checks, want %v after %d", got, ok, asked, want, 1001/16+1)
		}
		asked = 0
		got, ok = BootstrapCIsUntil(small, stats, 1001, 5, 0.95, func() bool { asked++; return asked == 63 })
		if ok || got != nil || asked != 63 {
			t.Errorf("5 values, stopped on the last check: %v %v after %d checks, want nil false 63", got, ok, asked)
		}
	}
}
