#include "textflag.h"

// Vector loops of where: d[i] = c[i] != 0 ? x[i] : y[i], on the bits of
// elements of 1, 4 or 8 bytes, for i < n (a multiple of the loop's
// width). A lane of c compared with zero becomes the blend mask, so there
// is no branch on the data.

// func where1AVX2(d, c, x, y []byte, n int)
TEXT ·where1AVX2(SB), NOSPLIT, $0-104
	MOVQ d_base+0(FP), DI
	MOVQ c_base+24(FP), SI
	MOVQ x_base+48(FP), R8
	MOVQ y_base+72(FP), R9
	MOVQ n+96(FP), CX
	XORQ AX, AX
	VPXOR Y15, Y15, Y15
loop1:
	VMOVDQU (SI)(AX*1), Y0
	VPCMPEQB Y15, Y0, Y0
	VMOVDQU (R8)(AX*1), Y2
	VPBLENDVB Y0, (R9)(AX*1), Y2, Y2
	VMOVDQU Y2, (DI)(AX*1)
	ADDQ $32, AX
	CMPQ AX, CX
	JLT  loop1
	VZEROUPPER
	RET

// func where4AVX2(d, c, x, y []byte, n int)
TEXT ·where4AVX2(SB), NOSPLIT, $0-104
	MOVQ d_base+0(FP), DI
	MOVQ c_base+24(FP), SI
	MOVQ x_base+48(FP), R8
	MOVQ y_base+72(FP), R9
	MOVQ n+96(FP), CX
	XORQ AX, AX
	VPXOR Y15, Y15, Y15
loop4:
	VPMOVZXBD (SI)(AX*1), Y0
	VPMOVZXBD 8(SI)(AX*1), Y1
	VPCMPEQD Y15, Y0, Y0
	VPCMPEQD Y15, Y1, Y1
	VMOVUPS (R8)(AX*4), Y2
	VMOVUPS 32(R8)(AX*4), Y3
	VBLENDVPS Y0, (R9)(AX*4), Y2, Y2
	VBLENDVPS Y1, 32(R9)(AX*4), Y3, Y3
	VMOVUPS Y2, (DI)(AX*4)
	VMOVUPS Y3, 32(DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT  loop4
	VZEROUPPER
	RET

// func where8AVX2(d, c, x, y []byte, n int)
TEXT ·where8AVX2(SB), NOSPLIT, $0-104
	MOVQ d_base+0(FP), DI
	MOVQ c_base+24(FP), SI
	MOVQ x_base+48(FP), R8
	MOVQ y_base+72(FP), R9
	MOVQ n+96(FP), CX
	XORQ AX, AX
	VPXOR Y15, Y15, Y15
loop8:
	VPMOVZXBQ (SI)(AX*1), Y0
	VPMOVZXBQ 4(SI)(AX*1), Y1
	VPCMPEQQ Y15, Y0, Y0
	VPCMPEQQ Y15, Y1, Y1
	VMOVUPD (R8)(AX*8), Y2
	VMOVUPD 32(R8)(AX*8), Y3
	VBLENDVPD Y0, (R9)(AX*8), Y2, Y2
	VBLENDVPD Y1, 32(R9)(AX*8), Y3, Y3
	VMOVUPD Y2, (DI)(AX*8)
	VMOVUPD Y3, 32(DI)(AX*8)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT  loop8
	VZEROUPPER
	RET
