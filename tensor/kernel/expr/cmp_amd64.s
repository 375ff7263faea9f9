#include "textflag.h"

// Packed float64 comparisons for expr programs: d[i] = 1 when
// a[i] pred b[i], else 0, for i < len(d) rounded down to a multiple of 8
// (the caller does the rest). VCMPPD's ordered predicates are false when
// either operand is NaN and the unordered "not equal" is true, as Go's
// operators are. Eight results, two VMOVMSKPD masks of four, spread into
// eight bytes of 0 or 1 by PDEP.
#define CMPLOOP(pred) \
	MOVQ d_base+0(FP), DI \
	MOVQ d_len+8(FP), CX \
	MOVQ a_base+24(FP), SI \
	MOVQ b_base+48(FP), DX \
	MOVQ $0x0101010101010101, R10 \
	XORQ AX, AX \
	ANDQ $-8, CX \
	JZ   done \
loop: \
	VMOVUPD (SI)(AX*8), Y0 \
	VMOVUPD 32(SI)(AX*8), Y1 \
	VCMPPD  $pred, (DX)(AX*8), Y0, Y0 \
	VCMPPD  $pred, 32(DX)(AX*8), Y1, Y1 \
	VMOVMSKPD Y0, R8 \
	VMOVMSKPD Y1, R9 \
	SHLQ  $4, R9 \
	ORQ   R9, R8 \
	PDEPQ R10, R8, R8 \
	MOVQ  R8, (DI)(AX*1) \
	ADDQ  $8, AX \
	CMPQ  AX, CX \
	JLT   loop \
done: \
	VZEROUPPER \
	RET

// func lessAVX(d []uint8, a, b []float64)
TEXT ·lessAVX(SB), NOSPLIT, $0-72
	CMPLOOP(0x11) // LT_OQ

// func lessEqAVX(d []uint8, a, b []float64)
TEXT ·lessEqAVX(SB), NOSPLIT, $0-72
	CMPLOOP(0x12) // LE_OQ

// func equalAVX(d []uint8, a, b []float64)
TEXT ·equalAVX(SB), NOSPLIT, $0-72
	CMPLOOP(0x00) // EQ_OQ

// func notEqualAVX(d []uint8, a, b []float64)
TEXT ·notEqualAVX(SB), NOSPLIT, $0-72
	CMPLOOP(0x04) // NEQ_UQ
