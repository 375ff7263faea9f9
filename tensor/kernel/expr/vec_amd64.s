#include "textflag.h"

// Packed loops of float64 arithmetic for expr programs:
// d[i] = a[i] op b[i] for i < len(d); the caller ensures len(a) and
// len(b) are at least len(d). Each packed lane performs the IEEE operation
// the scalar instruction performs, so results are bit-identical to Go's
// loops. The SSE2 loops run on every amd64; the AVX ones, twice as wide,
// where the CPU and OS support AVX.

// func addSSE(d, a, b []float64)
TEXT ·addSSE(SB), NOSPLIT, $0-72
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-4, BX
	JZ   tail
loop:
	MOVUPD (SI)(AX*8), X0
	MOVUPD 16(SI)(AX*8), X1
	MOVUPD (DX)(AX*8), X2
	MOVUPD 16(DX)(AX*8), X3
	ADDPD X2, X0
	ADDPD X3, X1
	MOVUPD X0, (DI)(AX*8)
	MOVUPD X1, 16(DI)(AX*8)
	ADDQ $4, AX
	CMPQ AX, BX
	JLT  loop
tail:
	CMPQ AX, CX
	JGE  done
	MOVSD (SI)(AX*8), X0
	MOVSD (DX)(AX*8), X2
	ADDSD X2, X0
	MOVSD X0, (DI)(AX*8)
	INCQ AX
	JMP  tail
done:
	RET

// func addAVX(d, a, b []float64)
TEXT ·addAVX(SB), NOSPLIT, $0-72
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-8, BX
	JZ   tail
loop:
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD 32(SI)(AX*8), Y1
	VADDPD (DX)(AX*8), Y0, Y0
	VADDPD 32(DX)(AX*8), Y1, Y1
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	ADDQ $8, AX
	CMPQ AX, BX
	JLT  loop
tail:
	CMPQ AX, CX
	JGE  done
	VMOVSD (SI)(AX*8), X0
	VMOVSD (DX)(AX*8), X2
	VADDSD X2, X0, X0
	VMOVSD X0, (DI)(AX*8)
	INCQ AX
	JMP  tail
done:
	VZEROUPPER
	RET

// func subSSE(d, a, b []float64)
TEXT ·subSSE(SB), NOSPLIT, $0-72
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-4, BX
	JZ   tail
loop:
	MOVUPD (SI)(AX*8), X0
	MOVUPD 16(SI)(AX*8), X1
	MOVUPD (DX)(AX*8), X2
	MOVUPD 16(DX)(AX*8), X3
	SUBPD X2, X0
	SUBPD X3, X1
	MOVUPD X0, (DI)(AX*8)
	MOVUPD X1, 16(DI)(AX*8)
	ADDQ $4, AX
	CMPQ AX, BX
	JLT  loop
tail:
	CMPQ AX, CX
	JGE  done
	MOVSD (SI)(AX*8), X0
	MOVSD (DX)(AX*8), X2
	SUBSD X2, X0
	MOVSD X0, (DI)(AX*8)
	INCQ AX
	JMP  tail
done:
	RET

// func subAVX(d, a, b []float64)
TEXT ·subAVX(SB), NOSPLIT, $0-72
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-8, BX
	JZ   tail
loop:
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD 32(SI)(AX*8), Y1
	VSUBPD (DX)(AX*8), Y0, Y0
	VSUBPD 32(DX)(AX*8), Y1, Y1
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	ADDQ $8, AX
	CMPQ AX, BX
	JLT  loop
tail:
	CMPQ AX, CX
	JGE  done
	VMOVSD (SI)(AX*8), X0
	VMOVSD (DX)(AX*8), X2
	VSUBSD X2, X0, X0
	VMOVSD X0, (DI)(AX*8)
	INCQ AX
	JMP  tail
done:
	VZEROUPPER
	RET

// func mulSSE(d, a, b []float64)
TEXT ·mulSSE(SB), NOSPLIT, $0-72
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-4, BX
	JZ   tail
loop:
	MOVUPD (SI)(AX*8), X0
	MOVUPD 16(SI)(AX*8), X1
	MOVUPD (DX)(AX*8), X2
	MOVUPD 16(DX)(AX*8), X3
	MULPD X2, X0
	MULPD X3, X1
	MOVUPD X0, (DI)(AX*8)
	MOVUPD X1, 16(DI)(AX*8)
	ADDQ $4, AX
	CMPQ AX, BX
	JLT  loop
