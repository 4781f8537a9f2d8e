#include "textflag.h"

// func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL subleaf+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv() (eax, edx uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	RET

// LANES8 writes the outputs of the eight lanes whose states are (H, L) to
// OFF(DI) and steps each lane by M³², C₃₂ (pcgRefillGo's loop body, eight
// lanes at once). Constants: Z24 M³²'s low word, Z25 its high half, Z26
// M³²'s high word, Z27 and Z28 C₃₂'s low and high words, Z29 the DXSM
// multiplier, Z30 ones, Z31 the low-half mask. Scratch: Z8-Z14, Z16, K1.
//
// The output, dxsm(H, L):
//	Z8 = H ^ H>>32; Z8 *= cheapMul; Z8 ^= Z8>>48; Z8 *= L|1
// The step, (H, L) = (H, L)·M³² + C₃₂ mod 2¹²⁸: L·M³²lo as a 128-bit
// product from four 32×32-bit products (VPMULUDQ), p00 = Llo·mlo (Z10),
// p01 = Llo·mhi (Z11), p10 = Lhi·mlo (Z12), p11 = Lhi·mhi (Z13), with
// mid = p00>>32 + low(p01) + low(p10) (Z14, below 3·2³²):
//	low word  = mid<<32 | low(p00)                     (Z14)
//	high word = p11 + p01>>32 + p10>>32 + mid>>32       (Z13)
// then H' = H·M³²lo + L·M³²hi + high word + C₃₂hi + carry and
// L' = low word + C₃₂lo, carry = L' < low word.
#define LANES8(H, L, OFF) \
	VPSRLQ    $32, H, Z8       \
	VPXORQ    H, Z8, Z8        \
	VPMULLQ   Z29, Z8, Z8      \
	VPSRLQ    $48, Z8, Z9      \
	VPXORQ    Z9, Z8, Z8       \
	VPORQ     Z30, L, Z9       \
	VPMULLQ   Z9, Z8, Z8       \
	VMOVDQU64 Z8, OFF(DI)      \
	VPSRLQ    $32, L, Z9       \
	VPMULUDQ  Z24, L, Z10      \
	VPMULUDQ  Z25, L, Z11      \
	VPMULUDQ  Z24, Z9, Z12     \
	VPMULUDQ  Z25, Z9, Z13     \
	VPSRLQ    $32, Z10, Z14    \
	VPANDQ    Z31, Z11, Z16    \
	VPADDQ    Z16, Z14, Z14    \
	VPANDQ    Z31, Z12, Z16    \
	VPADDQ    Z16, Z14, Z14    \
	VPSRLQ    $32, Z11, Z11    \
	VPSRLQ    $32, Z12, Z12    \
	VPADDQ    Z11, Z13, Z13    \
	VPADDQ    Z12, Z13, Z13    \
	VPSRLQ    $32, Z14, Z16    \
	VPADDQ    Z16, Z13, Z13    \
	VPSLLQ    $32, Z14, Z14    \
	VPANDQ    Z31, Z10, Z10    \
	VPORQ     Z10, Z14, Z14    \
	VPMULLQ   Z24, H, Z8       \
	VPMULLQ   Z26, L, Z9       \
	VPADDQ    Z9, Z8, Z8       \
	VPADDQ    Z13, Z8, Z8      \
	VPADDQ    Z27, Z14, L      \
	VPCMPUQ   $1, Z14, L, K1   \
	VPADDQ    Z28, Z8, H       \
	VPADDQ    Z30, H, K1, H

// func pcgRefillAVX512(st *pcgLanes, consts *[8]uint64, buf *[drawBlock]uint64)
// The lanes' high words in Z0-Z3, low words in Z4-Z7; 16 rounds of 32
// outputs (drawBlock = 512).
TEXT ·pcgRefillAVX512(SB), NOSPLIT, $0-24
	MOVQ st+0(FP), SI
	MOVQ consts+8(FP), DX
	MOVQ buf+16(FP), DI
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVDQU64 256(SI), Z4
	VMOVDQU64 320(SI), Z5
	VMOVDQU64 384(SI), Z6
	VMOVDQU64 448(SI), Z7
	VPBROADCASTQ 0(DX), Z24
	VPBROADCASTQ 8(DX), Z25
	VPBROADCASTQ 16(DX), Z26
	VPBROADCASTQ 24(DX), Z27
	VPBROADCASTQ 32(DX), Z28
	VPBROADCASTQ 40(DX), Z29
	VPBROADCASTQ 48(DX), Z30
	VPBROADCASTQ 56(DX), Z31
	MOVQ $16, CX

