package stats

import "math/bits"

// drawStream is indexSource's generator run ahead: the same outputs, in the
// same order, computed a block at a time by pcgLanesN interleaved lanes and
// read from a buffer. rand.PCG's step is an affine map of the 128-bit state
// (s ← s·M + C mod 2¹²⁸), so pcgLanesN steps are one too (s ← s·M³² + C₃₂,
// the pcgJump32 constants): lane k holds the state q+k+1 steps from the
// seed, its output is the (q+k+1)-th, and stepping every lane by M³², C₃₂
// moves all of them on by pcgLanesN. Where AVX-512 is available
// (haveAVX512) a refill computes the lanes eight to a vector register
// (pcg_amd64.s), about six times faster than the scalar step, whose
// multiplications all queue for one port; pcgRefillGo is the same
// computation in Go.
//
// The stream holds raw outputs (what (*rand.PCG).Uint64 returns); the index
// draw (intN: the low bits for a power of two, Lemire's product and its
// rare rejection otherwise) is done by the consumer from those outputs, as
// indexSource.intN does from its own, so a rejection simply reads more
// outputs: the indices are indexSource's, draw for draw.
//
// Where AVX-512 is available, drawPositions and countDraws (the
// probability of improvement's draws) also take the index draws of a
// block, from gatherMin outputs on, eight at a time (gatherPositions,
// lemireGather32 and lemireGather64): Lemire's product from two 32×32-bit
// products, and the positions gathered; a group in which a draw may be
// rejected is left to the Go loop, which draws it as intN does. The
// bootstrap's own loops (resample, resampleCounts, resampleSum) keep the
// Go loop: the same kernel there was slower (docs/decisions.md).
//
// The bootstrap uses the stream where the refill is vectorised
// (useDrawStream). Elsewhere indexSource's loops stay faster: in Go the
// lanes do no better than the serial step (the multiplications, not their
// chain, are the limit), and reading the outputs back from a buffer no
// longer overlaps the consumer's work with the generator's.
type drawStream struct {
	lanes    pcgLanes
	pos      int // the next output to read from buf; drawBlock when empty
	buf      [drawBlock]uint64
	gathered [drawBlock]int32 // countDraws' positions of a block's draws
}

// pcgLanes are the states of the stream's lanes, high and low words apart
// (pcg_amd64.s reads them at these offsets).
type pcgLanes struct {
	hi, lo [pcgLanesN]uint64
}

const (
	// pcgLanesN is the number of lanes: four AVX-512 registers of eight.
	pcgLanesN = 32
	// gatherMin is the fewest outputs for which drawPositions and
	// countDraws call gatherPositions (its groups are of eight; below
	// about that, the call costs more than it saves).
	gatherMin = 16
	// drawBlock is how many outputs a refill computes (a multiple of
	// pcgLanesN).
	drawBlock = 512
)

// M³² and C₃₂: 32 steps of rand.PCG's LCG as one (TestPCGJump32 checks them
// against pcgNext).
const (
	pcgJump32MulHi = 0x2c82901ad1cb0cd1
	pcgJump32MulLo = 0x82b631ba6b261781
	pcgJump32IncHi = 0x2284570c5db033e2
	pcgJump32IncLo = 0x7f2b057be5ef9e20
)

// useDrawStream says whether the bootstrap draws from a drawStream rather
// than by indexSource's loops: where the stream's refill is vectorised.
// Both give the same indices; tests set it to run either.
var useDrawStream = haveAVX512

// reset makes d the stream of newIndexSource(seed), rand.PCG after
// Seed(seed, 0), with nothing buffered.
func (d *drawStream) reset(seed uint64) {
	hi, lo := seed, uint64(0)
	for k := range pcgLanesN {
		hi, lo, _ = pcgNext(hi, lo)
		d.lanes.hi[k], d.lanes.lo[k] = hi, lo
	}
	d.pos = drawBlock
}

// dxsm is rand.PCG's output function of the state (hi, lo).
func dxsm(hi, lo uint64) uint64 {
	hi ^= hi >> 32
	hi *= pcgCheapMul
	hi ^= hi >> 48
	hi *= lo | 1
	return hi
}

// pcgJump32 is 32 steps of the LCG from (hi, lo).
func pcgJump32(hi, lo uint64) (nhi, nlo uint64) {
	nhi, nlo = bits.Mul64(lo, pcgJump32MulLo)
	nhi += hi*pcgJump32MulLo + lo*pcgJump32MulHi
	nlo, c := bits.Add64(nlo, pcgJump32IncLo, 0)
	nhi, _ = bits.Add64(nhi, pcgJump32IncHi, c)
	return nhi, nlo
}

