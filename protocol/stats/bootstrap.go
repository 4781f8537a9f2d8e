package stats

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"
)

// FNV-1a 64-bit parameters.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// SeedFor derives the bootstrap seed of one piece of work from the run's base
// seed and the names that identify the work (family, metric, …). It is the
// 64-bit FNV-1a hash of the bytes
//
//	decimal(base) 0x00 parts[0] 0x00 parts[1] …
//
// where decimal(base) is base written in base 10 without sign or leading
// zeros ("0" for zero), and each part is preceded by one NUL byte. The seed
// therefore depends only on the base and the names, never on the order in
// which the work is done.
func SeedFor(base uint64, parts ...string) uint64 {
	var buf [20]byte
	h := uint64(fnvOffset64)
	for _, c := range strconv.AppendUint(buf[:0], base, 10) {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	for _, p := range parts {
		h *= fnvPrime64 // the NUL separator: h ^= 0 is a no-op
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= fnvPrime64
		}
	}
	return h
}

// Statistic is a function that the bootstrap evaluates on every resample.
// Build one with NewStatistic or NewSortedStatistic, or use StatMean and
// StatIQM.
type Statistic struct {
	name   string
	sorted bool
	fn     func([]float64) float64
	kind   statKind
}

// statKind lets the bootstrap compute its own statistics without
// materializing each resample; the results are identical to calling fn.
type statKind uint8

const (
	kindCustom statKind = iota
	kindMean
	kindIQM
)

// NewStatistic wraps fn, which receives each resample in draw order. fn may
// reorder the slice but must not keep it: it is a scratch buffer that the
// next resample overwrites. fn must not return NaN (the bootstrap panics).
func NewStatistic(name string, fn func(resample []float64) float64) Statistic {
	return Statistic{name: name, fn: fn}
}

// NewSortedStatistic wraps fn, which receives each resample sorted
// ascending. The bootstrap sorts by counting how often each value was drawn,
// so order statistics (median, trimmed means) cost O(n) per resample instead
// of a sort. The same rules as for NewStatistic apply.
func NewSortedStatistic(name string, fn func(sortedResample []float64) float64) Statistic {
	return Statistic{name: name, sorted: true, fn: fn}
}

// Name is the name the statistic was built with.
func (s Statistic) Name() string { return s.name }

// The statistics of the skyfall family table.
var (
	// StatMean is Mean of the resample, summed in draw order.
	StatMean = Statistic{name: "mean", fn: Mean, kind: kindMean}
	// StatIQM is IQM of the resample: sorted ascending, ⌊n/4⌋ values dropped
	// at each end, the rest summed in ascending order.
	StatIQM = Statistic{name: "iqm", sorted: true, fn: trimmedMeanSorted, kind: kindIQM}
)

// Interval is a confidence interval, Lo ≤ Hi.
type Interval struct {
	Lo, Hi float64
}

// indexSource draws uniform indices from Go's PCG generator exactly as
// (*rand.Rand).IntN does on 64-bit platforms; it is spelled out here so that
// 32-bit builds, where IntN takes another path, draw the same indices. The
// generator is rand.PCG's (a 128-bit LCG with the DXSM output function),
// spelled out too so that the bootstrap's loop keeps its state in registers:
// through rand.PCG's methods it went to memory and back on every draw.
type indexSource struct {
	hi, lo uint64 // the state of rand.PCG after Seed(seed, 0)
}

func newIndexSource(seed uint64) indexSource {
	return indexSource{hi: seed}
}

// The constants of rand.PCG.
const (
	pcgMulHi    = 2549297995355413924
	pcgMulLo    = 4865540595714422341
	pcgIncHi    = 6364136223846793005
	pcgIncLo    = 1442695040888963407
	pcgCheapMul = 0xda942042e4dd58b5
)

// pcgNext is rand.PCG's step from state (hi, lo): the next state and the
// output (*rand.PCG).Uint64 returns with it.
func pcgNext(hi, lo uint64) (nhi, nlo, out uint64) {
	// state = state * mul + inc
	nhi, nlo = bits.Mul64(lo, pcgMulLo)
	nhi += hi*pcgMulLo + lo*pcgMulHi
	nlo, c := bits.Add64(nlo, pcgIncLo, 0)
	nhi, _ = bits.Add64(nhi, pcgIncHi, c)
	// DXSM "double xorshift multiply"
	out = nhi ^ nhi>>32
	out *= pcgCheapMul
	out ^= out >> 48
	out *= nlo | 1
	return nhi, nlo, out
}

