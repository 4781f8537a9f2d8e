package stats

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// drawPath is one way the bootstrap can draw: indexSource's loops, or the
// stream with either refill.
type drawPath struct {
	name           string
	stream, avx512 bool
}

// drawPaths are the paths this machine can run: the AVX-512 refill only
// where the CPU has it.
func drawPaths() []drawPath {
	paths := []drawPath{{"scalar", false, false}, {"stream-go", true, false}}
	if defaultHaveAVX512 {
		paths = append(paths, drawPath{"stream-avx512", true, true})
	}
	return paths
}

// withDrawPath runs f with the package drawing by p, then restores the
// defaults.
func withDrawPath(p drawPath, f func()) {
	stream, avx := useDrawStream, haveAVX512
	defer func() { useDrawStream, haveAVX512 = stream, avx }()
	useDrawStream, haveAVX512 = p.stream, p.avx512
	f()
}

// refills are the stream's refills this machine can run.
func refills() []drawPath {
	var out []drawPath
	for _, p := range drawPaths() {
		if p.stream {
			out = append(out, p)
		}
	}
	return out
}

// TestPCGJump32: the constants are 32 steps of the LCG, and pcgJump32 from
// any state is 32 pcgNext steps.
func TestPCGJump32(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for trial := range 1000 {
		hi, lo := rng.Uint64(), rng.Uint64()
		switch trial {
		case 0:
			hi, lo = 0, 0
		case 1:
			hi, lo = ^uint64(0), ^uint64(0)
		case 2:
			hi, lo = 0, ^uint64(0)
		}
		wh, wl := hi, lo
		for range 32 {
			wh, wl, _ = pcgNext(wh, wl)
		}
		if gh, gl := pcgJump32(hi, lo); gh != wh || gl != wl {
			t.Fatalf("from (%#x, %#x): (%#x, %#x), 32 steps give (%#x, %#x)", hi, lo, gh, gl, wh, wl)
		}
	}
	// From state 0 the jump is C₃₂; M³² is then the jump from 1 minus C₃₂.
	if h, l := pcgJump32(0, 0); h != pcgJump32IncHi || l != pcgJump32IncLo {
		t.Errorf("C₃₂ = (%#x, %#x), 32 steps from 0 give (%#x, %#x)", uint64(pcgJump32IncHi), uint64(pcgJump32IncLo), h, l)
	}
}

// TestDrawStreamOutputs: the stream's outputs are rand.PCG's, output for
// output, across many blocks, for many seeds, with each refill.
func TestDrawStreamOutputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	seeds := []uint64{0, 1, 2, 3, 42, 1 << 32, 1 << 63, ^uint64(0), SeedFor(0, "ppo", "forgetting")}
	for range 60 {
		seeds = append(seeds, rng.Uint64())
	}
	for _, p := range refills() {
		withDrawPath(p, func() {
			for _, seed := range seeds {
				var d drawStream
				d.reset(seed)
				ref := newIndexSource(seed)
				for i := range 5*drawBlock + 7 {
					if got, want := d.uint64(), ref.uint64(); got != want {
						t.Fatalf("%s: seed %d output %d: %#x, rand.PCG %#x", p.name, seed, i, got, want)
					}
				}
			}
		})
	}
}

// defaultHaveAVX512 is haveAVX512 as the package set it: whether this
// machine runs pcgRefillAVX512.
var defaultHaveAVX512 = haveAVX512

// rejectionTestNs are moduli for the index draw: 1, small, powers of two,
// the bootstrap's sizes, around 2³², and close to 2⁶³ and 2⁶⁴, where
// Lemire's method rejects often (2⁶³+1 about half the time).
var rejectionTestNs = []uint64{
	1, 2, 3, 4, 5, 6, 7, 8, 10, 16, 31, 32, 33, 1 << 10, 2500, 5000, 20000,
	1<<32 - 1, 1 << 32, 1<<32 + 1, 1 << 40, 1<<62 + 3, 1<<63 - 1, 1 << 63,
	1<<63 + 1, 1<<63 + 12345, 3 << 62, ^uint64(0) - 1, ^uint64(0),
}

