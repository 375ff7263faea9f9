//go:build amd64 && !purego

#include "textflag.h"

// Blosc's byte shuffles of 32 elements a round, in AVX2. Planes p0..p3
// (or p0..p7) are bytes j of the elements, 32 a round from each; the
// elements are 128 (256) bytes a round. AX counts elements, CX is n.
//
// Unshuffling interleaves the planes with unpacks of growing width
// (bytes, then words, then for typesize 8 dwords), which work within each
// 128-bit lane: after them a register holds elements k.. in its low lane
// and 16+k.. in its high lane, and VPERM2I128 puts the lanes in order.
// Shuffling runs the same network backwards: VPSHUFB gathers each byte
// of the elements in a lane, then unpacks transpose across registers.

// In a lane of four float32s: byte 0 of each, then bytes 1, 2, 3.
DATA gather4<>+0(SB)/8, $0x0d0905010c080400
DATA gather4<>+8(SB)/8, $0x0f0b07030e0a0602
DATA gather4<>+16(SB)/8, $0x0d0905010c080400
DATA gather4<>+24(SB)/8, $0x0f0b07030e0a0602
GLOBL gather4<>(SB), RODATA|NOPTR, $32

// Dwords 0 4 1 5 2 6 3 7: the two lanes' dwords of byte j side by side.
DATA pair4<>+0(SB)/8, $0x0000000400000000
DATA pair4<>+8(SB)/8, $0x0000000500000001
DATA pair4<>+16(SB)/8, $0x0000000600000002
DATA pair4<>+24(SB)/8, $0x0000000700000003
GLOBL pair4<>(SB), RODATA|NOPTR, $32

// In a lane of two float64s: word j holds byte j of both.
DATA gather8<>+0(SB)/8, $0x0b030a0209010800
DATA gather8<>+8(SB)/8, $0x0f070e060d050c04
DATA gather8<>+16(SB)/8, $0x0b030a0209010800
DATA gather8<>+24(SB)/8, $0x0f070e060d050c04
GLOBL gather8<>(SB), RODATA|NOPTR, $32

// Words a0 a1 a2 a3 b0 b1 b2 b3 to a0 b0 a1 b1 a2 b2 a3 b3.
DATA zip8<>+0(SB)/8, $0x0b0a030209080100
DATA zip8<>+8(SB)/8, $0x0f0e07060d0c0504
DATA zip8<>+16(SB)/8, $0x0b0a030209080100
DATA zip8<>+24(SB)/8, $0x0f0e07060d0c0504
GLOBL zip8<>(SB), RODATA|NOPTR, $32

// func unshuffle4AVX2(elems, planes unsafe.Pointer, n, stride int)
TEXT ·unshuffle4AVX2(SB), NOSPLIT, $0-32
	MOVQ elems+0(FP), DI
	MOVQ planes+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ stride+24(FP), DX
	LEAQ (SI)(DX*1), R8
	LEAQ (SI)(DX*2), R9
	LEAQ (R8)(DX*2), R10
	XORQ AX, AX

loop:
	VMOVDQU (SI)(AX*1), Y0
	VMOVDQU (R8)(AX*1), Y1
	VMOVDQU (R9)(AX*1), Y2
	VMOVDQU (R10)(AX*1), Y3
	VPUNPCKLBW Y1, Y0, Y4 // bytes 0,1 of elements 0-7 | 16-23
	VPUNPCKHBW Y1, Y0, Y5 // 8-15 | 24-31
	VPUNPCKLBW Y3, Y2, Y6 // bytes 2,3
	VPUNPCKHBW Y3, Y2, Y7
	VPUNPCKLWD Y6, Y4, Y0 // elements 0-3 | 16-19
	VPUNPCKHWD Y6, Y4, Y1 // 4-7 | 20-23
	VPUNPCKLWD Y7, Y5, Y2 // 8-11 | 24-27
	VPUNPCKHWD Y7, Y5, Y3 // 12-15 | 28-31
	VPERM2I128 $0x20, Y1, Y0, Y4
	VPERM2I128 $0x20, Y3, Y2, Y5
	VPERM2I128 $0x31, Y1, Y0, Y6
	VPERM2I128 $0x31, Y3, Y2, Y7
	VMOVDQU Y4, (DI)(AX*4)
	VMOVDQU Y5, 32(DI)(AX*4)
	VMOVDQU Y6, 64(DI)(AX*4)
	VMOVDQU Y7, 96(DI)(AX*4)
	ADDQ $32, AX
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func shuffle4AVX2(planes, elems unsafe.Pointer, n, stride int)
TEXT ·shuffle4AVX2(SB), NOSPLIT, $0-32
	MOVQ planes+0(FP), DI
	MOVQ elems+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ stride+24(FP), DX
	LEAQ (DI)(DX*1), R8
	LEAQ (DI)(DX*2), R9
	LEAQ (R8)(DX*2), R10
	VMOVDQU gather4<>(SB), Y14
	VMOVDQU pair4<>(SB), Y15
	XORQ AX, AX

