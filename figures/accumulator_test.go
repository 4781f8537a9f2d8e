package figures

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// retainedBy is the heap that build's result keeps alive, measured after
// garbage collection.
func retainedBy(build func() any) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// memRun is run i of a family: 8,000 steps (2,000 buckets of 4), three
// regimes, lengths varying by a few hundred steps.
func memRun(i int, rewards []float64, labels []int32) Curve {
	rng := rand.New(rand.NewPCG(uint64(i), 3))
	n := 7600 + rng.IntN(400)
	rewards, labels = rewards[:n], labels[:n]
	for s := range n {
		rewards[s] = math.Sin(float64(s)/200) + rng.NormFloat64()*0.1
		labels[s] = int32(s / 3000)
	}
	return Downsample(rewards, labels, []string{"calm", "gusty", "storm"})
}

// TestAccumulatorMemoryIsFlat: what a family's line keeps while its runs
// are scored does not grow with the number of runs. Folding 500 runs
// retains what folding 50 does (within 16 KB; 50 runs reach every bucket
// the lengths span), while keeping the 500 runs' curves, as the line was
// built before, retains 500 × ~90 KB.
func TestAccumulatorMemoryIsFlat(t *testing.T) {
	rewards, labels := make([]float64, 8000), make([]int32, 8000)
	fold := func(runs int) int64 {
		return retainedBy(func() any {
			a := &Accumulator{}
			for i := range runs {
				a.Fold(memRun(i, rewards, labels))
			}
			return a
		})
	}
	keep := func(runs int) int64 {
		return retainedBy(func() any {
			var cs []Curve
			for i := range runs {
				cs = append(cs, memRun(i, rewards, labels))
			}
			return cs
		})
	}
	fold(50) // the first measure also counts what the process sets up once
	few, many, kept := fold(50), fold(500), keep(500)
	t.Logf("retained: 50 runs folded %d B, 500 runs folded %d B, 500 curves kept %d B", few, many, kept)
	if many > few+16<<10 {
		t.Errorf("folding 500 runs retains %d B, 50 runs %d B: the accumulator grows with the runs", many, few)
	}
	if kept < 50*many {
		t.Errorf("keeping 500 curves retains %d B, folding them %d B: the measure does not tell them apart", kept, many)
	}
}

// TestFoldThenLineIsMerge: folding runs one at a time, with the curves
// dropped as they go, gives exactly Merge's line (which
// TestMergeByBruteForce checks against the raw rewards), including a run
// longer than all before it (the width widens after runs were folded) and
// a run shorter than one bucket of the final width.
func TestFoldThenLineIsMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	lengths := []int{3000, 1, 9000, 2500, 70000, 17, 4001}
	var curves []Curve
	var a Accumulator
	for _, n := range lengths {
		rw, lb := make([]float64, n), make([]int32, n)
		for i := range n {
			rw[i] = rng.NormFloat64()
			lb[i] = int32(i / 2600 % 2)
		}
		c := Downsample(rw, lb, []string{"a", "b"})
		curves = append(curves, c)
		a.Fold(c)
	}
	got, want := a.Line(), Merge(curves)
	if got.Width != WidthFor(70000) || len(got.Points) != len(want.Points) {
		t.Fatalf("width %d, %d points; Merge %d, %d points", got.Width, len(got.Points), want.Width, len(want.Points))
	}
	for i := range got.Points {
		if got.Points[i] != want.Points[i] {
			t.Fatalf("point %d: %+v, Merge %+v", i, got.Points[i], want.Points[i])
		}
	}
	if a.Runs() != len(lengths) {
		t.Errorf("%d runs folded, want %d", a.Runs(), len(lengths))
	}
	var empty Accumulator
	if ln := empty.Line(); len(ln.Points) != 0 || ln.Width != 0 {
		t.Errorf("empty accumulator: %+v", ln)
	}
}

