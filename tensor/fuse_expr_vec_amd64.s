#include "textflag.h"

// Packed SSE2 loops of float64 arithmetic for expr programs:
// d[i] = a[i] op b[i] for i < len(d); the caller ensures len(a) and
// len(b) are at least len(d). Each packed lane is the IEEE operation the
// scalar instruction performs, so results are bit-identical to Go's loops.

// func addF64(d, a, b []float64)
TEXT ·addF64(SB), NOSPLIT, $0-72
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

// func subF64(d, a, b []float64)
TEXT ·subF64(SB), NOSPLIT, $0-72
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

// func mulF64(d, a, b []float64)
TEXT ·mulF64(SB), NOSPLIT, $0-72
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

// func divF64(d, a, b []float64)
TEXT ·divF64(SB), NOSPLIT, $0-72
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


// func sum8F64(x []float64, r *[8]float64)
// r[k] = x[k] + x[k+8] + x[k+16] + ..., added in that order; len(x) is a
// multiple of 8, at least 8. These are the eight running sums of
// pairwiseSum's leaves, two to a register.
TEXT ·sum8F64(SB), NOSPLIT, $0-32
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ r+24(FP), DI
	MOVUPD (SI), X0
	MOVUPD 16(SI), X1
	MOVUPD 32(SI), X2
	MOVUPD 48(SI), X3
	MOVQ $8, AX
sloop:
	CMPQ AX, CX
	JGE  sdone
	MOVUPD (SI)(AX*8), X4
	MOVUPD 16(SI)(AX*8), X5
	MOVUPD 32(SI)(AX*8), X6
	MOVUPD 48(SI)(AX*8), X7
	ADDPD X4, X0
	ADDPD X5, X1
	ADDPD X6, X2
	ADDPD X7, X3
	ADDQ $8, AX
	JMP  sloop
sdone:
	MOVUPD X0, (DI)
	MOVUPD X1, 16(DI)
	MOVUPD X2, 32(DI)
	MOVUPD X3, 48(DI)
	RET