// pcgRefillGo writes the lanes' next drawBlock outputs to buf, lane by lane
// within each round (output k of a round is lane k's), and moves the lanes
// on by drawBlock steps.
func pcgRefillGo(st *pcgLanes, buf *[drawBlock]uint64) {
	for i := 0; i < drawBlock; i += pcgLanesN {
		out := buf[i : i+pcgLanesN]
		for k := range out {
			hi, lo := st.hi[k], st.lo[k]
			out[k] = dxsm(hi, lo)
			st.hi[k], st.lo[k] = pcgJump32(hi, lo)
		}
	}
}

// uint64 is the next output: (*rand.PCG).Uint64.
func (d *drawStream) uint64() uint64 {
	if d.pos == drawBlock {
		d.refill()
	}
	r := d.buf[d.pos]
	d.pos++
	return r
}

// intN is indexSource.intN from the stream's outputs: a uniform integer in
// [0, n), n ≥ 1.
func (d *drawStream) intN(n uint64) uint64 {
	if n&(n-1) == 0 {
		return d.uint64() & (n - 1)
	}
	hi, lo := bits.Mul64(d.uint64(), n)
	if lo < n {
		hi = d.reject(n, hi, lo)
	}
	return hi
}

// reject is indexSource.reject from the stream's outputs: it finishes a
// draw whose first product's low word lo fell below n.
func (d *drawStream) reject(n, hi, lo uint64) uint64 {
	thresh := -n % n
	for lo < thresh {
		hi, lo = bits.Mul64(d.uint64(), n)
	}
	return hi
}

// next returns the outputs that the draws of the next left indices (left ≥
// 1) start with: the rest of the buffer, refilled first when empty, or its
// first left outputs. The loops below draw from outs[k] for k < len(outs)
// until a draw's product falls below n; finish completes that draw, which
// may read further, and they ask next again.
func (d *drawStream) next(left int) []uint64 {
	if d.pos == drawBlock {
		d.refill()
	}
	return d.buf[d.pos:min(drawBlock, d.pos+left)]
}

// finish completes the draw that starts with r, the output at pos, whose
// product with n has its low word below n: pos moves past r and reject
// reads on.
func (d *drawStream) finish(n, r uint64) uint64 {
	hi, lo := bits.Mul64(r, n)
	d.pos++
	return d.reject(n, hi, lo)
}

// The draws of one resample from the stream, as indexSource's loops of the
// same names draw them: len(xs) indices j by intN(len(xs)) (pow2 says
// whether len(xs) is a power of two), returning the sum of the xs[j] in
// draw order. resample also writes the values in draw order to draw and,
// when counts is not nil, counts how often each sorted position was drawn
// (counts[pos[j]]++); resampleCounts does the latter only, resampleSum
// neither.
func (d *drawStream) resample(xs []float64, pow2 bool, draw []float64, pos, counts []int32) float64 {
	un := uint64(len(xs))
	sum := 0.0
	draw = draw[:len(xs)]
	for i := 0; i < len(draw); {
		outs := d.next(len(draw) - i)
		k := 0
		if pow2 {
			for ; k < len(outs); k++ {
				x := xs[outs[k]&(un-1)]
				sum += x
				draw[i+k] = x
				if counts != nil {
					counts[pos[outs[k]&(un-1)]]++
				}
			}
		} else {
			for ; k < len(outs); k++ {
				j, lo := bits.Mul64(outs[k], un)
				if lo < un {
					break
				}
				x := xs[j]
				sum += x
				draw[i+k] = x
				if counts != nil {
					counts[pos[j]]++
				}
			}
		}
		d.pos += k
		i += k
		if k < len(outs) {
			j := d.finish(un, outs[k])
			x := xs[j]
			sum += x
			draw[i] = x
			if counts != nil {
				counts[pos[j]]++
			}
			i++
		}
	}
	return sum
}

func (d *drawStream) resampleCounts(xs []float64, pow2 bool, pos, counts []int32) float64 {
	un := uint64(len(xs))
	pos = pos[:len(xs)]
	sum := 0.0
	for left := len(xs); left > 0; {
		outs := d.next(left)
		k := 0
		if pow2 {
			for ; k < len(outs); k++ {
				j := outs[k] & (un - 1)
				sum += xs[j]
				counts[pos[j]]++
			}
		} else {
			for ; k < len(outs); k++ {
				j, lo := bits.Mul64(outs[k], un)
				if lo < un {
					break
				}
				sum += xs[j]
				counts[pos[j]]++
			}
		}
		d.pos += k
		left -= k
		if k < len(outs) {
			j := d.finish(un, outs[k])
			sum += xs[j]
			counts[pos[j]]++
			left--
		}
	}
	return sum
}

