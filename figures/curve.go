package figures

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/stats"
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
	// at[l] is the position in c.Buckets of label l's bucket at index
	// atIdx[l]: a bucket with as many labels as steps is found in one step,
	// not by a scan of its labels (labels × steps: issue 16).
	at := make([]int32, len(names))
	atIdx := make([]int32, len(names))
	for l := range atIdx {
		atIdx[l] = -1
	}
	for start := 0; start < len(rewards); start += w {
		end := min(start+w, len(rewards))
		idx := int32(start / w)
		for i := start; i < end; {
			l := labels[i]
			if atIdx[l] != idx {
				atIdx[l], at[l] = idx, int32(len(c.Buckets))
				c.Buckets = append(c.Buckets, Bucket{Index: idx, Label: l, Min: rewards[i], Max: rewards[i]})
			}
			// The bucket's rows of this label that follow one another,
			// added up in registers in the same order as one at a time
			// (the same sum). math.Min and math.Max only where an
			// ordinary comparison does not decide: a NaN, equal zeros
			// (-0 before +0); their results bit for bit.
			b := &c.Buckets[at[l]]
			n, sum, lo, hi := b.N, b.Sum, b.Min, b.Max
			for ; i < end && labels[i] == l; i++ {
				r := rewards[i]
				n++
				sum += r
				if r < lo {
					lo = r
				} else if !(r > lo) && (r != lo || r == 0) {
					lo = math.Min(lo, r)
				}
				if r > hi {
					hi = r
				} else if !(r < hi) && (r != hi || r == 0) {
					hi = math.Max(hi, r)
				}
			}
			b.N, b.Sum, b.Min, b.Max = n, sum, lo, hi
		}
	}
	return c
}

// Point is one bucket of a family's line: the steps [Start, End) under
// one label, across the runs that have rewards there. End is Start plus the
// width but for the last bucket, which ends with the family's longest run.
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
// appearance over the runs in run order. It is an Accumulator fed every
// curve.
func Merge(curves []Curve) Line {
	var a Accumulator
	for _, c := range curves {
		a.Fold(c)
	}
	return a.Line()
}

// maxLevel is the widest bucket width an Accumulator keeps, as a power of
// two: WidthFor of the largest int is 2^53.
const maxLevel = 53

// Accumulator merges a family's runs into its line as the runs are scored,
// so that what it keeps does not grow with the number of runs: each run is
// folded in (in the family's run order) and can then be dropped.
//
// The line's bucket width is the widest of the family's runs, which is not
// known until the last run is in, and the band across runs of a coarse
// bucket cannot be rebuilt from the bands of its halves. So Fold adds a run
// to the statistics across runs at its own width and at every wider
// power-of-two width (each run's buckets coarsened exactly, as Merge
// defines), and Line reads the width of the widest run. At each width a
// bucket and label keep the count of runs, the sum of the runs' means (in
// run order: the line's mean is that sum over the count, as Merge always
// computed it), their running mean and sum of squared deviations
// (Welford's update, in run order: the band's standard deviation), and the
// extremes of every reward. A width holds at most MaxPoints buckets (a run
// folded there is at most MaxPoints buckets of its own width long), and the
// widths above a run's length hold one bucket of it; the memory is
// therefore bounded by the widths the family's run lengths span times
// MaxPoints buckets per label, whatever the number of runs.
type Accumulator struct {
	labels   []string
	labelIdx map[string]int32
	// levels[k] are the buckets of width 2^k, by index; each holds its
	// labels' cells in label order.
	levels [maxLevel + 1][][]cell
	width  int64
	runs   int
	// steps is the longest run's length: the line's last bucket ends there.
	steps int64
	// top is the widest level kept (-1: none yet); see Fold.
	top int
	// scratch: one run's buckets at one width.
	run   []runCell
	local []int32
	// at[l] is the position in run of label l's cell at index atIdx[l]
	// (coarsen), indexed by the family's label number.
	at    []int
	atIdx []int64
}

// cell is one bucket and label across runs.
type cell struct {
	label    int32
	runs     int32
	sum      float64 // Σ of the runs' means, in run order
	wmean    float64 // Welford's running mean of the runs' means
	m2       float64 // and the sum of squared deviations from it
	min, max float64
}

