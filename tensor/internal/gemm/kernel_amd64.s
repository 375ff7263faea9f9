//go:build !purego

#include "textflag.h"

// The micro-kernels: c = alpha * a b + beta * c for one register block of c,
// 6 rows by 8 float64 (or 16 float32) columns, two YMM registers a row.
//
// a is a packed micro-panel of A: for each of the k steps, the 6 values of
// one column of the block's rows. b is a packed micro-panel of B: for each
// step, the 8 (16) values of one row of the block's columns. Both are read
// in order, once. c is row-major with rows ldc elements apart.
//
// Each step loads the row of B into Y0, Y1, broadcasts the 6 values of A
// in turn into Y2 and Y3 (two, so that a broadcast need not wait for the
// FMAs reading the previous one), and makes 12 FMAs into the accumulators
// Y4-Y15 (row i in Y(4+2i), Y(5+2i)). Twelve independent chains cover the
// FMA's latency (4 cycles) times its throughput (2 a cycle) with room to
// spare; the 8 loads a step fit the load ports' 2-3 a cycle.
//
// beta == 0 stores alpha * ab without reading c, so that NaNs in c do not
// propagate, as BLAS requires.

#define ACC_ZERO \
	VXORPD Y4, Y4, Y4; VXORPD Y5, Y5, Y5; VXORPD Y6, Y6, Y6; VXORPD Y7, Y7, Y7; \
	VXORPD Y8, Y8, Y8; VXORPD Y9, Y9, Y9; VXORPD Y10, Y10, Y10; VXORPD Y11, Y11, Y11; \
	VXORPD Y12, Y12, Y12; VXORPD Y13, Y13, Y13; VXORPD Y14, Y14, Y14; VXORPD Y15, Y15, Y15

// One step of the float64 kernel: A values at aoff(AX), B's row at boff(BX).
#define STEP_D(aoff, boff) \
	VMOVUPD boff(BX), Y0; \
	VMOVUPD boff+32(BX), Y1; \
	VBROADCASTSD aoff(AX), Y2; \
	VFMADD231PD Y0, Y2, Y4; \
	VFMADD231PD Y1, Y2, Y5; \
	VBROADCASTSD aoff+8(AX), Y3; \
	VFMADD231PD Y0, Y3, Y6; \
	VFMADD231PD Y1, Y3, Y7; \
	VBROADCASTSD aoff+16(AX), Y2; \
	VFMADD231PD Y0, Y2, Y8; \
	VFMADD231PD Y1, Y2, Y9; \
	VBROADCASTSD aoff+24(AX), Y3; \
	VFMADD231PD Y0, Y3, Y10; \
	VFMADD231PD Y1, Y3, Y11; \
	VBROADCASTSD aoff+32(AX), Y2; \
	VFMADD231PD Y0, Y2, Y12; \
	VFMADD231PD Y1, Y2, Y13; \
	VBROADCASTSD aoff+40(AX), Y3; \
	VFMADD231PD Y0, Y3, Y14; \
	VFMADD231PD Y1, Y3, Y15

// One step of the float32 kernel.
#define STEP_S(aoff, boff) \
	VMOVUPS boff(BX), Y0; \
	VMOVUPS boff+32(BX), Y1; \
	VBROADCASTSS aoff(AX), Y2; \
	VFMADD231PS Y0, Y2, Y4; \
	VFMADD231PS Y1, Y2, Y5; \
	VBROADCASTSS aoff+4(AX), Y3; \
	VFMADD231PS Y0, Y3, Y6; \
	VFMADD231PS Y1, Y3, Y7; \
	VBROADCASTSS aoff+8(AX), Y2; \
	VFMADD231PS Y0, Y2, Y8; \
	VFMADD231PS Y1, Y2, Y9; \
	VBROADCASTSS aoff+12(AX), Y3; \
	VFMADD231PS Y0, Y3, Y10; \
	VFMADD231PS Y1, Y3, Y11; \
	VBROADCASTSS aoff+16(AX), Y2; \
	VFMADD231PS Y0, Y2, Y12; \
	VFMADD231PS Y1, Y2, Y13; \
	VBROADCASTSS aoff+20(AX), Y3; \
	VFMADD231PS Y0, Y3, Y14; \
	VFMADD231PS Y1, Y3, Y15

// Prefetches the 6 rows of c (DX, rows R8 bytes apart) into L1 while the
// steps run; a row of 64 bytes may straddle two lines. Leaves DX as it was.
#define PREFETCH_C \
	MOVQ DX, R9; \
	PREFETCHT0 (R9); PREFETCHT0 63(R9); ADDQ R8, R9; \
	PREFETCHT0 (R9); PREFETCHT0 63(R9); ADDQ R8, R9; \
	PREFETCHT0 (R9); PREFETCHT0 63(R9); ADDQ R8, R9; \
	PREFETCHT0 (R9); PREFETCHT0 63(R9); ADDQ R8, R9; \
	PREFETCHT0 (R9); PREFETCHT0 63(R9); ADDQ R8, R9; \
	PREFETCHT0 (R9); PREFETCHT0 63(R9)

// Row r0, r1 of the result to c at DX, then DX to the next row.
#define STORE_D(r0, r1) \
	VMULPD Y0, r0, r0; VMULPD Y0, r1, r1; \
	VMOVUPD r0, (DX); VMOVUPD r1, 32(DX); ADDQ R8, DX

