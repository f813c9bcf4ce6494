//go:build !noasm

#include "textflag.h"

// SIMD kernels of the fused sum+min+max update (see simd_amd64.go): AVX-512
// first, AVX2 at the end.
//
// An AVX-512 kernel folds the n elements at vals, cut into four parts of q elements
// (the last one shorter or empty) that it streams side by side: a fused loop
// has several instructions per cache line, and one stream then keeps too few
// lines in flight to read L3 or memory at full speed; four streams (four
// hardware prefetch streams) and software prefetches (each line into L2 far
// ahead and into L1 nearer) restore it.
//
// The main loop takes 16 elements of each part an iteration, for as many
// iterations as the shortest part allows; the rest of each part is then
// folded part after part, 8 elements at a time, in masked vectors (masked-out
// elements are never read: AVX-512 suppresses their faults).
//
// Main loop registers: SI, R11, R12, R13: values of parts 0-3; DI: validity
// bytes of part 0, R8 the bytes of a part's validity (DI+R8, DI+2*R8: parts 1
// and 2), CX: validity of part 3 (DI = 0: all valid); R9: where SI ends; DX:
// lanes. Masked vectors load their validity byte straight into a k-mask: null
// elements load as zero (adding nothing to an integer sum) and the min, max and
// float-sum updates are merge-masked, so they leave the lanes untouched.

// ZEROSCAN is the body of zeros64AVX512 and zeros32AVX512 (below): the
// lanes' broadcast and compare, the sign bit alone, and the shift from n to
// blocks of 64 bytes (labels are a function's own). Defined here, before any
// function, so that go vet reads its frame offsets in the functions that
// expand it.
#define ZEROSCAN(BCAST, CMPEQ, SIGN, SHIFT) \
	MOVQ     vals+0(FP), SI \
	MOVQ     n+8(FP), CX    \
	MOVQ     SIGN, AX       \
	BCAST    AX, Z1         \
	VPXORQ   Z0, Z0, Z0     \
	KXORQ    K3, K3, K3     \
	KXORQ    K4, K4, K4     \
	SHRQ     SHIFT, CX      \
	JZ       zdone        \
zloop:                    \
	CMPEQ    0(SI), Z1, K1  \
	CMPEQ    0(SI), Z0, K2  \
	KORQ     K1, K3, K3     \
	KORQ     K2, K4, K4     \
	ADDQ     $64, SI        \
	DECQ     CX             \
	JNZ      zloop        \
zdone:                    \
	XORQ     AX, AX         \
	KORTESTQ K3, K3         \
	SETNE    AL             \
	XORQ     BX, BX         \
	KORTESTQ K4, K4         \
	SETNE    BL             \
	SHLQ     $1, BX         \
	ORQ      BX, AX         \
	MOVB     AL, ret+16(FP) \
	VZEROUPPER              \
	RET

#define PFNEAR 1024
#define PFFAR 3072

#define PREF(R, OFF) \
	PREFETCHT0 (PFNEAR+OFF)(R) \
	PREFETCHT1 (PFFAR+OFF)(R)

// SPLIT sets up the main loop's registers; SCALE is the size of an element.
#define SPLIT(SCALE) \
	MOVQ  vals+0(FP), SI         \
	MOVQ  n+8(FP), AX            \
	MOVQ  q+16(FP), BX           \
	MOVQ  valid+24(FP), DI       \
	MOVQ  out+32(FP), DX         \
	LEAQ  (SI)(BX*SCALE), R11    \
	LEAQ  (R11)(BX*SCALE), R12   \
	LEAQ  (R12)(BX*SCALE), R13   \
	MOVQ  BX, R8                 \
	SHRQ  $3, R8                 \
	LEAQ  (BX)(BX*2), CX         \
	SUBQ  CX, AX                 \
	JGE   split1                 \
	XORQ  AX, AX                 \
split1:                          \
	CMPQ  AX, BX                 \
	JLE   split2                 \
	MOVQ  BX, AX                 \
split2:                          \
	ANDQ  $-16, AX               \
	LEAQ  (SI)(AX*SCALE), R9     \
	SHRQ  $3, CX                 \
	ADDQ  DI, CX

// REST folds, for each part k, its elements [common, len_k) after the main
// loop (len_k = min(q, n-k*q) clamped at 0; common = (R9-vals)/SCALE, kept in
// R8). It keeps k in R13 and the elements left in CX, with SI and DI on the
// next vector and validity byte; LANESIN loads the part's lanes (at offset
// k*64, in AX) before its vectors and LANESOUT stores them back after; VEC
// folds the vector at SI in the lanes of K1.
#define REST(SCALE, STRIDE, LANESIN, LANESOUT, VEC) \
	MOVQ    R9, AX                  \
	SUBQ    vals+0(FP), AX          \
	SHRQ    $(SCALE/4+1), AX        \
	MOVQ    AX, R8                  \
	XORQ    R13, R13                \
restpart:                           \
	CMPQ    R13, $4                 \
	JAE     done                    \
	MOVQ    q+16(FP), BX            \
	IMULQ   R13, BX                 \
	MOVQ    n+8(FP), CX             \
	SUBQ    BX, CX                  \
	CMPQ    CX, q+16(FP)            \
	JLE     rest1                   \
	MOVQ    q+16(FP), CX            \
rest1:                              \
	SUBQ    R8, CX                  \
	JLE     restnext                \
	ADDQ    R8, BX                  \
	MOVQ    vals+0(FP), SI          \
	LEAQ    (SI)(BX*SCALE), SI      \
	MOVQ    valid+24(FP), DI        \
	TESTQ   DI, DI                  \
	JZ      rest2                   \
	SHRQ    $3, BX                  \
	ADDQ    BX, DI                  \
rest2:                              \
	MOVQ    R13, AX                 \
	SHLQ    $6, AX                  \
	LANESIN                         \
restvec:                            \
	MOVL    $0xff, AX               \
	CMPQ    CX, $8                  \
	JAE     rest3                   \
	MOVL    $1, AX                  \
	SHLL    CX, AX                  \
	DECL    AX                      \
rest3:                              \
	TESTQ   DI, DI                  \
	JZ      rest4                   \
	MOVBLZX 0(DI), BX               \
	ANDL    BX, AX                  \
	INCQ    DI                      \
rest4:                              \
	KMOVB   AX, K1                  \
	VEC                             \
	ADDQ    $STRIDE, SI             \
	SUBQ    $8, CX                  \
	JG      restvec                 \
	MOVQ    R13, AX                 \
	SHLQ    $6, AX                  \
	LANESOUT                        \
restnext:                           \
	INCQ    R13                     \
	JMP     restpart

// ---- integer kernels -------------------------------------------------------
//
// Z0, Z1: wrapping sums; Z2, Z3: sums of the high halves (x>>32); Z4, Z5:
// minima; Z6, Z7: maxima (two sets of accumulators, combined at the end; the
// order of integer additions does not matter). SHR is VPSRAQ (signed) or
// VPSRLQ (unsigned); LOAD reads 8 values into 8 64-bit lanes (VMOVDQU64, or
// VPMOVSXDQ / VPMOVZXDQ for 32-bit values, whose STRIDE, the bytes of 8
// values, is 32 and SCALE, the bytes of one, 4). P1 is the offset of the
// second cache line of a part's iteration (0 where there is one).

#define INTVEC(X, T, S, H, MN, MX, SHR, MIN, MAX) \
	SHR    $32, X, T \
	VPADDQ X, S, S   \
	VPADDQ T, H, H   \
	MIN    X, MN, MN \
	MAX    X, MX, MX

