//go:build amd64 && !purego

#include "textflag.h"

// func lz4DecodeBlock(dst, src []byte) int
//
// SI reads src up to R8, DI writes dst from R10 up to R9. AX holds the
// token (then the match length), CX a literal length, DX a distance,
// R11 where a match copies from, R13 where it ends. Copies go 16 bytes at a time wherever
// both sides have 16 bytes of room past what is copied (the excess is
// written again by what follows); near the ends of the buffers they go
// a byte at a time. Every length and distance is checked before a byte
// moves.
TEXT ·lz4DecodeBlock(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), R9
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), R8
	MOVQ DI, R10
	ADDQ DI, R9
	ADDQ SI, R8

token:
	CMPQ    SI, R8
	JAE     errSrc
	MOVBQZX (SI), AX
	INCQ    SI
	MOVQ    AX, CX
	SHRQ    $4, CX
	CMPQ    CX, $15
	JEQ     litLong

	// Up to 14 literals: one 16-byte copy when both sides have room.
	LEAQ  16(SI), BX
	CMPQ  BX, R8
	JA    litExact
	LEAQ  16(DI), BX
	CMPQ  BX, R9
	JA    litExact
	MOVOU (SI), X0
	MOVOU X0, (DI)
	ADDQ  CX, SI
	ADDQ  CX, DI
	JMP   match

litLong:
	CMPQ    SI, R8
	JAE     errSrc
	MOVBQZX (SI), BX
	INCQ    SI
	ADDQ    BX, CX
	CMPQ    BX, $255
	JEQ     litLong

litExact:
	MOVQ R8, BX
	SUBQ SI, BX
	CMPQ CX, BX
	JA   errSrc
	MOVQ R9, BX
	SUBQ DI, BX
	CMPQ CX, BX
	JA   errDst
	CMPQ CX, $16
	JB   litBytes

lit16:
	MOVOU (SI), X0
	MOVOU X0, (DI)
	ADDQ  $16, SI
	ADDQ  $16, DI
	SUBQ  $16, CX
	CMPQ  CX, $16
	JAE   lit16
	// The last 0-15: the 16 bytes that end there (the run was 16 or more).
	MOVOU -16(SI)(CX*1), X0
	MOVOU X0, -16(DI)(CX*1)
	ADDQ  CX, SI
	ADDQ  CX, DI
	JMP   match

litBytes:
	TESTQ CX, CX
	JEQ   match
	MOVB  (SI), BX
	MOVB  BX, (DI)
	INCQ  SI
	INCQ  DI
	DECQ  CX
	JMP   litBytes

match:
	CMPQ    SI, R8
	JEQ     done // the block ends with literals
	LEAQ    2(SI), BX
	CMPQ    BX, R8
	JA      errSrc
	MOVWQZX (SI), DX
	ADDQ    $2, SI
	MOVQ    DI, BX
	SUBQ    R10, BX
	CMPQ    DX, BX
	JA      errOffset
	TESTQ   DX, DX
	JEQ     errOffset
	ANDQ    $15, AX
	CMPQ    AX, $15
	JNE     mlDone

mlLong:
	CMPQ    SI, R8
	JAE     errSrc
	MOVBQZX (SI), BX
	INCQ    SI
	ADDQ    BX, AX
	CMPQ    BX, $255
	JEQ     mlLong

mlDone:
	ADDQ $4, AX
	MOVQ R9, BX
	SUBQ DI, BX
	CMPQ AX, BX
	JA   errDst
	LEAQ (DI)(AX*1), R13 // the match's end
	MOVQ DI, R11
	SUBQ DX, R11

	// 16 bytes a store up to BX, the match's end or 16 short of dst's
	// end; the stores may pass BX by 15 bytes, right where the match
	// lasts, and are written again past it. What is left goes a byte at
	// a time (tail).
	MOVQ R13, BX
	MOVQ R9, CX
	SUBQ $16, CX
	CMPQ BX, CX
	JBE  fastEnd
	MOVQ CX, BX

fastEnd:
	CMPQ BX, DI
	JBE  tail
	CMPQ DX, $16
	JB   matchNear

matchFar:
	MOVOU (R11), X0
	MOVOU X0, (DI)
	ADDQ  $16, R11
	ADDQ  $16, DI
	CMPQ  DI, BX
	JB    matchFar
	JMP   fastDone

matchNear:
	CMPQ DX, $1
	JNE  pattern

	// A run of one byte.
	MOVBQZX    (R11), CX
	MOVQ       $0x0101010101010101, R12
	IMULQ      R12, CX
	MOVQ       CX, X0
	PUNPCKLQDQ X0, X0

run:
	MOVOU X0, (DI)
	ADDQ  $16, DI
	CMPQ  DI, BX
	JB    run
	JMP   fastDone

pattern:
	// Distance d of 2-15: the output repeats every d bytes, so from e
	// back too, e the least multiple of d from 16. The first e-d bytes
	// go one at a time, the rest 16 at a time from e back.
	MOVQ DX, R12

multiple:
	CMPQ R12, $16
	JAE  haveMultiple
	ADDQ DX, R12
	JMP  multiple

haveMultiple:
	MOVQ R12, CX
	SUBQ DX, CX
	CMPQ CX, AX
	JBE  patternBytes
	MOVQ AX, CX

patternBytes:
	MOVB (R11), AX
	MOVB AX, (DI)
	INCQ R11
	INCQ DI
	DECQ CX
	JNZ  patternBytes
	MOVQ DI, R11
	SUBQ R12, R11

pattern16:
	CMPQ  DI, BX
	JAE   fastDone
	MOVOU (R11), X0
	MOVOU X0, (DI)
	ADDQ  $16, R11
	ADDQ  $16, DI
	JMP   pattern16

fastDone:
	// Every byte of the match before DI is in place.
	CMPQ DI, R13
	JB   tail
	MOVQ R13, DI
	JMP  token

tail:
	MOVQ DI, R11
	SUBQ DX, R11

tailByte:
	CMPQ DI, R13
	JAE  token
	MOVB (R11), CX
	MOVB CX, (DI)
	INCQ R11
	INCQ DI
	JMP  tailByte

done:
	SUBQ R10, DI
	MOVQ DI, ret+48(FP)
	RET

errSrc:
	MOVQ $-1, ret+48(FP)
	RET

errDst:
	MOVQ $-2, ret+48(FP)
	RET

errOffset:
	MOVQ $-3, ret+48(FP)
	RET