tail:
	CMPQ AX, CX
	JGE  done
	MOVSD (SI)(AX*8), X0
	MOVSD (DX)(AX*8), X2
	MULSD X2, X0
	MOVSD X0, (DI)(AX*8)
	INCQ AX
	JMP  tail
done:
	RET

// func mulAVX(d, a, b []float64)
TEXT ·mulAVX(SB), NOSPLIT, $0-72
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-8, BX
	JZ   tail
loop:
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD 32(SI)(AX*8), Y1
	VMULPD (DX)(AX*8), Y0, Y0
	VMULPD 32(DX)(AX*8), Y1, Y1
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	ADDQ $8, AX
	CMPQ AX, BX
	JLT  loop
tail:
	CMPQ AX, CX
	JGE  done
	VMOVSD (SI)(AX*8), X0
	VMOVSD (DX)(AX*8), X2
	VMULSD X2, X0, X0
	VMOVSD X0, (DI)(AX*8)
	INCQ AX
	JMP  tail
done:
	VZEROUPPER
	RET

// func divSSE(d, a, b []float64)
TEXT ·divSSE(SB), NOSPLIT, $0-72
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-4, BX
	JZ   tail
loop:
	MOVUPD (SI)(AX*8), X0
	MOVUPD 16(SI)(AX*8), X1
	MOVUPD (DX)(AX*8), X2
	MOVUPD 16(DX)(AX*8), X3
	DIVPD X2, X0
	DIVPD X3, X1
	MOVUPD X0, (DI)(AX*8)
	MOVUPD X1, 16(DI)(AX*8)
	ADDQ $4, AX
	CMPQ AX, BX
	JLT  loop
tail:
	CMPQ AX, CX
	JGE  done
	MOVSD (SI)(AX*8), X0
	MOVSD (DX)(AX*8), X2
	DIVSD X2, X0
	MOVSD X0, (DI)(AX*8)
	INCQ AX
	JMP  tail
done:
	RET

// func divAVX(d, a, b []float64)
TEXT ·divAVX(SB), NOSPLIT, $0-72
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-8, BX
	JZ   tail
loop:
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD 32(SI)(AX*8), Y1
	VDIVPD (DX)(AX*8), Y0, Y0
	VDIVPD 32(DX)(AX*8), Y1, Y1
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	ADDQ $8, AX
	CMPQ AX, BX
	JLT  loop
tail:
	CMPQ AX, CX
	JGE  done
	VMOVSD (SI)(AX*8), X0
	VMOVSD (DX)(AX*8), X2
	VDIVSD X2, X0, X0
	VMOVSD X0, (DI)(AX*8)
	INCQ AX
	JMP  tail
done:
	VZEROUPPER
	RET

// func sum8SSE(x []float64, r *[8]float64)
// r[k] = x[k] + x[k+8] + x[k+16] + ..., added in that order; len(x) is a
// multiple of 8, at least 8. These are the eight running sums of
// pairwiseSum's leaves.
TEXT ·sum8SSE(SB), NOSPLIT, $0-32
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ r+24(FP), DI
	MOVUPD (SI), X0
	MOVUPD 16(SI), X1
	MOVUPD 32(SI), X2
	MOVUPD 48(SI), X3
	MOVQ $8, AX
loop:
	CMPQ AX, CX
	JGE  done
	MOVUPD (SI)(AX*8), X4
	MOVUPD 16(SI)(AX*8), X5
	MOVUPD 32(SI)(AX*8), X6
	MOVUPD 48(SI)(AX*8), X7
	ADDPD X4, X0
	ADDPD X5, X1
	ADDPD X6, X2
	ADDPD X7, X3
	ADDQ $8, AX
	JMP  loop
done:
	MOVUPD X0, (DI)
	MOVUPD X1, 16(DI)
	MOVUPD X2, 32(DI)
	MOVUPD X3, 48(DI)
	RET

// func sum8AVX(x []float64, r *[8]float64)
TEXT ·sum8AVX(SB), NOSPLIT, $0-32
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ r+24(FP), DI
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y1
	MOVQ $8, AX
loop:
	CMPQ AX, CX
	JGE  done
	VADDPD (SI)(AX*8), Y0, Y0
	VADDPD 32(SI)(AX*8), Y1, Y1
	ADDQ $8, AX
	JMP  loop
done:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VZEROUPPER
	RET

// func cpuid(leaf, sub uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET

// func xgetbv0() (lo uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-4
	MOVL $0, CX
	XGETBV
	MOVL AX, lo+0(FP)
	RET