#define UPDATE_D(r0, r1) \
	VMULPD Y0, r0, r0; VMULPD Y0, r1, r1; \
	VFMADD231PD (DX), Y1, r0; VFMADD231PD 32(DX), Y1, r1; \
	VMOVUPD r0, (DX); VMOVUPD r1, 32(DX); ADDQ R8, DX

#define STORE_S(r0, r1) \
	VMULPS Y0, r0, r0; VMULPS Y0, r1, r1; \
	VMOVUPS r0, (DX); VMOVUPS r1, 32(DX); ADDQ R8, DX

#define UPDATE_S(r0, r1) \
	VMULPS Y0, r0, r0; VMULPS Y0, r1, r1; \
	VFMADD231PS (DX), Y1, r0; VFMADD231PS 32(DX), Y1, r1; \
	VMOVUPS r0, (DX); VMOVUPS r1, 32(DX); ADDQ R8, DX

// func kernelD(k int, a, b, c *float64, ldc int, alpha, beta float64)
TEXT ·kernelD(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ b+16(FP), BX
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $3, R8
	PREFETCH_C
	ACC_ZERO
	MOVQ CX, R10
	SHRQ $2, R10
	JZ   dtail

dloop4:
	// A comes from L2 (B from L1): fetch the lines 4 rounds ahead into
	// L1, as BLIS' Haswell kernel does (1-2% more GFLOP a CPU-second
	// on 1000³ products, in alternated runs).
	PREFETCHT0 512(AX)
	PREFETCHT0 576(AX)
	PREFETCHT0 640(AX)
	STEP_D(0, 0)
	STEP_D(48, 64)
	STEP_D(96, 128)
	STEP_D(144, 192)
	ADDQ $192, AX
	ADDQ $256, BX
	DECQ R10
	JNZ  dloop4

dtail:
	ANDQ $3, CX
	JZ   dstore

dloop1:
	STEP_D(0, 0)
	ADDQ $48, AX
	ADDQ $64, BX
	DECQ CX
	JNZ  dloop1

dstore:
	VBROADCASTSD alpha+40(FP), Y0
	MOVSD        beta+48(FP), X1
	XORPD        X2, X2
	UCOMISD      X2, X1
	JNE          dupdate
	JPS          dupdate
	STORE_D(Y4, Y5)
	STORE_D(Y6, Y7)
	STORE_D(Y8, Y9)
	STORE_D(Y10, Y11)
	STORE_D(Y12, Y13)
	STORE_D(Y14, Y15)
	VZEROUPPER
	RET

dupdate:
	VBROADCASTSD beta+48(FP), Y1
	UPDATE_D(Y4, Y5)
	UPDATE_D(Y6, Y7)
	UPDATE_D(Y8, Y9)
	UPDATE_D(Y10, Y11)
	UPDATE_D(Y12, Y13)
	UPDATE_D(Y14, Y15)
	VZEROUPPER
	RET

// func kernelS(k int, a, b, c *float32, ldc int, alpha, beta float32)
TEXT ·kernelS(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ b+16(FP), BX
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	PREFETCH_C
	ACC_ZERO
	MOVQ CX, R10
	SHRQ $2, R10
	JZ   stail

sloop4:
	PREFETCHT0 384(AX)
	PREFETCHT0 448(AX)
	STEP_S(0, 0)
	STEP_S(24, 64)
	STEP_S(48, 128)
	STEP_S(72, 192)
	ADDQ $96, AX
	ADDQ $256, BX
	DECQ R10
	JNZ  sloop4

stail:
	ANDQ $3, CX
	JZ   sstore

sloop1:
	STEP_S(0, 0)
	ADDQ $24, AX
	ADDQ $64, BX
	DECQ CX
	JNZ  sloop1

sstore:
	VBROADCASTSS alpha+40(FP), Y0
	MOVSS        beta+44(FP), X1
	XORPS        X2, X2
	UCOMISS      X2, X1
	JNE          supdate
	JPS          supdate
	STORE_S(Y4, Y5)
	STORE_S(Y6, Y7)
	STORE_S(Y8, Y9)
	STORE_S(Y10, Y11)
	STORE_S(Y12, Y13)
	STORE_S(Y14, Y15)
	VZEROUPPER
	RET

supdate:
	VBROADCASTSS beta+44(FP), Y1
	UPDATE_S(Y4, Y5)
	UPDATE_S(Y6, Y7)
	UPDATE_S(Y8, Y9)
	UPDATE_S(Y10, Y11)
	UPDATE_S(Y12, Y13)
	UPDATE_S(Y14, Y15)
	VZEROUPPER
	RET

// func fmaLoop(n int)
// runs n rounds of 12 independent float64 FMAs on registers alone: the
// benchmarks' measure of one core's FMA peak (a round is 96 flops).
TEXT ·fmaLoop(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
	ACC_ZERO
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	TESTQ CX, CX
	JZ    fmadone

fmaround:
	VFMADD231PD Y0, Y1, Y4
	VFMADD231PD Y0, Y1, Y5
	VFMADD231PD Y0, Y1, Y6
	VFMADD231PD Y0, Y1, Y7
	VFMADD231PD Y0, Y1, Y8
	VFMADD231PD Y0, Y1, Y9
	VFMADD231PD Y0, Y1, Y10
	VFMADD231PD Y0, Y1, Y11
	VFMADD231PD Y0, Y1, Y12
	VFMADD231PD Y0, Y1, Y13
	VFMADD231PD Y0, Y1, Y14
	VFMADD231PD Y0, Y1, Y15
	DECQ CX
	JNZ  fmaround

fmadone:
	VZEROUPPER
	RET