loop:
	VMOVDQU (SI)(AX*4), Y0
	VMOVDQU 32(SI)(AX*4), Y1
	VMOVDQU 64(SI)(AX*4), Y2
	VMOVDQU 96(SI)(AX*4), Y3
	VPSHUFB Y14, Y0, Y0
	VPSHUFB Y14, Y1, Y1
	VPSHUFB Y14, Y2, Y2
	VPSHUFB Y14, Y3, Y3
	VPERMD  Y0, Y15, Y0 // qword j: byte j of elements 0-7
	VPERMD  Y1, Y15, Y1 // of 8-15
	VPERMD  Y2, Y15, Y2
	VPERMD  Y3, Y15, Y3
	VPUNPCKLQDQ Y1, Y0, Y4 // bytes 0 | 2 of elements 0-15
	VPUNPCKHQDQ Y1, Y0, Y5 // bytes 1 | 3
	VPUNPCKLQDQ Y3, Y2, Y6 // of elements 16-31
	VPUNPCKHQDQ Y3, Y2, Y7
	VPERM2I128 $0x20, Y6, Y4, Y0
	VPERM2I128 $0x20, Y7, Y5, Y1
	VPERM2I128 $0x31, Y6, Y4, Y2
	VPERM2I128 $0x31, Y7, Y5, Y3
	VMOVDQU Y0, (DI)(AX*1)
	VMOVDQU Y1, (R8)(AX*1)
	VMOVDQU Y2, (R9)(AX*1)
	VMOVDQU Y3, (R10)(AX*1)
	ADDQ $32, AX
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// PLANES8 sets DI, R8-R13 and BX to planes 0-7, from DI and DX (stride).
#define PLANES8 \
	LEAQ (DI)(DX*1), R8; \
	LEAQ (DI)(DX*2), R9; \
	LEAQ (R8)(DX*2), R10; \
	LEAQ (DI)(DX*4), R11; \
	LEAQ (R8)(DX*4), R12; \
	LEAQ (R9)(DX*4), R13; \
	LEAQ (R10)(DX*4), BX

// func unshuffle8AVX2(elems, planes unsafe.Pointer, n, stride int)
TEXT ·unshuffle8AVX2(SB), NOSPLIT, $0-32
	MOVQ elems+0(FP), SI
	MOVQ planes+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ stride+24(FP), DX
	PLANES8
	XORQ AX, AX

loop:
	VMOVDQU (DI)(AX*1), Y0
	VMOVDQU (R8)(AX*1), Y1
	VMOVDQU (R9)(AX*1), Y2
	VMOVDQU (R10)(AX*1), Y3
	VMOVDQU (R11)(AX*1), Y4
	VMOVDQU (R12)(AX*1), Y5
	VMOVDQU (R13)(AX*1), Y6
	VMOVDQU (BX)(AX*1), Y7
	VPUNPCKLBW Y1, Y0, Y8  // bytes 0,1 of elements 0-7 | 16-23
	VPUNPCKHBW Y1, Y0, Y9  // 8-15 | 24-31
	VPUNPCKLBW Y3, Y2, Y10 // bytes 2,3
	VPUNPCKHBW Y3, Y2, Y11
	VPUNPCKLBW Y5, Y4, Y12 // bytes 4,5
	VPUNPCKHBW Y5, Y4, Y13
	VPUNPCKLBW Y7, Y6, Y0  // bytes 6,7
	VPUNPCKHBW Y7, Y6, Y1
	VPUNPCKLWD Y10, Y8, Y2 // bytes 0-3 of elements 0-3 | 16-19
	VPUNPCKHWD Y10, Y8, Y3 // 4-7 | 20-23
	VPUNPCKLWD Y11, Y9, Y4 // 8-11 | 24-27
	VPUNPCKHWD Y11, Y9, Y5 // 12-15 | 28-31
	VPUNPCKLWD Y0, Y12, Y6 // bytes 4-7
	VPUNPCKHWD Y0, Y12, Y7
	VPUNPCKLWD Y1, Y13, Y8
	VPUNPCKHWD Y1, Y13, Y9
	VPUNPCKLDQ Y6, Y2, Y10 // elements 0-1 | 16-17
	VPUNPCKHDQ Y6, Y2, Y11 // 2-3 | 18-19
	VPUNPCKLDQ Y7, Y3, Y12 // 4-5 | 20-21
	VPUNPCKHDQ Y7, Y3, Y13 // 6-7 | 22-23
	VPUNPCKLDQ Y8, Y4, Y0  // 8-9 | 24-25
	VPUNPCKHDQ Y8, Y4, Y1  // 10-11 | 26-27
	VPUNPCKLDQ Y9, Y5, Y2  // 12-13 | 28-29
	VPUNPCKHDQ Y9, Y5, Y3  // 14-15 | 30-31
	VPERM2I128 $0x20, Y11, Y10, Y4
	VPERM2I128 $0x20, Y13, Y12, Y5
	VPERM2I128 $0x20, Y1, Y0, Y6
	VPERM2I128 $0x20, Y3, Y2, Y7
	VMOVDQU Y4, (SI)(AX*8)
	VMOVDQU Y5, 32(SI)(AX*8)
	VMOVDQU Y6, 64(SI)(AX*8)
	VMOVDQU Y7, 96(SI)(AX*8)
	VPERM2I128 $0x31, Y11, Y10, Y4
	VPERM2I128 $0x31, Y13, Y12, Y5
	VPERM2I128 $0x31, Y1, Y0, Y6
	VPERM2I128 $0x31, Y3, Y2, Y7
	VMOVDQU Y4, 128(SI)(AX*8)
	VMOVDQU Y5, 160(SI)(AX*8)
	VMOVDQU Y6, 192(SI)(AX*8)
	VMOVDQU Y7, 224(SI)(AX*8)
	ADDQ $32, AX
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func shuffle8AVX2(planes, elems unsafe.Pointer, n, stride int)
TEXT ·shuffle8AVX2(SB), NOSPLIT, $0-32
	MOVQ planes+0(FP), DI
	MOVQ elems+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ stride+24(FP), DX
	PLANES8
	VMOVDQU gather8<>(SB), Y14
	VMOVDQU zip8<>(SB), Y15
	XORQ AX, AX

