//go:build !purego

#include "textflag.h"

// func packPanels64(dst, src unsafe.Pointer, ld, rows, panels, stride int)
//
// The full micro-panels of packB for panels of 64 bytes a row (8 float64
// or 16 float32): for each of the rows of src (ld bytes apart), its first
// panels*64 bytes are cut into 64-byte pieces, piece j going to row p of
// panel j, at dst + j*stride + p*64 (stride is a panel's bytes, kb*64).
// Two YMM loads and stores a piece, where Go's copy of a 64-byte array
// calls memmove.
TEXT ·packPanels64(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ rows+24(FP), CX
	MOVQ panels+32(FP), R9
	MOVQ stride+40(FP), R10
	TESTQ CX, CX
	JZ    pdone
	TESTQ R9, R9
	JZ    pdone

prow:
	MOVQ SI, AX // this row's next piece
	MOVQ DI, DX // where it goes
	MOVQ R9, BX
	SHRQ $1, BX
	JZ   pone

ptwo:
	// Two pieces a round, so that four loads are in flight.
	VMOVUPD (AX), Y0
	VMOVUPD 32(AX), Y1
	VMOVUPD 64(AX), Y2
	VMOVUPD 96(AX), Y3
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	ADDQ    R10, DX
	VMOVUPD Y2, (DX)
	VMOVUPD Y3, 32(DX)
	ADDQ    R10, DX
	ADDQ    $128, AX
	DECQ    BX
	JNZ     ptwo

pone:
	TESTQ $1, R9
	JZ    pnext
	VMOVUPD (AX), Y0
	VMOVUPD 32(AX), Y1
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)

pnext:
	ADDQ R8, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  prow

pdone:
	VZEROUPPER
	RET

// func packRows6D(dst, src unsafe.Pointer, ld, kb int)
//
// packA's panel of 6 rows of float64 from a row-major src (rows ld bytes
// apart), kb columns: dst gets, for each column p, the column's 6 values,
// 48 bytes at dst + 48p. Four columns a round: the 4 x 4 block of rows 0-3
// transposed in registers (unpack, then swap the 128-bit halves) and the
// pairs of rows 4-5 interleaved. kb is a multiple of 4.
TEXT ·packRows6D(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ kb+24(FP), CX
	SHRQ $2, CX
	JZ   adone
	LEAQ (SI)(R8*2), R9 // row 2
	LEAQ (R9)(R8*2), R10 // row 4

around:
	VMOVUPD (SI), Y0        // row 0: p0 p1 p2 p3
	VMOVUPD (SI)(R8*1), Y1  // row 1
	VMOVUPD (R9), Y2        // row 2
	VMOVUPD (R9)(R8*1), Y3  // row 3
	VMOVUPD (R10), Y4       // row 4
	VMOVUPD (R10)(R8*1), Y5 // row 5
	VUNPCKLPD Y1, Y0, Y6       // r0p0 r1p0 r0p2 r1p2
	VUNPCKHPD Y1, Y0, Y7       // r0p1 r1p1 r0p3 r1p3
	VUNPCKLPD Y3, Y2, Y8       // r2p0 r3p0 r2p2 r3p2
	VUNPCKHPD Y3, Y2, Y9       // r2p1 r3p1 r2p3 r3p3
	VUNPCKLPD Y5, Y4, Y10      // r4p0 r5p0 r4p2 r5p2
	VUNPCKHPD Y5, Y4, Y11      // r4p1 r5p1 r4p3 r5p3
	VPERM2F128 $0x20, Y8, Y6, Y0 // column 0, rows 0-3
	VPERM2F128 $0x20, Y9, Y7, Y1 // column 1
	VPERM2F128 $0x31, Y8, Y6, Y2 // column 2
	VPERM2F128 $0x31, Y9, Y7, Y3 // column 3
	VMOVUPD Y0, (DI)
	VMOVUPD X10, 32(DI)
	VMOVUPD Y1, 48(DI)
	VMOVUPD X11, 80(DI)
	VMOVUPD Y2, 96(DI)
	VEXTRACTF128 $1, Y10, 128(DI)
	VMOVUPD Y3, 144(DI)
	VEXTRACTF128 $1, Y11, 176(DI)
	ADDQ $192, DI
	ADDQ $32, SI
	ADDQ $32, R9
	ADDQ $32, R10
	DECQ CX
	JNZ  around

adone:
	VZEROUPPER
	RET

// func packRows4D(dst, src unsafe.Pointer, ld, kb, stride int)
//
// 4 rows of float64 from a row-major src (rows ld bytes apart), kb
// columns, into a panel whose columns are stride bytes apart: column p's
// 4 values go to dst + p*stride. packA calls it for each 4 rows of a
// panel of a multiple of 4 rows. Four columns a round, transposed in
// registers as in packRows6D. kb is a multiple of 4.
TEXT ·packRows4D(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ kb+24(FP), CX
	MOVQ stride+32(FP), R11
	SHRQ $2, CX
	JZ   qdone
	LEAQ (SI)(R8*2), R9 // row 2
	LEAQ (R11)(R11*2), R12 // 3 strides

qround:
	VMOVUPD (SI), Y0       // row 0: p0 p1 p2 p3
	VMOVUPD (SI)(R8*1), Y1 // row 1
	VMOVUPD (R9), Y2       // row 2
	VMOVUPD (R9)(R8*1), Y3 // row 3
	VUNPCKLPD Y1, Y0, Y6   // r0p0 r1p0 r0p2 r1p2
	VUNPCKHPD Y1, Y0, Y7   // r0p1 r1p1 r0p3 r1p3
	VUNPCKLPD Y3, Y2, Y8   // r2p0 r3p0 r2p2 r3p2
	VUNPCKHPD Y3, Y2, Y9   // r2p1 r3p1 r2p3 r3p3
	VPERM2F128 $0x20, Y8, Y6, Y0
	VPERM2F128 $0x20, Y9, Y7, Y1
	VPERM2F128 $0x31, Y8, Y6, Y2
	VPERM2F128 $0x31, Y9, Y7, Y3
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, (DI)(R11*1)
	VMOVUPD Y2, (DI)(R11*2)
	VMOVUPD Y3, (DI)(R12*1)
	LEAQ (DI)(R11*4), DI
	ADDQ $32, SI
	ADDQ $32, R9
	DECQ CX
	JNZ  qround

qdone:
	VZEROUPPER
	RET
