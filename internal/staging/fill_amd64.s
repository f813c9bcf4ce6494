//go:build !noasm

#include "textflag.h"

// The fills of the staging slots (fill.go): 128 bytes an iteration, four
// 32-byte AVX2 loads and four stores; n is a multiple of 128.

#define ARGS \
	MOVQ dst+0(FP), DI \
	MOVQ src+8(FP), SI \
	MOVQ n+16(FP), CX  \
	SHRQ $7, CX

#define LOAD4 \
	VMOVDQU 0(SI), Y0  \
	VMOVDQU 32(SI), Y1 \
	VMOVDQU 64(SI), Y2 \
	VMOVDQU 96(SI), Y3

#define STORE4(OP) \
	OP Y0, 0(DI)  \
	OP Y1, 32(DI) \
	OP Y2, 64(DI) \
	OP Y3, 96(DI)

#define NEXT \
	ADDQ $128, SI \
	ADDQ $128, DI \
	DECQ CX

// func copyCached(dst, src *byte, n int)
// Ordinary stores: the slot's lines stay in the caches, where the copy
// engine's reads find them.
TEXT ·copyCached(SB), NOSPLIT, $0-24
	ARGS
	JZ cached_done

cached_loop:
	LOAD4
	STORE4(VMOVDQU)
	NEXT
	JNZ cached_loop

cached_done:
	VZEROUPPER
	RET

// func copyDemote(dst, src *byte, n int)
// Ordinary stores, each line then demoted (CLDEMOTE) from the core's own
// caches to the shared last level, where the copy engine reads it without
// snooping a core; a no-op hint on CPUs without it.
TEXT ·copyDemote(SB), NOSPLIT, $0-24
	ARGS
	JZ demote_done

demote_loop:
	LOAD4
	STORE4(VMOVDQU)
	// CLDEMOTE (DI); CLDEMOTE 64(DI)
	BYTE $0x0F; BYTE $0x1C; BYTE $0x07
	BYTE $0x0F; BYTE $0x1C; BYTE $0x47; BYTE $0x40
	NEXT
	JNZ demote_loop

demote_done:
	VZEROUPPER
	RET

// func copyStream(dst, src *byte, n int)
// Non-temporal stores (dst 32-byte aligned): the slot's lines go to memory
// without being read first or kept in the caches.
TEXT ·copyStream(SB), NOSPLIT, $0-24
	ARGS
	JZ stream_done

stream_loop:
	LOAD4
	STORE4(VMOVNTDQ)
	NEXT
	JNZ stream_loop

stream_done:
	SFENCE
	VZEROUPPER
	RET
