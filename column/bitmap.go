package column

import (
	"encoding/binary"
	"math/bits"
)

// Validity bitmaps are Arrow's: bit i of a bitmap is bit i%8 of byte i/8
// (least significant first), 1 for a valid element. These helpers are the
// core's own, so that it depends on no Arrow implementation.

// BytesForBits is the number of bytes that hold n bits.
func BytesForBits(n int64) int64 { return (n + 7) >> 3 }

// BitIsSet reports whether bit i of bitmap b is set.
func BitIsSet(b []byte, i int) bool { return b[i>>3]&(1<<(uint(i)&7)) != 0 }

// CountSetBits is the number of set bits among bits [off, off+n) of bitmap
// b, eight bytes at a time.
func CountSetBits(b []byte, off, n int) int {
	if n <= 0 {
		return 0
	}
	count := 0
	// The bits before the first whole byte.
	for ; off&7 != 0 && n > 0; off, n = off+1, n-1 {
		if BitIsSet(b, off) {
			count++
		}
	}
	p := b[off>>3:]
	for ; n >= 64; n, p = n-64, p[8:] {
		count += bits.OnesCount64(binary.LittleEndian.Uint64(p))
	}
	for ; n >= 8; n, p = n-8, p[1:] {
		count += bits.OnesCount8(p[0])
	}
	if n > 0 {
		count += bits.OnesCount8(p[0] & (1<<uint(n) - 1))
	}
	return count
}

// CopyBits copies bits [srcOff, srcOff+n) of bitmap src to bits [dstOff,
// dstOff+n) of bitmap dst, leaving dst's other bits as they were: a byte
// at a time where dst is byte-aligned, without allocating.
func CopyBits(src []byte, srcOff, n int, dst []byte, dstOff int) {
	if n <= 0 {
		return
	}
	// The bits up to dst's next whole byte.
	for ; dstOff&7 != 0 && n > 0; srcOff, dstOff, n = srcOff+1, dstOff+1, n-1 {
		setBitTo(dst, dstOff, BitIsSet(src, srcOff))
	}
	d := dst[dstOff>>3:]
	s, shift := src[srcOff>>3:], uint(srcOff&7)
	k := 0
	if shift == 0 {
		k = copy(d[:n>>3], s)
	} else {
		for ; k < n>>3; k++ {
			d[k] = s[k]>>shift | s[k+1]<<(8-shift)
		}
	}
	srcOff, dstOff, n = srcOff+8*k, dstOff+8*k, n-8*k
	for ; n > 0; srcOff, dstOff, n = srcOff+1, dstOff+1, n-1 {
		setBitTo(dst, dstOff, BitIsSet(src, srcOff))
	}
}

func setBitTo(b []byte, i int, v bool) {
	if v {
		b[i>>3] |= 1 << (uint(i) & 7)
	} else {
		b[i>>3] &^= 1 << (uint(i) & 7)
	}
}