// runCell is one run's rewards in a bucket under one label.
type runCell struct {
	idx      int64
	label    int32
	n        int64
	sum      float64
	min, max float64
}

// Runs is the number of runs folded in.
func (a *Accumulator) Runs() int { return a.runs }

// Fold adds one run's curve. Curves must come in the family's run order;
// the result does not depend on anything else (a Line is the same whether
// the runs were folded as they were scored or all at the end).
func (a *Accumulator) Fold(c Curve) {
	if a.labelIdx == nil {
		a.labelIdx = map[string]int32{}
		a.top = -1
	}
	a.runs++
	a.width = max(a.width, c.Width)
	// The run's labels in the family's numbering, met bucket by bucket.
	a.local = a.local[:0]
	for range c.Labels {
		a.local = append(a.local, -1)
	}
	for _, b := range c.Buckets {
		if a.local[b.Label] >= 0 {
			continue
		}
		name := c.Labels[b.Label]
		li, ok := a.labelIdx[name]
		if !ok {
			li = int32(len(a.labels))
			a.labelIdx[name] = li
			a.labels = append(a.labels, name)
		}
		a.local[b.Label] = li
	}
	if len(c.Buckets) == 0 {
		return
	}
	// The run's length: its last index's buckets (at the end) hold its
	// last steps.
	last := c.Buckets[len(c.Buckets)-1].Index
	n := int64(last) * c.Width
	for i := len(c.Buckets) - 1; i >= 0 && c.Buckets[i].Index == last; i-- {
		n += int64(c.Buckets[i].N)
	}
	a.steps = max(a.steps, n)
	k0 := level(c.Width)
	// From level kw on the run is one bucket (index 0): its cells are the
	// same at every wider width, and so, once every run folded so far is
	// one bucket, are the levels. Only levels up to the highest such level
	// of the family's runs (top) are kept; Line reads a wider one there.
	kw := k0 + bits.Len64(uint64(c.Buckets[len(c.Buckets)-1].Index))
	if a.top >= 0 {
		for k := a.top + 1; k <= kw; k++ {
			a.levels[k] = cloneLevel(a.levels[a.top])
		}
	}
	top := max(a.top, kw)
	// Levels narrower than the widest run's are never read again: the
	// line is read at the widest width.
	from := max(k0, level(a.width))
	for k := range from {
		a.levels[k] = nil
	}
	for k := from; k <= top; k++ {
		if k <= kw || k == from {
			a.coarsen(c, uint(min(k, kw)-k0))
		}
		a.add(k)
	}
	a.top = top
}

// level is the power of two of a bucket width.
func level(width int64) int {
	k := 0
	for int64(1)<<k < width {
		k++
	}
	return k
}

// cloneLevel copies the cells of one width.
func cloneLevel(lv [][]cell) [][]cell {
	out := make([][]cell, len(lv))
	for i, cells := range lv {
		out[i] = slices.Clone(cells)
	}
	return out
}

// coarsen fills a.run with the run's buckets at 2^shift times its width,
// summing its buckets in order as Merge always did, in order of index and
// then of the label's first step in the bucket.
//
// A label's cell at the current index is found through a.at in one step:
// a scan of the index's cells cost labels² per bucket, and a run of 100,000
// labels spent most of its time there (issue 16).
func (a *Accumulator) coarsen(c Curve, shift uint) {
	a.run = a.run[:0]
	for n := len(a.labels); len(a.at) < n; {
		a.at = append(a.at, 0)
		a.atIdx = append(a.atIdx, -1)
	}
	for _, li := range a.local {
		if li >= 0 {
			a.atIdx[li] = -1
		}
	}
	for _, b := range c.Buckets {
		idx := int64(b.Index) >> shift
		li := a.local[b.Label]
		if a.atIdx[li] != idx {
			a.atIdx[li], a.at[li] = idx, len(a.run)
			a.run = append(a.run, runCell{idx: idx, label: li, min: b.Min, max: b.Max})
		}
		r := &a.run[a.at[li]]
		r.n += int64(b.N)
		r.sum += b.Sum
		r.min = math.Min(r.min, b.Min)
		r.max = math.Max(r.max, b.Max)
	}
}

