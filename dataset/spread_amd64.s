#include "textflag.h"

// The AVX-512 forms of spreadValues (spread_amd64.go): a step of 8 rows
// (64-bit values) or 16 rows (32-bit values) takes its valid bits as a
// mask, loads as many dense values as the mask has bits (a masked load:
// no value past them is read), expands them to the valid lanes and stores
// those lanes only, so that a null row's slot keeps what it held. A step
// whose mask has more bits than dense values are left stops the walk:
// the result is then -1, else the number of dense values taken.

// SPREADLOOP is the walk for values of SCALE bytes: VALIDLOAD reads a
// step's VALIDBYTES bytes of valid, KMOV moves a mask, LOADZ, EXPAND and
// STORE are the masked load, the expansion and the masked store; SHIFT is
// log2(SCALE).
#define SPREADLOOP(VALIDLOAD, VALIDBYTES, KMOV, LOADZ, EXPAND, STORE, SCALE, SHIFT) \
	MOVQ  dense+0(FP), SI    \
	MOVQ  left+8(FP), R10    \
	MOVQ  valid+16(FP), R8   \
	MOVQ  steps+24(FP), R9   \
	MOVQ  out+32(FP), DI     \
	MOVQ  SI, R13            \
	XORQ  R12, R12           \
	TESTQ R9, R9             \
	JZ    done               \
loop:                        \
	VALIDLOAD (R8), AX       \
	POPCNTL   AX, CX         \
	SUBQ      CX, R10        \
	JB        short          \
	KMOV      AX, K2         \
	MOVL      $1, R11        \
	SHLL      CX, R11        \
	DECL      R11            \
	KMOV      R11, K1        \
	LOADZ     (SI), K1, Z0   \
	EXPAND    Z0, K2, Z1     \
	STORE     Z1, K2, (DI)   \
	LEAQ      (SI)(CX*SCALE), SI \
	ADDQ      $64, DI        \
	ADDQ      $VALIDBYTES, R8 \
	INCQ      R12            \
	CMPQ      R12, R9        \
	JB        loop           \
done:                        \
	SUBQ R13, SI             \
	SHRQ $SHIFT, SI          \
	MOVQ SI, ret+40(FP)      \
	VZEROUPPER               \
	RET                      \
short:                       \
	MOVQ $-1, ret+40(FP)     \
	VZEROUPPER               \
	RET

// func spread64AVX512(dense *uint64, left int, valid *byte, steps int, out *uint64) int
TEXT ·spread64AVX512(SB), NOSPLIT, $0-48
	SPREADLOOP(MOVBLZX, 1, KMOVB, VMOVDQU64.Z, VPEXPANDQ, VMOVDQU64, 8, 3)

// func spread32AVX512(dense *uint32, left int, valid *byte, steps int, out *uint32) int
TEXT ·spread32AVX512(SB), NOSPLIT, $0-48
	SPREADLOOP(MOVWLZX, 2, KMOVW, VMOVDQU32.Z, VPEXPANDD, VMOVDQU32, 4, 2)