round:
	LANES8(Z0, Z4, 0)
	LANES8(Z1, Z5, 64)
	LANES8(Z2, Z6, 128)
	LANES8(Z3, Z7, 192)
	ADDQ $256, DI
	DECQ CX
	JNZ  round

	VMOVDQU64 Z0, 0(SI)
	VMOVDQU64 Z1, 64(SI)
	VMOVDQU64 Z2, 128(SI)
	VMOVDQU64 Z3, 192(SI)
	VMOVDQU64 Z4, 256(SI)
	VMOVDQU64 Z5, 320(SI)
	VMOVDQU64 Z6, 384(SI)
	VMOVDQU64 Z7, 448(SI)
	VZEROUPPER
	RET

// LEMIRE_GROUP is the group of eight outputs at (SI)(DX*8) of
// lemireGather32 and lemireGather64 (n broadcast in Z31, the low half's
// mask in Z30): Lemire's product of each output and n from two 32×32-bit
// products, a jump to rejected when a low word falls below n, and else
// the indices j in Z2 and K2 set for the gather.
#define LEMIRE_GROUP(rejected) \
	VMOVDQU64 (SI)(DX*8), Z0; \
	VPMULUDQ  Z31, Z0, Z1; \
	VPSRLQ    $32, Z0, Z2; \
	VPMULUDQ  Z31, Z2, Z2; \
	VPSRLQ    $32, Z1, Z3; \
	VPADDQ    Z3, Z2, Z2; \
	VPSLLQ    $32, Z2, Z3; \
	VPANDQ    Z30, Z1, Z1; \
	VPORQ     Z1, Z3, Z3; \
	VPCMPUQ   $1, Z31, Z3, K1; \
	KORTESTB  K1, K1; \
	JNZ       rejected; \
	VPSRLQ    $32, Z2, Z2; \
	KXNORB    K2, K2, K2

// func lemireGather32(outs []uint64, n uint64, pos []int32, out []int32) int
// For each group of eight outputs r of outs, in order: the indices
// j = ⌊r·n/2⁶⁴⌋ (Lemire's product's high word, from two 32×32-bit
// products since n < 2³²: a = rlo·n, t = rhi·n + a>>32, j = t>>32, low
// word t<<32 | low(a)), and pos[j] of each written to out. It stops
// before the first group in which a low word falls below n (a draw that
// may be rejected, left to the caller) or with fewer than eight outputs
// left, and returns how many outputs it took. len(out) ≥ len(outs).
TEXT ·lemireGather32(SB), NOSPLIT, $0-88
	MOVQ outs_base+0(FP), SI
	MOVQ outs_len+8(FP), CX
	MOVQ n+24(FP), AX
	MOVQ pos_base+32(FP), BX
	MOVQ out_base+56(FP), DI
	VPBROADCASTQ AX, Z31
	MOVQ $0xffffffff, R8
	VPBROADCASTQ R8, Z30
	XORQ DX, DX

group:
	LEAQ 8(DX), R9
	CMPQ R9, CX
	JGT  taken
	LEMIRE_GROUP(taken)
	VPGATHERQD (BX)(Z2*4), K2, Y4
	VMOVDQU32 Y4, (DI)(DX*4)
	MOVQ R9, DX
	JMP  group

taken:
	MOVQ DX, ret+80(FP)
	VZEROUPPER
	RET

// func lemireGather64(outs []uint64, n uint64, pos []uint64, out []uint64) int
// lemireGather32 for words: pos[j] of eight bytes.
TEXT ·lemireGather64(SB), NOSPLIT, $0-88
	MOVQ outs_base+0(FP), SI
	MOVQ outs_len+8(FP), CX
	MOVQ n+24(FP), AX
	MOVQ pos_base+32(FP), BX
	MOVQ out_base+56(FP), DI
	VPBROADCASTQ AX, Z31
	MOVQ $0xffffffff, R8
	VPBROADCASTQ R8, Z30
	XORQ DX, DX

group64:
	LEAQ 8(DX), R9
	CMPQ R9, CX
	JGT  taken64
	LEMIRE_GROUP(taken64)
	VPGATHERQQ (BX)(Z2*8), K2, Z4
	VMOVDQU64 Z4, (DI)(DX*8)
	MOVQ R9, DX
	JMP  group64

taken64:
	MOVQ DX, ret+80(FP)
	VZEROUPPER
	RET
