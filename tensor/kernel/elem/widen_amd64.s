#include "textflag.h"

// func widenF32AVX2(dst *float64, src *float32, n int)
//
// dst[i] = float64(src[i]) for the first n (a multiple of 16) elements,
// 16 at a time: VCVTPS2PD is exact, as Go's conversion is.
TEXT ·widenF32AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX

loop:
	VCVTPS2PD (SI)(AX*4), Y0
	VCVTPS2PD 16(SI)(AX*4), Y1
	VCVTPS2PD 32(SI)(AX*4), Y2
	VCVTPS2PD 48(SI)(AX*4), Y3
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	VMOVUPD Y2, 64(DI)(AX*8)
	VMOVUPD Y3, 96(DI)(AX*8)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT  loop
	VZEROUPPER
	RET
