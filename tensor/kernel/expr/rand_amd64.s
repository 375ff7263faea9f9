#include "textflag.h"

// func uniformAVX2(d []float64, lanes *[4]uint64, step uint64)
//
// The uniform values of randStream.uniform, four at a time: lane i of
// *lanes holds the hash input (counter*golden + key) of d[i], and each next
// four values' inputs are step (4*golden) further. AVX2 has no 64-bit
// multiply, so each product x*m is formed from 32-bit halves:
// lo(x)*lo(m) + (hi(x)*lo(m) + lo(x)*hi(m))<<32, which is x*m modulo 2^64.
// The 53 random bits v = x>>11 convert to float64 exactly: their top 52
// bits as the mantissa of a number in [1, 2), less 1, plus 2^-53 when the
// lowest is set (a sum that is exact, since the first term is a multiple
// of 2^-52 below 1): the values are those of the scalar code bit for bit.
// len(d) is a multiple of 4.
TEXT ·uniformAVX2(SB), NOSPLIT, $0-40
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ lanes+24(FP), SI
	VMOVDQU (SI), Y15
	VPBROADCASTQ step+32(FP), Y14
	MOVQ $-4658895280553007687, AX // 0xBF58476D1CE4E5B9
	VMOVQ AX, X13
	VPBROADCASTQ X13, Y13
	MOVQ $3210233709, AX // its high half
	VMOVQ AX, X12
	VPBROADCASTQ X12, Y12
	MOVQ $-7723592293110705685, AX // 0x94D049BB133111EB
	VMOVQ AX, X11
	VPBROADCASTQ X11, Y11
	MOVQ $2496678331, AX // its high half
	VMOVQ AX, X10
	VPBROADCASTQ X10, Y10
	MOVQ $0x3FF0000000000000, AX // 1.0
	VMOVQ AX, X9
	VPBROADCASTQ X9, Y9
	MOVQ $0x800, AX // bit 11: the lowest of the 53
	VMOVQ AX, X8
	VPBROADCASTQ X8, Y8
	MOVQ $0x3CA0000000000000, AX // 2^-53
	VMOVQ AX, X7
	VPBROADCASTQ X7, Y7
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-8, BX

loop:
	// Two runs of four values, so that their dependency chains overlap.
	CMPQ AX, BX
	JGE  single
	VMOVDQA Y15, Y0
	VPADDQ  Y14, Y15, Y15
	VMOVDQA Y15, Y3
	VPADDQ  Y14, Y15, Y15
	VPSRLQ $30, Y0, Y1
	VPSRLQ $30, Y3, Y4
	VPXOR  Y1, Y0, Y0
	VPXOR  Y4, Y3, Y3
	VPMULUDQ Y13, Y0, Y1
	VPMULUDQ Y13, Y3, Y4
	VPSRLQ   $32, Y0, Y2
	VPSRLQ   $32, Y3, Y5
	VPMULUDQ Y13, Y2, Y2
	VPMULUDQ Y13, Y5, Y5
	VPMULUDQ Y12, Y0, Y0
	VPMULUDQ Y12, Y3, Y3
	VPADDQ   Y2, Y0, Y0
	VPADDQ   Y5, Y3, Y3
	VPSLLQ   $32, Y0, Y0
	VPSLLQ   $32, Y3, Y3
	VPADDQ   Y1, Y0, Y0
	VPADDQ   Y4, Y3, Y3
	VPSRLQ $27, Y0, Y1
	VPSRLQ $27, Y3, Y4
	VPXOR  Y1, Y0, Y0
	VPXOR  Y4, Y3, Y3
	VPMULUDQ Y11, Y0, Y1
	VPMULUDQ Y11, Y3, Y4
	VPSRLQ   $32, Y0, Y2
	VPSRLQ   $32, Y3, Y5
	VPMULUDQ Y11, Y2, Y2
	VPMULUDQ Y11, Y5, Y5
	VPMULUDQ Y10, Y0, Y0
	VPMULUDQ Y10, Y3, Y3
	VPADDQ   Y2, Y0, Y0
	VPADDQ   Y5, Y3, Y3
	VPSLLQ   $32, Y0, Y0
	VPSLLQ   $32, Y3, Y3
	VPADDQ   Y1, Y0, Y0
	VPADDQ   Y4, Y3, Y3
	VPSRLQ $31, Y0, Y1
	VPSRLQ $31, Y3, Y4
	VPXOR  Y1, Y0, Y0
	VPXOR  Y4, Y3, Y3
	VPSRLQ  $12, Y0, Y1
	VPSRLQ  $12, Y3, Y4
	VPOR    Y9, Y1, Y1
	VPOR    Y9, Y4, Y4
	VSUBPD  Y9, Y1, Y1
	VSUBPD  Y9, Y4, Y4
	VPAND   Y8, Y0, Y2
	VPAND   Y8, Y3, Y5
	VPCMPEQQ Y8, Y2, Y2
	VPCMPEQQ Y8, Y5, Y5
	VPAND   Y7, Y2, Y2
	VPAND   Y7, Y5, Y5
	VADDPD  Y2, Y1, Y1
	VADDPD  Y5, Y4, Y4
	VMOVUPD Y1, 0(DI)(AX*8)
	VMOVUPD Y4, 32(DI)(AX*8)
	ADDQ $8, AX
	JMP  loop