// uint64 is (*rand.PCG).Uint64.
func (s *indexSource) uint64() uint64 {
	var out uint64
	s.hi, s.lo, out = pcgNext(s.hi, s.lo)
	return out
}

// intN returns a uniform integer in [0, n), n ≥ 1.
func (s *indexSource) intN(n uint64) uint64 {
	if n&(n-1) == 0 { // a power of two (including 1): keep the low bits
		return s.uint64() & (n - 1)
	}
	hi, lo := bits.Mul64(s.uint64(), n)
	if lo < n {
		hi = s.reject(n, hi, lo)
	}
	return hi
}

// reject finishes intN's draw when the first product's low word fell
// below n (rarely: with probability n/2⁶⁴): Lemire's method redraws while
// it is below 2⁶⁴ mod n.
func (s *indexSource) reject(n, hi, lo uint64) uint64 {
	thresh := -n % n
	for lo < thresh {
		hi, lo = bits.Mul64(s.uint64(), n)
	}
	return hi
}

// BootstrapCI is the percentile-bootstrap confidence interval of stat over xs
// at the given level (0.95 for a 95 % interval), from the given number of
// resamples drawn with the PRNG seeded by seed (see SeedFor). The procedure is
// spelled out in the package documentation. It panics when xs is empty or
// holds a NaN or an infinity, when resamples < 1, when level is not strictly
// between 0 and 1, or when stat is the zero Statistic.
func BootstrapCI(xs []float64, stat Statistic, resamples int, seed uint64, level float64) (lo, hi float64) {
	iv := BootstrapCIs(xs, []Statistic{stat}, resamples, seed, level)
	return iv[0].Lo, iv[0].Hi
}

// BootstrapCIs computes the intervals of several statistics from one set of
// resamples: the result for stats[i] is identical to
// BootstrapCI(xs, stats[i], resamples, seed, level), at the cost of one
// series of draws instead of len(stats).
func BootstrapCIs(xs []float64, stats []Statistic, resamples int, seed uint64, level float64) []Interval {
	iv, _ := BootstrapCIsUntil(xs, stats, resamples, seed, level, nil)
	return iv
}

// stopEvery is how many resamples BootstrapCIsUntil draws between two calls
// of stop.
const stopEvery = 16

