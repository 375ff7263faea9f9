#include "textflag.h"

// Vector loops of wide.go: 16 columns at a time, in four registers of four
// float64 accumulators, to which each row's float32 values are widened
// (VCVTPS2PD) and added in row order. The additions are those of the
// scalar loop, not fused: the results are the same to the bit.

// func addWideF32AVX2(acc *float64, rows **float32, k, n int)
TEXT ·addWideF32AVX2(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), DI
	MOVQ rows+8(FP), SI
	MOVQ k+16(FP), R8
	MOVQ n+24(FP), CX
	XORQ AX, AX

addcol:
	VMOVUPD (DI)(AX*8), Y0
	VMOVUPD 32(DI)(AX*8), Y1
	VMOVUPD 64(DI)(AX*8), Y2
	VMOVUPD 96(DI)(AX*8), Y3
	XORQ R9, R9

addrow:
	MOVQ (SI)(R9*8), R10
	VCVTPS2PD (R10)(AX*4), Y4
	VCVTPS2PD 16(R10)(AX*4), Y5
	VCVTPS2PD 32(R10)(AX*4), Y6
	VCVTPS2PD 48(R10)(AX*4), Y7
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	INCQ R9
	CMPQ R9, R8
	JLT  addrow
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	VMOVUPD Y2, 64(DI)(AX*8)
	VMOVUPD Y3, 96(DI)(AX*8)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT  addcol
	VZEROUPPER
	RET

// func sqDevWideF32AVX2(m2, mean *float64, rows **float32, k, n int)
TEXT ·sqDevWideF32AVX2(SB), NOSPLIT, $0-40
	MOVQ m2+0(FP), DI
	MOVQ mean+8(FP), DX
	MOVQ rows+16(FP), SI
	MOVQ k+24(FP), R8
	MOVQ n+32(FP), CX
	XORQ AX, AX

sqcol:
	VMOVUPD (DI)(AX*8), Y0
	VMOVUPD 32(DI)(AX*8), Y1
	VMOVUPD 64(DI)(AX*8), Y2
	VMOVUPD 96(DI)(AX*8), Y3
	VMOVUPD (DX)(AX*8), Y8
	VMOVUPD 32(DX)(AX*8), Y9
	VMOVUPD 64(DX)(AX*8), Y10
	VMOVUPD 96(DX)(AX*8), Y11
	XORQ R9, R9

sqrow:
	MOVQ (SI)(R9*8), R10
	VCVTPS2PD (R10)(AX*4), Y4
	VCVTPS2PD 16(R10)(AX*4), Y5
	VCVTPS2PD 32(R10)(AX*4), Y6
	VCVTPS2PD 48(R10)(AX*4), Y7
	VSUBPD Y8, Y4, Y4
	VSUBPD Y9, Y5, Y5
	VSUBPD Y10, Y6, Y6
	VSUBPD Y11, Y7, Y7
	VMULPD Y4, Y4, Y4
	VMULPD Y5, Y5, Y5
	VMULPD Y6, Y6, Y6
	VMULPD Y7, Y7, Y7
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	INCQ R9
	CMPQ R9, R8
	JLT  sqrow
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	VMOVUPD Y2, 64(DI)(AX*8)
	VMOVUPD Y3, 96(DI)(AX*8)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT  sqcol
	VZEROUPPER
	RET
