#include "textflag.h"

// Vector folds of max and min over float64s with Go's rules: NaN wins,
// and +0 is above -0. VMAXPD and VMINPD give their second operand when
// either is NaN or both are zeros, so NaN is tracked apart (an unordered
// compare, or-ed) and equal lanes take a & b for max (+0 unless both are
// -0), a | b for min (-0 unless both are +0). Sixteen running values in
// lanes (set by the caller to the fold's start) take n elements of row,
// n a multiple of 16; the result says whether a NaN was seen.

#define STEP_MAX(V, A) \
	VCMPPD $3, V, V, Y13; \
	VORPD  Y13, Y12, Y12; \
	VMAXPD V, A, Y14; \
	VCMPPD $0, V, A, Y13; \
	VANDPD V, A, Y15; \
	VBLENDVPD Y13, Y15, Y14, A

#define STEP_MIN(V, A) \
	VCMPPD $3, V, V, Y13; \
	VORPD  Y13, Y12, Y12; \
	VMINPD V, A, Y14; \
	VCMPPD $0, V, A, Y13; \
	VORPD  V, A, Y15; \
	VBLENDVPD Y13, Y15, Y14, A

// func maxF64AVX2(row []float64, n int, lanes *[16]float64) bool
TEXT ·maxF64AVX2(SB), NOSPLIT, $0-41
	MOVQ row_base+0(FP), SI
	MOVQ n+24(FP), CX
	MOVQ lanes+32(FP), DI
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	VXORPD Y12, Y12, Y12
	XORQ AX, AX
maxloop:
	CMPQ AX, CX
	JGE  maxdone
	VMOVUPD (SI)(AX*8), Y4
	VMOVUPD 32(SI)(AX*8), Y5
	VMOVUPD 64(SI)(AX*8), Y6
	VMOVUPD 96(SI)(AX*8), Y7
	STEP_MAX(Y4, Y0)
	STEP_MAX(Y5, Y1)
	STEP_MAX(Y6, Y2)
	STEP_MAX(Y7, Y3)
	ADDQ $16, AX
	JMP  maxloop
maxdone:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VMOVMSKPD Y12, AX
	TESTQ AX, AX
	SETNE ret+40(FP)
	VZEROUPPER
	RET

// func minF64AVX2(row []float64, n int, lanes *[16]float64) bool
TEXT ·minF64AVX2(SB), NOSPLIT, $0-41
	MOVQ row_base+0(FP), SI
	MOVQ n+24(FP), CX
	MOVQ lanes+32(FP), DI
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	VXORPD Y12, Y12, Y12
	XORQ AX, AX
minloop:
	CMPQ AX, CX
	JGE  mindone
	VMOVUPD (SI)(AX*8), Y4
	VMOVUPD 32(SI)(AX*8), Y5
	VMOVUPD 64(SI)(AX*8), Y6
	VMOVUPD 96(SI)(AX*8), Y7
	STEP_MIN(Y4, Y0)
	STEP_MIN(Y5, Y1)
	STEP_MIN(Y6, Y2)
	STEP_MIN(Y7, Y3)
	ADDQ $16, AX
	JMP  minloop
mindone:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VMOVMSKPD Y12, AX
	TESTQ AX, AX
	SETNE ret+40(FP)
	VZEROUPPER
	RET

// The elementwise forms, acc[i] = max(acc[i], row[i]) (or min) for i < n,
// n a multiple of 4: lanes where either is NaN take their sum (a NaN).

#define PAIR(OP, TIE) \
	VMOVUPD (DI)(AX*8), Y0; \
	VMOVUPD (SI)(AX*8), Y1; \
	OP     Y1, Y0, Y2; \
	VCMPPD $0, Y1, Y0, Y3; \
	TIE    Y1, Y0, Y4; \
	VBLENDVPD Y3, Y4, Y2, Y2; \
	VCMPPD $3, Y1, Y0, Y3; \
	VADDPD Y1, Y0, Y4; \
	VBLENDVPD Y3, Y4, Y2, Y2; \
	VMOVUPD Y2, (DI)(AX*8)

// func maxPairF64AVX2(acc, row []float64, n int)
TEXT ·maxPairF64AVX2(SB), NOSPLIT, $0-56
	MOVQ acc_base+0(FP), DI
	MOVQ row_base+24(FP), SI
	MOVQ n+48(FP), CX
	XORQ AX, AX
maxpair:
	CMPQ AX, CX
	JGE  maxpairdone
	PAIR(VMAXPD, VANDPD)
	ADDQ $4, AX
	JMP  maxpair
maxpairdone:
	VZEROUPPER
	RET

// func minPairF64AVX2(acc, row []float64, n int)
TEXT ·minPairF64AVX2(SB), NOSPLIT, $0-56
	MOVQ acc_base+0(FP), DI
	MOVQ row_base+24(FP), SI
	MOVQ n+48(FP), CX
	XORQ AX, AX