// TestDrawStreamIntN: the stream's index draw is indexSource.intN draw for
// draw (so rand.Rand's IntN, TestIndexDrawMatchesIntN), across block
// boundaries, rejections included: the moduli just above 2⁶³ must reject
// many times, and the two sources stay in step after each.
func TestDrawStreamIntN(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for _, p := range refills() {
		withDrawPath(p, func() {
			for _, n := range rejectionTestNs {
				rejected := 0
				for s := range 12 {
					seed := rng.Uint64()
					if s == 0 {
						seed = 0
					}
					var d drawStream
					d.reset(seed)
					ref := newIndexSource(seed)
					for i := range 3 * drawBlock {
						before := ref
						want := ref.intN(n)
						if got := d.intN(n); got != want {
							t.Fatalf("%s: n %d seed %d draw %d: %d, indexSource %d", p.name, n, seed, i, got, want)
						}
						if before.uint64(); before != ref {
							rejected++ // the draw read more than one output
						}
					}
					if got, want := d.uint64(), ref.uint64(); got != want {
						t.Fatalf("%s: n %d seed %d: out of step after the draws", p.name, n, seed)
					}
				}
				// 2⁶⁴ mod n is above 2⁶⁰ for n just above 2⁶³: a rejection
				// every few draws (for 2⁶³−1 or 2⁶⁴−1 it is 2 or 1).
				if n&(n-1) != 0 && -n%n >= 1<<60 && rejected == 0 {
					t.Errorf("%s: n %d: no rejection in %d draws", p.name, n, 12*3*drawBlock)
				}
			}
		})
	}
}

// streamLoops runs each of the stream's five loops on one copy of d and
// the same draws by intN on another (TestDrawStreamIntN checks intN), and
// reports the first difference: sums bit for bit, values drawn, counts and
// positions, and the streams left in step.
func streamLoops(t *testing.T, d drawStream, xs []float64, rounds int) {
	t.Helper()
	n := len(xs)
	un := uint64(n)
	pow2 := un&(un-1) == 0
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = int32((i*7 + 3) % n) // any map of indices to positions
	}
	type result struct {
		sums   []uint64
		draw   []float64
		counts []int32
		out    []int32
	}
	ref := func(d *drawStream, kind int) result {
		var r result
		counts := make([]int32, n)
		for range rounds {
			sum := 0.0
			for range n {
				j := d.intN(un)
				sum += xs[j]
				switch kind {
				case 0:
					r.draw = append(r.draw, xs[j])
					counts[pos[j]]++
				case 1, 3:
					counts[pos[j]]++
				case 4:
					r.out = append(r.out, pos[j])
				}
			}
			if kind > 2 {
				sum = 0
			}
			r.sums = append(r.sums, math.Float64bits(sum))
		}
		r.counts = counts
		return r
	}
	loop := func(d *drawStream, kind int) result {
		var r result
		counts := make([]int32, n)
		draw := make([]float64, n)
		out := make([]int32, n)
		for range rounds {
			var sum float64
			switch kind {
			case 0:
				sum = d.resample(xs, pow2, draw, pos, counts)
				r.draw = append(r.draw, draw...)
			case 1:
				sum = d.resampleCounts(xs, pow2, pos, counts)
			case 2:
				sum = d.resampleSum(xs, pow2)
			case 3:
				d.countDraws(pos, counts)
			case 4:
				drawPositions(d, pos, out)
				r.out = append(r.out, out...)
			}
			r.sums = append(r.sums, math.Float64bits(sum))
		}
		r.counts = counts
		return r
	}
	names := []string{"resample", "resampleCounts", "resampleSum", "countDraws", "drawPositions"}
	for kind, name := range names {
		a, b := d, d
		want := ref(&a, kind)
		got := loop(&b, kind)
		if !slices.Equal(got.sums, want.sums) || !slices.Equal(got.draw, want.draw) ||
			!slices.Equal(got.counts, want.counts) || !slices.Equal(got.out, want.out) {
			t.Fatalf("%s, n %d: differs from the draws one by one", name, n)
		}
		if a.uint64() != b.uint64() {
			t.Fatalf("%s, n %d: the stream is out of step after the loop", name, n)
		}
	}
}