#define INTVECK(X, T, K, S, H, MN, MX, SHR, MIN, MAX) \
	SHR    $32, X, T    \
	VPADDQ X, S, S      \
	VPADDQ T, H, H      \
	MIN    X, MN, K, MN \
	MAX    X, MX, K, MX

#define INTKERNEL(LOAD, LOADZ, STRIDE, SCALE, P1, SHR, MIN, MAX) \
	SPLIT(SCALE)                                            \
	VMOVDQU64 0(DX), Z0                                     \
	VMOVDQU64 64(DX), Z2                                    \
	VMOVDQU64 128(DX), Z4                                   \
	VMOVDQU64 192(DX), Z6                                   \
	VPXORQ    Z1, Z1, Z1                                    \
	VPXORQ    Z3, Z3, Z3                                    \
	VMOVDQA64 Z4, Z5                                        \
	VMOVDQA64 Z6, Z7                                        \
	CMPQ      SI, R9                                        \
	JAE       rest                                          \
	TESTQ     DI, DI                                        \
	JNZ       masked                                        \
dense:                                                      \
	PREF(SI, 0)                                             \
	PREF(SI, P1)                                            \
	PREF(R11, 0)                                            \
	PREF(R11, P1)                                           \
	PREF(R12, 0)                                            \
	PREF(R12, P1)                                           \
	PREF(R13, 0)                                            \
	PREF(R13, P1)                                           \
	LOAD      0(SI), Z8                                     \
	LOAD      0(R11), Z9                                    \
	LOAD      0(R12), Z10                                   \
	LOAD      0(R13), Z11                                   \
	LOAD      STRIDE(SI), Z12                               \
	LOAD      STRIDE(R11), Z13                              \
	LOAD      STRIDE(R12), Z14                              \
	LOAD      STRIDE(R13), Z15                              \
	INTVEC(Z8, Z16, Z0, Z2, Z4, Z6, SHR, MIN, MAX)          \
	INTVEC(Z9, Z17, Z1, Z3, Z5, Z7, SHR, MIN, MAX)          \
	INTVEC(Z10, Z18, Z0, Z2, Z4, Z6, SHR, MIN, MAX)         \
	INTVEC(Z11, Z19, Z1, Z3, Z5, Z7, SHR, MIN, MAX)         \
	INTVEC(Z12, Z20, Z0, Z2, Z4, Z6, SHR, MIN, MAX)         \
	INTVEC(Z13, Z21, Z1, Z3, Z5, Z7, SHR, MIN, MAX)         \
	INTVEC(Z14, Z22, Z0, Z2, Z4, Z6, SHR, MIN, MAX)         \
	INTVEC(Z15, Z23, Z1, Z3, Z5, Z7, SHR, MIN, MAX)         \
	ADDQ      $(2*STRIDE), SI                               \
	ADDQ      $(2*STRIDE), R11                              \
	ADDQ      $(2*STRIDE), R12                              \
	ADDQ      $(2*STRIDE), R13                              \
	CMPQ      SI, R9                                        \
	JB        dense                                         \
	JMP       rest                                          \
masked:                                                     \
	PREF(SI, 0)                                             \
	PREF(SI, P1)                                            \
	PREF(R11, 0)                                            \
	PREF(R11, P1)                                           \
	PREF(R12, 0)                                            \
	PREF(R12, P1)                                           \
	PREF(R13, 0)                                            \
	PREF(R13, P1)                                           \
	KMOVB     0(DI), K1                                     \
	KMOVB     0(DI)(R8*1), K2                               \
	KMOVB     0(DI)(R8*2), K3                               \
	KMOVB     0(CX), K4                                     \
	KMOVB     1(DI), K5                                     \
	KMOVB     1(DI)(R8*1), K6                               \
	KMOVB     1(DI)(R8*2), K7                               \
	LOADZ     0(SI), K1, Z8                                 \
	LOADZ     0(R11), K2, Z9                                \
	LOADZ     0(R12), K3, Z10                               \
	LOADZ     0(R13), K4, Z11                               \
	LOADZ     STRIDE(SI), K5, Z12                           \
	LOADZ     STRIDE(R11), K6, Z13                          \
	LOADZ     STRIDE(R12), K7, Z14                          \
	INTVECK(Z8, Z16, K1, Z0, Z2, Z4, Z6, SHR, MIN, MAX)     \
	INTVECK(Z9, Z17, K2, Z1, Z3, Z5, Z7, SHR, MIN, MAX)     \
	INTVECK(Z10, Z18, K3, Z0, Z2, Z4, Z6, SHR, MIN, MAX)    \
	INTVECK(Z11, Z19, K4, Z1, Z3, Z5, Z7, SHR, MIN, MAX)    \
	KMOVB     1(CX), K1                                     \
	LOADZ     STRIDE(R13), K1, Z15                          \
	INTVECK(Z12, Z20, K5, Z0, Z2, Z4, Z6, SHR, MIN, MAX)    \
	INTVECK(Z13, Z21, K6, Z1, Z3, Z5, Z7, SHR, MIN, MAX)    \
	INTVECK(Z14, Z22, K7, Z0, Z2, Z4, Z6, SHR, MIN, MAX)    \
	INTVECK(Z15, Z23, K1, Z1, Z3, Z5, Z7, SHR, MIN, MAX)    \
	ADDQ      $(2*STRIDE), SI                               \
	ADDQ      $(2*STRIDE), R11                              \
	ADDQ      $(2*STRIDE), R12                              \
	ADDQ      $(2*STRIDE), R13                              \
	ADDQ      $2, DI                                        \
	ADDQ      $2, CX                                        \
	CMPQ      SI, R9                                        \
	JB        masked                                        \
rest:                                                       \
	REST(SCALE, STRIDE, NOLANES, NOLANES, INTREST(LOADZ, SHR, MIN, MAX)) \
done:                                                       \
	VPADDQ    Z1, Z0, Z0                                    \
	VPADDQ    Z3, Z2, Z2                                    \
	MIN       Z5, Z4, Z4                                    \
	MAX       Z7, Z6, Z6                                    \
	VMOVDQU64 Z0, 0(DX)                                     \
	VMOVDQU64 Z2, 64(DX)                                    \
	VMOVDQU64 Z4, 128(DX)                                   \
	VMOVDQU64 Z6, 192(DX)                                   \
	VZEROUPPER                                              \
	RET

#define NOLANES

#define INTREST(LOADZ, SHR, MIN, MAX) \
	LOADZ 0(SI), K1, Z8 \
	INTVECK(Z8, Z16, K1, Z0, Z2, Z4, Z6, SHR, MIN, MAX)

// func int64AVX512(vals *int64, n, q int, valid *byte, out *intLanes)
TEXT ·int64AVX512(SB), NOSPLIT, $0-40
	INTKERNEL(VMOVDQU64, VMOVDQU64.Z, 64, 8, 64, VPSRAQ, VPMINSQ, VPMAXSQ)

// func uint64AVX512(vals *uint64, n, q int, valid *byte, out *intLanes)
TEXT ·uint64AVX512(SB), NOSPLIT, $0-40
	INTKERNEL(VMOVDQU64, VMOVDQU64.Z, 64, 8, 64, VPSRLQ, VPMINUQ, VPMAXUQ)

// func int32AVX512(vals *int32, n, q int, valid *byte, out *intLanes)
TEXT ·int32AVX512(SB), NOSPLIT, $0-40
	INTKERNEL(VPMOVSXDQ, VPMOVSXDQ.Z, 32, 4, 0, VPSRAQ, VPMINSQ, VPMAXSQ)

// func uint32AVX512(vals *uint32, n, q int, valid *byte, out *intLanes)
TEXT ·uint32AVX512(SB), NOSPLIT, $0-40
	INTKERNEL(VPMOVZXDQ, VPMOVZXDQ.Z, 32, 4, 0, VPSRLQ, VPMINUQ, VPMAXUQ)

