package figures

import (
	"cmp"
	"math"
	"slices"

	"github.com/crlbatch/crlbatch/protocol"
	"gonum.org/v1/gonum/stat/distuv"
)

// MaxPoints bounds the buckets of one run's curve, and so the points of a
// family's line: a run of n steps is cut into buckets of the smallest
// power-of-two width W with ceil(n/W) ≤ MaxPoints.
const MaxPoints = 2000

// Bucket is the rewards of one run at steps [Index·W, (Index+1)·W) that
// carry one label (a bucket that spans a shift holds one Bucket per label).
type Bucket struct {
	Index int32
	Label int32 // index into Curve.Labels
	N     int32
	Sum   float64
	Min   float64
	Max   float64
}

// Curve is one run's rewards downsampled: buckets in order of Index, and
// within one Index in order of the label's first step in it.
type Curve struct {
	Width   int64
	Labels  []string
	Buckets []Bucket
}

// WidthFor is the bucket width of a run of n steps.
func WidthFor(n int) int64 {
	w := int64(1)
	for (int64(n)+w-1)/w > MaxPoints {
		w *= 2
	}
	return w
}

// Downsample cuts one run into buckets. rewards[i] is the reward at step i
// (the row's position in canonical order), labels[i] indexes names.
func Downsample(rewards []float64, labels []int32, names []string) Curve {
	c := Curve{Width: WidthFor(len(rewards)), Labels: names}
	w := int(c.Width)
	for start := 0; start < len(rewards); start += w {
		end := min(start+w, len(rewards))
		first := len(c.Buckets)
		for i := start; i < end; i++ {
			r, l := rewards[i], labels[i]
			j := first
			for j < len(c.Buckets) && c.Buckets[j].Label != l {
				j++
			}
			if j == len(c.Buckets) {
				c.Buckets = append(c.Buckets, Bucket{Index: int32(start / w), Label: l, Min: r, Max: r})
			}
			b := &c.Buckets[j]
			b.N++
			b.Sum += r
			b.Min = math.Min(b.Min, r)
			b.Max = math.Max(b.Max, r)
		}
	}
	return c
}

// Point is one bucket of a family's line: the steps [Start, End) under
// one label, across the runs that have rewards there.
type Point struct {
	Label      string
	Start, End int64
	// Runs counts the runs with a reward in the bucket.
	Runs int
	// Mean is the mean across those runs of each run's mean reward in the
	// bucket; BandLow and BandHigh are its 95 % Student-t interval
	// (mean ± t(0.975, Runs−1)·sd/√Runs), absent under two runs.
	Mean              float64
	BandLow, BandHigh protocol.Value
	// Min and Max are the extremes of every reward in the bucket, over
	// all the runs: a spike survives the downsampling.
	Min, Max float64
}

// ReasonOneRun is why a bucket has no band.
const ReasonOneRun = "fewer than two runs"

// Line is a family's merged curve.
type Line struct {
	Width  int64
	Points []Point
}

// Merge merges the curves of a family's runs (in the family's run order)
// into one line: the widest bucket width of the runs, each run's buckets
// coarsened to it (exactly: power-of-two widths nest), then per bucket and
// label the mean across runs and its band. Labels are ordered by first
// appearance over the runs in run order.
func Merge(curves []Curve) Line {
	var ln Line
	for _, c := range curves {
		ln.Width = max(ln.Width, c.Width)
	}
	type key struct {
		idx   int64
		label int
	}
	labelIdx := map[string]int{}
	var labels []string
	type acc struct {
		means    []float64
		min, max float64
	}
	accs := map[key]*acc{}
	var keys []key
	for _, c := range curves {
		f := ln.Width / c.Width
		type runAcc struct {
			n        int64
			sum      float64
			min, max float64
		}
		run := map[key]*runAcc{}
		var order []key
		for _, b := range c.Buckets {
			name := c.Labels[b.Label]
			li, ok := labelIdx[name]
			if !ok {
				li = len(labels)
				labelIdx[name] = li
				labels = append(labels, name)
			}
			k := key{int64(b.Index) / f, li}
			ra, ok := run[k]
			if !ok {
				ra = &runAcc{min: b.Min, max: b.Max}
				run[k] = ra
				order = append(order, k)
			}
			ra.n += int64(b.N)
			ra.sum += b.Sum
			ra.min = math.Min(ra.min, b.Min)
			ra.max = math.Max(ra.max, b.Max)
		}
		for _, k := range order {
			ra := run[k]
			a, ok := accs[k]
			if !ok {
				a = &acc{min: ra.min, max: ra.max}
				accs[k] = a
				keys = append(keys, k)
			}
			a.means = append(a.means, ra.sum/float64(ra.n))
			a.min = math.Min(a.min, ra.min)
			a.max = math.Max(a.max, ra.max)
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(a.idx, b.idx); c != 0 {
			return c
		}
		return cmp.Compare(a.label, b.label)
	})
	for _, k := range keys {
		a := accs[k]
		p := Point{Label: labels[k.label], Start: k.idx * ln.Width, End: (k.idx + 1) * ln.Width, Runs: len(a.means), Min: a.min, Max: a.max}
		p.Mean, p.BandLow, p.BandHigh = band(a.means)
		ln.Points = append(ln.Points, p)
	}
	return ln
}

// band is the mean of xs and its 95 % Student-t interval.
func band(xs []float64) (float64, protocol.Value, protocol.Value) {
	n := float64(len(xs))
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	mean := sum / n
	if len(xs) < 2 {
		return mean, protocol.None(ReasonOneRun), protocol.None(ReasonOneRun)
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / (n - 1))
	h := TQuantile975(len(xs)-1) * sd / math.Sqrt(n)
	return mean, protocol.Finite(mean - h), protocol.Finite(mean + h)
}

// TQuantile975 is the 0.975 quantile of Student's t with df degrees of
// freedom.
func TQuantile975(df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
}
