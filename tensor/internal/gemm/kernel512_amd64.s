//go:build !purego

#include "textflag.h"

// The AVX-512 float64 micro-kernel: c = alpha * a b + beta * c for a
// register block of 20 rows by 8 columns, one ZMM register a row.
//
// a is a packed micro-panel of A of 20 rows (for each of the k steps, the
// 20 values of one column of the block's rows), b one of B of 8 columns
// (each step, the 8 values of one row), as for kernelD. Each step loads the
// row of B into Z28 (Z29 on odd steps, so that a load need not wait for
// the FMAs reading the previous one) and makes 20 FMAs into the
// accumulators Z0-Z19, each broadcasting its value of A from memory
// (embedded broadcast), with no register for it. Against kernelD's 6 x 8
// on YMM registers: a step reads B once for 20 rows rather than 6 and
// issues one instruction an FMA rather than 1.7, and a call computes a
// block of C 3.3 times as large for the same loads and stores of C.
//
// beta == 0 stores alpha * ab without reading c.

#define ZERO20 \
	VPXORQ Z0, Z0, Z0; VPXORQ Z1, Z1, Z1; VPXORQ Z2, Z2, Z2; VPXORQ Z3, Z3, Z3; \
	VPXORQ Z4, Z4, Z4; VPXORQ Z5, Z5, Z5; VPXORQ Z6, Z6, Z6; VPXORQ Z7, Z7, Z7; \
	VPXORQ Z8, Z8, Z8; VPXORQ Z9, Z9, Z9; VPXORQ Z10, Z10, Z10; VPXORQ Z11, Z11, Z11; \
	VPXORQ Z12, Z12, Z12; VPXORQ Z13, Z13, Z13; VPXORQ Z14, Z14, Z14; VPXORQ Z15, Z15, Z15; \
	VPXORQ Z16, Z16, Z16; VPXORQ Z17, Z17, Z17; VPXORQ Z18, Z18, Z18; VPXORQ Z19, Z19, Z19

// One step: A's 20 values at aoff(AX), B's row at boff(BX), into register b.
#define STEP20(aoff, boff, b) \
	VMOVUPD boff(BX), b; \
	VFMADD231PD.BCST aoff(AX), b, Z0; \
	VFMADD231PD.BCST aoff+8(AX), b, Z1; \
	VFMADD231PD.BCST aoff+16(AX), b, Z2; \
	VFMADD231PD.BCST aoff+24(AX), b, Z3; \
	VFMADD231PD.BCST aoff+32(AX), b, Z4; \
	VFMADD231PD.BCST aoff+40(AX), b, Z5; \
	VFMADD231PD.BCST aoff+48(AX), b, Z6; \
	VFMADD231PD.BCST aoff+56(AX), b, Z7; \
	VFMADD231PD.BCST aoff+64(AX), b, Z8; \
	VFMADD231PD.BCST aoff+72(AX), b, Z9; \
	VFMADD231PD.BCST aoff+80(AX), b, Z10; \
	VFMADD231PD.BCST aoff+88(AX), b, Z11; \
	VFMADD231PD.BCST aoff+96(AX), b, Z12; \
	VFMADD231PD.BCST aoff+104(AX), b, Z13; \
	VFMADD231PD.BCST aoff+112(AX), b, Z14; \
	VFMADD231PD.BCST aoff+120(AX), b, Z15; \
	VFMADD231PD.BCST aoff+128(AX), b, Z16; \
	VFMADD231PD.BCST aoff+136(AX), b, Z17; \
	VFMADD231PD.BCST aoff+144(AX), b, Z18; \
	VFMADD231PD.BCST aoff+152(AX), b, Z19

// Prefetches the 4 rows of c from R9 on (rows R8 bytes apart; a row of 64
// bytes may straddle two lines), leaving R9 at the next row.
#define PREFETCH_C4 \
	PREFETCHT0 (R9); PREFETCHT0 63(R9); ADDQ R8, R9; \
	PREFETCHT0 (R9); PREFETCHT0 63(R9); ADDQ R8, R9; \
	PREFETCHT0 (R9); PREFETCHT0 63(R9); ADDQ R8, R9; \
	PREFETCHT0 (R9); PREFETCHT0 63(R9); ADDQ R8, R9