// ---- float kernels ---------------------------------------------------------
//
// The canonical lanes of floatLanes: lanes 8k to 8k+7 take part k, element i
// of the part in lane 8k + i mod 8. Z0-Z3 hold the sums of parts 0-3 and
// Z4-Z7 their compensations; Z8-Z11 take the sums every other vector of the
// dense loop. Z12, Z13 are the minima and Z14, Z15 the maxima (of every part:
// extremes do not depend on the order). LOADZ converts 8 values to float64
// (VMOVUPD.Z; VCVTPS2PD.Z for float32, STRIDE 32 and SCALE 4). P1 is the
// offset of the second cache line of a part's iteration.

// TWOSUMTO adds X to the lanes S with the error-free two-sum of
// floatLanes.add, the new sums going to T:
// t = s + x; z = t - s; c += (s - (t - z)) + (x - z).
#define TWOSUMTO(X, S, C, T, Z, U) \
	VADDPD X, S, T \
	VSUBPD S, T, Z \
	VSUBPD Z, T, U \
	VSUBPD U, S, U \
	VSUBPD Z, X, Z \
	VADDPD Z, U, U \
	VADDPD U, C, C

// TWOSUMK is the two-sum in the lanes of K only, in place.
#define TWOSUMK(X, K, S, C, T, Z, U) \
	VADDPD  X, S, T    \
	VSUBPD  S, T, Z    \
	VSUBPD  Z, T, U    \
	VSUBPD  U, S, U    \
	VSUBPD  Z, X, Z    \
	VADDPD  Z, U, U    \
	VADDPD  U, C, K, C \
	VMOVAPD T, K, S

// MINMAX folds X into the extremes MN, MX. The operand order makes x the
// first source: VMINPD returns the second source (the running extreme) when x
// is NaN, so NaN is skipped.
#define MINMAX(X, MN, MX) \
	VMINPD MN, X, MN \
	VMAXPD MX, X, MX

#define MINMAXK(X, K, MN, MX) \
	VMINPD MN, X, K, MN \
	VMAXPD MX, X, K, MX

// A BLOCK of the dense loop folds the 8 values at OFF(R) into the lanes S
// (new sums to T), C and the extremes MN, MX; X, Z, U are scratch.
// BLOCK32 converts float32 values with a load of its own. BLOCK64 reads the
// float64 values as memory operands, which keeps fewer instructions in
// flight: the two-sum is written with zn = s - t = -z, exactly the same
// values. Its VMINPD/VMAXPD take x second and so let a NaN in, which is moot:
// a NaN makes the lane's sum NaN and the morsel goes to the careful path.
#define BLOCK32(OFF, R, X, S, C, T, Z, U, MN, MX) \
	VCVTPS2PD OFF(R), X        \
	TWOSUMTO(X, S, C, T, Z, U) \
	MINMAX(X, MN, MX)

// An MBLOCK of the masked loop does the same in the lanes of K only: it
// loads -0.0 for the nulls, the additive identity of IEEE arithmetic, so the
// unmasked two-sum leaves their lanes exactly as they were (t = s + -0 = s,
// and the error term is +0, which leaves a compensation unchanged: it is
// never -0); only the extremes need the mask. (A lane that is not finite goes
// to the careful path anyway.) Z28 holds -0.0.
#define MBLOCK32(OFF, R, K, X, S, C, T, ZT, U, MN, MX) \
	VCVTPS2PD.Z OFF(R), K, X      \
	VBLENDMPD   X, Z28, K, X      \
	TWOSUMTO(X, S, C, T, ZT, U)   \
	MINMAXK(X, K, MN, MX)

#define MBLOCK64(OFF, R, K, X, S, C, T, ZT, U, MN, MX) \
	VBLENDMPD OFF(R), Z28, K, X   \
	TWOSUMTO(X, S, C, T, ZT, U)   \
	MINMAXK(X, K, MN, MX)

#define BLOCK64(OFF, R, X, S, C, T, ZN, U, MN, MX) \
	VADDPD OFF(R), S, T   \
	VSUBPD T, S, ZN       \
	VADDPD ZN, T, U       \
	VSUBPD U, S, U        \
	VADDPD OFF(R), ZN, ZN \
	VADDPD ZN, U, U       \
	VADDPD U, C, C        \
	VMINPD OFF(R), MN, MN \
	VMAXPD OFF(R), MX, MX

// FLTLANESIN and FLTLANESOUT move part AX/64's lanes between memory and Z0, Z4
// for the remainder code.
#define FLTLANESIN \
	VMOVUPD 0(DX)(AX*1), Z0 \
	VMOVUPD 256(DX)(AX*1), Z4

#define FLTLANESOUT \
	VMOVUPD Z0, 0(DX)(AX*1) \
	VMOVUPD Z4, 256(DX)(AX*1)

#define FLTREST(LOADZ) \
	LOADZ 0(SI), K1, Z24                      \
	TWOSUMK(Z24, K1, Z0, Z4, Z16, Z17, Z18)   \
	MINMAXK(Z24, K1, Z12, Z14)

#define FLTKERNEL(BLOCK, MBLOCK, LOADZ, STRIDE, SCALE, P1) \
	SPLIT(SCALE)                                             \
	MOVQ    $0x8000000000000000, AX                          \
	VPBROADCASTQ AX, Z28                                     \
	VMOVUPD 0(DX), Z0                                        \
	VMOVUPD 64(DX), Z1                                       \
	VMOVUPD 128(DX), Z2                                      \
	VMOVUPD 192(DX), Z3                                      \
	VMOVUPD 256(DX), Z4                                      \
	VMOVUPD 320(DX), Z5                                      \
	VMOVUPD 384(DX), Z6                                      \
	VMOVUPD 448(DX), Z7                                      \
	VMOVUPD 512(DX), Z12                                     \
	VMOVUPD 576(DX), Z13                                     \
	VMOVUPD 640(DX), Z14                                     \
	VMOVUPD 704(DX), Z15                                     \
	CMPQ    SI, R9                                           \
	JAE     rest                                             \
	TESTQ   DI, DI                                           \
	JNZ     masked                                           \
dense:                                                       \
	PREF(SI, 0)                                              \
	PREF(SI, P1)                                             \
	PREF(R11, 0)                                             \
	PREF(R11, P1)                                            \
	PREF(R12, 0)                                             \
	PREF(R12, P1)                                            \
	PREF(R13, 0)                                             \
	PREF(R13, P1)                                            \
	BLOCK(0, SI, Z24, Z0, Z4, Z8, Z16, Z17, Z12, Z14)        \
	BLOCK(0, R11, Z25, Z1, Z5, Z9, Z18, Z19, Z13, Z15)       \
	BLOCK(0, R12, Z26, Z2, Z6, Z10, Z20, Z21, Z12, Z14)      \
	BLOCK(0, R13, Z27, Z3, Z7, Z11, Z22, Z23, Z13, Z15)      \
	BLOCK(STRIDE, SI, Z24, Z8, Z4, Z0, Z16, Z17, Z12, Z14)   \
	BLOCK(STRIDE, R11, Z25, Z9, Z5, Z1, Z18, Z19, Z13, Z15)  \
	BLOCK(STRIDE, R12, Z26, Z10, Z6, Z2, Z20, Z21, Z12, Z14) \
	BLOCK(STRIDE, R13, Z27, Z11, Z7, Z3, Z22, Z23, Z13, Z15) \
	ADDQ    $(2*STRIDE), SI                                  \
	ADDQ    $(2*STRIDE), R11                                 \
	ADDQ    $(2*STRIDE), R12                                 \
	ADDQ    $(2*STRIDE), R13                                 \
	CMPQ    SI, R9                                           \
	JB      dense                                            \
	JMP     rest                                             \