// naiveLine is a family's line computed the plain way, as Merge first did:
// every run's buckets coarsened to the widest run's width (bucket sums
// added in the run's bucket order), then per bucket and label, over the
// runs in run order, the sum of the runs' means and Welford's update of
// their mean and squared deviations; labels within a bucket in order of
// first appearance over the runs.
func naiveLine(curves []Curve) Line {
	var w int64
	for _, c := range curves {
		w = max(w, c.Width)
	}
	type key struct {
		idx   int64
		label string
	}
	type acc struct {
		runs                   int
		sum, wmean, m2, lo, hi float64
	}
	cells := map[key]*acc{}
	order := map[string]int{}
	maxIdx, steps := int64(-1), int64(0)
	for _, c := range curves {
		n := int64(0)
		for _, b := range c.Buckets {
			n += int64(b.N)
		}
		steps = max(steps, n) // the last bucket ends with the longest run
		type runCell struct {
			n        int64
			sum      float64
			min, max float64
		}
		run := map[key]*runCell{}
		var keys []key
		for _, b := range c.Buckets {
			name := c.Labels[b.Label]
			if _, ok := order[name]; !ok {
				order[name] = len(order)
			}
			k := key{int64(b.Index) * c.Width / w, name}
			r := run[k]
			if r == nil {
				r = &runCell{min: b.Min, max: b.Max}
				run[k] = r
				keys = append(keys, k)
			}
			r.n += int64(b.N)
			r.sum += b.Sum
			r.min, r.max = math.Min(r.min, b.Min), math.Max(r.max, b.Max)
		}
		for _, k := range keys {
			r := run[k]
			a := cells[k]
			if a == nil {
				a = &acc{lo: r.min, hi: r.max}
				cells[k] = a
			}
			m := r.sum / float64(r.n)
			a.runs++
			a.sum += m
			d := m - a.wmean
			a.wmean += d / float64(a.runs)
			a.m2 += d * (m - a.wmean)
			a.lo, a.hi = math.Min(a.lo, r.min), math.Max(a.hi, r.max)
			maxIdx = max(maxIdx, k.idx)
		}
	}
	names := make([]string, len(order))
	for n, i := range order {
		names[i] = n
	}
	ln := Line{Width: w}
	for idx := int64(0); idx <= maxIdx; idx++ {
		for _, name := range names {
			a := cells[key{idx, name}]
			if a == nil {
				continue
			}
			p := Point{Label: name, Start: idx * w, End: min((idx+1)*w, steps), Runs: a.runs, Mean: a.sum / float64(a.runs), Min: a.lo, Max: a.hi}
			if a.runs < 2 {
				p.BandLow, p.BandHigh = protocol.None(ReasonOneRun), protocol.None(ReasonOneRun)
			} else {
				h := TQuantile975(a.runs-1) * math.Sqrt(a.m2/float64(a.runs-1)) / math.Sqrt(float64(a.runs))
				p.BandLow, p.BandHigh = protocol.Finite(p.Mean-h), protocol.Finite(p.Mean+h)
			}
			ln.Points = append(ln.Points, p)
		}
	}
	return ln
}

// TestFoldEqualsNaiveLineBitForBit: the accumulator (a label's cell found
// by index, the levels kept only up to where every run is one bucket and
// only from the widest run's width, issue 16) gives the plain computation's
// line to the bit, on families of runs of lengths growing, shrinking and
// mixed, with few labels or as many labels as steps (every bucket holding
// dozens of labels).
func TestFoldEqualsNaiveLineBitForBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	for trial := range 60 {
		var curves []Curve
		var a Accumulator
		nlabels := 1 + rng.IntN(4)
		if trial%3 == 0 {
			nlabels = 50 + rng.IntN(5000)
		}
		names := make([]string, nlabels)
		for i := range names {
			names[i] = fmt.Sprint("regime-", i)
		}
		for range 1 + rng.IntN(6) {
			n := 1 + rng.IntN(20000)
			if rng.IntN(4) == 0 {
				n = 1 + rng.IntN(50)
			}
			rw, lb := make([]float64, n), make([]int32, n)
			l := int32(rng.IntN(nlabels))
			for i := range n {
				if rng.IntN(1+rng.IntN(100)) == 0 {
					l = int32(rng.IntN(nlabels))
				}
				rw[i], lb[i] = rng.NormFloat64(), l
			}
			c := Downsample(rw, lb, names)
			curves = append(curves, c)
			a.Fold(c)
		}
		got, want := a.Line(), naiveLine(curves)
		if got.Width != want.Width || len(got.Points) != len(want.Points) {
			t.Fatalf("trial %d: width %d, %d points; plainly %d, %d points", trial, got.Width, len(got.Points), want.Width, len(want.Points))
		}
		for i := range got.Points {
			if got.Points[i] != want.Points[i] {
				t.Fatalf("trial %d point %d: %+v, plainly %+v", trial, i, got.Points[i], want.Points[i])
			}
		}
	}
}

// TestAccumulatorMemoryPerLabel: one run of 200,000 steps and 100,000
// labels (the bench-scale labels step) retains about what its cells take at
// the widths from its own (128 steps) to the one where it is one bucket
// (2^18): 12 widths × 100,000 labels × a 48-byte cell, 58 MB, with room for
// the slices' growth; keeping every width up to 2^53 took 238 MB.
func TestAccumulatorMemoryPerLabel(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 steps")
	}
	const n, labels = 200000, 100000
	rw, lb := make([]float64, n), make([]int32, n)
	names := make([]string, labels)
	for i := range names {
		names[i] = fmt.Sprint("regime-", i)
	}
	for i := range n {
		rw[i], lb[i] = float64(i%7), int32(i*labels/n)
	}
	c := Downsample(rw, lb, names)
	got := retainedBy(func() any {
		a := &Accumulator{}
		a.Fold(c)
		return a
	})
	t.Logf("retained %d B, %.0f B per label", got, float64(got)/labels)
	if limit := int64(12 * labels * 48 * 3 / 2); got > limit {
		t.Errorf("one run of %d labels retains %d B, more than %d", labels, got, limit)
	}
}
