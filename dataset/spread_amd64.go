package dataset

import (
	"unsafe"

	xcpu "golang.org/x/sys/cpu"
)

// spreadAVX512 says whether the CPU has what the AVX-512 forms of
// spreadValues use: AVX-512 F (expansions, masked moves) and DQ (8-bit
// masks), and POPCNT.
var spreadAVX512 = xcpu.X86.HasAVX512F && xcpu.X86.HasAVX512DQ && xcpu.X86.HasPOPCNT

// spread64AVX512 spreads the dense values (left of them) over steps steps
// of 8 rows, a byte of valid each, into out: the number of values taken,
// or -1 when a step has more valid rows than values are left (spread_amd64.s).
//
//go:noescape
func spread64AVX512(dense *uint64, left int, valid *byte, steps int, out *uint64) int

// spread32AVX512 is spread64AVX512 for 32-bit values, in steps of 16 rows
// (two bytes of valid).
//
//go:noescape
func spread32AVX512(dense *uint32, left int, valid *byte, steps int, out *uint32) int

// spreadWords spreads the whole 64-row words of valid's m rows with the
// AVX-512 forms, where the CPU has them and T is 32 or 64 bits wide: the
// words spread and the dense values they took (0, 0: none, the rest of
// spreadValues does it all, as it does when the values are fewer than the
// valid rows).
func spreadWords[T uint16 | uint32 | uint64](dense []T, valid []byte, m int, out []T) (words, took int) {
	words = m / 64
	if !spreadAVX512 || words == 0 || len(valid) < 8*words || len(out) < 64*words {
		return 0, 0
	}
	switch d := any(dense).(type) {
	case []uint64:
		took = spread64AVX512(unsafe.SliceData(d), len(d), &valid[0], 8*words, &any(out).([]uint64)[0])
	case []uint32:
		took = spread32AVX512(unsafe.SliceData(d), len(d), &valid[0], 4*words, &any(out).([]uint32)[0])
	default:
		return 0, 0
	}
	if took < 0 {
		return 0, 0
	}
	return words, took
}
