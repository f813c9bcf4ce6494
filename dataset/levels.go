package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/parquet"

	"github.com/arrowagg/arrowagg/column"
)

// Parquet's RLE / bit-packed hybrid encoding (definition levels, dictionary
// indices), decoded straight into what the page path needs: counts of
// non-null values, validity bitmaps and int32 dictionary indices, a window
// at a time. Every length is checked against the bytes there are: corrupt
// input is an error, never a read out of bounds.

var errShortRuns = errors.New("the encoded values end early")

// maxRun caps the length of one run, so that counts never overflow (a page
// has at most 2^31 values).
const maxRun = 1 << 40

// hybrid decodes a stream of RLE / bit-packed hybrid runs of bit width w.
type hybrid struct {
	data []byte // the runs after the current one
	w    int
	// The current run: left values, either one repeated value (rle) or
	// bit-packed in packed from bit bit on.
	left   int
	rle    bool
	value  uint32
	packed []byte
	bit    int
}

// reset starts decoding runs of bit width w from data.
func (h *hybrid) reset(data []byte, w int) { *h = hybrid{data: data, w: w} }

// resetPacked starts decoding n values of w bits packed LSB first in data,
// without run headers (the deprecated BIT_PACKED level encoding, once its
// bit order is turned around by msbToLSB).
func (h *hybrid) resetPacked(data []byte, w, n int) {
	*h = hybrid{w: w, left: n, packed: data}
}

// nextRun reads the header of the next run.
func (h *hybrid) nextRun() error {
	if h.w < 0 || h.w > 32 {
		return fmt.Errorf("bit width %d not in [0, 32]", h.w)
	}
	hdr, k := binary.Uvarint(h.data)
	if k <= 0 {
		return fmt.Errorf("%w (no run header)", errShortRuns)
	}
	h.data = h.data[k:]
	if hdr&1 == 0 { // one value repeated: the count, then the value in ceil(w/8) bytes
		count := hdr >> 1
		nb := (h.w + 7) / 8
		if count == 0 {
			return errors.New("a run of no values")
		}
		if len(h.data) < nb {
			return fmt.Errorf("%w (run value cut)", errShortRuns)
		}
		var v uint32
		for i := 0; i < nb; i++ {
			v |= uint32(h.data[i]) << (8 * i)
		}
		if h.w < 32 && v>>h.w != 0 {
			return fmt.Errorf("run value %d does not fit %d bits", v, h.w)
		}
		h.data = h.data[nb:]
		h.rle, h.value, h.left = true, v, int(min(count, maxRun))
		return nil
	}
	// Bit-packed: groups of 8 values in w bytes each. A cut last group is
	// decoded as far as it goes (as other readers do).
	groups := min(hdr>>1, maxRun/8)
	if groups == 0 {
		return errors.New("a bit-packed run of no values")
	}
	nb := len(h.data)
	cut := true // (no division where the run is whole: a run header a few levels)
	if h.w > 0 && groups*uint64(h.w) <= uint64(nb) {
		nb, cut = int(groups)*h.w, false
	}
	h.rle, h.packed, h.bit = false, h.data[:nb], 0
	h.left = int(groups * 8)
	switch {
	case h.w == 0:
		h.packed = nil
	case cut:
		h.left = min(h.left, nb*8/h.w)
	}
	h.data = h.data[nb:]
	if h.left == 0 {
		return fmt.Errorf("%w (bit-packed run cut)", errShortRuns)
	}
	return nil
}

// take returns how many of the next want values the current run holds (at
// least one), reading a run header if needed (run1's for one-bit values
// where it can).
func (h *hybrid) take(want int) (int, error) {
	if h.left == 0 && (h.w != 1 || !h.run1()) {
		if err := h.nextRun(); err != nil {
			return 0, err
		}
	}
	return min(want, h.left), nil
}

// consume moves past c values of the current run.
func (h *hybrid) consume(c int) {
	h.left -= c
	if !h.rle {
		h.bit += c * h.w
	}
}

// unpackRun decodes the next len(out) values of the current bit-packed run.
func unpackRun[T ~int32 | ~uint32](h *hybrid, out []T) {
	unpack32(h.packed, h.bit, h.w, out)
}