minpair:
	CMPQ AX, CX
	JGE  minpairdone
	PAIR(VMINPD, VORPD)
	ADDQ $4, AX
	JMP  minpair
minpairdone:
	VZEROUPPER
	RET

// The float32 folds: eight lanes a register, 32 values a round, 32
// running values in lanes.

#define STEP32_MAX(V, A) \
	VCMPPS $3, V, V, Y13; \
	VORPS  Y13, Y12, Y12; \
	VMAXPS V, A, Y14; \
	VCMPPS $0, V, A, Y13; \
	VANDPS V, A, Y15; \
	VBLENDVPS Y13, Y15, Y14, A

#define STEP32_MIN(V, A) \
	VCMPPS $3, V, V, Y13; \
	VORPS  Y13, Y12, Y12; \
	VMINPS V, A, Y14; \
	VCMPPS $0, V, A, Y13; \
	VORPS  V, A, Y15; \
	VBLENDVPS Y13, Y15, Y14, A

// func maxF32AVX2(row []float32, n int, lanes *[32]float32) bool
TEXT ·maxF32AVX2(SB), NOSPLIT, $0-41
	MOVQ row_base+0(FP), SI
	MOVQ n+24(FP), CX
	MOVQ lanes+32(FP), DI
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VXORPS Y12, Y12, Y12
	XORQ AX, AX
maxloop32:
	CMPQ AX, CX
	JGE  maxdone32
	VMOVUPS (SI)(AX*4), Y4
	VMOVUPS 32(SI)(AX*4), Y5
	VMOVUPS 64(SI)(AX*4), Y6
	VMOVUPS 96(SI)(AX*4), Y7
	STEP32_MAX(Y4, Y0)
	STEP32_MAX(Y5, Y1)
	STEP32_MAX(Y6, Y2)
	STEP32_MAX(Y7, Y3)
	ADDQ $32, AX
	JMP  maxloop32
maxdone32:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVMSKPS Y12, AX
	TESTQ AX, AX
	SETNE ret+40(FP)
	VZEROUPPER
	RET

// func minF32AVX2(row []float32, n int, lanes *[32]float32) bool
TEXT ·minF32AVX2(SB), NOSPLIT, $0-41
	MOVQ row_base+0(FP), SI
	MOVQ n+24(FP), CX
	MOVQ lanes+32(FP), DI
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VXORPS Y12, Y12, Y12
	XORQ AX, AX
minloop32:
	CMPQ AX, CX
	JGE  mindone32
	VMOVUPS (SI)(AX*4), Y4
	VMOVUPS 32(SI)(AX*4), Y5
	VMOVUPS 64(SI)(AX*4), Y6
	VMOVUPS 96(SI)(AX*4), Y7
	STEP32_MIN(Y4, Y0)
	STEP32_MIN(Y5, Y1)
	STEP32_MIN(Y6, Y2)
	STEP32_MIN(Y7, Y3)
	ADDQ $32, AX
	JMP  minloop32
mindone32:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVMSKPS Y12, AX
	TESTQ AX, AX
	SETNE ret+40(FP)
	VZEROUPPER
	RET

// The elementwise float32 forms, n a multiple of 8.

#define PAIR32(OP, TIE) \
	VMOVUPS (DI)(AX*4), Y0; \
	VMOVUPS (SI)(AX*4), Y1; \
	OP     Y1, Y0, Y2; \
	VCMPPS $0, Y1, Y0, Y3; \
	TIE    Y1, Y0, Y4; \
	VBLENDVPS Y3, Y4, Y2, Y2; \
	VCMPPS $3, Y1, Y0, Y3; \
	VADDPS Y1, Y0, Y4; \
	VBLENDVPS Y3, Y4, Y2, Y2; \
	VMOVUPS Y2, (DI)(AX*4)

// func maxPairF32AVX2(acc, row []float32, n int)
TEXT ·maxPairF32AVX2(SB), NOSPLIT, $0-56
	MOVQ acc_base+0(FP), DI
	MOVQ row_base+24(FP), SI
	MOVQ n+48(FP), CX
	XORQ AX, AX
maxpair32:
	CMPQ AX, CX
	JGE  maxpairdone32
	PAIR32(VMAXPS, VANDPS)
	ADDQ $8, AX
	JMP  maxpair32
maxpairdone32:
	VZEROUPPER
	RET

// func minPairF32AVX2(acc, row []float32, n int)
TEXT ·minPairF32AVX2(SB), NOSPLIT, $0-56
	MOVQ acc_base+0(FP), DI
	MOVQ row_base+24(FP), SI
	MOVQ n+48(FP), CX
	XORQ AX, AX
minpair32:
	CMPQ AX, CX
	JGE  minpairdone32
	PAIR32(VMINPS, VORPS)
	ADDQ $8, AX
	JMP  minpair32
minpairdone32:
	VZEROUPPER
	RET
