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
// dstOff+n) of bitmap dst, leaving dst's other bits as they were, without
// allocating: whole bytes copied where both offsets are byte-aligned, the
// rest up to 56 bits at a time (a 64-bit load, shift and masked store; the
// levels of a Parquet page copy runs of a few bytes at any offsets).
func CopyBits(src []byte, srcOff, n int, dst []byte, dstOff int) {
	if n <= 0 {
		return
	}
	if srcOff&7 == 0 && dstOff&7 == 0 && n >= 64 {
		k := copy(dst[dstOff>>3:dstOff>>3+n>>3], src[srcOff>>3:])
		srcOff, dstOff, n = srcOff+8*k, dstOff+8*k, n-8*k
	}
	for n > 0 {
		k := min(n, 56)
		writeBits(dst, dstOff, k, ReadBits(src, srcOff, k))
		srcOff, dstOff, n = srcOff+k, dstOff+k, n-k
	}
}

// SetBits sets bits [off, off+n) of bitmap b to v, leaving its other bits
// as they were: up to 56 bits at a time, a whole byte at a time past the
// first byte boundary for long runs.
func SetBits(b []byte, off, n int, v bool) {
	var word uint64
	if v {
		word = ^uint64(0)
	}
	for ; n > 0 && (n < 128 || off&7 != 0); off, n = off+min(n, 56), n-min(n, 56) {
		writeBits(b, off, min(n, 56), word)
	}
	if n <= 0 {
		return
	}
	fill := byte(word)
	whole := b[off>>3 : off>>3+n>>3]
	for i := range whole {
		whole[i] = fill
	}
	off, n = off+8*len(whole), n-8*len(whole)
	if n > 0 {
		writeBits(b, off, n, word)
	}
}

// ReadBits returns bits [off, off+n) of bitmap b, n at most 56, as the low
// n bits of a word (bits past b's end read as zeros; off must be within b).
func ReadBits(b []byte, off, n int) uint64 {
	i, sh := off>>3, uint(off&7)
	var w uint64
	if i+8 <= len(b) {
		w = binary.LittleEndian.Uint64(b[i:])
	} else {
		for j, c := range b[i:min(len(b), i+8)] {
			w |= uint64(c) << (8 * j)
		}
	}
	return w >> sh & (1<<uint(n) - 1)
}

// writeBits sets bits [off, off+n) of bitmap b, n at most 56, to the low n
// bits of v, leaving the others as they were.
func writeBits(b []byte, off, n int, v uint64) {
	i, sh := off>>3, uint(off&7)
	mask := (uint64(1)<<uint(n) - 1) << sh
	if i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		binary.LittleEndian.PutUint64(b[i:], w&^mask|v<<sh&mask)
		return
	}
	for j := range b[i:min(len(b), i+(int(sh)+n+7)/8)] {
		m := byte(mask >> (8 * j))
		b[i+j] = b[i+j]&^m | byte(v<<sh>>(8*j))&m
	}
}

func setBitTo(b []byte, i int, v bool) {
	if v {
		b[i>>3] |= 1 << (uint(i) & 7)
	} else {
		b[i>>3] &^= 1 << (uint(i) & 7)
	}
}