// unpack32 decodes len(out) values of w bits (1 to 32), LSB first, from bit
// bit of b on.
func unpack32[T ~int32 | ~uint32](b []byte, bit, w int, out []T) {
	mask := uint64(1)<<w - 1
	i := 0
	// Values of at most 8 bits from a byte boundary (a run's groups of 8,
	// dictionary indices of up to 256 entries): a group of 8 from one
	// 8-byte load.
	if w <= 8 && bit&7 == 0 {
		for ; i+8 <= len(out) && bit>>3+8 <= len(b); i, bit = i+8, bit+8*w {
			v, o := binary.LittleEndian.Uint64(b[bit>>3:]), out[i:i+8:i+8]
			o[0], o[1], o[2], o[3] = T(v&mask), T(v>>w&mask), T(v>>(2*w)&mask), T(v>>(3*w)&mask)
			o[4], o[5], o[6], o[7] = T(v>>(4*w)&mask), T(v>>(5*w)&mask), T(v>>(6*w)&mask), T(v>>(7*w)&mask)
		}
	}
	// Values of 9 to 16 bits from a byte boundary (dictionary indices of up
	// to 65,536 entries): a group of 8 from two 8-byte loads, 4 values each
	// (the second load at the byte of value 4, at a shift of 0 or 4 bits:
	// 4 values of w bits and the shift fit in 64).
	if w > 8 && w <= 16 && bit&7 == 0 {
		for ; i+8 <= len(out) && bit>>3+16 <= len(b); i, bit = i+8, bit+8*w {
			p, o := bit>>3, out[i:i+8:i+8]
			v := binary.LittleEndian.Uint64(b[p:])
			o[0], o[1], o[2], o[3] = T(v&mask), T(v>>w&mask), T(v>>(2*w)&mask), T(v>>(3*w)&mask)
			u := binary.LittleEndian.Uint64(b[p+4*w>>3:]) >> (4 * w & 7)
			o[4], o[5], o[6], o[7] = T(u&mask), T(u>>w&mask), T(u>>(2*w)&mask), T(u>>(3*w)&mask)
		}
	}
	// Whole 8-byte loads while they stay inside b: a value of up to 32 bits
	// at a shift of up to 7 fits in 64.
	for ; i < len(out) && bit>>3+8 <= len(b); i++ {
		out[i] = T(binary.LittleEndian.Uint64(b[bit>>3:]) >> (bit & 7) & mask)
		bit += w
	}
	for ; i < len(out); i++ {
		var word uint64
		for j, c := range b[bit>>3:] {
			word |= uint64(c) << (8 * j)
		}
		out[i] = T(word >> (bit & 7) & mask)
		bit += w
	}
}

// levelBitWidth is the bit width of levels up to max.
func levelBitWidth(max int16) int {
	w := 0
	for ; max > 0; max >>= 1 {
		w++
	}
	return w
}

func levelError(v uint32, maxDef int16) error {
	return fmt.Errorf("definition level %d above the maximum %d", v, maxDef)
}

// count returns how many of the next m levels are maxDef (> 0).
func (h *hybrid) count(maxDef int16, m int) (int, error) {
	var scratch [64]uint32
	k := 0
	for done := 0; done < m; {
		c, err := h.take(m - done)
		if err != nil {
			return 0, err
		}
		switch {
		case h.rle:
			if h.value > uint32(maxDef) {
				return 0, levelError(h.value, maxDef)
			}
			if h.value == uint32(maxDef) {
				k += c
			}
		case h.w == 1: // maxDef is 1: count the bits set
			k += bitutil.CountSetBits(h.packed, h.bit, c)
		default:
			c = min(c, len(scratch))
			unpackRun(h, scratch[:c])
			for _, v := range scratch[:c] {
				if v > uint32(maxDef) {
					return 0, levelError(v, maxDef)
				}
				if v == uint32(maxDef) {
					k++
				}
			}
		}
		h.consume(c)
		done += c
	}
	return k, nil
}

// countUpTo reads levels until want of them are maxDef (> 0), or m levels
// are read, and returns how many levels it read and how many of them are
// maxDef.
func (h *hybrid) countUpTo(maxDef int16, m, want int) (rows, k int, err error) {
	var scratch [64]uint32
	for rows < m && k < want {
		if h.w == 1 && h.left == 0 && h.run1() {
			// A whole bit-packed run of levels of one bit: count its bytes.
			if !h.rle && h.left <= m-rows {
				if n := onesOf(h.packed); k+n <= want {
					k += n
					rows += h.left
					h.consume(h.left)
					continue
				}
			}
		}
		c, err := h.take(m - rows)
		if err != nil {
			return 0, 0, err
		}
		if h.rle {
			if h.value > uint32(maxDef) {
				return 0, 0, levelError(h.value, maxDef)
			}
			if h.value == uint32(maxDef) {
				c = min(c, want-k)
				k += c
			}
			h.consume(c)
			rows += c
			continue
		}
		if h.w == 1 { // maxDef is 1: count the bits set, want-k levels at a time
			c = min(c, max(want-k, len(scratch)))
			if n := bitutil.CountSetBits(h.packed, h.bit, c); k+n <= want {
				k += n
				h.consume(c)
				rows += c
				continue
			}
			// fewer than 64 values left to find, and they are in these c levels
		}
		c = min(c, len(scratch))
		unpackRun(h, scratch[:c])
		for i, v := range scratch[:c] {
			if v > uint32(maxDef) {
				return 0, 0, levelError(v, maxDef)
			}
			if v == uint32(maxDef) {
				if k++; k == want {
					c = i + 1 // the levels after it are left for the next call
					break
				}
			}
		}
		h.consume(c)
		rows += c
	}
	return rows, k, nil
}