loop:
	VMOVDQU (SI)(AX*8), Y0    // elements 0-1 | 2-3
	VMOVDQU 32(SI)(AX*8), Y1  // 4-5 | 6-7
	VMOVDQU 64(SI)(AX*8), Y2
	VMOVDQU 96(SI)(AX*8), Y3
	VMOVDQU 128(SI)(AX*8), Y4
	VMOVDQU 160(SI)(AX*8), Y5
	VMOVDQU 192(SI)(AX*8), Y6
	VMOVDQU 224(SI)(AX*8), Y7
	VPSHUFB Y14, Y0, Y0 // word j: byte j of the lane's two elements
	VPSHUFB Y14, Y1, Y1
	VPSHUFB Y14, Y2, Y2
	VPSHUFB Y14, Y3, Y3
	VPSHUFB Y14, Y4, Y4
	VPSHUFB Y14, Y5, Y5
	VPSHUFB Y14, Y6, Y6
	VPSHUFB Y14, Y7, Y7
	VPUNPCKLWD Y1, Y0, Y8 // an 8 x 8 transpose of words, lane by lane
	VPUNPCKHWD Y1, Y0, Y9
	VPUNPCKLWD Y3, Y2, Y10
	VPUNPCKHWD Y3, Y2, Y11
	VPUNPCKLWD Y5, Y4, Y12
	VPUNPCKHWD Y5, Y4, Y13
	VPUNPCKLWD Y7, Y6, Y0
	VPUNPCKHWD Y7, Y6, Y1
	VPUNPCKLDQ Y10, Y8, Y2
	VPUNPCKHDQ Y10, Y8, Y3
	VPUNPCKLDQ Y11, Y9, Y4
	VPUNPCKHDQ Y11, Y9, Y5
	VPUNPCKLDQ Y0, Y12, Y6
	VPUNPCKHDQ Y0, Y12, Y7
	VPUNPCKLDQ Y1, Y13, Y8
	VPUNPCKHDQ Y1, Y13, Y9
	VPUNPCKLQDQ Y6, Y2, Y10 // byte 0 of elements 0-1, 4-5, ... | 2-3, 6-7, ...
	VPUNPCKHQDQ Y6, Y2, Y11 // byte 1
	VPUNPCKLQDQ Y7, Y3, Y12
	VPUNPCKHQDQ Y7, Y3, Y13
	VPUNPCKLQDQ Y8, Y4, Y0
	VPUNPCKHQDQ Y8, Y4, Y1
	VPUNPCKLQDQ Y9, Y5, Y2
	VPUNPCKHQDQ Y9, Y5, Y3
	VPERMQ  $0xd8, Y10, Y10 // elements 0-1, 4-5, 2-3, 6-7 | ...
	VPERMQ  $0xd8, Y11, Y11
	VPERMQ  $0xd8, Y12, Y12
	VPERMQ  $0xd8, Y13, Y13
	VPERMQ  $0xd8, Y0, Y0
	VPERMQ  $0xd8, Y1, Y1
	VPERMQ  $0xd8, Y2, Y2
	VPERMQ  $0xd8, Y3, Y3
	VPSHUFB Y15, Y10, Y10 // in order
	VPSHUFB Y15, Y11, Y11
	VPSHUFB Y15, Y12, Y12
	VPSHUFB Y15, Y13, Y13
	VPSHUFB Y15, Y0, Y0
	VPSHUFB Y15, Y1, Y1
	VPSHUFB Y15, Y2, Y2
	VPSHUFB Y15, Y3, Y3
	VMOVDQU Y10, (DI)(AX*1)
	VMOVDQU Y11, (R8)(AX*1)
	VMOVDQU Y12, (R9)(AX*1)
	VMOVDQU Y13, (R10)(AX*1)
	VMOVDQU Y0, (R11)(AX*1)
	VMOVDQU Y1, (R12)(AX*1)
	VMOVDQU Y2, (R13)(AX*1)
	VMOVDQU Y3, (BX)(AX*1)
	ADDQ $32, AX
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

