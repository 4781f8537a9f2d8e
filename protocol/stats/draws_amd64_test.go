package stats

import (
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