single:
	CMPQ AX, CX
	JGE  done
	VMOVDQA Y15, Y0
	VPADDQ  Y14, Y15, Y15
	VPSRLQ $30, Y0, Y1
	VPXOR  Y1, Y0, Y0
	VPMULUDQ Y13, Y0, Y1
	VPSRLQ   $32, Y0, Y2
	VPMULUDQ Y13, Y2, Y2
	VPMULUDQ Y12, Y0, Y0
	VPADDQ   Y2, Y0, Y0
	VPSLLQ   $32, Y0, Y0
	VPADDQ   Y1, Y0, Y0
	VPSRLQ $27, Y0, Y1
	VPXOR  Y1, Y0, Y0
	VPMULUDQ Y11, Y0, Y1
	VPSRLQ   $32, Y0, Y2
	VPMULUDQ Y11, Y2, Y2
	VPMULUDQ Y10, Y0, Y0
	VPADDQ   Y2, Y0, Y0
	VPSLLQ   $32, Y0, Y0
	VPADDQ   Y1, Y0, Y0
	VPSRLQ $31, Y0, Y1
	VPXOR  Y1, Y0, Y0
	VPSRLQ  $12, Y0, Y1
	VPOR    Y9, Y1, Y1
	VSUBPD  Y9, Y1, Y1
	VPAND   Y8, Y0, Y2
	VPCMPEQQ Y8, Y2, Y2
	VPAND   Y7, Y2, Y2
	VADDPD  Y2, Y1, Y1
	VMOVUPD Y1, 0(DI)(AX*8)
	ADDQ $4, AX
	JMP  single

done:
	VZEROUPPER
	RET

// func cpuidAVX2() bool
// CPUID.(EAX=7, ECX=0):EBX bit 5.
TEXT ·cpuidAVX2(SB), NOSPLIT, $0-1
	MOVL $7, AX
	MOVL $0, CX
	CPUID
	SHRL $5, BX
	ANDL $1, BX
	MOVB BX, ret+0(FP)
	RET

// One round of 8 values: the hash of lanes r (each lane's input in r),
// leaving the floats in r; t is a temporary. Z13 and Z12 hold the
// multipliers, Z11 2^-53.
#define MIX8(r, t) \
	VPSRLQ  $30, r, t; \
	VPXORQ  t, r, r; \
	VPMULLQ Z13, r, r; \
	VPSRLQ  $27, r, t; \
	VPXORQ  t, r, r; \
	VPMULLQ Z12, r, r; \
	VPSRLQ  $31, r, t; \
	VPXORQ  t, r, r; \
	VPSRLQ  $11, r, r; \
	VCVTQQ2PD r, r; \
	VMULPD  Z11, r, r

// func uniformAVX512(d []float64, lanes *[8]uint64, step uint64)
//
// uniformAVX2's values eight at a time, with AVX-512DQ's 64-bit multiply
// (VPMULLQ, the low 64 bits of the product, as Go's *) and its exact
// int64-to-float64 conversion (VCVTQQ2PD; the 53-bit values are exact in
// float64, and the product by 2^-53 is exact too): the values are those of
// the scalar code bit for bit. Four runs of eight a round, so that their
// dependency chains overlap. len(d) is a multiple of 8.
TEXT ·uniformAVX512(SB), NOSPLIT, $0-40
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ lanes+24(FP), SI
	VMOVDQU64 (SI), Z15
	MOVQ step+32(FP), AX
	VPBROADCASTQ AX, Z14
	MOVQ $-4658895280553007687, AX // 0xBF58476D1CE4E5B9
	VPBROADCASTQ AX, Z13
	MOVQ $-7723592293110705685, AX // 0x94D049BB133111EB
	VPBROADCASTQ AX, Z12
	MOVQ $0x3CA0000000000000, AX // 2^-53
	VPBROADCASTQ AX, Z11
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-32, BX

loop512:
	CMPQ AX, BX
	JGE  single512
	VMOVDQA64 Z15, Z0
	VPADDQ    Z14, Z15, Z1
	VPADDQ    Z14, Z1, Z2
	VPADDQ    Z14, Z2, Z3
	VPADDQ    Z14, Z3, Z15
	MIX8(Z0, Z4)
	MIX8(Z1, Z5)
	MIX8(Z2, Z6)
	MIX8(Z3, Z7)
	VMOVUPD Z0, 0(DI)(AX*8)
	VMOVUPD Z1, 64(DI)(AX*8)
	VMOVUPD Z2, 128(DI)(AX*8)
	VMOVUPD Z3, 192(DI)(AX*8)
	ADDQ $32, AX
	JMP  loop512

single512:
	CMPQ AX, CX
	JGE  done512
	VMOVDQA64 Z15, Z0
	VPADDQ    Z14, Z15, Z15
	MIX8(Z0, Z4)
	VMOVUPD Z0, 0(DI)(AX*8)
	ADDQ $8, AX
	JMP  single512

done512:
	VZEROUPPER
	RET
