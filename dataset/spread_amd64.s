#include "textflag.h"

// The AVX-512 forms of spreadValues (spread_amd64.go): a step of 8 rows
// (64-bit values) or 16 rows (32-bit values) takes its valid bits as a
// mask, loads as many dense values as the mask has bits (a masked load:
// no value past them is read), expands them to the valid lanes and stores
// those lanes only, so that a null row's slot keeps what it held. A step
// whose mask has more bits than dense values are left stops the walk:
// the result is then -1, else the number of dense values taken.

// func spread64AVX512(dense *uint64, left int, valid *byte, steps int, out *uint64) int
TEXT ·spread64AVX512(SB), NOSPLIT, $0-48
	MOVQ dense+0(FP), SI
	MOVQ left+8(FP), R10
	MOVQ valid+16(FP), R8
	MOVQ steps+24(FP), R9
	MOVQ out+32(FP), DI
	MOVQ SI, R13
	XORQ R12, R12
	TESTQ R9, R9
	JZ    s64done
s64loop:
	MOVBLZX (R8), AX
	POPCNTL AX, CX
	SUBQ    CX, R10
	JB      s64short
	KMOVB   AX, K2
	MOVL    $1, R11
	SHLL    CX, R11
	DECL    R11
	KMOVB   R11, K1
	VMOVDQU64.Z (SI), K1, Z0
	VPEXPANDQ   Z0, K2, Z1
	VMOVDQU64   Z1, K2, (DI)
	LEAQ    (SI)(CX*8), SI
	ADDQ    $64, DI
	INCQ    R8
	INCQ    R12
	CMPQ    R12, R9
	JB      s64loop
s64done:
	SUBQ R13, SI
	SHRQ $3, SI
	MOVQ SI, ret+40(FP)
	VZEROUPPER
	RET
s64short:
	MOVQ $-1, ret+40(FP)
	VZEROUPPER
	RET

// func spread32AVX512(dense *uint32, left int, valid *byte, steps int, out *uint32) int
TEXT ·spread32AVX512(SB), NOSPLIT, $0-48
	MOVQ dense+0(FP), SI
	MOVQ left+8(FP), R10
	MOVQ valid+16(FP), R8
	MOVQ steps+24(FP), R9
	MOVQ out+32(FP), DI
	MOVQ SI, R13
	XORQ R12, R12
	TESTQ R9, R9
	JZ    s32done
s32loop:
	MOVWLZX (R8), AX
	POPCNTL AX, CX
	SUBQ    CX, R10
	JB      s32short
	KMOVW   AX, K2
	MOVL    $1, R11
	SHLL    CX, R11
	DECL    R11
	KMOVW   R11, K1
	VMOVDQU32.Z (SI), K1, Z0
	VPEXPANDD   Z0, K2, Z1
	VMOVDQU32   Z1, K2, (DI)
	LEAQ    (SI)(CX*4), SI
	ADDQ    $64, DI
	ADDQ    $2, R8
	INCQ    R12
	CMPQ    R12, R9
	JB      s32loop
s32done:
	SUBQ R13, SI
	SHRQ $2, SI
	MOVQ SI, ret+40(FP)
	VZEROUPPER
	RET
s32short:
	MOVQ $-1, ret+40(FP)
	VZEROUPPER
	RET