// BootstrapCIsUntil is BootstrapCIs that gives up when stop (if not nil)
// returns true, asked before every 16th resample: ok is then false and the
// intervals are nil. A caller that cancels its work (a job told to stop)
// passes stop so that one large bootstrap does not outlive it by seconds;
// stop does not change a completed result.
func BootstrapCIsUntil(xs []float64, stats []Statistic, resamples int, seed uint64, level float64, stop func() bool) (iv []Interval, ok bool) {
	n := len(xs)
	switch {
	case n == 0:
		panic("stats.BootstrapCI of no values")
	case resamples < 1:
		panic("stats.BootstrapCI needs at least one resample")
	case !(level > 0 && level < 1):
		panic("stats.BootstrapCI level must lie strictly between 0 and 1")
	}
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			panic("stats.BootstrapCI of a non-finite value")
		}
	}
	var inOrder, sorted, custom bool
	for _, st := range stats {
		if st.fn == nil {
			panic("stats.BootstrapCI of the zero Statistic")
		}
		custom = custom || st.kind == kindCustom
		switch {
		case st.kind == kindMean:
		case st.sorted:
			sorted = true
		default:
			inOrder = true
		}
	}
	if iv, ok := constantCIs(xs, stats); ok {
		return iv, true
	}

	// For sorted statistics, a resample is sorted by counting how often
	// each value was drawn: pos[i] is where xs[i] sits in sortedXs, and
	// counts[p] how often sortedXs[p] was drawn.
	var sortedXs []float64
	var pos, counts []int32
	if sorted {
		order := make([]int32, n)
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(xs[a], xs[b]) })
		sortedXs = make([]float64, n)
		pos = make([]int32, n)
		for p, i := range order {
			sortedXs[p] = xs[i]
			pos[i] = int32(p)
		}
		counts = make([]int32, n)
	}
	cut := n / 4 // the IQM drops positions [0, cut) and [n−cut, n)

	bufs := bootstrapBufs.Get().(*bootstrapBuffers)
	defer bootstrapBufs.Put(bufs)
	draw := grow(&bufs.draw, n)           // the resample in draw order
	sortedRes := grow(&bufs.sortedRes, n) // the resample sorted
	scratch := grow(&bufs.scratch, n)     // what a custom statistic may reorder
	values := grow(&bufs.values, len(stats)*resamples)
	var walk []float64 // trimmedMeanCounts' sorted resample
	if sorted {
		walk = grow(&bufs.walk, n+4)
	}
	src := newIndexSource(seed)
	var stream *drawStream // the same draws, where its refill is vectorised
	if useDrawStream {
		stream = &bufs.stream
		stream.reset(seed)
	}
	pow2 := n&(n-1) == 0
	if stream != nil && !custom && n <= chunkMax {
		if !bootstrapChunks(stream, xs, stats, resamples, sortedXs, pos, values, pow2, stop, bufs) {
			return nil, false
		}
		return percentileIntervals(values, stats, resamples, level), true
	}
	materialized := false
	for b := 0; b < resamples; b++ {
		if stop != nil && b%stopEvery == 0 && stop() {
			return nil, false
		}
		if sorted {
			clear(counts)
		}
		var sum float64 // the draw-order sum of StatMean
		switch {
		case inOrder && stream != nil:
			sum = stream.resample(xs, pow2, draw, pos, counts)
		case inOrder:
			sum = src.resample(xs, pow2, draw, pos, counts)
		case sorted && stream != nil:
			sum = stream.resampleCounts(xs, pow2, pos, counts)
		case sorted:
			sum = src.resampleCounts(xs, pow2, pos, counts)
		case stream != nil:
			sum = stream.resampleSum(xs, pow2)
		default:
			sum = src.resampleSum(xs, pow2)
		}
		materialized = false
		for s, st := range stats {
			var v float64
			switch st.kind {
			case kindMean:
				v = sum / float64(n)
			case kindIQM:
				if n <= smallIQM {
					v = trimmedMeanCountsSmall(sortedXs, counts, cut, walk)
				} else {
					v = trimmedMeanCounts(sortedXs, counts, cut, walk)
				}
			default:
				if st.sorted {
					if !materialized {
						k := 0
						for p, c := range counts {
							for ; c > 0; c-- {
								sortedRes[k] = sortedXs[p]
								k++
							}
						}
						materialized = true
					}
					copy(scratch, sortedRes)
				} else {
					copy(scratch, draw)
				}
				v = st.fn(scratch)
				if math.IsNaN(v) {
					panic("stats.BootstrapCI: statistic " + st.name + " returned NaN")
				}
			}
			values[s*resamples+b] = v
		}
	}
	return percentileIntervals(values, stats, resamples, level), true
}

// percentileIntervals is the interval of each statistic from its
// resamples' values (values[s*resamples:(s+1)*resamples] for stats[s]).
func percentileIntervals(values []float64, stats []Statistic, resamples int, level float64) []Interval {
	qlo, qhi := (1-level)/2, (1+level)/2
	out := make([]Interval, len(stats))
	for s := range stats {
		v := values[s*resamples : (s+1)*resamples]
		out[s].Lo, out[s].Hi = quantilePairSelect(v, qlo, qhi)
	}
	return out
}

// chunkMax is the largest sample whose bootstrap of built-in statistics
// draws its resamples stopEvery at a time (bootstrapChunks) from the draw
// stream, each resample's IQM looked up in a table of (n+1)^n entries
// (iqmTable: 117,649 at 6 values, 941 KB kept in the pool, of which 462
// entries are written; at 7 it would be 16 MB). At 10 values the
// per-resample loop was faster (the mean's CI 5 % slower in chunks;
// docs/performance-history.md).
const chunkMax = 6