// TestDrawStreamLoopsRejecting: the loops' rejection path. With n of a
// few thousand a rejection comes once in ~10¹⁵ draws, so outputs that
// reject are planted in the buffer: 0 (the product's low word 0 < 2⁶⁴ mod
// n: rejected, and the draw reads on), outputs whose low word falls in
// [2⁶⁴ mod n, n) (a candidate that is kept), at a resample's start, in its
// middle, on the last outputs of the buffer (the redraw then reads the next
// refill) and several in a row.
func TestDrawStreamLoopsRejecting(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	for _, p := range refills() {
		withDrawPath(p, func() {
			for _, n := range []int{3, 5, 6, 7, 10, 100, 2500, 5000} {
				un := uint64(n)
				thresh := -un % un
				xs := make([]float64, n)
				for i := range xs {
					xs[i] = rng.NormFloat64() * 1e3
				}
				rejecting, kept := 0, 0
				for trial := range 40 {
					var d drawStream
					d.reset(rng.Uint64())
					d.refill()
					// Skip a few outputs, so that resamples start anywhere.
					d.pos = rng.IntN(drawBlock)
					plant := []int{d.pos, d.pos + 1, drawBlock - 1, drawBlock - 2, drawBlock - 3}
					for range 8 {
						plant = append(plant, d.pos+rng.IntN(drawBlock-d.pos))
					}
					for _, at := range plant {
						if at >= drawBlock {
							continue
						}
						if trial%3 == 0 || at == drawBlock-1 {
							d.buf[at] = 0
							rejecting++
							continue
						}
						// r = ⌈k·2⁶⁴/n⌉ makes r·n mod 2⁶⁴ < n; keep it
						// when it is at least 2⁶⁴ mod n.
						k := 1 + rng.Uint64N(un-1)
						q, rem := bits.Div64(k, 0, un)
						if rem != 0 {
							q++
						}
						d.buf[at] = q
						if _, lo := bits.Mul64(q, un); lo >= thresh && lo < un {
							kept++
						}
					}
					streamLoops(t, d, xs, 3)
				}
				if rejecting == 0 || kept == 0 {
					t.Fatalf("n %d: %d outputs planted that reject, %d kept after the check", n, rejecting, kept)
				}
			}
		})
	}
}

