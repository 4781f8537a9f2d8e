package stats

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// ProbImprovementCI is the percentile-bootstrap confidence interval of
// ProbImprovement(x, y) at the given level, from a stratified bootstrap as
// rliable draws it (StratifiedIndependentBootstrap): every resample draws
// len(x) values of x and len(y) values of y with replacement, the two
// samples independently of each other, and evaluates ProbImprovement on the
// pair. One PRNG seeded by seed (see SeedFor) draws, per resample, the
// len(x) indices into x first and then the len(y) indices into y, each
// index as BootstrapCI draws one (the package documentation, steps 1–3);
// the interval is Quantile of the sorted statistics at (1−level)/2 and
// (1+level)/2, as for BootstrapCI.
//
// Each resample's statistic is counted exactly (integers of pairs greater
// and equal, as ProbImprovement counts them) in O(len(x)+len(y)), without
// materializing the pairs. It panics when x or y is empty or holds a NaN or
// an infinity, when resamples < 1, or when level is not strictly between 0
// and 1.
func ProbImprovementCI(x, y []float64, resamples int, seed uint64, level float64) (lo, hi float64) {
	lo, hi, _ = ProbImprovementCIUntil(x, y, resamples, seed, level, nil)
	return lo, hi
}

// ProbImprovementCIUntil is ProbImprovementCI that gives up when stop (if
// not nil) returns true, asked before every 16th resample: ok is then
// false. stop does not change a completed result. When every resample's
// statistic is the same (every x above every y, or below, or one value on
// both sides: separated), the interval is that value, found without a draw
// and without asking stop.
//
// Per resample, x's draws are kept as positions in x sorted and y's are
// counted per position in y sorted (prefix counts); then the pairs greater
// are Σ over x's draws of (y drawn below it) and the pairs equal Σ (y drawn
// equal to it): the integers ProbImprovement counts. The draws run with
// the generator's state in locals (issue 16: half the CPU of intN per
// draw and x's indices kept as they were drawn).
func ProbImprovementCIUntil(x, y []float64, resamples int, seed uint64, level float64, stop func() bool) (lo, hi float64, ok bool) {
	n, m := len(x), len(y)
	switch {
	case n == 0 || m == 0:
		panic("stats.ProbImprovementCI of no values")
	case resamples < 1:
		panic("stats.ProbImprovementCI needs at least one resample")
	case !(level > 0 && level < 1):
		panic("stats.ProbImprovementCI level must lie strictly between 0 and 1")
	}
	for _, v := range [][]float64{x, y} {
		for _, a := range v {
			if math.IsNaN(a) || math.IsInf(a, 0) {
				panic("stats.ProbImprovementCI of a non-finite value")
			}
		}
	}
	sortedX, posX := sortedPositions(x)
	sortedY, posY := sortedPositions(y)
	if v, ok := separated(sortedX, sortedY); ok {
		return v, v, true
	}
	// below[p] and upTo[p] count the sorted y values < and ≤ sortedX[p].
	below := make([]int32, n)
	upTo := make([]int32, n)
	for p, a := range sortedX {
		lt, _ := slices.BinarySearchFunc(sortedY, a, func(b, a float64) int {
			if b < a {
				return -1
			}
			return 1
		})
		le, _ := slices.BinarySearchFunc(sortedY, a, func(b, a float64) int {
			if b <= a {
				return -1
			}
			return 1
		})
		below[p], upTo[p] = int32(lt), int32(le)
	}
	// Without a value of x equal to one of y (the usual case), no pair is
	// equal and x's draws are recorded as below[posX[j]] at once. With
	// ties, they are recorded as below and upTo of x[j] packed in one word
	// (below in the low half): one lookup per draw either way, then one or
	// two of the prefix counts.
	ties := !slices.Equal(below, upTo)
	var belowX []int32
	var boundsX []uint64
	if !ties {
		belowX = make([]int32, n)
		for i, p := range posX {
			belowX[i] = below[p]
		}
	} else {
		boundsX = make([]uint64, n)
		for i, p := range posX {
			boundsX[i] = uint64(below[p]) | uint64(upTo[p])<<32
		}
	}

	// countY[p+1] counts the draws of sortedY[p]; then, summed in place,
	// countY[p] counts the draws of the sorted positions < p (at most m,
	// an int32: positions are).
	bufs := probImprovementBufs.Get().(*probImprovementBuffers)
	defer probImprovementBufs.Put(bufs)
	var drawX []int32
	var drawB []uint64
	if ties {
		drawB = growUint64(&bufs.drawB, n)
	} else {
		drawX = growInt32(&bufs.drawX, n)
	}
	countY := growInt32(&bufs.countY, m+1)
	values := grow(&bufs.values, resamples)
	pairs := float64(n) * float64(m)
	src := newIndexSource(seed)
	var stream *drawStream // the same draws, where its refill is vectorised
	if useDrawStream {
		stream = &bufs.stream
		stream.reset(seed)
	}
	for b := range values {
		if stop != nil && b%stopEvery == 0 && stop() {
			return 0, 0, false
		}
		clear(countY)
		switch {
		case stream != nil && ties:
			drawPositions(stream, boundsX, drawB)
		case stream != nil:
			drawPositions(stream, belowX, drawX)
		case ties:
			drawPositionsScalar(&src, boundsX, drawB)
		default:
			drawPositionsScalar(&src, belowX, drawX)
		}
		if stream != nil {
			stream.countDraws(posY, countY[1:])
		} else {
			src.countDraws(posY, countY[1:])
		}
		var c int32
		for p := 1; p <= m; p++ {
			c += countY[p]
			countY[p] = c
		}
		var gt, eq int64
		if ties {
			for _, v := range drawB {
				l, u := int64(countY[uint32(v)]), int64(countY[v>>32])
				gt += l
				eq += u - l
			}
		} else {
			for _, l := range drawX {
				gt += int64(countY[l])
			}
		}
		values[b] = (float64(gt) + float64(0.5*float64(eq))) / pairs
	}
	lo, hi = quantilePairSelect(values, (1-level)/2, (1+level)/2)
	return lo, hi, true
}