// bootstrapChunks is BootstrapCIsUntil's loop for a few values (n ≤
// chunkMax) and built-in statistics only (StatMean, StatIQM), where the
// stream draws: the resamples are drawn stopEvery at a time
// (drawStream.resampleChunk), instead of one call and one look at the
// buffer per resample of n draws, and each resample's IQM is read from a
// table of every multiset's (iqmTable), built once per call. The draws and
// the sums (in draw order) are the per-resample loop's, and the table's
// IQMs are computed from counts as it computes them, so are the values
// written to values; stop is asked before every stopEvery-th resample, as
// there. ok is false when stop said to stop.
func bootstrapChunks(stream *drawStream, xs []float64, stats []Statistic, resamples int, sortedXs []float64, pos []int32, values []float64, pow2 bool, stop func() bool, bufs *bootstrapBuffers) (ok bool) {
	n := len(xs)
	var sums, iqmBuf [stopEvery]float64
	var iqms []float64 // nil: no IQM asked
	iq := chunkIQM{sortedXs: sortedXs, pos: pos}
	if sortedXs != nil {
		iqms = iqmBuf[:]
		size := 1
		for range n {
			size *= n + 1
		}
		iq.table = grow(&bufs.iqmTable, size)
		byPos := iqmTable(sortedXs, iq.table)
		var weights [chunkMax]uint32
		iq.weights = weights[:n]
		for j, p := range pos {
			iq.weights[j] = byPos[p]
		}
	}
	for b0 := 0; b0 < resamples; b0 += stopEvery {
		if stop != nil && stop() {
			return false
		}
		m := min(stopEvery, resamples-b0)
		if iqms != nil {
			iqms = iqmBuf[:m]
		}
		stream.resampleChunk(xs, pow2, &iq, sums[:m], iqms)
		for s, st := range stats {
			v := values[s*resamples+b0 : s*resamples+b0+m]
			if st.kind == kindMean {
				for r := range v {
					v[r] = sums[r] / float64(n)
				}
			} else { // kindIQM
				copy(v, iqms)
			}
		}
	}
	return true
}

// The draws of one resample: len(xs) indices j drawn one after another by
// intN(len(xs)) (pow2 says whether len(xs) is a power of two), returning
// the sum of the xs[j] in draw order. resample also writes the values in
// draw order to draw and, when counts is not nil, counts how often each
// sorted position was drawn (counts[pos[j]]++); resampleCounts does the
// latter only, resampleSum neither. They are intN inlined by hand, with the
// generator's state in locals: the three loops are the bootstrap's cost.
// Where AVX-512 is available, drawStream's loops of the same names draw
// the same indices from a buffer that a vectorised generator fills
// (draws.go).
func (s *indexSource) resample(xs []float64, pow2 bool, draw []float64, pos, counts []int32) float64 {
	un := uint64(len(xs))
	hi, lo := s.hi, s.lo
	sum := 0.0
	for i := range draw {
		var r, j uint64
		hi, lo, r = pcgNext(hi, lo)
		if pow2 {
			j = r & (un - 1)
		} else if j, r = bits.Mul64(r, un); r < un {
			s.hi, s.lo = hi, lo
			j = s.reject(un, j, r)
			hi, lo = s.hi, s.lo
		}
		x := xs[j]
		sum += x
		draw[i] = x
		if counts != nil {
			counts[pos[j]]++
		}
	}
	s.hi, s.lo = hi, lo
	return sum
}

func (s *indexSource) resampleCounts(xs []float64, pow2 bool, pos, counts []int32) float64 {
	un := uint64(len(xs))
	pos = pos[:len(xs)]
	hi, lo := s.hi, s.lo
	sum := 0.0
	for range xs {
		var r, j uint64
		hi, lo, r = pcgNext(hi, lo)
		if pow2 {
			j = r & (un - 1)
		} else if j, r = bits.Mul64(r, un); r < un {
			s.hi, s.lo = hi, lo
			j = s.reject(un, j, r)
			hi, lo = s.hi, s.lo
		}
		sum += xs[j]
		counts[pos[j]]++
	}
	s.hi, s.lo = hi, lo
	return sum
}

func (s *indexSource) resampleSum(xs []float64, pow2 bool) float64 {
	un := uint64(len(xs))
	hi, lo := s.hi, s.lo
	sum := 0.0
	for range xs {
		var r, j uint64
		hi, lo, r = pcgNext(hi, lo)
		if pow2 {
			j = r & (un - 1)
		} else if j, r = bits.Mul64(r, un); r < un {
			s.hi, s.lo = hi, lo
			j = s.reject(un, j, r)
			hi, lo = s.hi, s.lo
		}
		sum += xs[j]
	}
	s.hi, s.lo = hi, lo
	return sum
}

