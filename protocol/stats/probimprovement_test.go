package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// probImprovementCIByDefinition recomputes ProbImprovementCI from its
// written definition, sharing nothing with it but the index draws (the PCG
// and its bounded integers, which TestReferenceBootstrap checks against an
// independent Python implementation): each resample is materialized, its
// statistic counted over every pair of values, and the percentiles taken
// with numpy's "linear" rule h = (B−1)·q on the sorted statistics.
func probImprovementCIByDefinition(x, y []float64, resamples int, seed uint64, level float64) (float64, float64) {
	src := newIndexSource(seed)
	var stat []float64
	for range resamples {
		xr := make([]float64, len(x))
		for i := range xr {
			xr[i] = x[src.intN(uint64(len(x)))]
		}
		yr := make([]float64, len(y))
		for j := range yr {
			yr[j] = y[src.intN(uint64(len(y)))]
		}
		score := 0.0
		for _, a := range xr {
			for _, b := range yr {
				switch {
				case a > b:
					score++
				case a == b:
					score += 0.5
				}
			}
		}
		stat = append(stat, score/float64(len(xr)*len(yr)))
	}
	sort.Float64s(stat)
	pct := func(q float64) float64 {
		h := float64(len(stat)-1) * q
		i := int(math.Floor(h))
		if i+1 >= len(stat) {
			return stat[len(stat)-1]
		}
		return stat[i] + (h-float64(i))*(stat[i+1]-stat[i])
	}
	return pct((1 - level) / 2), pct((1 + level) / 2)
}

func TestProbImprovementCIAgainstDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2))
	cases := [][2][]float64{
		{{1, 2, 3}, {2, 2}},
		{{0.5}, {0.1, 0.9, 0.4}},
		{{3, 1, 2, 2}, {7}},
		{{4, 4, 4}, {4, 4}}, // every pair a tie: [0.5, 0.5]
		{{-1.5, 2.25, 0, 8, 8, 3}, {0, 0, 1, 9, -2}},
	}
	for range 12 {
		n, m := 1+rng.IntN(12), 1+rng.IntN(12)
		x, y := make([]float64, n), make([]float64, m)
		for i := range x {
			x[i] = float64(rng.IntN(6)) // ties within and across
		}
		for j := range y {
			y[j] = rng.NormFloat64() * 3
			if rng.IntN(3) == 0 {
				y[j] = math.Round(y[j])
			}
		}
		cases = append(cases, [2][]float64{x, y})
	}
	for k, c := range cases {
		for _, res := range []int{1, 2, 37, 1000} {
			seed := SeedFor(uint64(k), "family", "metric", "probability of improvement")
			lo, hi := ProbImprovementCI(c[0], c[1], res, seed, 0.95)
			wlo, whi := probImprovementCIByDefinition(c[0], c[1], res, seed, 0.95)
			if math.Abs(lo-wlo) > 1e-12 || math.Abs(hi-whi) > 1e-12 {
				t.Errorf("ProbImprovementCI(%v, %v, %d) = [%v, %v], by the definition [%v, %v]", c[0], c[1], res, lo, hi, wlo, whi)
			}
			if lo > hi || lo < 0 || hi > 1 {
				t.Errorf("ProbImprovementCI(%v, %v, %d) = [%v, %v]: not an interval in [0, 1]", c[0], c[1], res, lo, hi)
			}
		}
	}
	if lo, hi := ProbImprovementCI([]float64{4, 4, 4}, []float64{4, 4}, 500, 7, 0.95); lo != 0.5 || hi != 0.5 {
		t.Errorf("all ties: [%v, %v], want [0.5, 0.5]", lo, hi)
	}
	// x entirely above y: every resample gives 1.
	if lo, hi := ProbImprovementCI([]float64{5, 6}, []float64{1, 2, 3}, 500, 7, 0.95); lo != 1 || hi != 1 {
		t.Errorf("x above y: [%v, %v], want [1, 1]", lo, hi)
	}
}

// TestProbImprovementCIStratified: the two samples are resampled each on
// its own, so with one value on a side only the other side varies, and an
// interval from two values of x against one y can only hold 0, ½ or 1
// steps of ½.
func TestProbImprovementCIStratified(t *testing.T) {
	lo, hi := ProbImprovementCI([]float64{1, 3}, []float64{2}, 10000, 3, 0.95)
	if lo != 0 || hi != 1 {
		t.Errorf("x = {1, 3}, y = {2}: [%v, %v], want [0, 1]", lo, hi)
	}
	// Same inputs and seed: same bytes; another seed: another stream.
	x, y := []float64{0.1, 0.7, 0.3, 0.9, 0.5}, []float64{0.2, 0.4, 0.6}
	a1, b1 := ProbImprovementCI(x, y, 2000, 11, 0.9)
	a2, b2 := ProbImprovementCI(x, y, 2000, 11, 0.9)
	if a1 != a2 || b1 != b2 {
		t.Errorf("not deterministic: [%v, %v] then [%v, %v]", a1, b1, a2, b2)
	}
}

func TestProbImprovementCIPanics(t *testing.T) {
	for name, fn := range map[string]func(){
		"no x":       func() { ProbImprovementCI(nil, []float64{1}, 10, 0, 0.95) },
		"no y":       func() { ProbImprovementCI([]float64{1}, nil, 10, 0, 0.95) },
		"resamples":  func() { ProbImprovementCI([]float64{1}, []float64{1}, 0, 0, 0.95) },
		"level":      func() { ProbImprovementCI([]float64{1}, []float64{1}, 10, 0, 1) },
		"NaN":        func() { ProbImprovementCI([]float64{math.NaN()}, []float64{1}, 10, 0, 0.95) },
		"infinity y": func() { ProbImprovementCI([]float64{1}, []float64{math.Inf(-1)}, 10, 0, 0.95) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			fn()
		}()
	}
}