// separated says whether every resample of ProbImprovementCI on x and y
// (sortedX and sortedY, ascending) has the same statistic, and which: 1
// when every x lies above every y, 0 when every x lies below, ½ when all
// values are one (a constant metric on both sides, or the baseline's
// constant metric against itself). Each resample's pairs are then all
// greater, all less or all equal, so its value is (n·m)/(n·m), 0/(n·m) or
// ½(n·m)/(n·m) in the loop's float64 arithmetic: float64(int64(n·m)) and
// float64(n)·float64(m) are both n·m rounded once, so the quotients are
// exactly 1, 0 and ½, and the percentile interval of equal values is
// [v, v] (lerp of v and v is v). The draws would give those very bits, and
// no state is shared between bootstraps (each has its seed), so skipping
// them changes no other result: constantCIs' reasoning for the
// probability of improvement (issue 16: in bench/scalegen's sweeps, a
// quarter to a half of these cells compare a constant metric; real sweeps
// have them too, e.g. a success rate of 0 in every run).
func separated(sortedX, sortedY []float64) (v float64, ok bool) {
	xlo, xhi := sortedX[0], sortedX[len(sortedX)-1]
	ylo, yhi := sortedY[0], sortedY[len(sortedY)-1]
	switch {
	case xlo > yhi:
		return 1, true
	case xhi < ylo:
		return 0, true
	case xlo == xhi && ylo == yhi && xlo == ylo: // ±0 are equal, as the loop counts them
		return 0.5, true
	}
	return 0, false
}

// sortedPositions is vs sorted (stable) and where each vs[i] sits in it.
func sortedPositions(vs []float64) (sorted []float64, pos []int32) {
	order := make([]int32, len(vs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(vs[a], vs[b]) })
	sorted = make([]float64, len(vs))
	pos = make([]int32, len(vs))
	for p, i := range order {
		sorted[p] = vs[i]
		pos[i] = int32(p)
	}
	return sorted, pos
}

// countDraws draws len(pos) indices j in [0, len(pos)), as intN does, and
// counts each at counts[pos[j]]: intN inlined by hand, the generator's
// state in locals, as resampleCounts.
func (s *indexSource) countDraws(pos, counts []int32) {
	un := uint64(len(pos))
	pow2 := un&(un-1) == 0
	hi, lo := s.hi, s.lo
	for range pos {
		var r, j uint64
		hi, lo, r = pcgNext(hi, lo)
		if pow2 {
			j = r & (un - 1)
		} else if j, r = bits.Mul64(r, un); r < un {
			s.hi, s.lo = hi, lo
			j = s.reject(un, j, r)
			hi, lo = s.hi, s.lo
		}
		counts[pos[j]]++
	}
	s.hi, s.lo = hi, lo
}

// drawPositionsScalar is drawPositions by indexSource: len(out) indices j
// in [0, len(pos)), as intN does, pos[j] of each written to out in draw
// order.
func drawPositionsScalar[T int32 | uint64](s *indexSource, pos, out []T) {
	un := uint64(len(pos))
	pow2 := un&(un-1) == 0
	hi, lo := s.hi, s.lo
	for i := range out {
		var r, j uint64
		hi, lo, r = pcgNext(hi, lo)
		if pow2 {
			j = r & (un - 1)
		} else if j, r = bits.Mul64(r, un); r < un {
			s.hi, s.lo = hi, lo
			j = s.reject(un, j, r)
			hi, lo = s.hi, s.lo
		}
		out[i] = pos[j]
	}
	s.hi, s.lo = hi, lo
}

// probImprovementBuffers are the scratch slices of one
// ProbImprovementCIUntil call, kept for the next as bootstrapBuffers are
// (every element is written before it is read: countY is cleared per
// resample, the others written in full).
type probImprovementBuffers struct {
	drawX, countY []int32
	drawB         []uint64
	values        []float64
	stream        drawStream // reset before use
}

var probImprovementBufs = sync.Pool{New: func() any { return new(probImprovementBuffers) }}

func growInt32(buf *[]int32, n int) []int32 {
	if cap(*buf) < n {
		*buf = make([]int32, n)
	}
	return (*buf)[:n]
}

func growUint64(buf *[]uint64, n int) []uint64 {
	if cap(*buf) < n {
		*buf = make([]uint64, n)
	}
	return (*buf)[:n]
}