// Row r of the result to c at DX, then DX to the next row: alpha in Z30,
// beta in Z31.
#define STORE1(r) \
	VMULPD Z30, r, r; VMOVUPD r, (DX); ADDQ R8, DX

#define UPDATE1(r) \
	VMULPD Z30, r, r; VFMADD231PD (DX), Z31, r; VMOVUPD r, (DX); ADDQ R8, DX

// Four steps, A's pointer in AX and B's in BX then moved past them. A
// comes from L2 (B from L1): its lines are fetched 2 rounds ahead (a round
// reads 640 bytes of A, 10 lines).
#define ROUND4 \
	PREFETCHT0 1280(AX); \
	PREFETCHT0 1344(AX); \
	PREFETCHT0 1408(AX); \
	PREFETCHT0 1472(AX); \
	PREFETCHT0 1536(AX); \
	STEP20(0, 0, Z28); \
	PREFETCHT0 1600(AX); \
	PREFETCHT0 1664(AX); \
	PREFETCHT0 1728(AX); \
	PREFETCHT0 1792(AX); \
	PREFETCHT0 1856(AX); \
	STEP20(160, 64, Z29); \
	STEP20(320, 128, Z28); \
	STEP20(480, 192, Z29); \
	ADDQ $640, AX; \
	ADDQ $256, BX

// func kernelD512(k int, a, b, c *float64, ldc int, alpha, beta float64)
TEXT ·kernelD512(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ b+16(FP), BX
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $3, R8
	MOVQ DX, R9
	PREFETCH_C4
	PREFETCH_C4
	PREFETCH_C4
	PREFETCH_C4
	PREFETCH_C4
	ZERO20
	// The rounds of 4 steps, the last 4 after a second prefetch of C's
	// rows: the first, from memory, lands in L1 and L2, but the A panel
	// streaming through L1 (3.2 KB a round) evicts it from L1 before the
	// update; the second brings the rows back from L2 in time. Without
	// it, W3's profiles put 3% of the kernel's time on the update, with
	// it under 1%.
	MOVQ CX, R10
	SHRQ $2, R10
	MOVQ R10, R11
	SUBQ $4, R11 // the rounds before the second prefetch
	JLE  zprefc  // none: all (up to 4) after it
	MOVQ $4, R10

zloop4:
	ROUND4
	DECQ R11
	JNZ  zloop4

zprefc:
	MOVQ DX, R9
	PREFETCH_C4
	PREFETCH_C4
	PREFETCH_C4
	PREFETCH_C4
	PREFETCH_C4
	TESTQ R10, R10
	JZ    ztail

zlast4:
	ROUND4
	DECQ R10
	JNZ  zlast4

ztail:
	ANDQ $3, CX
	JZ   zstore

zloop1:
	STEP20(0, 0, Z28)
	ADDQ $160, AX
	ADDQ $64, BX
	DECQ CX
	JNZ  zloop1

zstore:
	VBROADCASTSD alpha+40(FP), Z30
	// beta == 0 (either sign) when its bits but the sign are 0; the
	// accumulators fill every vector register it could be tested in.
	MOVQ beta+48(FP), R11
	SHLQ $1, R11
	JNZ  zupdate
	STORE1(Z0); STORE1(Z1); STORE1(Z2); STORE1(Z3); STORE1(Z4)
	STORE1(Z5); STORE1(Z6); STORE1(Z7); STORE1(Z8); STORE1(Z9)
	STORE1(Z10); STORE1(Z11); STORE1(Z12); STORE1(Z13); STORE1(Z14)
	STORE1(Z15); STORE1(Z16); STORE1(Z17); STORE1(Z18); STORE1(Z19)
	VZEROUPPER
	RET

zupdate:
	VBROADCASTSD beta+48(FP), Z31
	UPDATE1(Z0); UPDATE1(Z1); UPDATE1(Z2); UPDATE1(Z3); UPDATE1(Z4)
	UPDATE1(Z5); UPDATE1(Z6); UPDATE1(Z7); UPDATE1(Z8); UPDATE1(Z9)
	UPDATE1(Z10); UPDATE1(Z11); UPDATE1(Z12); UPDATE1(Z13); UPDATE1(Z14)
	UPDATE1(Z15); UPDATE1(Z16); UPDATE1(Z17); UPDATE1(Z18); UPDATE1(Z19)
	VZEROUPPER
	RET