// func transpose8AVX2(b unsafe.Pointer, n int)
//
// The 8 x 8 bit transpose of transpose8, four words a register, n bytes
// (a multiple of 32).
TEXT ·transpose8AVX2(SB), NOSPLIT, $0-16
	MOVQ         b+0(FP), DI
	MOVQ         n+8(FP), CX
	MOVQ         $0x00aa00aa00aa00aa, AX
	MOVQ         AX, X13
	VPBROADCASTQ X13, Y13
	MOVQ         $0x0000cccc0000cccc, AX
	MOVQ         AX, X14
	VPBROADCASTQ X14, Y14
	MOVQ         $0x00000000f0f0f0f0, AX
	MOVQ         AX, X15
	VPBROADCASTQ X15, Y15
	XORQ         AX, AX

tloop:
	VMOVDQU (DI)(AX*1), Y0
	VPSRLQ  $7, Y0, Y1
	VPXOR   Y0, Y1, Y1
	VPAND   Y13, Y1, Y1
	VPSLLQ  $7, Y1, Y2
	VPXOR   Y1, Y2, Y2
	VPXOR   Y2, Y0, Y0
	VPSRLQ  $14, Y0, Y1
	VPXOR   Y0, Y1, Y1
	VPAND   Y14, Y1, Y1
	VPSLLQ  $14, Y1, Y2
	VPXOR   Y1, Y2, Y2
	VPXOR   Y2, Y0, Y0
	VPSRLQ  $28, Y0, Y1
	VPXOR   Y0, Y1, Y1
	VPAND   Y15, Y1, Y1
	VPSLLQ  $28, Y1, Y2
	VPXOR   Y1, Y2, Y2
	VPXOR   Y2, Y0, Y0
	VMOVDQU Y0, (DI)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JB      tloop
	VZEROUPPER
	RET

// func unshuffle4PlanesAVX2(elems, p0, p1, p2, p3 unsafe.Pointer, n int)
// is unshuffle4AVX2 with each plane at its own address: a stream blosc
// stored raw is read where it lies in the frame, not copied beside the
// others first.
TEXT ·unshuffle4PlanesAVX2(SB), NOSPLIT, $0-48
	MOVQ elems+0(FP), DI
	MOVQ p0+8(FP), SI
	MOVQ p1+16(FP), R8
	MOVQ p2+24(FP), R9
	MOVQ p3+32(FP), R10
	MOVQ n+40(FP), CX
	XORQ AX, AX

ploop:
	VMOVDQU (SI)(AX*1), Y0
	VMOVDQU (R8)(AX*1), Y1
	VMOVDQU (R9)(AX*1), Y2
	VMOVDQU (R10)(AX*1), Y3
	VPUNPCKLBW Y1, Y0, Y4
	VPUNPCKHBW Y1, Y0, Y5
	VPUNPCKLBW Y3, Y2, Y6
	VPUNPCKHBW Y3, Y2, Y7
	VPUNPCKLWD Y6, Y4, Y0
	VPUNPCKHWD Y6, Y4, Y1
	VPUNPCKLWD Y7, Y5, Y2
	VPUNPCKHWD Y7, Y5, Y3
	VPERM2I128 $0x20, Y1, Y0, Y4
	VPERM2I128 $0x20, Y3, Y2, Y5
	VPERM2I128 $0x31, Y1, Y0, Y6
	VPERM2I128 $0x31, Y3, Y2, Y7
	VMOVDQU Y4, (DI)(AX*4)
	VMOVDQU Y5, 32(DI)(AX*4)
	VMOVDQU Y6, 64(DI)(AX*4)
	VMOVDQU Y7, 96(DI)(AX*4)
	ADDQ $32, AX
	CMPQ AX, CX
	JB   ploop
	VZEROUPPER
	RET