func (d *drawStream) resampleSum(xs []float64, pow2 bool) float64 {
	un := uint64(len(xs))
	sum := 0.0
	for left := len(xs); left > 0; {
		outs := d.next(left)
		k := 0
		if pow2 {
			for ; k < len(outs); k++ {
				sum += xs[outs[k]&(un-1)]
			}
		} else {
			for ; k < len(outs); k++ {
				j, lo := bits.Mul64(outs[k], un)
				if lo < un {
					break
				}
				sum += xs[j]
			}
		}
		d.pos += k
		left -= k
		if k < len(outs) {
			sum += xs[d.finish(un, outs[k])]
			left--
		}
	}
	return sum
}

// countDraws draws len(pos) indices j in [0, len(pos)), as intN does, and
// counts each at counts[pos[j]].
func (d *drawStream) countDraws(pos, counts []int32) {
	un := uint64(len(pos))
	pow2 := un&(un-1) == 0
	for left := len(pos); left > 0; {
		outs := d.next(left)
		k := 0
		if pow2 {
			for ; k < len(outs); k++ {
				counts[pos[outs[k]&(un-1)]]++
			}
		} else {
			// The positions of whole groups of draws gathered at once
			// (gatherPositions), then counted; not worth a call for a
			// few draws.
			if len(outs) >= gatherMin {
				k = gatherPositions(outs, pos, d.gathered[:])
				for _, p := range d.gathered[:k] {
					counts[p]++
				}
			}
			for ; k < len(outs); k++ {
				j, lo := bits.Mul64(outs[k], un)
				if lo < un {
					break
				}
				counts[pos[j]]++
			}
		}
		d.pos += k
		left -= k
		if k < len(outs) {
			counts[pos[d.finish(un, outs[k])]]++
			left--
		}
	}
}

// drawPositions draws len(out) indices j in [0, len(pos)), as intN does,
// and writes pos[j] of each to out, in draw order: a position (int32) or
// ProbImprovementCIUntil's two counts of a value packed in one word
// (uint64).
func drawPositions[T int32 | uint64](d *drawStream, pos, out []T) {
	un := uint64(len(pos))
	pow2 := un&(un-1) == 0
	for i := 0; i < len(out); {
		outs := d.next(len(out) - i)
		k := 0
		if pow2 {
			for ; k < len(outs); k++ {
				out[i+k] = pos[outs[k]&(un-1)]
			}
		} else {
			if len(outs) >= gatherMin {
				k = gatherPositions(outs, pos, out[i:])
			}
			for ; k < len(outs); k++ {
				j, lo := bits.Mul64(outs[k], un)
				if lo < un {
					break
				}
				out[i+k] = pos[j]
			}
		}
		d.pos += k
		i += k
		if k < len(outs) {
			out[i] = pos[d.finish(un, outs[k])]
			i++
		}
	}
}

// chunkIQM is what resampleChunk needs to compute the IQM of its
// resamples: the values sorted (sortedXs) and where each xs[j] sits among
// them (pos[j]), the IQM of every multiset of n sorted positions (table,
// see iqmTable) and each index's weight in its key (weights[j] =
// (n+1)^pos[j]).
type chunkIQM struct {
	sortedXs []float64
	pos      []int32
	weights  []uint32
	table    []float64
}

// iqmOf is the IQM of the resample whose draws are the indices idx, as the
// bootstrap computes it from resampleCounts' counts: the table's entry at
// the key of the draws' multiset of positions.
func (q *chunkIQM) iqmOf(idx []uint32) float64 {
	key := uint32(0)
	for _, j := range idx {
		key += q.weights[j]
	}
	return q.table[key]
}