// constantCIs is the result of the bootstrap of built-in statistics over
// values that are all equal, without drawing: every resample is then n
// copies of x, whatever the indices drawn, so every resample gives the same
// statistic v (the mean: x added n times from 0 in one accumulator, divided
// by n; the IQM: x added n−2⌊n/4⌋ times, divided by that count), and the
// percentile interval of equal values is [v, v] (numpy's lerp of v and v is
// v). Those are the very operations the draws would do, so the result is
// the same to the bit; no state is shared between bootstraps (each has its
// seed), so skipping the draws changes no other result. Constant metrics
// are common (a solve rate of 1 for every seed, no invalid action, and the
// baseline's paired differences with itself). ok is false when a value
// differs or a statistic is not built in (a custom one is called on every
// resample).
func constantCIs(xs []float64, stats []Statistic) (iv []Interval, ok bool) {
	x := xs[0]
	for _, y := range xs {
		if y != x { // ±0 count as equal: either way every sum is +0
			return nil, false
		}
	}
	for _, st := range stats {
		if st.kind != kindMean && st.kind != kindIQM {
			return nil, false
		}
	}
	n := len(xs)
	repeat := func(k int) float64 {
		s := 0.0
		for range k {
			s += x
		}
		return s / float64(k)
	}
	iv = make([]Interval, len(stats))
	for s, st := range stats {
		v := repeat(n)
		if st.kind == kindIQM {
			v = repeat(n - 2*(n/4))
		}
		iv[s] = Interval{v, v}
	}
	return iv, true
}

// bootstrapBuffers are the scratch slices of one BootstrapCIs call, kept
// for the next (a family table makes hundreds of calls of the same sizes):
// every element is written before it is read, so reuse changes no result.
type bootstrapBuffers struct {
	draw, sortedRes, scratch, values, walk []float64
	iqmTable                               []float64  // bootstrapChunks' (iqmTable: read only where written)
	stream                                 drawStream // reset before use
}

var bootstrapBufs = sync.Pool{New: func() any { return new(bootstrapBuffers) }}

// grow returns (*buf)[:n], reallocating *buf when it is shorter.
func grow(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	return (*buf)[:n]
}

// trimmedMeanCounts is trimmedMeanSorted of the sorted resample that holds
// counts[p] copies of sortedXs[p]: the values at positions cut … n−cut−1
// are summed in ascending order. It writes the sorted resample's positions
// from about cut to n−cut−1 to buf (len(buf) ≥ n+4): four copies of each value
// whatever its count, the next value starting where its copies end, so that
// the loop takes no branch on the counts (a branch taken at random, about a
// third of the values being drawn no time, cost more than the writes).
func trimmedMeanCounts(sortedXs []float64, counts []int32, cut int, buf []float64) float64 {
	n := len(sortedXs)
	end := n - cut
	buf = buf[:n+4]
	counts = counts[:n]
	// Skip the values whose copies all lie before cut: p is then the
	// first value with a copy at cut or after, its first copy at base.
	p, base := 0, 0
	for base+int(counts[p]) <= cut {
		base += int(counts[p])
		p++
	}
	// buf[i] is position base+i of the sorted resample.
	k := 0
	for ; base+k < end; p++ {
		c, x := int(counts[p]), sortedXs[p]
		b := buf[k : k+4 : k+4]
		b[0], b[1], b[2], b[3] = x, x, x, x
		for i := 4; i < c; i++ { // rare: a Poisson(1) count exceeds 4 2 % of the time
			buf[k+i] = x
		}
		k += c
	}
	s := 0.0
	for _, x := range buf[cut-base : end-base] {
		s += x
	}
	return s / float64(end-cut)
}

// smallIQM is the largest sample for which the bootstrap's IQM writes the
// whole sorted resample (trimmedMeanCountsSmall) instead of skipping to cut.
const smallIQM = 32

// trimmedMeanCountsSmall is trimmedMeanCounts (the same sum, in the same
// order) by loops whose trip counts do not depend on the counts: every
// value's copies are written, from the first (four copies whatever the
// count, the next value starting where its copies end), then positions
// cut … n−cut−1 summed. For a few values, where a resample costs a few
// draws, the mispredicted exits of the loops over the counts cost more
// than writing the values before cut.
func trimmedMeanCountsSmall(sortedXs []float64, counts []int32, cut int, buf []float64) float64 {
	n := len(sortedXs)
	buf = buf[:n+4]
	counts = counts[:n]
	k := 0
	for p, x := range sortedXs {
		c := int(counts[p])
		b := buf[k : k+4 : k+4]
		b[0], b[1], b[2], b[3] = x, x, x, x
		for i := 4; i < c; i++ {
			buf[k+i] = x
		}
		k += c
	}
	s := 0.0
	for _, x := range buf[cut : n-cut] {
		s += x
	}
	return s / float64(n-2*cut)
}