masked:                                                      \
	PREF(SI, 0)                                              \
	PREF(SI, P1)                                             \
	PREF(R11, 0)                                             \
	PREF(R11, P1)                                            \
	PREF(R12, 0)                                             \
	PREF(R12, P1)                                            \
	PREF(R13, 0)                                             \
	PREF(R13, P1)                                            \
	KMOVB   0(DI), K1                                        \
	KMOVB   0(DI)(R8*1), K2                                  \
	KMOVB   0(DI)(R8*2), K3                                  \
	KMOVB   0(CX), K4                                        \
	MBLOCK(0, SI, K1, Z24, Z0, Z4, Z8, Z16, Z17, Z12, Z14)        \
	MBLOCK(0, R11, K2, Z25, Z1, Z5, Z9, Z18, Z19, Z13, Z15)       \
	MBLOCK(0, R12, K3, Z26, Z2, Z6, Z10, Z20, Z21, Z12, Z14)      \
	MBLOCK(0, R13, K4, Z27, Z3, Z7, Z11, Z22, Z23, Z13, Z15)      \
	KMOVB   1(DI), K1                                        \
	KMOVB   1(DI)(R8*1), K2                                  \
	KMOVB   1(DI)(R8*2), K3                                  \
	KMOVB   1(CX), K4                                        \
	MBLOCK(STRIDE, SI, K1, Z24, Z8, Z4, Z0, Z16, Z17, Z12, Z14)   \
	MBLOCK(STRIDE, R11, K2, Z25, Z9, Z5, Z1, Z18, Z19, Z13, Z15)  \
	MBLOCK(STRIDE, R12, K3, Z26, Z10, Z6, Z2, Z20, Z21, Z12, Z14) \
	MBLOCK(STRIDE, R13, K4, Z27, Z11, Z7, Z3, Z22, Z23, Z13, Z15) \
	ADDQ    $(2*STRIDE), SI                                  \
	ADDQ    $(2*STRIDE), R11                                 \
	ADDQ    $(2*STRIDE), R12                                 \
	ADDQ    $(2*STRIDE), R13                                 \
	ADDQ    $2, DI                                           \
	ADDQ    $2, CX                                           \
	CMPQ    SI, R9                                           \
	JB      masked                                           \
rest:                                                        \
	VMOVUPD Z0, 0(DX)                                        \
	VMOVUPD Z1, 64(DX)                                       \
	VMOVUPD Z2, 128(DX)                                      \
	VMOVUPD Z3, 192(DX)                                      \
	VMOVUPD Z4, 256(DX)                                      \
	VMOVUPD Z5, 320(DX)                                      \
	VMOVUPD Z6, 384(DX)                                      \
	VMOVUPD Z7, 448(DX)                                      \
	REST(SCALE, STRIDE, FLTLANESIN, FLTLANESOUT, FLTREST(LOADZ)) \
done:                                                        \
	VMOVUPD Z12, 512(DX)                                     \
	VMOVUPD Z13, 576(DX)                                     \
	VMOVUPD Z14, 640(DX)                                     \
	VMOVUPD Z15, 704(DX)                                     \
	VZEROUPPER                                               \
	RET

// func float64AVX512(vals *float64, n, q int, valid *byte, out *floatLanes)
TEXT ·float64AVX512(SB), NOSPLIT, $0-40
	FLTKERNEL(BLOCK64, MBLOCK64, VMOVUPD.Z, 64, 8, 64)

// func float32AVX512(vals *float32, n, q int, valid *byte, out *floatLanes)
TEXT ·float32AVX512(SB), NOSPLIT, $0-40
	FLTKERNEL(BLOCK32, MBLOCK32, VCVTPS2PD.Z, 32, 4, 0)

// ---- AVX2 kernels ----------------------------------------------------------
//
// For CPUs without AVX-512: the same lanes and results as the AVX-512 kernels
// and the Go loops, 4 lanes a register. Without k-masks, a validity nibble
// selects one of the 16 lane masks of nibblemask; masked loads (VMASKMOVPD,
// VPMASKMOVQ) zero null elements without reading them, and blends keep the
// lanes of nulls untouched. The parts are folded one after the other, one
// stream with software prefetch.

// NIBBLEMASK loads into M the lane mask of the nibble (AX >> SH) & 15; R8
// holds the table's address.
#define NIBBLEMASK(SH, M) \
	MOVL    AX, BX        \
	SHRL    $SH, BX       \
	ANDL    $15, BX       \
	SHLL    $5, BX        \
	VMOVDQU (R8)(BX*1), M

// ---- float64: each part's 8 lanes are Y0, Y1 (sums) and Y2, Y3
// (compensations); Y4 and Y5 are the minima and maxima (lanes 0-3 of
// floatLanes.min/max).

// TWOSUMY is the two-sum of floatLanes.add on 4 lanes, in place.
#define TWOSUMY(X, S, C, T, Z, U) \
	VADDPD  X, S, T \
	VSUBPD  S, T, Z \
	VSUBPD  Z, T, U \
	VSUBPD  U, S, U \
	VSUBPD  Z, X, Z \
	VADDPD  Z, U, U \
	VADDPD  U, C, C \
	VMOVAPD T, S

// TWOSUMYM is TWOSUMY in the lanes of the mask M only: the error term of
// other lanes is zeroed (c + 0 = c: a compensation is never -0) and their sum
// kept by a blend.
#define TWOSUMYM(X, M, S, C, T, Z, U) \
	VADDPD    X, S, T    \
	VSUBPD    S, T, Z    \
	VSUBPD    Z, T, U    \
	VSUBPD    U, S, U    \
	VSUBPD    Z, X, Z    \
	VADDPD    Z, U, U    \
	VANDPD    M, U, U    \
	VADDPD    U, C, C    \
	VBLENDVPD M, T, S, S

// MINMAXYM folds X into Y4, Y5 in the lanes of M (T is scratch); x is the
// first source of VMINPD/VMAXPD, so NaN is skipped.
#define MINMAXYM(X, M, T) \
	VMINPD    Y4, X, T     \
	VBLENDVPD M, T, Y4, Y4 \
	VMAXPD    Y5, X, T     \
	VBLENDVPD M, T, Y5, Y5

// func float64AVX2(vals *float64, n, q int, valid *byte, out *floatLanes)
TEXT ·float64AVX2(SB), NOSPLIT, $0-40
	MOVQ    out+32(FP), DX
	LEAQ    nibblemask<>(SB), R8
	VMOVUPD 512(DX), Y4
	VMOVUPD 640(DX), Y5
	XORQ    R13, R13

fpart:
	CMPQ    R13, $4
	JAE     fdone
	MOVQ    q+16(FP), BX
	IMULQ   R13, BX
	MOVQ    n+8(FP), CX
	SUBQ    BX, CX
	JLE     fnext
	CMPQ    CX, q+16(FP)
	JLE     fpart1
	MOVQ    q+16(FP), CX

fpart1:
	MOVQ    vals+0(FP), SI
	LEAQ    (SI)(BX*8), SI
	MOVQ    valid+24(FP), DI
	TESTQ   DI, DI
	JZ      fpart2
	SHRQ    $3, BX
	ADDQ    BX, DI

fpart2:
	MOVQ    R13, R9
	SHLQ    $6, R9
	VMOVUPD 0(DX)(R9*1), Y0
	VMOVUPD 32(DX)(R9*1), Y1
	VMOVUPD 256(DX)(R9*1), Y2
	VMOVUPD 288(DX)(R9*1), Y3