// resampleChunk draws len(sums) ≤ stopEvery resamples of len(xs) ≤
// chunkMax indices each, one after another, as resampleSum draws each:
// sums[r] is the sum in draw order of resample r's values. When iqms is
// not nil, iqms[r] is the IQM of resample r as the bootstrap computes it
// from resampleCounts' counts (trimmedMeanCountsSmall, by chunkIQM.iqmOf).
//
// The resamples whose outputs all lie in the buffer are drawn together
// (resampleRun); one that straddles the buffer's end, or whose outputs
// hold one that needs a second look, is drawn alone by resampleCounts or
// resampleSum.
func (d *drawStream) resampleChunk(xs []float64, pow2 bool, iq *chunkIQM, sums, iqms []float64) {
	n := len(xs)
	for r := 0; r < len(sums); {
		if d.pos == drawBlock {
			d.refill()
		}
		q := min(len(sums)-r, (drawBlock-d.pos)/n)
		var runIQMs []float64
		if iqms != nil {
			runIQMs = iqms[r : r+q]
		}
		if q > 0 && d.resampleRun(xs, pow2, iq, sums[r:r+q], runIQMs) {
			r += q
			continue
		}
		if iqms != nil {
			var counts [chunkMax]int32
			var walk [chunkMax + 4]float64 // trimmedMeanCountsSmall's n+4
			sums[r] = d.resampleCounts(xs, pow2, iq.pos, counts[:n])
			iqms[r] = trimmedMeanCountsSmall(iq.sortedXs, counts[:n], n/4, walk[:])
		} else {
			sums[r] = d.resampleSum(xs, pow2)
		}
		r++
	}
}

// resampleRun is resampleChunk's draws of len(sums) resamples from the
// buffer's next n·len(sums) outputs, which the caller has checked are
// there. When none of them needs a second look (its product's low word
// below n: with probability n/2⁶⁴ each), resample r's draws are outputs
// r·n … r·n+n−1: their indices are computed first, then four resamples
// summed side by side, each in its own draw order, so that four chains of
// additions overlap instead of one running after another. ok is false,
// nothing read, when one does need it.
func (d *drawStream) resampleRun(xs []float64, pow2 bool, iq *chunkIQM, sums, iqms []float64) (ok bool) {
	n := len(xs)
	un := uint64(n)
	total := n * len(sums)
	var idxBuf [stopEvery * chunkMax]uint32
	idx := idxBuf[:total]
	outs := d.buf[d.pos : d.pos+total]
	if pow2 {
		for k, r := range outs {
			idx[k] = uint32(r & (un - 1))
		}
	} else {
		rejected := false
		for k, r := range outs {
			j, lo := bits.Mul64(r, un)
			rejected = rejected || lo < un
			idx[k] = uint32(j)
		}
		if rejected {
			return false
		}
	}
	d.pos += total
	r := 0
	for ; r+4 <= len(sums); r += 4 {
		i0, i1, i2, i3 := idx[r*n:r*n+n], idx[r*n+n:r*n+2*n], idx[r*n+2*n:r*n+3*n], idx[r*n+3*n:r*n+4*n]
		var s0, s1, s2, s3 float64
		for i := range i0 {
			s0 += xs[i0[i]]
			s1 += xs[i1[i]]
			s2 += xs[i2[i]]
			s3 += xs[i3[i]]
		}
		sums[r], sums[r+1], sums[r+2], sums[r+3] = s0, s1, s2, s3
	}
	for ; r < len(sums); r++ {
		s := 0.0
		for _, j := range idx[r*n : r*n+n] {
			s += xs[j]
		}
		sums[r] = s
	}
	for r := range iqms {
		iqms[r] = iq.iqmOf(idx[r*n : r*n+n])
	}
	return true
}

// iqmTable fills table (len (n+1)^n, 7,776 at 5 values, n = len(sortedXs)
// ≤ chunkMax) at
// the key of every multiset of n sorted positions — Σ counts[p]·(n+1)^p
// for counts[p] draws of position p, counts summing to n — with
// trimmedMeanCountsSmall of those counts, the very IQM the bootstrap
// computes of a resample drawn so (C(2n−1, n) of them: 126 at 5 values),
// and returns the weights (n+1)^p of the positions. Entries at other keys
// are left as they were: no resample's key is one of them.
func iqmTable(sortedXs []float64, table []float64) (weights []uint32) {
	n := len(sortedXs)
	weights = make([]uint32, n)
	w := uint32(1)
	for p := range weights {
		weights[p] = w
		w *= uint32(n + 1)
	}
	var counts [chunkMax]int32
	var walk [chunkMax + 4]float64
	// Every way to put left draws on positions p … n−1.
	var fill func(p, left int, key uint32)
	fill = func(p, left int, key uint32) {
		if p == n-1 {
			counts[p] = int32(left)
			table[key+uint32(left)*weights[p]] = trimmedMeanCountsSmall(sortedXs, counts[:n], n/4, walk[:])
			return
		}
		for c := 0; c <= left; c++ {
			counts[p] = int32(c)
			fill(p+1, left-c, key+uint32(c)*weights[p])
		}
	}
	fill(0, n, 0)
	return weights
}
