//go:build !noasm

#include "textflag.h"

// func copyDemote(dst, src *byte, n int)
// The demoted fill of a staging slot (fill.go): 128 bytes an iteration, four
// 32-byte AVX2 loads and four ordinary stores, each line then demoted
// (CLDEMOTE) from the core's own caches to the shared last level, where the
// copy engine reads it without snooping a core (a no-op hint on CPUs
// without it); n is a multiple of 128.
TEXT ·copyDemote(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $7, CX
	JZ   done

loop:
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	VMOVDQU Y0, 0(DI)
	VMOVDQU Y1, 32(DI)
	VMOVDQU Y2, 64(DI)
	VMOVDQU Y3, 96(DI)
	// CLDEMOTE (DI); CLDEMOTE 64(DI)
	BYTE $0x0F; BYTE $0x1C; BYTE $0x07
	BYTE $0x0F; BYTE $0x1C; BYTE $0x47; BYTE $0x40
	ADDQ    $128, SI
	ADDQ    $128, DI
	DECQ    CX
	JNZ     loop

done:
	VZEROUPPER
	RET