// TestDrawStreamLoopsEqualScalar: the stream's loops against indexSource's
// (the loops the bootstrap draws by without AVX-512) on random
// samples of many sizes, powers of two and the buffer's size among them,
// several resamples in a row: the same sums bit for bit, values, counts
// and positions.
func TestDrawStreamLoopsEqualScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	sizes := []int{1, 2, 3, 4, 5, 7, 8, 10, 31, 32, 33, 100, 255, 511, 512, 513, 1000, 1024, 2500, 5000}
	for _, p := range refills() {
		withDrawPath(p, func() {
			for _, n := range sizes {
				xs := make([]float64, n)
				pos := make([]int32, n)
				for i := range xs {
					xs[i] = rng.NormFloat64() * float64(1+i%7)
					pos[i] = int32(i)
				}
				rng.Shuffle(n, func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
				pow2 := n&(n-1) == 0
				for trial := range 6 {
					seed := rng.Uint64()
					var d drawStream
					d.reset(seed)
					s := newIndexSource(seed)
					rounds := 1 + rng.IntN(5)
					if n <= 10 {
						rounds = 300 // many resamples per buffer, across its end
					}
					for r := range rounds {
						kind := (trial + r) % 5
						ca, cb := make([]int32, n), make([]int32, n)
						da, db := make([]float64, n), make([]float64, n)
						var sa, sb float64
						switch kind {
						case 0:
							sa, sb = d.resample(xs, pow2, da, pos, ca), s.resample(xs, pow2, db, pos, cb)
						case 1:
							sa, sb = d.resampleCounts(xs, pow2, pos, ca), s.resampleCounts(xs, pow2, pos, cb)
						case 2:
							sa, sb = d.resampleSum(xs, pow2), s.resampleSum(xs, pow2)
						case 3:
							d.countDraws(pos, ca)
							s.countDraws(pos, cb)
						case 4:
							oa, ob := make([]int32, n), make([]int32, n)
							drawPositions(&d, pos, oa)
							drawPositionsScalar(&s, pos, ob)
							if !slices.Equal(oa, ob) {
								t.Fatalf("%s: drawPositions n %d: %v, scalar %v", p.name, n, oa, ob)
							}
							// The packed words ProbImprovementCIUntil draws with ties.
							words := make([]uint64, n)
							for i, q := range pos {
								words[i] = uint64(q) | uint64(n-i)<<32
							}
							wa, wb := make([]uint64, n), make([]uint64, n)
							drawPositions(&d, words, wa)
							drawPositionsScalar(&s, words, wb)
							if !slices.Equal(wa, wb) {
								t.Fatalf("%s: drawPositions of words n %d: %v, scalar %v", p.name, n, wa, wb)
							}
						}
						if math.Float64bits(sa) != math.Float64bits(sb) || !slices.Equal(ca, cb) || !slices.Equal(da, db) {
							t.Fatalf("%s: loop %d, n %d, seed %d, round %d: differs from the scalar loop", p.name, kind, n, seed, r)
						}
					}
					if d.uint64() != s.uint64() {
						t.Fatalf("%s: n %d seed %d: out of step with the scalar source", p.name, n, seed)
					}
				}
			}
		})
	}
}

// TestDrawPathsAgree runs the bootstrap's result tests by every draw path
// (the package's default is one of them), and checks that the paths give
// the same intervals, bit for bit, on random samples: the built-in
// statistics together and alone, a custom statistic in draw order and a
// sorted one, and the probability of improvement with and without ties.
func TestDrawPathsAgree(t *testing.T) {
	for _, p := range drawPaths() {
		t.Run(p.name, func(t *testing.T) {
			withDrawPath(p, func() {
				TestBootstrapEqualsNaive(t)
				TestBootstrapCIsUntil(t)
				TestProbImprovementCICountsEqualDrawOrder(t)
				TestProbImprovementCIUntilStops(t)
				TestProbImprovementCIAgainstDefinition(t)
				TestReferenceBootstrap(t)
				TestReferenceProbImprovement(t)
				TestBootstrapProperties(t)
			})
		})
	}
	maxOf := NewStatistic("max", func(v []float64) float64 { return slices.Max(v) })
	first := NewStatistic("first", func(v []float64) float64 { return v[0] + v[len(v)-1]*0.5 })
	median := NewSortedStatistic("median", Median)
	statSets := [][]Statistic{
		{StatMean}, {StatIQM}, {StatMean, StatIQM}, {first}, {median}, {StatMean, StatIQM, maxOf, median},
	}
	rng := rand.New(rand.NewPCG(41, 42))
	for trial := range 60 {
		n := 1 + rng.IntN(40)
		if trial%6 == 0 {
			n = 500 + rng.IntN(3000)
		}
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(rng.NormFloat64()*8) / 4
		}
		y := make([]float64, 1+rng.IntN(60))
		for i := range y {
			y[i] = math.Round(rng.NormFloat64()*8) / 4
			if trial%2 == 0 {
				y[i] = rng.NormFloat64()
			}
		}
		stats := statSets[trial%len(statSets)]
		res := 1 + rng.IntN(700)
		seed := rng.Uint64()
		var want []Interval
		var wlo, whi float64
		for i, p := range drawPaths() {
			withDrawPath(p, func() {
				got := BootstrapCIs(xs, stats, res, seed, 0.9)
				lo, hi := ProbImprovementCI(xs, y, res, seed, 0.95)
				if i == 0 {
					want, wlo, whi = got, lo, hi
					return
				}
				for s := range got {
					if !sameBits(got[s], want[s]) {
						t.Fatalf("trial %d, %s: statistic %d %v, scalar path %v", trial, p.name, s, got[s], want[s])
					}
				}
				if math.Float64bits(lo) != math.Float64bits(wlo) || math.Float64bits(hi) != math.Float64bits(whi) {
					t.Fatalf("trial %d, %s: probability of improvement [%v, %v], scalar path [%v, %v]", trial, p.name, lo, hi, wlo, whi)
				}
			})
		}
	}
}