fvec:
	CMPQ    CX, $8
	JB      ftail
	PREFETCHT0 1024(SI)
	PREFETCHT1 3072(SI)
	TESTQ   DI, DI
	JNZ     fmasked
	VMOVUPD 0(SI), Y6
	VMOVUPD 32(SI), Y7
	TWOSUMY(Y6, Y0, Y2, Y8, Y9, Y10)
	TWOSUMY(Y7, Y1, Y3, Y11, Y12, Y13)
	VMINPD  Y4, Y6, Y4
	VMAXPD  Y5, Y6, Y5
	VMINPD  Y4, Y7, Y4
	VMAXPD  Y5, Y7, Y5
	ADDQ    $64, SI
	SUBQ    $8, CX
	JMP     fvec

fmasked:
	MOVBLZX 0(DI), AX
	INCQ    DI
	JMP     fblock

ftail:
	TESTQ   CX, CX
	JZ      fstore
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	TESTQ   DI, DI
	JZ      fblock
	MOVBLZX 0(DI), BX
	ANDL    BX, AX
	INCQ    DI

fblock:
	NIBBLEMASK(0, Y14)
	NIBBLEMASK(4, Y15)
	VMASKMOVPD 0(SI), Y14, Y6
	VMASKMOVPD 32(SI), Y15, Y7
	TWOSUMYM(Y6, Y14, Y0, Y2, Y8, Y9, Y10)
	TWOSUMYM(Y7, Y15, Y1, Y3, Y11, Y12, Y13)
	MINMAXYM(Y6, Y14, Y8)
	MINMAXYM(Y7, Y15, Y8)
	ADDQ    $64, SI
	SUBQ    $8, CX
	JG      fvec

fstore:
	VMOVUPD Y0, 0(DX)(R9*1)
	VMOVUPD Y1, 32(DX)(R9*1)
	VMOVUPD Y2, 256(DX)(R9*1)
	VMOVUPD Y3, 288(DX)(R9*1)

fnext:
	INCQ    R13
	JMP     fpart

fdone:
	VMOVUPD Y4, 512(DX)
	VMOVUPD Y5, 640(DX)
	VZEROUPPER
	RET

// ---- int64: Y0 wrapping sums, Y1 sums of the logical high halves, Y2 minus
// the count of negative values (AVX2 has no 64-bit arithmetic shift: the
// signed high halves sum to Y1 + Y2<<32), Y3 minima, Y4 maxima (lanes 0-3 of
// intLanes); Y15 is zero. The order of integer additions does not matter, so
// the elements are read in one pass.

// INTY folds the 4 values of X (nulls zeroed) into the sums and, in the lanes
// of M, the extremes; T is scratch.
#define INTY(X, M, T) \
	VPADDQ    X, Y0, Y0     \
	VPSRLQ    $32, X, T     \
	VPADDQ    T, Y1, Y1     \
	VPCMPGTQ  X, Y15, T     \
	VPADDQ    T, Y2, Y2     \
	VPCMPGTQ  X, Y3, T      \
	VPAND     M, T, T       \
	VBLENDVPD T, X, Y3, Y3  \
	VPCMPGTQ  Y4, X, T      \
	VPAND     M, T, T       \
	VBLENDVPD T, X, Y4, Y4

// func int64AVX2(vals *int64, n, q int, valid *byte, out *intLanes)
TEXT ·int64AVX2(SB), NOSPLIT, $0-40
	MOVQ    vals+0(FP), SI
	MOVQ    n+8(FP), CX
	MOVQ    valid+24(FP), DI
	MOVQ    out+32(FP), DX
	LEAQ    nibblemask<>(SB), R8
	VMOVDQU 0(DX), Y0
	VMOVDQU 64(DX), Y1
	VPXOR   Y2, Y2, Y2
	VMOVDQU 128(DX), Y3
	VMOVDQU 192(DX), Y4
	VPXOR   Y15, Y15, Y15
	VPCMPEQQ Y13, Y13, Y13

ivec:
	CMPQ    CX, $8
	JB      itail
	PREFETCHT0 1024(SI)
	PREFETCHT1 3072(SI)
	TESTQ   DI, DI
	JNZ     imasked
	VMOVDQU 0(SI), Y6
	VMOVDQU 32(SI), Y7
	INTY(Y6, Y13, Y8)
	INTY(Y7, Y13, Y9)
	ADDQ    $64, SI
	SUBQ    $8, CX
	JMP     ivec

imasked:
	MOVBLZX 0(DI), AX
	INCQ    DI
	JMP     iblock

itail:
	TESTQ   CX, CX
	JZ      idone
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	TESTQ   DI, DI
	JZ      iblock
	MOVBLZX 0(DI), BX
	ANDL    BX, AX
	INCQ    DI

iblock:
	NIBBLEMASK(0, Y11)
	NIBBLEMASK(4, Y12)
	VPMASKMOVQ 0(SI), Y11, Y6
	VPMASKMOVQ 32(SI), Y12, Y7
	INTY(Y6, Y11, Y8)
	INTY(Y7, Y12, Y9)
	ADDQ    $64, SI
	SUBQ    $8, CX
	JG      ivec

idone:
	VPSLLQ  $32, Y2, Y2
	VPADDQ  Y2, Y1, Y1
	VMOVDQU Y0, 0(DX)
	VMOVDQU Y1, 64(DX)
	VMOVDQU Y3, 128(DX)
	VMOVDQU Y4, 192(DX)
	VZEROUPPER
	RET

// nibblemask holds, for each 4-bit validity nibble, the mask of its 4 lanes.
DATA nibblemask<>+0(SB)/8, $0
DATA nibblemask<>+8(SB)/8, $0
DATA nibblemask<>+16(SB)/8, $0
DATA nibblemask<>+24(SB)/8, $0
DATA nibblemask<>+32(SB)/8, $-1
DATA nibblemask<>+40(SB)/8, $0
DATA nibblemask<>+48(SB)/8, $0
DATA nibblemask<>+56(SB)/8, $0
DATA nibblemask<>+64(SB)/8, $0
DATA nibblemask<>+72(SB)/8, $-1
DATA nibblemask<>+80(SB)/8, $0
DATA nibblemask<>+88(SB)/8, $0
DATA nibblemask<>+96(SB)/8, $-1
DATA nibblemask<>+104(SB)/8, $-1
DATA nibblemask<>+112(SB)/8, $0
DATA nibblemask<>+120(SB)/8, $0
DATA nibblemask<>+128(SB)/8, $0
DATA nibblemask<>+136(SB)/8, $0
DATA nibblemask<>+144(SB)/8, $-1
DATA nibblemask<>+152(SB)/8, $0
DATA nibblemask<>+160(SB)/8, $-1
DATA nibblemask<>+168(SB)/8, $0
DATA nibblemask<>+176(SB)/8, $-1
DATA nibblemask<>+184(SB)/8, $0
DATA nibblemask<>+192(SB)/8, $0
DATA nibblemask<>+200(SB)/8, $-1
DATA nibblemask<>+208(SB)/8, $-1
DATA nibblemask<>+216(SB)/8, $0
DATA nibblemask<>+224(SB)/8, $-1
DATA nibblemask<>+232(SB)/8, $-1
DATA nibblemask<>+240(SB)/8, $-1
DATA nibblemask<>+248(SB)/8, $0
DATA nibblemask<>+256(SB)/8, $0
DATA nibblemask<>+264(SB)/8, $0
DATA nibblemask<>+272(SB)/8, $0
DATA nibblemask<>+280(SB)/8, $-1
DATA nibblemask<>+288(SB)/8, $-1
DATA nibblemask<>+296(SB)/8, $0
DATA nibblemask<>+304(SB)/8, $0
DATA nibblemask<>+312(SB)/8, $-1
DATA nibblemask<>+320(SB)/8, $0
DATA nibblemask<>+328(SB)/8, $-1
DATA nibblemask<>+336(SB)/8, $0
DATA nibblemask<>+344(SB)/8, $-1
DATA nibblemask<>+352(SB)/8, $-1
DATA nibblemask<>+360(SB)/8, $-1
DATA nibblemask<>+368(SB)/8, $0
DATA nibblemask<>+376(SB)/8, $-1
DATA nibblemask<>+384(SB)/8, $0
DATA nibblemask<>+392(SB)/8, $0
DATA nibblemask<>+400(SB)/8, $-1
DATA nibblemask<>+408(SB)/8, $-1
DATA nibblemask<>+416(SB)/8, $-1
DATA nibblemask<>+424(SB)/8, $0
DATA nibblemask<>+432(SB)/8, $-1
DATA nibblemask<>+440(SB)/8, $-1
DATA nibblemask<>+448(SB)/8, $0
DATA nibblemask<>+456(SB)/8, $-1
DATA nibblemask<>+464(SB)/8, $-1
DATA nibblemask<>+472(SB)/8, $-1
DATA nibblemask<>+480(SB)/8, $-1
DATA nibblemask<>+488(SB)/8, $-1
DATA nibblemask<>+496(SB)/8, $-1
DATA nibblemask<>+504(SB)/8, $-1
GLOBL nibblemask<>(SB), RODATA|NOPTR, $512

