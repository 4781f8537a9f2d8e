package stats

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestPCGRefillAVX512EqualsGo: the two refills agree from arbitrary lane
// states (not only consecutive ones), carries in every lane among them.
func TestPCGRefillAVX512EqualsGo(t *testing.T) {
	if !defaultHaveAVX512 {
		t.Skip("no AVX-512 here")
	}
	rng := rand.New(rand.NewPCG(43, 44))
	for trial := range 200 {
		var a pcgLanes
		for k := range pcgLanesN {
			a.hi[k], a.lo[k] = rng.Uint64(), rng.Uint64()
			if trial == 0 { // carries everywhere
				a.hi[k], a.lo[k] = ^uint64(0), ^uint64(0)-uint64(k)
			}
		}
		b := a
		var ba, bb [drawBlock]uint64
		for blk := range 3 {
			pcgRefillAVX512(&a, &pcgAVX512Consts, &ba)
			pcgRefillGo(&b, &bb)
			if ba != bb || a != b {
				t.Fatalf("trial %d block %d: the AVX-512 refill differs from the Go refill", trial, blk)
			}
		}
	}
}

// TestLemireGather32 (and 64): the indices of whole groups of eight are Lemire's
// products' high words (bits.Mul64), for n from 3 to 2²², outputs at
// the extremes among them; it stops before the first group holding an
// output whose product's low word falls below n (a draw that may be
// rejected: r = 0, or r = ⌈2⁶⁴/n⌉·k), and before a last group of fewer
// than eight.
func TestLemireGather32(t *testing.T) {
	if !defaultHaveAVX512 {
		t.Skip("no AVX-512 here")
	}
	rng := rand.New(rand.NewPCG(45, 46))
	const maxN = 1 << 22
	pos := make([]int32, maxN)
	words := make([]uint64, maxN) // lemireGather64's: j in the high half
	for j := range pos {
		pos[j] = int32(rng.Uint32() >> 1)
		words[j] = uint64(pos[j]) | uint64(j)<<32
	}
	for trial := range 300 {
		n := 3 + rng.Uint64N(maxN-3)
		switch trial % 5 {
		case 0:
			n = maxN - 1
		case 1:
			n = 3 + rng.Uint64N(5000)
		}
		outs := make([]uint64, 8*rng.IntN(40)+rng.IntN(8))
		for i := range outs {
			outs[i] = rng.Uint64()
			if rng.IntN(50) == 0 {
				outs[i] = [...]uint64{0, ^uint64(0), 1 << 63, 1<<32 - 1, 1 << 32}[rng.IntN(5)]
			}
		}
		// The draws a product may reject: its low word below n.
		rejectAt := len(outs)
		if len(outs) > 0 && trial%3 == 0 {
			i := rng.IntN(len(outs))
			outs[i] = (^uint64(0)/n + 1) * (1 + rng.Uint64N(3)) // r·n mod 2⁶⁴ < n
			if rng.IntN(4) == 0 {
				outs[i] = 0
			}
		}
		for i, r := range outs {
			if _, lo := bits.Mul64(r, n); lo < n {
				rejectAt = i
				break
			}
		}
		out := make([]int32, len(outs))
		k := lemireGather32(outs, n, pos[:n], out)
		want := rejectAt / 8 * 8
		if k != want {
			t.Fatalf("trial %d (n %d, %d outputs, first rejection at %d): took %d, want %d", trial, n, len(outs), rejectAt, k, want)
		}
		for i, r := range outs[:k] {
			j, _ := bits.Mul64(r, n)
			if out[i] != pos[j] {
				t.Fatalf("trial %d (n %d): output %d (%#x): pos[%d] = %d, got %d", trial, n, i, r, j, pos[j], out[i])
			}
		}
		outW := make([]uint64, len(outs))
		if kw := lemireGather64(outs, n, words[:n], outW); kw != want {
			t.Fatalf("trial %d (n %d, %d outputs, first rejection at %d): words took %d, want %d", trial, n, len(outs), rejectAt, kw, want)
		}
		for i, r := range outs[:k] {
			j, _ := bits.Mul64(r, n)
			if outW[i] != words[j] {
				t.Fatalf("trial %d (n %d): output %d (%#x): words[%d] = %#x, got %#x", trial, n, i, r, j, words[j], outW[i])
			}
		}
	}
}