// TestResampleChunk: resampleChunk's resamples are resampleSum's, and
// with the IQM resampleCounts' and trimmedMeanCountsSmall's of its counts,
// one resample after another: the same sums and IQMs bit for bit, and the
// stream left in step; from any point in the buffer (across its end), with
// ties and zeros of both signs among the values, and with outputs planted
// that reject (0) or that are kept after the check, as
// TestDrawStreamLoopsRejecting plants them.
func TestResampleChunk(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, p := range refills() {
		withDrawPath(p, func() {
			for n := 1; n <= chunkMax; n++ {
				un := uint64(n)
				xs := make([]float64, n)
				for i := range xs {
					switch i % 4 {
					case 1:
						xs[i] = float64(rng.IntN(3)) * 0.1 // ties
					case 2:
						xs[i] = math.Copysign(0, float64(rng.IntN(2))-0.5)
					default:
						xs[i] = rng.NormFloat64() * float64(1+i%5)
					}
				}
				sortedXs, pos := sortedPositions(xs)
				pow2 := un&(un-1) == 0
				planted := 0
				for trial := range 80 {
					var d drawStream
					d.reset(rng.Uint64())
					d.refill()
					d.pos = rng.IntN(drawBlock)
					if trial%2 == 0 && !pow2 {
						for range 1 + rng.IntN(6) {
							at := d.pos + rng.IntN(drawBlock-d.pos)
							if trial%4 == 0 {
								d.buf[at] = 0 // rejected: the draw reads on
							} else {
								k := 1 + rng.Uint64N(un-1)
								q, rem := bits.Div64(k, 0, un)
								if rem != 0 {
									q++
								}
								d.buf[at] = q // the product's low word below n
							}
							planted++
						}
					}
					m := 1 + rng.IntN(stopEvery)
					for _, withIQM := range []bool{true, false} {
						iq := chunkIQM{sortedXs: sortedXs, pos: pos}
						if withIQM {
							size := int(math.Pow(float64(n+1), float64(n)))
							iq.table = make([]float64, size)
							for i := range iq.table {
								iq.table[i] = math.NaN() // no key reads an entry not written
							}
							byPos := iqmTable(sortedXs, iq.table)
							iq.weights = make([]uint32, n)
							for j, p := range pos {
								iq.weights[j] = byPos[p]
							}
						}
						a, b := d, d
						sums := make([]float64, m)
						var iqms []float64
						if withIQM {
							iqms = make([]float64, m)
						}
						a.resampleChunk(xs, pow2, &iq, sums, iqms)
						for r := range m {
							var want float64
							if withIQM {
								c := make([]int32, n)
								want = b.resampleCounts(xs, pow2, pos, c)
								iqm := trimmedMeanCountsSmall(sortedXs, c, n/4, make([]float64, n+4))
								if math.Float64bits(iqms[r]) != math.Float64bits(iqm) {
									t.Fatalf("%s n %d trial %d: resample %d IQM %v, from its counts %v", p.name, n, trial, r, iqms[r], iqm)
								}
							} else {
								want = b.resampleSum(xs, pow2)
							}
							if math.Float64bits(sums[r]) != math.Float64bits(want) {
								t.Fatalf("%s n %d trial %d IQM %v: resample %d sum %v, one by one %v", p.name, n, trial, withIQM, r, sums[r], want)
							}
						}
						if a.pos != b.pos || a.uint64() != b.uint64() {
							t.Fatalf("%s n %d trial %d: the stream is out of step after the chunk", p.name, n, trial)
						}
					}
				}
				if !pow2 && planted == 0 {
					t.Fatalf("n %d: no output planted", n)
				}
			}
		})
	}
}