// The sketch hashes of approx_distinct (agg.HashInt, agg.HashFloat), 8
// values an iteration: n (a multiple of 8) values at vals, their 64-bit
// hashes to out. agg.HashInt's three Feistel rounds on the halves of each
// lane: lo ^= F1(hi), hi ^= F2(lo), lo ^= F3(hi), the hash lo<<32 | hi, a
// round F(a) = the low ^ the high dword of a*k + d (VPMULUDQ takes the low
// dword of each lane; the high dwords of the working lanes are don't-cares
// until the last two instructions). Z28-Z30: k1-k3; Z26, Z23: d2, d3; Z21:
// 2^32-1.

#define MIXCONSTS \
	MOVQ         $0x9e3779b9, AX \
	VPBROADCASTQ AX, Z28                 \
	MOVQ         $0x85ebca6b, AX \
	VPBROADCASTQ AX, Z29                 \
	MOVQ         $0xc2b2ae35, AX \
	VPBROADCASTQ AX, Z30                 \
	MOVQ         $0x27d4eb2f165667b1, AX \
	VPBROADCASTQ AX, Z26                 \
	MOVQ         $0x94d049bb133111eb, AX \
	VPBROADCASTQ AX, Z23                 \
	MOVQ         $0xffffffff, AX \
	VPBROADCASTQ AX, Z21

// MIX23 is MIX after its first round: the second and third rounds, then
// the hash lo<<32 | hi.
#define MIX23(Z, T, U, V) \
	VPMULUDQ   Z29, Z, U         \
	VPADDQ     Z26, U, U         \
	VPSRLQ     $32, U, V         \
	VPTERNLOGQ $0x96, V, U, T    \
	VPMULUDQ   Z30, T, U         \
	VPADDQ     Z23, U, U         \
	VPSRLQ     $32, U, V         \
	VPTERNLOGQ $0x96, V, U, Z    \
	VPSLLQ     $32, Z, Z         \
	VPTERNLOGQ $0xf8, Z21, T, Z

// MIX hashes the lanes of Z in place (T, U, V: scratch): the first round
// (T: hi), then MIX23, the other two.
#define MIX(Z, T, U, V) \
	VPSRLQ     $32, Z, T         \
	VPMULUDQ   Z28, T, U         \
	VPSRLQ     $32, U, V         \
	VPTERNLOGQ $0x96, V, U, Z    \
	MIX23(Z, T, U, V)

// MIXS and MIXU are MIX of sign- and zero-extended 32-bit values, whose
// high dword hi is 0 or 2^32-1, where F1(hi) = hi (the fold of (2^32-1)k
// is (-k) ^ (k-1), all ones; of 0, 0): the first round is lo ^= hi (for
// MIXU nothing).
#define MIXS(Z, T, U, V) \
	VPSRLQ     $32, Z, T         \
	VPXORQ     T, Z, Z           \
	MIX23(Z, T, U, V)

#define MIXU(Z, T, U, V) \
	VPXORQ     T, T, T           \
	MIX23(Z, T, U, V)

// CANONFLOAT makes the float64 lanes of Z hash as agg.HashFloat: ±0 as +0,
// every NaN as the canonical NaN (Z31: zero, Z27: the canonical NaN).
#define CANONFLOAT(Z) \
	VCMPPD    $0, Z31, Z, K1   \
	VPXORQ    Z, Z, K1, Z      \
	VCMPPD    $3, Z, Z, K2     \
	VMOVDQU64 Z27, K2, Z

#define HASHLOOP(LOAD, STRIDE, CANON, HASH) \
	MOVQ vals+0(FP), SI     \
	MOVQ n+8(FP), CX        \
	MOVQ out+16(FP), DI     \
	MIXCONSTS               \
	MOVQ         $0x7ff8000000000000, AX \
	VPBROADCASTQ AX, Z27    \
	VPXORQ       Z31, Z31, Z31 \
	SHRQ $3, CX             \
	JZ   hdone              \
hloop:                      \
	LOAD 0(SI), Z0          \
	CANON                   \
	HASH                    \
	VMOVDQU64 Z0, 0(DI)     \
	ADDQ $STRIDE, SI        \
	ADDQ $64, DI            \
	DECQ CX                 \
	JNZ  hloop              \
hdone:                      \
	VZEROUPPER              \
	RET

// ---- the sketch's register filter (approx_distinct) -----------------------
//
// Of n (a multiple of 8) values at vals, those whose bit in valid is set
// (valid nil: every value; bit b of byte i is element 8i+b) are hashed as by
// HASHLOOP, and those of their hashes that may raise their register are
// compressed to out, in order; their number is returned. The caller raises
// the registers: any other hash would leave its register as it is. A hash h
// may raise its register (its top 14 bits) when z, the number of leading
// zeros of h<<14, is at least floor (every register is at least floor, and
// h's rank is min(z, 50)+1) and at least the register's value as it was
// before the call.
//
// Two passes: the first, 8 values an iteration, compresses to out the
// hashes whose z is at least floor (on a sketch that has seen many values,
// few); the second, 8 of those an iteration, gathers their registers from
// the 16 KiB at regs (the aligned dword that holds each, shifted to its
// byte) and compresses in place the hashes whose z is at least their
// register. Each 64-byte store writes out at or below the slots the pass
// has read, and below n.
//
// Z22: floor, Z24: 0xff, Z25: 3; K3: the values' validity; K1: the first
// pass's hashes, the gather's mask (which the gather clears); K5: the
// second pass's hashes; K2: those that may raise.

#define RAISELOOP(LOADZ, STRIDE, CANON, HASH) \
	MOVQ vals+0(FP), SI     \
	MOVQ n+8(FP), CX        \
	MOVQ valid+16(FP), R8   \
	MOVQ regs+24(FP), DX    \
	MOVQ out+40(FP), DI     \
	MIXCONSTS               \
	MOVQ         $0x7ff8000000000000, AX \
	VPBROADCASTQ AX, Z27    \
	VPXORQ       Z31, Z31, Z31 \
	MOVBQZX      floor+32(FP), AX \
	VPBROADCASTQ AX, Z22    \
	MOVQ         $3, AX     \
	VPBROADCASTQ AX, Z25    \
	MOVQ         $0xff, AX  \
	VPBROADCASTQ AX, Z24    \
	XORQ AX, AX             \
	SHRQ $3, CX             \
	JZ   rdone              \
