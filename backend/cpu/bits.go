package cpu

import (
	"encoding/binary"
	"math/bits"
)

// loadBits returns the n <= 64 bits of bitmap b that start at bit pos, bit 0 of
// the result being bit pos of b (Arrow bitmaps are LSB first). Bits past the
// end of b read as 0.
func loadBits(b []byte, pos, n int) uint64 {
	i, sh := pos>>3, uint(pos&7)
	var w uint64
	if i+8 <= len(b) {
		w = binary.LittleEndian.Uint64(b[i:]) >> sh
		if sh != 0 && n > 64-int(sh) && i+8 < len(b) {
			w |= uint64(b[i+8]) << (64 - sh)
		}
	} else {
		for k := 0; i+k < len(b) && k < 9; k++ {
			if k == 0 {
				w = uint64(b[i]) >> sh
			} else {
				w |= uint64(b[i+k]) << (8*uint(k) - sh)
			}
		}
	}
	if n < 64 {
		w &= 1<<uint(n) - 1
	}
	return w
}

// visitor is the thread-level update of one aggregate family: dense folds the
// all-valid elements [i, j), sparse the valid elements of the 64-element group
// starting at base, given by the set bits of w.
type visitor interface {
	dense(i, j int)
	sparse(base int, w uint64)
}

// visit drives a visitor over the elements [lo, hi) of a column whose validity
// bitmap (nil: no nulls) starts at bit bitOff, and returns the number of valid
// elements. Runs of all-valid groups are coalesced into one dense call.
func visit(v visitor, validity []byte, bitOff, lo, hi int) int64 {
	if validity == nil {
		if hi > lo {
			v.dense(lo, hi)
		}
		return int64(hi - lo)
	}
	var n int64
	run := -1 // start of the pending all-valid run
	for i := lo; i < hi; i += 64 {
		m := min(64, hi-i)
		w := loadBits(validity, bitOff+i, m)
		full := m == 64 && w == ^uint64(0) || m < 64 && w == 1<<uint(m)-1
		if full {
			if run < 0 {
				run = i
			}
			n += int64(m)
			continue
		}
		if run >= 0 {
			v.dense(run, i)
			run = -1
		}
		if w != 0 {
			n += int64(bits.OnesCount64(w))
			v.sparse(i, w)
		}
	}
	if run >= 0 {
		v.dense(run, hi)
	}
	return n
}

// alignedBits returns the validity bits of elements [lo, hi) of a column
// whose bitmap starts at bit bitOff, byte-aligned: bit b of byte i of the
// result is element lo+8i+b. The result aliases validity when the first bit is
// on a byte boundary and is shifted into *scratch otherwise (grown once, then
// reused). Bits past hi in the last byte are unspecified.
func alignedBits(validity []byte, bitOff, lo, hi int, scratch *[]byte) []byte {
	n := hi - lo
	nb := (n + 7) / 8
	p := bitOff + lo
	if p%8 == 0 {
		return validity[p/8 : p/8+nb]
	}
	if cap(*scratch) < nb {
		*scratch = make([]byte, nb)
	}
	b := (*scratch)[:nb]
	i := 0
	for ; i+8 <= nb; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], loadBits(validity, p+8*i, 64))
	}
	if i < nb {
		w := loadBits(validity, p+8*i, n-8*i)
		for ; i < nb; i++ {
			b[i] = byte(w)
			w >>= 8
		}
	}
	return b
}

// countBits returns the number of set bits among the first n bits of b.
func countBits(b []byte, n int) int64 {
	var c int
	i := 0
	for ; i+8 <= n/8; i += 8 {
		c += bits.OnesCount64(binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < n/8; i++ {
		c += bits.OnesCount8(b[i])
	}
	if r := n % 8; r != 0 {
		c += bits.OnesCount8(b[i] & (1<<uint(r) - 1))
	}
	return int64(c)
}