// run1 reads the header of the next run of levels of one bit (w = 1) when
// it is the common one: a header of one byte, an RLE value of 0 or 1, or
// bit-packed groups (a byte each) that are all there; others (longer
// headers, empty runs, cut runs, corrupt values) are left to nextRun,
// which reads them or says what is wrong. It reports whether it read one.
func (h *hybrid) run1() bool {
	d := h.data
	if len(d) < 2 || d[0] >= 0x80 || d[0] < 2 {
		return false
	}
	n := int(d[0] >> 1)
	if d[0]&1 == 0 { // one value repeated n times
		if d[1] > 1 {
			return false
		}
		h.rle, h.value, h.left, h.data = true, uint32(d[1]), n, d[2:]
		return true
	}
	if n > len(d)-1 { // (n groups of 8 levels, a byte each)
		return false
	}
	h.rle, h.packed, h.bit, h.left, h.data = false, d[1:1+n], 0, 8*n, d[1+n:]
	return true
}

// onesOf is the number of bits set in b.
func onesOf(b []byte) int {
	n := 0
	for ; len(b) >= 8; b = b[8:] {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(b))
	}
	for _, x := range b {
		n += bits.OnesCount8(x)
	}
	return n
}

// bitmap sets bit i of valid, for i in [0, m), when the next level i is
// maxDef (> 0), and returns how many are set.
func (h *hybrid) bitmap(maxDef int16, m int, valid []byte) (int, error) {
	if h.w == 1 && maxDef == 1 {
		return h.bitmap1(m, valid)
	}
	var scratch [64]uint32
	for done := 0; done < m; {
		c, err := h.take(m - done)
		if err != nil {
			return 0, err
		}
		switch {
		case h.rle:
			if h.value > uint32(maxDef) {
				return 0, levelError(h.value, maxDef)
			}
			column.SetBits(valid, done, c, h.value == uint32(maxDef))
		case h.w == 1: // the packed levels are the bitmap
			column.CopyBits(h.packed, h.bit, c, valid, done)
		default:
			c = min(c, len(scratch))
			unpackRun(h, scratch[:c])
			for i, v := range scratch[:c] {
				if v > uint32(maxDef) {
					return 0, levelError(v, maxDef)
				}
				bitutil.SetBitTo(valid, done+i, v == uint32(maxDef))
			}
		}
		h.consume(c)
		done += c
	}
	return column.CountSetBits(valid, 0, m), nil
}

// bitmap1 is bitmap of levels of bit width 1 (maxDef 1, the levels the
// bits themselves): each run's bits, up to 56 at a time, gathered in a
// word stored once full. Levels of nullable columns come in short runs
// (an RLE run of ones, then a bit-packed group around a null), which a
// call per run to set or copy bits made most of the cost.
func (h *hybrid) bitmap1(m int, valid []byte) (int, error) {
	_ = valid[:(m+7)/8] // (the caller's bitmap holds m bits)
	var acc uint64      // bits [64*out, 64*out+nb) of valid, not yet stored
	nb, out, set := 0, 0, 0
	for done := 0; done < m; {
		if h.left == 0 && !h.run1() {
			if err := h.nextRun(); err != nil {
				return 0, err
			}
		}
		c := min(m-done, h.left)
		for left := c; left > 0; {
			k := min(left, 56)
			var b uint64
			switch {
			case !h.rle:
				b = column.ReadBits(h.packed, h.bit+c-left, k)
			case h.value != 0:
				b = 1<<k - 1
			}
			set += bits.OnesCount64(b)
			acc |= b << nb
			if nb += k; nb >= 64 {
				binary.LittleEndian.PutUint64(valid[8*out:], acc)
				out++
				nb -= 64
				acc = b >> (k - nb) // (the run's bits past the word; none when nb is 0)
			}
			left -= k
		}
		h.consume(c)
		done += c
	}
	// The last word, bytes up to bit m; the bits past m as they were.
	for i := 8 * out; nb > 0; i, nb = i+1, nb-8 {
		keep := byte(0)
		if nb < 8 {
			keep = 0xFF << nb
		}
		valid[i] = valid[i]&keep | byte(acc)
		acc >>= 8
	}
	return set, nil
}