rloop:                      \
	TESTQ  R8, R8           \
	JZ     rall             \
	KMOVB  0(R8), K3        \
	INCQ   R8               \
	JMP    rload            \
rall:                       \
	KXNORB K3, K3, K3       \
rload:                      \
	LOADZ 0(SI), K3, Z0     \
	CANON                   \
	HASH                    \
	VPSLLQ    $14, Z0, Z3   \
	VPLZCNTQ  Z3, Z3        \
	VPCMPUQ   $5, Z22, Z3, K3, K1 \
	VPCOMPRESSQ Z0, K1, Z7  \
	VMOVDQU64 Z7, (DI)(AX*8) \
	KMOVB     K1, BX        \
	POPCNTL   BX, BX        \
	ADDQ      BX, AX        \
	ADDQ $STRIDE, SI        \
	DECQ CX                 \
	JNZ  rloop              \
	XORQ R9, R9             \
	XORQ R10, R10           \
gloop:                      \
	MOVQ AX, CX             \
	SUBQ R9, CX             \
	JLE  gdone              \
	KXNORB K5, K5, K5       \
	CMPQ CX, $8             \
	JGE  gload              \
	MOVQ $1, R11            \
	SHLQ CX, R11            \
	DECQ R11                \
	KMOVB R11, K5           \
gload:                      \
	VMOVDQU64.Z (DI)(R9*8), K5, Z0 \
	VPSLLQ    $14, Z0, Z3   \
	VPLZCNTQ  Z3, Z3        \
	VPSRLQ    $50, Z0, Z2   \
	VPSRLQ    $2, Z2, Z4    \
	KMOVB     K5, K1        \
	VPXORD    Y5, Y5, Y5    \
	VPGATHERQD (DX)(Z4*4), K1, Y5 \
	VPMOVZXDQ Y5, Z5        \
	VPANDQ    Z25, Z2, Z6   \
	VPSLLQ    $3, Z6, Z6    \
	VPSRLVQ   Z6, Z5, Z5    \
	VPANDQ    Z24, Z5, Z5   \
	VPCMPUQ   $5, Z5, Z3, K5, K2 \
	VPCOMPRESSQ Z0, K2, Z7  \
	VMOVDQU64 Z7, (DI)(R10*8) \
	KMOVB     K2, BX        \
	POPCNTL   BX, BX        \
	ADDQ      BX, R10       \
	ADDQ      $8, R9        \
	JMP       gloop         \
gdone:                      \
	MOVQ R10, AX            \
rdone:                      \
	MOVQ AX, ret+48(FP)     \
	VZEROUPPER              \
	RET

// ---- sums of squares (stddev, variance) -----------------------------------
//
// The squares of n (a multiple of 8) values at vals, 8 an iteration; valid
// is nil when every value is valid, else bit b of byte i is the validity of
// element 8i+b. Nulls load as 0 and leave the lanes unchanged.
//
// Integers: the 8 lanes of four 64-bit sums of 32-bit pieces at out (read
// and written), of weights 1, 2^32, 2^64 and 2^96 (cpu.squares): |x| = a·2^32
// + b, x² = a²·2^64 + 2ab·2^32 + b², each product cut into its 32-bit halves.
// Exact for 2^32 values a lane. Z20-Z23: the pieces; Z24: 2^32-1.
//
// Floats: lane k of out's sums s and compensations c takes elements 8j+k, in
// the order and with the operations of floatStats.squareFast: p = x*x, e =
// fma(x, x, -p), t = s + p, z = t - s, c += ((s - (t - z)) + (p - z)) + e,
// s = t (masked: nulls leave their lanes as they are). Z20: s, Z21: c.

#define SQMASK \
	TESTQ   DI, DI   \
	JZ      sqall    \
	KMOVB   0(DI), K1 \
	INCQ    DI       \
	JMP     sqload   \
sqall:               \
	KXNORB  K1, K1, K1 \
sqload:

#define INTSQ(LOADZ, STRIDE, ABS) \
	MOVQ vals+0(FP), SI           \
	MOVQ n+8(FP), CX              \
	MOVQ valid+16(FP), DI         \
	MOVQ out+24(FP), DX           \
	VMOVDQU64 0(DX), Z20          \
	VMOVDQU64 64(DX), Z21         \
	VMOVDQU64 128(DX), Z22        \
	VMOVDQU64 192(DX), Z23        \
	MOVQ $0xffffffff, AX          \
	VPBROADCASTQ AX, Z24          \
	SHRQ $3, CX                   \
	JZ   sqdone                   \
sqloop:                           \
	SQMASK                        \
	LOADZ 0(SI), K1, Z0           \
	ABS                           \
	VPSRLQ   $32, Z0, Z1          \
	VPMULUDQ Z0, Z0, Z2           \
	VPMULUDQ Z1, Z0, Z3           \
	VPMULUDQ Z1, Z1, Z4           \
	VPANDQ   Z24, Z2, Z5          \
	VPADDQ   Z5, Z20, Z20         \
	VPSRLQ   $32, Z2, Z5          \
	VPADDQ   Z5, Z21, Z21         \
	VPANDQ   Z24, Z3, Z5          \
	VPADDQ   Z5, Z5, Z5           \
	VPADDQ   Z5, Z21, Z21         \
	VPSRLQ   $32, Z3, Z5          \
	VPADDQ   Z5, Z5, Z5           \
	VPADDQ   Z5, Z22, Z22         \
	VPANDQ   Z24, Z4, Z5          \
	VPADDQ   Z5, Z22, Z22         \
	VPSRLQ   $32, Z4, Z5          \
	VPADDQ   Z5, Z23, Z23         \
	ADDQ $STRIDE, SI              \
	DECQ CX                       \
	JNZ  sqloop                   \
sqdone:                           \
	VMOVDQU64 Z20, 0(DX)          \
	VMOVDQU64 Z21, 64(DX)         \
	VMOVDQU64 Z22, 128(DX)        \
	VMOVDQU64 Z23, 192(DX)        \
	VZEROUPPER                    \
	RET

#define SQABS VPABSQ Z0, Z0
#define SQNOABS

// func squaresInt64AVX512(vals *int64, n int, valid *byte, out *intSqLanes)
TEXT ·squaresInt64AVX512(SB), NOSPLIT, $0-32
	INTSQ(VMOVDQU64.Z, 64, SQABS)

// func squaresUint64AVX512(vals *uint64, n int, valid *byte, out *intSqLanes)
TEXT ·squaresUint64AVX512(SB), NOSPLIT, $0-32
	INTSQ(VMOVDQU64.Z, 64, SQNOABS)

// func squaresInt32AVX512(vals *int32, n int, valid *byte, out *intSqLanes)
TEXT ·squaresInt32AVX512(SB), NOSPLIT, $0-32
	INTSQ(VPMOVSXDQ.Z, 32, SQABS)

// func squaresUint32AVX512(vals *uint32, n int, valid *byte, out *intSqLanes)
TEXT ·squaresUint32AVX512(SB), NOSPLIT, $0-32
	INTSQ(VPMOVZXDQ.Z, 32, SQNOABS)

#define FLTSQ(LOADZ, STRIDE) \
	MOVQ vals+0(FP), SI           \
	MOVQ n+8(FP), CX              \
	MOVQ valid+16(FP), DI         \
	MOVQ out+24(FP), DX           \
	VMOVUPD 0(DX), Z20            \
	VMOVUPD 64(DX), Z21           \
	SHRQ $3, CX                   \
	JZ   sqdone                   \
