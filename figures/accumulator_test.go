package figures

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
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
