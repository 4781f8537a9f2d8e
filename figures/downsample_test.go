package figures

import (
	"math"
	"math/rand/v2"
	"testing"
)

// downsampleRef is Downsample one row at a time, with math.Min and
// math.Max: the reference for the rows of a label added up in registers.
func downsampleRef(rewards []float64, labels []int32, names []string) Curve {
	c := Curve{Width: WidthFor(len(rewards)), Labels: names}
	w := int(c.Width)
	at := make(map[[2]int32]int)
	for i, r := range rewards {
		l, idx := labels[i], int32(i/w)
		k, ok := at[[2]int32{idx, l}]
		if !ok {
			k = len(c.Buckets)
			at[[2]int32{idx, l}] = k
			c.Buckets = append(c.Buckets, Bucket{Index: idx, Label: l, Min: r, Max: r})
		}
		b := &c.Buckets[k]
		b.N++
		b.Sum += r
		b.Min = math.Min(b.Min, r)
		b.Max = math.Max(b.Max, r)
	}
	return c
}

// sameCurve fails unless got is want bit for bit.
func sameCurve(t *testing.T, name string, got, want Curve) {
	t.Helper()
	if got.Width != want.Width || len(got.Buckets) != len(want.Buckets) {
		t.Fatalf("%s: width %d, %d buckets; want %d, %d", name, got.Width, len(got.Buckets), want.Width, len(want.Buckets))
	}
	bits := math.Float64bits
	for i, g := range got.Buckets {
		w := want.Buckets[i]
		if g.Index != w.Index || g.Label != w.Label || g.N != w.N ||
			bits(g.Sum) != bits(w.Sum) || bits(g.Min) != bits(w.Min) || bits(g.Max) != bits(w.Max) {
			t.Fatalf("%s: bucket %d %+v, want %+v", name, i, g, w)
		}
	}
}

// Downsample gives what adding the rows one at a time with math.Min and
// math.Max gives, bit for bit: sums in the same order, signed zeros, NaN
// and the infinities as math.Min and math.Max order them, for labels that
// change every row, now and then, or never, over runs shorter and longer
// than MaxPoints.
func TestDownsampleMatchesRowByRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	values := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e300, -1e300, 5e-324, math.NaN(), math.Inf(1), math.Inf(-1)}
	names := []string{"a", "b", "c", "d"}
	for trial := range 300 {
		n := rng.IntN(3 * MaxPoints)
		if trial%10 == 0 {
			n = rng.IntN(40)
		}
		rewards, labels := make([]float64, n), make([]int32, n)
		switch mode := trial % 4; mode {
		case 0: // a label per stretch of steps
			stretch := 1 + rng.IntN(5000)
			for i := range labels {
				labels[i] = int32(i / stretch % len(names))
			}
		case 1: // every row another label
			for i := range labels {
				labels[i] = int32(rng.IntN(len(names)))
			}
		case 2: // alternating
			for i := range labels {
				labels[i] = int32(i % 2)
			}
		}
		for i := range rewards {
			if rng.IntN(4) == 0 {
				rewards[i] = values[rng.IntN(len(values))]
			} else {
				rewards[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
			}
		}
		sameCurve(t, "trial", Downsample(rewards, labels, names), downsampleRef(rewards, labels, names))
	}
}

// BenchmarkDownsample: one run of the 1 GB sweep's size (134,000 steps)
// under three regimes that change every few thousand steps.
func BenchmarkDownsample(b *testing.B) {
	n := 134_000
	rewards, labels := make([]float64, n), make([]int32, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		rewards[i] = rng.NormFloat64()
		labels[i] = int32(i / 4000 % 3)
	}
	names := []string{"calm", "gusty", "storm"}
	b.SetBytes(int64(8 * n))
	for b.Loop() {
		Downsample(rewards, labels, names)
	}
}