sqloop:                           \
	SQMASK                        \
	LOADZ 0(SI), K1, Z0           \
	VMULPD      Z0, Z0, Z1        \
	VMOVAPD     Z1, Z2            \
	VFMSUB231PD Z0, Z0, Z2        \
	VADDPD      Z1, Z20, Z3       \
	VSUBPD      Z20, Z3, Z4       \
	VSUBPD      Z4, Z3, Z5        \
	VSUBPD      Z5, Z20, Z5       \
	VSUBPD      Z4, Z1, Z6        \
	VADDPD      Z6, Z5, Z5        \
	VADDPD      Z2, Z5, Z5        \
	VADDPD      Z5, Z21, K1, Z21  \
	VMOVAPD     Z3, K1, Z20       \
	ADDQ $STRIDE, SI              \
	DECQ CX                       \
	JNZ  sqloop                   \
sqdone:                           \
	VMOVUPD Z20, 0(DX)            \
	VMOVUPD Z21, 64(DX)           \
	VZEROUPPER                    \
	RET

// func floatSquares64AVX512(vals *float64, n int, valid *byte, out *floatSqLanes)
TEXT ·floatSquares64AVX512(SB), NOSPLIT, $0-32
	FLTSQ(VMOVUPD.Z, 64)

// func floatSquares32AVX512(vals *float32, n int, valid *byte, out *floatSqLanes)
TEXT ·floatSquares32AVX512(SB), NOSPLIT, $0-32
	FLTSQ(VCVTPS2PD.Z, 32)

#define NOCANON

// func hash64AVX512(vals *uint64, n int, out *uint64)
TEXT ·hash64AVX512(SB), NOSPLIT, $0-24
	HASHLOOP(VMOVDQU64, 64, NOCANON, MIX(Z0, Z1, Z8, Z9))

// func hashInt32AVX512(vals *int32, n int, out *uint64)
TEXT ·hashInt32AVX512(SB), NOSPLIT, $0-24
	HASHLOOP(VPMOVSXDQ, 32, NOCANON, MIXS(Z0, Z1, Z8, Z9))

// func hashUint32AVX512(vals *uint32, n int, out *uint64)
TEXT ·hashUint32AVX512(SB), NOSPLIT, $0-24
	HASHLOOP(VPMOVZXDQ, 32, NOCANON, MIXU(Z0, Z1, Z8, Z9))

// func hashFloat64AVX512(vals *float64, n int, out *uint64)
TEXT ·hashFloat64AVX512(SB), NOSPLIT, $0-24
	HASHLOOP(VMOVDQU64, 64, CANONFLOAT(Z0), MIX(Z0, Z1, Z8, Z9))

// func hashFloat32AVX512(vals *float32, n int, out *uint64)
TEXT ·hashFloat32AVX512(SB), NOSPLIT, $0-24
	HASHLOOP(VCVTPS2PD, 32, CANONFLOAT(Z0), MIX(Z0, Z1, Z8, Z9))

// func raise64AVX512(vals *uint64, n int, valid *byte, regs *[16384]uint8, floor uint8, out *uint64) int
TEXT ·raise64AVX512(SB), NOSPLIT, $0-56
	RAISELOOP(VMOVDQU64.Z, 64, NOCANON, MIX(Z0, Z1, Z8, Z9))

// func raiseInt32AVX512(vals *int32, n int, valid *byte, regs *[16384]uint8, floor uint8, out *uint64) int
TEXT ·raiseInt32AVX512(SB), NOSPLIT, $0-56
	RAISELOOP(VPMOVSXDQ.Z, 32, NOCANON, MIXS(Z0, Z1, Z8, Z9))

// func raiseUint32AVX512(vals *uint32, n int, valid *byte, regs *[16384]uint8, floor uint8, out *uint64) int
TEXT ·raiseUint32AVX512(SB), NOSPLIT, $0-56
	RAISELOOP(VPMOVZXDQ.Z, 32, NOCANON, MIXU(Z0, Z1, Z8, Z9))

// func raiseFloat64AVX512(vals *float64, n int, valid *byte, regs *[16384]uint8, floor uint8, out *uint64) int
TEXT ·raiseFloat64AVX512(SB), NOSPLIT, $0-56
	RAISELOOP(VMOVDQU64.Z, 64, CANONFLOAT(Z0), MIX(Z0, Z1, Z8, Z9))

// func raiseFloat32AVX512(vals *float32, n int, valid *byte, regs *[16384]uint8, floor uint8, out *uint64) int
TEXT ·raiseFloat32AVX512(SB), NOSPLIT, $0-56
	RAISELOOP(VCVTPS2PD.Z, 32, CANONFLOAT(Z0), MIX(Z0, Z1, Z8, Z9))

// func minRegisterAVX512(regs *[16384]uint8) uint8
TEXT ·minRegisterAVX512(SB), NOSPLIT, $0-9
	MOVQ      regs+0(FP), SI
	VMOVDQU64 0(SI), Z0
	MOVQ      $255, CX
mloop:
	ADDQ      $64, SI
	VPMINUB   0(SI), Z0, Z0
	DECQ      CX
	JNZ       mloop
	VEXTRACTI64X4 $1, Z0, Y1
	VPMINUB   Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPMINUB   X1, X0, X0
	VPSRLDQ   $8, X0, X1
	VPMINUB   X1, X0, X0
	VPSRLDQ   $4, X0, X1
	VPMINUB   X1, X0, X0
	VPSRLDQ   $2, X0, X1
	VPMINUB   X1, X0, X0
	VPSRLDQ   $1, X0, X1
	VPMINUB   X1, X0, X0
	VMOVD     X0, AX
	MOVB      AX, ret+8(FP)
	VZEROUPPER
	RET

// func sumInt64AVX512(vals *int64, n int) int64
// The wrapping sum of vals[0:n&^31] (the planner's memory read rate).
TEXT ·sumInt64AVX512(SB), NOSPLIT, $0-24
	MOVQ   vals+0(FP), SI
	MOVQ   n+8(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	SHRQ   $5, CX
	JZ     sdone
sloop:
	VPADDQ 0(SI), Z0, Z0
	VPADDQ 64(SI), Z1, Z1
	VPADDQ 128(SI), Z2, Z2
	VPADDQ 192(SI), Z3, Z3
	ADDQ   $256, SI
	DECQ   CX
	JNZ    sloop
sdone:
	VPADDQ        Z1, Z0, Z0
	VPADDQ        Z3, Z2, Z2
	VPADDQ        Z2, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDQ        Y1, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDQ        X1, X0, X0
	VPSHUFD       $0x4e, X0, X1
	VPADDQ        X1, X0, X0
	VMOVQ         X0, AX
	MOVQ          AX, ret+16(FP)
	VZEROUPPER
	RET

// ---- signed zeros (a float morsel's zero extremes) -------------------------
//
// func zeros64AVX512(vals *uint64, n int) uint8
// func zeros32AVX512(vals *uint32, n int) uint8
// Of the n (a multiple of 8, resp. 16) float bits at vals: bit 0 of the
// result is set when one of them is -0 (the sign bit alone), bit 1 when one
// is +0 (all zero). Z1: the sign bit, Z0: zero; K3/K4 collect the matches.

TEXT ·zeros64AVX512(SB), NOSPLIT, $0-17
	ZEROSCAN(VPBROADCASTQ, VPCMPEQQ, $0x8000000000000000, $3)

TEXT ·zeros32AVX512(SB), NOSPLIT, $0-17
	ZEROSCAN(VPBROADCASTD, VPCMPEQD, $0x80000000, $4)
