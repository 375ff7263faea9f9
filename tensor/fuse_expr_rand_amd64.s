#include "textflag.h"

// func uniformAVX2(d []float64, lanes *[4]uint64, step, k1 uint64)
//
// The uniform values of randStream.uniform, four at a time: lane i of
// *lanes holds the first hash input (counter*golden + k0) of d[i], and
// each next four values' inputs are step (4*golden) further. AVX2 has no
// 64-bit multiply, so each product x*m is formed from 32-bit halves:
// lo(x)*lo(m) + (hi(x)*lo(m) + lo(x)*hi(m))<<32, which is x*m modulo 2^64.
// The 53 random bits v convert to float64 exactly as 2*(v>>1) + (v&1),
// each half through the 2^52 exponent trick, and scale by 2^-53 exactly:
// the values are those of the scalar code bit for bit. len(d) is a
// multiple of 4.
TEXT ·uniformAVX2(SB), NOSPLIT, $0-48
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ lanes+24(FP), SI
	VMOVDQU (SI), Y15
	VPBROADCASTQ step+32(FP), Y14
	VPBROADCASTQ k1+40(FP), Y9
	MOVQ $-4658895280553007687, AX
	MOVQ AX, X13
	VPBROADCASTQ X13, Y13
	MOVQ $3210233709, AX
	MOVQ AX, X12
	VPBROADCASTQ X12, Y12
	MOVQ $-7723592293110705685, AX
	MOVQ AX, X11
	VPBROADCASTQ X11, Y11
	MOVQ $2496678331, AX
	MOVQ AX, X10
	VPBROADCASTQ X10, Y10
	MOVQ $4841369599423283200, AX
	MOVQ AX, X8
	VPBROADCASTQ X8, Y8
	MOVQ $1, AX
	MOVQ AX, X6
	VPBROADCASTQ X6, Y6
	MOVQ $4368491638549381120, AX
	MOVQ AX, X5
	VPBROADCASTQ X5, Y5
	XORQ AX, AX

loop:
	CMPQ AX, CX
	JGE  done
	VMOVDQA Y15, Y0
	VPADDQ  Y14, Y15, Y15

	// x = (x ^ x>>30) * m1
	VPSRLQ   $30, Y0, Y1
	VPXOR    Y1, Y0, Y0
	VPMULUDQ Y13, Y0, Y1
	VPSRLQ   $32, Y0, Y2
	VPMULUDQ Y13, Y2, Y2
	VPMULUDQ Y12, Y0, Y3
	VPADDQ   Y3, Y2, Y2
	VPSLLQ   $32, Y2, Y2
	VPADDQ   Y2, Y1, Y0

	// x = (x ^ x>>27) * m2
	VPSRLQ   $27, Y0, Y1
	VPXOR    Y1, Y0, Y0
	VPMULUDQ Y11, Y0, Y1
	VPSRLQ   $32, Y0, Y2
	VPMULUDQ Y11, Y2, Y2
	VPMULUDQ Y10, Y0, Y3
	VPADDQ   Y3, Y2, Y2
	VPSLLQ   $32, Y2, Y2
	VPADDQ   Y2, Y1, Y0

	// x = x ^ x>>31 ^ k1
	VPSRLQ $31, Y0, Y1
	VPXOR  Y1, Y0, Y0
	VPXOR  Y9, Y0, Y0

	// x = (x ^ x>>30) * m1
	VPSRLQ   $30, Y0, Y1
	VPXOR    Y1, Y0, Y0
	VPMULUDQ Y13, Y0, Y1
	VPSRLQ   $32, Y0, Y2
	VPMULUDQ Y13, Y2, Y2
	VPMULUDQ Y12, Y0, Y3
	VPADDQ   Y3, Y2, Y2
	VPSLLQ   $32, Y2, Y2
	VPADDQ   Y2, Y1, Y0

	// x = (x ^ x>>27) * m2
	VPSRLQ   $27, Y0, Y1
	VPXOR    Y1, Y0, Y0
	VPMULUDQ Y11, Y0, Y1
	VPSRLQ   $32, Y0, Y2
	VPMULUDQ Y11, Y2, Y2
	VPMULUDQ Y10, Y0, Y3
	VPADDQ   Y3, Y2, Y2
	VPSLLQ   $32, Y2, Y2
	VPADDQ   Y2, Y1, Y0

	// x ^= x>>31; v = x>>11
	VPSRLQ $31, Y0, Y1
	VPXOR  Y1, Y0, Y0

	// float64(v) = 2*float64(v>>1) + float64(v&1), times 2^-53
	VPSRLQ $12, Y0, Y1
	VPOR   Y8, Y1, Y1
	VSUBPD Y8, Y1, Y1
	VADDPD Y1, Y1, Y1
	VPSRLQ $11, Y0, Y2
	VPAND  Y6, Y2, Y2
	VPOR   Y8, Y2, Y2
	VSUBPD Y8, Y2, Y2
	VADDPD Y2, Y1, Y1
	VMULPD Y5, Y1, Y1
	VMOVUPD Y1, (DI)(AX*8)

	ADDQ $4, AX
	JMP  loop

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