// elements reads the next m levels of a leaf in lists: a level from exists
// (> 0) on is an element, valid when it is maxDef. It returns the elements
// and the valid ones and, when valid is not nil, sets bit j of valid for
// the j-th element that is valid (and clears it for one that is null).
func (h *hybrid) elements(maxDef, exists int16, m int, valid []byte) (elems, k int, err error) {
	var scratch [64]uint32
	for done := 0; done < m; {
		c, err := h.take(m - done)
		if err != nil {
			return 0, 0, err
		}
		if h.rle {
			if h.value > uint32(maxDef) {
				return 0, 0, levelError(h.value, maxDef)
			}
			if h.value >= uint32(exists) {
				set := h.value == uint32(maxDef)
				if valid != nil {
					column.SetBits(valid, elems, c, set)
				}
				if set {
					k += c
				}
				elems += c
			}
		} else {
			c = min(c, len(scratch))
			unpackRun(h, scratch[:c])
			for _, v := range scratch[:c] {
				if v > uint32(maxDef) {
					return 0, 0, levelError(v, maxDef)
				}
				if v < uint32(exists) {
					continue
				}
				set := v == uint32(maxDef)
				if valid != nil {
					bitutil.SetBitTo(valid, elems, set)
				}
				if set {
					k++
				}
				elems++
			}
		}
		h.consume(c)
		done += c
	}
	return elems, k, nil
}

// indices decodes the next len(out) dictionary indices into out and checks
// that they are below dictLen.
func (h *hybrid) indices(dictLen int, out []int32) error {
	for done := 0; done < len(out); {
		c, err := h.take(len(out) - done)
		if err != nil {
			return err
		}
		dst := out[done : done+c]
		if h.rle {
			if h.value >= uint32(dictLen) {
				return fmt.Errorf("dictionary index %d not in [0, %d)", h.value, dictLen)
			}
			for i := range dst {
				dst[i] = int32(h.value)
			}
		} else {
			if h.w == 0 {
				clear(dst)
			} else {
				unpackRun(h, dst)
			}
			// The OR of the indices is at least their maximum: when it is
			// in range, they all are (the common case, one cheap pass).
			var or int32
			for _, v := range dst {
				or |= v
			}
			if uint32(or) >= uint32(dictLen) {
				for _, v := range dst {
					if uint32(v) >= uint32(dictLen) {
						return fmt.Errorf("dictionary index %d not in [0, %d)", uint32(v), dictLen)
					}
				}
			}
		}
		h.consume(c)
		done += c
	}
	return nil
}

// msbToLSB re-packs n values of w bits from the deprecated BIT_PACKED order
// (most significant bit first, from the high bit of each byte) into the
// hybrid's LSB-first order, in out (grown as needed). data must hold
// ceil(n*w/8) bytes.
func msbToLSB(data []byte, w, n int, out []byte) []byte {
	out = grow(out, (n*w+7)/8)
	clear(out)
	for i := 0; i < n; i++ {
		var v uint32
		for j := 0; j < w; j++ {
			b := i*w + j
			v = v<<1 | uint32(data[b>>3]>>(7-b&7)&1)
		}
		for j := 0; j < w; j++ {
			if v>>j&1 != 0 {
				b := i*w + j
				out[b>>3] |= 1 << (b & 7)
			}
		}
	}
	return out
}

// splitV1Levels splits the n levels of bit width w at the front of the data
// of a data page v1, in encoding enc (RLE, after their 4-byte length, or the
// deprecated BIT_PACKED, re-packed into *legacy), off the rest of the data,
// and starts h on them.
func splitV1Levels(data []byte, enc parquet.Encoding, n, w int, h *hybrid, legacy *[]byte) (rest []byte, err error) {
	switch enc {
	case parquet.Encodings.RLE:
		if len(data) < 4 {
			return nil, fmt.Errorf("%d bytes, too short for its levels", len(data))
		}
		k := int(binary.LittleEndian.Uint32(data))
		if k < 0 || k > len(data)-4 {
			return nil, fmt.Errorf("levels of %d bytes in a page of %d", k, len(data))
		}
		h.reset(data[4:4+k], w)
		return data[4+k:], nil
	case parquet.Encodings.BitPacked:
		if n < 0 || (n*w+7)/8 > len(data) {
			return nil, fmt.Errorf("%d bit-packed levels in a page of %d bytes", n, len(data))
		}
		k := (n*w + 7) / 8
		*legacy = msbToLSB(data[:k], w, n, *legacy)
		h.resetPacked(*legacy, w, n)
		return data[k:], nil
	}
	return nil, fmt.Errorf("levels of encoding %s", enc)
}
