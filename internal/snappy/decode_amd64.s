//go:build amd64 && !purego

#include "textflag.h"

// func decodeFast(dst, src []byte, d, s int) (dd, ss int)
//
// Registers:
//
//	SI  points at the current tag in src     BX  the current tag byte
//	CX  d-8, d the output position (index)   R8  dst base - 1
//	R10 &decTab                              DX  src limit, R11 dst limit
//	AX, R9, R12, R13, R14: scratch
//
// The loop runs two operations per check. At the top of loop:
//
//	SI <= DX  == src base + len(src) - 127, and
//	d-8 <= R11 == len(dst) - 128 - 8.
//
// One operation handled here reads src only in [SI, SI+66): the tag, two
// offset bytes at SI+1, the two candidate next tags at SI+1+type (<= SI+4)
// and SI+2+x (x = tag>>2 <= 63, so <= SI+65), and a literal's bytes, read in
// 8-byte chunks from SI+1 up to at most SI+65. It writes dst only in
// [d, d+64): 16 bytes, or 64 for an operation longer than 16 bytes (none
// handled here is longer than 64). It advances SI by at most 61 and d by at
// most 64, so the second operation of the pair also stays in bounds:
// SI+61+66 <= src end, d+64+64 <= len(dst).
//
// A copy reads dst from d-offset, where the check in OP ensures
// 8 <= offset <= d, so it reads [d-offset, d-offset+64), inside dst too.
// Chunks are copied in order, 8 bytes at a time, each load after the
// previous store; with offset >= 8 every byte a chunk loads was final
// before that chunk (below d, or stored by an earlier chunk of this copy),
// so overlapping copies (offset < length) come out right. Bytes written
// past d+length are garbage, overwritten by the next operations or by the
// caller's careful loop, which finishes the output.
//
// decTab holds, per tag t: at 8t the uint64 offset base minus 8, and at
// 2048+4t a mask for the two bytes after the tag (low 16 bits) and the
// output length (third byte).

// OP decodes one operation. If it is not one the fast loop handles, it
// jumps to small (copies with offsets 1..7) or on to exit, with all state
// still at the start of that operation. long and back are labels for the
// out-of-line path of operations over 16 bytes.
//
// Step by step:
//
//   - R9 = offset-8 = base[tag] + (next 16 bits & mask[tag]); literals give
//     0, the rare operations (copy-4, literals over 60) about 1<<40.
//   - One unsigned compare checks 8 <= offset <= d, i.e. 0 <= offset-8 <= d-8:
//     offsets 0..7 (negative offset-8), offsets past the start of dst and
//     the rare operations all leave here.
//   - R13 = source-1: dst base + d - offset - 1 for a copy, SI for a literal
//     (whose bytes start at SI+1). ANDL $3 sets ZF for a literal (type 0);
//     no instruction after it changes the flags until the last CMOV.
//   - Next tag and position without a branch: a copy with a 1- or 2-byte
//     offset takes 1+type bytes, a short literal 2+x (x = tag>>2). Both
//     candidate tags are loaded and one is picked; the picks are wrong only
//     for the rare operations, which never get this far.
//   - 16 bytes are copied unconditionally, as two ordered 8-byte chunks;
//     only operations over 16 bytes branch (to long).
#define OP(long, back) \
	MOVWQZX 1(SI), R9            \
	ANDL    2048(R10)(BX*4), R9  \
	ADDQ    (R10)(BX*8), R9      \
	CMPQ    R9, CX               \
	JA      small                \
	MOVBQZX 2050(R10)(BX*4), R14 \
	LEAQ    (R8)(CX*1), R13      \
	SUBQ    R9, R13              \
	MOVL    BX, AX               \
	SHRL    $2, BX               \
	ANDL    $3, AX               \
	CMOVQEQ SI, R13              \
	MOVBQZX 1(SI)(AX*1), R12     \
	LEAQ    1(SI)(AX*1), AX      \
	LEAQ    2(SI)(BX*1), R9      \
	MOVBQZX 2(SI)(BX*1), BX      \
	CMOVQNE R12, BX              \
	MOVQ    AX, SI               \
	CMOVQEQ R9, SI               \
	MOVQ    1(R13), AX           \
	MOVQ    AX, 9(R8)(CX*1)      \
	MOVQ    9(R13), R9           \
	MOVQ    R9, 17(R8)(CX*1)     \
	CMPQ    R14, $16             \
	JA      long                 \
