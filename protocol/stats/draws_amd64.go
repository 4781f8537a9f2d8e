package stats

// haveAVX512 says whether the CPU and the OS support the AVX-512
// instructions pcgRefillAVX512 uses (AVX512F and AVX512DQ, and the OS
// saving the opmask and ZMM registers). A variable so that tests can run
// the other refill too.
var haveAVX512 = cpuHasAVX512()

func cpuHasAVX512() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	if _, _, ecx, _ := cpuid(1, 0); ecx&(1<<27) == 0 { // OSXSAVE: XGETBV works
		return false
	}
	// XCR0: the OS saves the SSE, AVX, opmask, ZMM_Hi256 and Hi16_ZMM state.
	const state = 1<<1 | 1<<2 | 1<<5 | 1<<6 | 1<<7
	if eax, _ := xgetbv(); eax&state != state {
		return false
	}
	_, ebx, _, _ := cpuid(7, 0)
	return ebx&(1<<16) != 0 && ebx&(1<<17) != 0 // AVX512F, AVX512DQ
}

// cpuid is the CPUID instruction for leaf and subleaf.
func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)

// xgetbv is XGETBV of XCR0.
func xgetbv() (eax, edx uint32)

// pcgRefillAVX512 is pcgRefillGo in AVX-512 (pcg_amd64.s): the 32 lanes in
// four registers of eight, consts the broadcast operands (pcgAVX512Consts).
//
//go:noescape
func pcgRefillAVX512(st *pcgLanes, consts *[8]uint64, buf *[drawBlock]uint64)

// pcgAVX512Consts are pcgRefillAVX512's operands, in the order it loads
// them: M³²'s low word and that word's high half (VPMULUDQ multiplies low
// halves), M³²'s high word, C₃₂'s low and high words, the DXSM multiplier,
// 1, and the mask of a low half.
var pcgAVX512Consts = [8]uint64{
	pcgJump32MulLo, pcgJump32MulLo >> 32, pcgJump32MulHi,
	pcgJump32IncLo, pcgJump32IncHi, pcgCheapMul, 1, 0xffffffff,
}

// refill computes the next drawBlock outputs into buf and rewinds pos.
func (d *drawStream) refill() {
	if haveAVX512 {
		pcgRefillAVX512(&d.lanes, &pcgAVX512Consts, &d.buf)
	} else {
		pcgRefillGo(&d.lanes, &d.buf)
	}
	d.pos = 0
}

// lemireGather32 is the start of drawPositions' loop for n < 2³² in
// AVX-512 (pcg_amd64.s): for whole groups of eight outputs of outs, the
// indices j = ⌊r·n/2⁶⁴⌋ and pos[j] of each written to out, up to the
// first group in which a draw may be rejected; it returns how many outputs
// it took (a multiple of eight).
//
//go:noescape
func lemireGather32(outs []uint64, n uint64, pos []int32, out []int32) int

// lemireGather64 is lemireGather32 for words (ProbImprovementCIUntil's
// packed counts of a tied x).
//
//go:noescape
func lemireGather64(outs []uint64, n uint64, pos []uint64, out []uint64) int

// gatherPositions writes pos[j] to out for the first outputs of outs, as
// drawPositions' loop does for n = len(pos), not a power of two, and
// returns how many it took: by lemireGather32 or lemireGather64 where
// AVX-512 is available, none otherwise.
func gatherPositions[T int32 | uint64](outs []uint64, pos, out []T) int {
	if !haveAVX512 {
		return 0
	}
	switch p := any(pos).(type) {
	case []int32:
		return lemireGather32(outs, uint64(len(p)), p, any(out).([]int32)[:len(outs)])
	case []uint64:
		return lemireGather64(outs, uint64(len(p)), p, any(out).([]uint64)[:len(outs)])
	}
	return 0
}