// add folds a.run into the buckets of width 2^k.
func (a *Accumulator) add(k int) {
	lv := a.levels[k]
	group := 0 // a.run[i:group] share r.idx (coarsen fills it in order of index)
	for i := range a.run {
		r := &a.run[i]
		for int64(len(lv)) <= r.idx {
			lv = append(lv, nil)
		}
		cells := lv[r.idx]
		if i >= group {
			for group = i + 1; group < len(a.run) && a.run[group].idx == r.idx; group++ {
			}
			if len(cells) == 0 {
				// A bucket's first run: its cells at once, not grown
				// one insertion at a time (a run of 100,000 labels
				// spent a twentieth of its job there).
				cells = make([]cell, 0, group-i)
			}
		}
		j, _ := slices.BinarySearchFunc(cells, r.label, func(c cell, l int32) int { return cmp.Compare(c.label, l) })
		if j == len(cells) || cells[j].label != r.label {
			cells = slices.Insert(cells, j, cell{label: r.label, min: r.min, max: r.max})
			lv[r.idx] = cells
		}
		c := &cells[j]
		m := r.sum / float64(r.n)
		c.runs++
		c.sum += m
		d := m - c.wmean
		c.wmean += d / float64(c.runs)
		c.m2 += float64(d * (m - c.wmean))
		c.min = math.Min(c.min, r.min)
		c.max = math.Max(c.max, r.max)
	}
	a.levels[k] = lv
}

// Line is the family's line: at the widest width of the runs folded in
// (the last bucket ending with the longest run, not a width past it),
// per bucket and label (in order of index, then of the label's first
// appearance over the runs), the mean across runs of each run's mean
// reward, its 95 % Student-t band, and the extremes.
func (a *Accumulator) Line() Line {
	ln := Line{Width: a.width}
	if a.runs == 0 || a.width == 0 || a.top < 0 {
		return ln
	}
	for idx, cells := range a.levels[min(level(a.width), a.top)] {
		for _, c := range cells {
			p := Point{Label: a.labels[c.label], Start: int64(idx) * a.width, End: min(int64(idx+1)*a.width, a.steps), Runs: int(c.runs), Min: c.min, Max: c.max}
			p.Mean = c.sum / float64(c.runs)
			if c.runs < 2 {
				p.BandLow, p.BandHigh = protocol.None(ReasonOneRun), protocol.None(ReasonOneRun)
			} else {
				sd := math.Sqrt(c.m2 / float64(c.runs-1))
				h := TQuantile975(int(c.runs)-1) * sd / math.Sqrt(float64(c.runs))
				p.BandLow, p.BandHigh = protocol.Finite(p.Mean-h), protocol.Finite(p.Mean+h)
			}
			ln.Points = append(ln.Points, p)
		}
	}
	return ln
}

// TQuantile975 is the 0.975 quantile of Student's t with df degrees of
// freedom (stats.StudentTQuantile: the same bits on every machine). A
// family's line asks it at every point for the same few df (seeds − 1):
// each is kept once computed (the same float64), the first 64 in an array,
// larger ones in a map (at df 1000 one quantile costs about 60 µs).
func TQuantile975(df int) float64 {
	if df >= 0 && df < len(tq975) {
		if b := tq975[df].Load(); b != 0 {
			return math.Float64frombits(b)
		}
		q := tQuantile975(df)
		tq975[df].Store(math.Float64bits(q))
		return q
	}
	if q, ok := tq975More.Load(df); ok {
		return q.(float64)
	}
	q := tQuantile975(df)
	tq975More.Store(df, q)
	return q
}

// tq975 holds the bits of TQuantile975(df) once computed (0: not yet; no
// quantile has the bits 0); tq975More the quantiles of larger df.
var (
	tq975     [64]atomic.Uint64
	tq975More sync.Map
)

func tQuantile975(df int) float64 {
	return stats.StudentTQuantile(0.975, df)
}