back:                                \
	ADDQ    R14, CX

// LONG copies bytes 16..63 of an operation over 16 bytes, in order.
#define LONG(back) \
	MOVQ 17(R13), AX        \
	MOVQ AX, 25(R8)(CX*1)   \
	MOVQ 25(R13), R9        \
	MOVQ R9, 33(R8)(CX*1)   \
	MOVQ 33(R13), AX        \
	MOVQ AX, 41(R8)(CX*1)   \
	MOVQ 41(R13), R9        \
	MOVQ R9, 49(R8)(CX*1)   \
	MOVQ 49(R13), AX        \
	MOVQ AX, 57(R8)(CX*1)   \
	MOVQ 57(R13), R9        \
	MOVQ R9, 65(R8)(CX*1)   \
	JMP  back

TEXT ·decodeFast(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), R8
	MOVQ dst_len+8(FP), R11
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), DX
	MOVQ d+48(FP), CX
	MOVQ s+56(FP), AX
	MOVQ SI, R9
	ADDQ AX, SI
	SUBQ $8, CX

	// The caller guarantees d >= 8, len(src)-s >= 127 and
	// len(dst)-d >= 128; check anyway, so that the limits cannot wrap.
	CMPQ R11, $136
	JB   exit
	CMPQ DX, $127
	JB   exit
	LEAQ -127(R9)(DX*1), DX // src limit: src base + len(src) - 127
	SUBQ $136, R11          // dst limit: d-8 <= len(dst)-136
	DECQ R8
	LEAQ ·decTab(SB), R10
	CMPQ CX, R11
	JA   exit               // also catches d < 8 (CX wraps)
	CMPQ SI, DX
	JA   exit
	MOVBQZX (SI), BX

loop:
	OP(long1, back1)
	OP(long2, back2)

check:
	CMPQ SI, DX
	JA   exit
	CMPQ CX, R11
	JBE  loop

exit:
	ADDQ $8, CX
	MOVQ CX, dd+64(FP)
	SUBQ src_base+24(FP), SI
	MOVQ SI, ss+72(FP)
	RET

long1:
	LONG(back1)

// small: OP found offset-8 in R9 out of range. Copies with offsets 1..7
// (offset <= d holds, as d >= 8) are expanded here; anything else exits.
// To keep the writes in bounds this path requires d+128 <= len(dst), as at
// the top of loop, whichever operation of the pair it is.
small:
	LEAQ    7(R9), AX
	CMPQ    AX, $6
	JA      exit         // offset-1 not in 0..6
	CMPQ    CX, R11
	JA      exit
	MOVBQZX 2050(R10)(BX*4), R14 // length, 1..64
	ADDQ    $8, R9               // R9 = offset, 1..7
	ANDL    $3, BX               // 1 or 2 (only copies have such offsets)
	LEAQ    1(SI)(BX*1), SI      // the next operation, SI+2 or SI+3,
	MOVBQZX (SI), BX             // in bounds as SI was <= src end - 66
	LEAQ    9(R8)(CX*1), R13     // R13 = &dst[d]
	ADDQ    R14, CX              // d += length

	// While offset < 8: copy 8 bytes from R13-offset to R13. The first
	// offset bytes of them are right, and the bytes from d-offset0 up to
	// R13+offset repeat with period offset0; so advance R13 by offset and
	// double offset (still a multiple of the period). At most 3 rounds,
	// writing below d+11 and advancing R13 by at most 9.
pattern:
	MOVQ R13, AX
	SUBQ R9, AX
	MOVQ (AX), AX
	MOVQ AX, (R13)
	ADDQ R9, R13
	SUBQ R9, R14
	ADDQ R9, R9
	CMPQ R9, $8
	JB   pattern

	// Now offset >= 8: ordered 8-byte chunks for the remaining R14 bytes
	// (R14 may be <= 0 already). The writes end below d+length+8 <= d+72.
chunks:
	CMPQ R14, $0
	JLE  check
	MOVQ R13, AX
	SUBQ R9, AX
	MOVQ (AX), AX
	MOVQ AX, (R13)
	ADDQ $8, R13
	SUBQ $8, R14
	JMP  chunks

long2:
	LONG(back2)
