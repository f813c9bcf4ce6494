package filter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/arrowagg/arrowagg/column"
)

// Scratch is the working memory of Select: bitmaps of a range's rows and of
// dictionaries. Its zero value is ready to use; it grows to the largest
// range and dictionary it has served and keeps that memory, so that Select
// allocates nothing once a Scratch has served a call of the same size. A
// Scratch serves one call at a time: goroutines that run Select at once
// (over different row ranges, with one Program) each have their own.
type Scratch struct {
	stack  [][]uint64 // a bitmap of the range per level of the tree
	valid  []uint64   // the rows' validity
	dict   []uint64   // a leaf's outcome over a dictionary's values
	dvalid []uint64   // the dictionary's validity
}

func grow(b []uint64, n int) []uint64 {
	if cap(b) < n {
		return make([]uint64, n, n+n/4)
	}
	return b[:n]
}

// Select evaluates the program over rows [lo, hi) of views, where views[i]
// is the view of the program's input i (all of the same rows; views of the
// inputs the program does not read, Uses, may be nil). It sets bit r-lo of
// out (little-endian words: bit k of out[k/64]) when the predicate is TRUE
// for row r, clears it when the predicate is FALSE or UNKNOWN, clears the
// bits from hi-lo to the end of word (hi-lo-1)/64 and leaves the words past
// it alone, and returns the number of rows selected. out holds at least
// (hi-lo+63)/64 words.
//
// Views are read as column.View says: element offsets, validity bit offsets,
// dictionaries (whose nulls are nulls of the column: the predicate is
// evaluated once over the dictionary's values, then gathered by index).
// Bad arguments (a view of another kind than its input's, rows out of a
// view, a dictionary index out of its dictionary for a valid row, offsets
// of a binary view out of its data) are errors, never a panic.
//
// s is the caller's working memory (nil: Select allocates its own, every
// call).
func (p *Program) Select(s *Scratch, views []*column.View, lo, hi int, out []uint64) (int, error) {
	if s == nil {
		s = new(Scratch)
	}
	if len(views) != len(p.in) {
		return 0, fmt.Errorf("where: %d views for the %d inputs of the predicate", len(views), len(p.in))
	}
	if lo < 0 || hi < lo {
		return 0, fmt.Errorf("where: invalid row range [%d, %d)", lo, hi)
	}
	n := hi - lo
	nw := (n + 63) / 64
	if len(out) < nw {
		return 0, fmt.Errorf("where: a selection of %d words for %d rows", len(out), n)
	}
	for _, i := range p.used {
		if err := checkView(p.in[i], views[i], hi); err != nil {
			return 0, err
		}
	}
	if n == 0 {
		return 0, nil
	}
	if len(s.stack) < p.depth {
		s.stack = append(s.stack, make([][]uint64, p.depth-len(s.stack))...)
	}
	for d := range s.stack[:p.depth] {
		s.stack[d] = grow(s.stack[d], nw)
	}
	s.valid = grow(s.valid, nw)
	dst := out[:nw]
	if err := p.eval(p.root, s, views, lo, n, dst, 0); err != nil {
		return 0, err
	}
	dst[nw-1] &= tailMask(n)
	count := 0
	for _, w := range dst {
		count += bits.OnesCount64(w)
	}
	return count, nil
}

func checkView(in Input, v *column.View, hi int) error {
	if v == nil {
		return fmt.Errorf("where: no view of column %q", in.Name)
	}
	if v.Kind != in.Kind {
		return fmt.Errorf("where: the view of column %q is %s, not %s", in.Name, v.Kind, in.Kind)
	}
	if hi > v.Len {
		return fmt.Errorf("where: rows up to %d of column %q, whose view has %d", hi, in.Name, v.Len)
	}
	if err := v.Check(); err != nil {
		return fmt.Errorf("where: column %q: %w", in.Name, err)
	}
	if v.Dict == nil {
		return nil
	}
	switch v.IndexKind {
	case column.Int8, column.Int16, column.Int32, column.Int64, column.Uint8, column.Uint16, column.Uint32, column.Uint64:
	default:
		return fmt.Errorf("where: column %q: dictionary indices of kind %s", in.Name, v.IndexKind)
	}
	if v.Dict.Kind != in.Kind || v.Dict.Dict != nil {
		return fmt.Errorf("where: column %q: a dictionary of %s (nested: %t) for a %s column", in.Name, v.Dict.Kind, v.Dict.Dict != nil, in.Kind)
	}
	if err := v.Dict.Check(); err != nil {
		return fmt.Errorf("where: column %q's dictionary: %w", in.Name, err)
	}
	return nil
}

// tailMask is the mask of the bits of the last word of n bits (n > 0).
func tailMask(n int) uint64 {
	if n&63 == 0 {
		return ^uint64(0)
	}
	return 1<<uint(n&63) - 1
}

// eval writes node nd's TRUE bits for the n rows from lo into dst (bits
// past n in the last word are left as they come).
func (p *Program) eval(nd *node, s *Scratch, views []*column.View, lo, n int, dst []uint64, depth int) error {
	if nd.kind == nLeaf {
		return evalLeaf(nd.leaf, s, views[nd.leaf.col], lo, n, dst)
	}
	if err := p.eval(nd.kids[0], s, views, lo, n, dst, depth+1); err != nil {
		return err
	}
	tmp := s.stack[depth]
	last := len(dst) - 1
	for _, k := range nd.kids[1:] {
		// skip what cannot change dst
		done := true
		if nd.kind == nAnd {
			for _, w := range dst[:last] {
				done = done && w == 0
			}
			done = done && dst[last]&tailMask(n) == 0
		} else {
			for _, w := range dst[:last] {
				done = done && w == ^uint64(0)
			}
			done = done && dst[last]|^tailMask(n) == ^uint64(0)
		}
		if done {
			return nil
		}
		if err := p.eval(k, s, views, lo, n, tmp, depth+1); err != nil {
			return err
		}
		if nd.kind == nAnd {
			for i := range dst {
				dst[i] &= tmp[i]
			}
		} else {
			for i := range dst {
				dst[i] |= tmp[i]
			}
		}
	}
	return nil
}

// evalLeaf writes leaf l's TRUE bits for the n elements of v from lo into
// dst.
func evalLeaf(l *leaf, s *Scratch, v *column.View, lo, n int, dst []uint64) error {
	if v.Dict == nil {
		if l.op == lNull {
			validBits(dst, v, lo, n)
			if !l.neg {
				not(dst)
			}
			return nil
		}
		if err := outcomes(l, v, lo, n, dst); err != nil {
			return err
		}
		if v.Validity != nil {
			copyBits(s.valid, v.Validity, v.ValidityOffset+lo, n)
			and(dst, s.valid)
		}
		return nil
	}
	d := v.Dict
	dw := (d.Len + 63) / 64
	s.dict = grow(s.dict, dw)
	if l.op == lNull {
		validBits(s.dict, d, 0, d.Len)
	} else if d.Len > 0 {
		if err := outcomes(l, d, 0, d.Len, s.dict); err != nil {
			return err
		}
		if d.Validity != nil {
			s.dvalid = grow(s.dvalid, dw)
			copyBits(s.dvalid, d.Validity, d.ValidityOffset, d.Len)
			and(s.dict, s.dvalid)
		}
	}
	validBits(s.valid, v, lo, n)
	bad := gatherIndices(v, lo, n, s.dict, d.Len, dst, s.valid)
	if bad >= 0 {
		return fmt.Errorf("where: dictionary index of row %d out of its dictionary of %d values", lo+bad, d.Len)
	}
	and(dst, s.valid)
	if l.op == lNull && !l.neg {
		not(dst)
	}
	return nil
}

// validBits writes the validity of the n elements of v from lo into dst
// (all ones without a validity bitmap).
func validBits(dst []uint64, v *column.View, lo, n int) {
	if v.Validity == nil {
		for i := range dst[:(n+63)/64] {
			dst[i] = ^uint64(0)
		}
		return
	}
	copyBits(dst, v.Validity, v.ValidityOffset+lo, n)
}

func not(dst []uint64) {
	for i := range dst {
		dst[i] = ^dst[i]
	}
}

func and(dst, src []uint64) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] &= src[i]
	}
}

// copyBits copies bits [off, off+n) of bitmap src to dst, 64 a word (the
// bits of the last word past n are whatever follows in src, or 0).
func copyBits(dst []uint64, src []byte, off, n int) {
	nw := (n + 63) / 64
	shift := uint(off & 7)
	b := src[off>>3:]
	for i := 0; i < nw; i++ {
		p := b[8*i:]
		if len(p) >= 9 {
			dst[i] = binary.LittleEndian.Uint64(p)>>shift | uint64(p[8])<<(64-shift)
			continue
		}
		var tmp [9]byte
		copy(tmp[:], p)
		dst[i] = binary.LittleEndian.Uint64(tmp[:])>>shift | uint64(tmp[8])<<(64-shift)
	}
}

// gatherIndices writes bit dict[idx] of each of the n indices of v from lo
// into dst; it returns the first of those rows that valid says is valid
// whose index is out of [0, dn), or -1.
func gatherIndices(v *column.View, lo, n int, dict []uint64, dn int, dst, valid []uint64) int {
	switch v.IndexKind {
	case column.Int8:
		return gather(column.Values[int8](v)[lo:lo+n], dict, dn, dst, valid)
	case column.Int16:
		return gather(column.Values[int16](v)[lo:lo+n], dict, dn, dst, valid)
	case column.Int32:
		return gather(column.Values[int32](v)[lo:lo+n], dict, dn, dst, valid)
	case column.Int64:
		return gather(column.Values[int64](v)[lo:lo+n], dict, dn, dst, valid)
	case column.Uint8:
		return gather(column.Values[uint8](v)[lo:lo+n], dict, dn, dst, valid)
	case column.Uint16:
		return gather(column.Values[uint16](v)[lo:lo+n], dict, dn, dst, valid)
	case column.Uint32:
		return gather(column.Values[uint32](v)[lo:lo+n], dict, dn, dst, valid)
	}
	return gather(column.Values[uint64](v)[lo:lo+n], dict, dn, dst, valid)
}

func gather[I int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](idx []I, dict []uint64, dn int, dst, valid []uint64) int {
	if dn == 0 {
		dict = []uint64{0} // every index is out: read a zero word
	}
	for w := 0; len(idx) > 0; w++ {
		c := idx[:min(64, len(idx))]
		var m, oob uint64
		for j := len(c) - 1; j >= 0; j-- {
			k := uint64(c[j]) // a negative index is out too
			in := b2u(k < uint64(dn))
			k &= -in // 0 when out: no branch on the data
			m = m<<1 | dict[k>>6]>>(k&63)&in
			oob = oob<<1 | in ^ 1
		}
		dst[w] = m
		if bad := oob & valid[w]; bad != 0 {
			return 64*w + bits.TrailingZeros64(bad)
		}
		idx = idx[len(c):]
	}
	return -1
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// outcomes writes the outcome of leaf l (neg applied) for the n values of v
// from lo into dst, nulls aside.
func outcomes(l *leaf, v *column.View, lo, n int, dst []uint64) error {
	dst = dst[:(n+63)/64]
	switch l.op {
	case lConst:
		w := uint64(0)
		if l.cval != l.neg {
			w = ^uint64(0)
		}
		for i := range dst {
			dst[i] = w
		}
		return nil
	case lRange:
		rangeOutcomes(l, v, lo, n, dst)
	case lSet:
		if err := setOutcomes(l, v, lo, n, dst); err != nil {
			return err
		}
	case lBytes:
		mask := l.mask
		if l.neg {
			mask ^= 7
		}
		return bytesOutcomes(v, lo, n, dst, nil, l.lit, mask)
	}
	if l.neg {
		not(dst)
	}
	return nil
}

func rangeOutcomes(l *leaf, v *column.View, lo, n int, dst []uint64) {
	iw, uw := uint64(l.ihi-l.ilo), l.uhi-l.ulo
	switch v.Kind {
	case column.Int8:
		rangeSigned(column.Values[int8](v)[lo:lo+n], l.ilo, iw, dst)
	case column.Int16:
		rangeSigned(column.Values[int16](v)[lo:lo+n], l.ilo, iw, dst)
	case column.Int32, column.Decimal32:
		rangeSigned(column.Values[int32](v)[lo:lo+n], l.ilo, iw, dst)
	case column.Int64, column.Decimal64:
		rangeSigned(column.Values[int64](v)[lo:lo+n], l.ilo, iw, dst)
	case column.Uint8:
		rangeUnsigned(column.Values[uint8](v)[lo:lo+n], l.ulo, uw, dst)
	case column.Uint16:
		rangeUnsigned(column.Values[uint16](v)[lo:lo+n], l.ulo, uw, dst)
	case column.Uint32:
		rangeUnsigned(column.Values[uint32](v)[lo:lo+n], l.ulo, uw, dst)
	case column.Uint64:
		rangeUnsigned(column.Values[uint64](v)[lo:lo+n], l.ulo, uw, dst)
	case column.Float32:
		rangeFloat(column.Values[float32](v)[lo:lo+n], l.flo, l.fhi, dst)
	case column.Float64:
		rangeFloat(column.Values[float64](v)[lo:lo+n], l.flo, l.fhi, dst)
	case column.Float16:
		rangeHalf(column.Values[uint16](v)[lo:lo+n], l.flo, l.fhi, dst)
	case column.Decimal128:
		words := column.Slice[uint64](v.Values)[2*(v.Offset+lo) : 2*(v.Offset+lo+n)]
		rangeDecimal128(words, l.dlo, l.dhi, dst)
	case column.Bool:
		copyBits(dst, v.Values, v.Offset+lo, n)
		if l.uhi == 0 { // x = false; a range of {0, 1} that is not a constant is one value
			not(dst)
		}
	}
}

// The loops below make a word of 64 outcomes a bit at a time from the top
// (m = m<<1 | bit: no variable shift), in two halves whose dependency
// chains interleave.

// rangeSigned: lo <= x <= lo+w, as one unsigned comparison of x-lo.
func rangeSigned[T int8 | int16 | int32 | int64](vals []T, lo int64, w uint64, dst []uint64) {
	i := 0
	for ; len(vals) >= 64; i++ {
		c := (*[64]T)(vals)
		var a, b uint64
		for j := 31; j >= 0; j-- {
			a = a<<1 | b2u(uint64(int64(c[j])-lo) <= w)
			b = b<<1 | b2u(uint64(int64(c[j+32])-lo) <= w)
		}
		dst[i] = a | b<<32
		vals = vals[64:]
	}
	if len(vals) > 0 {
		var m uint64
		for j := len(vals) - 1; j >= 0; j-- {
			m = m<<1 | b2u(uint64(int64(vals[j])-lo) <= w)
		}
		dst[i] = m
	}
}

func rangeUnsigned[T uint8 | uint16 | uint32 | uint64](vals []T, lo, w uint64, dst []uint64) {
	i := 0
	for ; len(vals) >= 64; i++ {
		c := (*[64]T)(vals)
		var a, b uint64
		for j := 31; j >= 0; j-- {
			a = a<<1 | b2u(uint64(c[j])-lo <= w)
			b = b<<1 | b2u(uint64(c[j+32])-lo <= w)
		}
		dst[i] = a | b<<32
		vals = vals[64:]
	}
	if len(vals) > 0 {
		var m uint64
		for j := len(vals) - 1; j >= 0; j-- {
			m = m<<1 | b2u(uint64(vals[j])-lo <= w)
		}
		dst[i] = m
	}
}

// rangeFloat: lo <= x <= hi in IEEE comparisons (never for NaN).
func rangeFloat[T float32 | float64](vals []T, lo, hi float64, dst []uint64) {
	i := 0
	for ; len(vals) >= 64; i++ {
		c := (*[64]T)(vals)
		var a, b uint64
		for j := 31; j >= 0; j-- {
			x, y := float64(c[j]), float64(c[j+32])
			a = a<<1 | b2u(lo <= x)&b2u(x <= hi)
			b = b<<1 | b2u(lo <= y)&b2u(y <= hi)
		}
		dst[i] = a | b<<32
		vals = vals[64:]
	}
	if len(vals) > 0 {
		var m uint64
		for j := len(vals) - 1; j >= 0; j-- {
			x := float64(vals[j])
			m = m<<1 | b2u(lo <= x)&b2u(x <= hi)
		}
		dst[i] = m
	}
}

func rangeHalf(vals []uint16, lo, hi float64, dst []uint64) {
	for i := 0; len(vals) > 0; i++ {
		c := vals[:min(64, len(vals))]
		var m uint64
		for j, x := range c {
			f := column.HalfToFloat64(x)
			m |= (b2u(lo <= f) & b2u(f <= hi)) << uint(j)
		}
		dst[i] = m
		vals = vals[len(c):]
	}
}

// rangeDecimal128: lo <= x <= hi as the unsigned 128-bit x-lo <= hi-lo.
func rangeDecimal128(words []uint64, lo, hi [2]uint64, dst []uint64) {
	wlo, b := bits.Sub64(hi[0], lo[0], 0)
	whi, _ := bits.Sub64(hi[1], lo[1], b)
	for i := 0; len(words) > 0; i++ {
		c := words[:min(128, len(words))]
		var m uint64
		for j := 0; j+1 < len(c); j += 2 {
			dlo, b := bits.Sub64(c[j], lo[0], 0)
			dhi, _ := bits.Sub64(c[j+1], lo[1], b)
			m |= (b2u(dhi < whi) | b2u(dhi == whi)&b2u(dlo <= wlo)) << uint(j/2)
		}
		dst[i] = m
		words = words[len(c):]
	}
}

func setOutcomes(l *leaf, v *column.View, lo, n int, dst []uint64) error {
	switch v.Kind {
	case column.Int8:
		return inSet(column.Values[int8](v)[lo:lo+n], l.tset, dst)
	case column.Int16:
		return inSet(column.Values[int16](v)[lo:lo+n], l.tset, dst)
	case column.Int32, column.Decimal32:
		return inSet(column.Values[int32](v)[lo:lo+n], l.tset, dst)
	case column.Int64, column.Decimal64:
		return inSet(column.Values[int64](v)[lo:lo+n], l.tset, dst)
	case column.Uint8:
		return inSet(column.Values[uint8](v)[lo:lo+n], l.tset, dst)
	case column.Uint16:
		return inSet(column.Values[uint16](v)[lo:lo+n], l.tset, dst)
	case column.Uint32:
		return inSet(column.Values[uint32](v)[lo:lo+n], l.tset, dst)
	case column.Uint64:
		return inSet(column.Values[uint64](v)[lo:lo+n], l.tset, dst)
	case column.Float32:
		return inSet(column.Values[float32](v)[lo:lo+n], l.tset, dst)
	case column.Float64:
		return inSet(column.Values[float64](v)[lo:lo+n], l.tset, dst)
	case column.Float16:
		set, ok := l.tset.(*typedSet[float64])
		if !ok {
			return errSetType
		}
		vals := column.Values[uint16](v)[lo : lo+n]
		for i := 0; len(vals) > 0; i++ {
			c := vals[:min(64, len(vals))]
			var m uint64
			for j, x := range c {
				m |= b2u(sortedHas(set.vals, column.HalfToFloat64(x))) << uint(j)
			}
			dst[i] = m
			vals = vals[len(c):]
		}
		return nil
	case column.Decimal128:
		set, ok := l.tset.(*typedSet[[2]uint64])
		if !ok {
			return errSetType
		}
		words := column.Slice[uint64](v.Values)[2*(v.Offset+lo) : 2*(v.Offset+lo+n)]
		for i := 0; len(words) > 0; i++ {
			c := words[:min(128, len(words))]
			var m uint64
			for j := 0; j+1 < len(c); j += 2 {
				m |= b2u(set.has([2]uint64{c[j], c[j+1]})) << uint(j/2)
			}
			dst[i] = m
			words = words[len(c):]
		}
		return nil
	case column.Binary, column.LargeBinary, column.FixedSizeBinary:
		set, ok := l.tset.(*typedSet[string])
		if !ok {
			return errSetType
		}
		return bytesOutcomes(v, lo, n, dst, set, nil, 0)
	}
	return errSetType
}

var errSetType = errors.New("where: internal error: an IN list bound for another kind")

func (s *typedSet[T]) has(x T) bool {
	if s.m != nil {
		_, ok := s.m[x]
		return ok
	}
	for _, y := range s.vals {
		if x == y {
			return true
		}
	}
	return false
}

type ordered interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64
}

// sortedHas reports whether the sorted s holds x: the last element not
// above x, found without branches on the data, is x.
func sortedHas[T ordered](s []T, x T) bool {
	base, n := 0, len(s)
	for n > 1 {
		half := n / 2
		if s[base+half] <= x {
			base += half
		}
		n -= half
	}
	return n == 1 && s[base] == x
}

// inSet writes whether each of vals is in the set ts (a *typedSet[T]).
func inSet[T ordered](vals []T, ts any, dst []uint64) error {
	set, ok := ts.(*typedSet[T])
	if !ok {
		return errSetType
	}
	var zero T
	w := binary.Size(zero)
	for i := 0; len(vals) > 0; i++ {
		c := vals[:min(64, len(vals))]
		var m uint64
		switch {
		case set.table != nil:
			for j := len(c) - 1; j >= 0; j-- {
				k := tableIndex(c[j], w)
				m = m<<1 | set.table[k>>6]>>(k&63)&1
			}
		case len(set.vals) <= smallSet:
			for j := len(c) - 1; j >= 0; j-- {
				hit := false
				for _, y := range set.vals {
					hit = hit || c[j] == y
				}
				m = m<<1 | b2u(hit)
			}
		default:
			for j := len(c) - 1; j >= 0; j-- {
				m = m<<1 | b2u(sortedHas(set.vals, c[j]))
			}
		}
		dst[i] = m
		vals = vals[len(c):]
	}
	return nil
}

// hasBytes is s.has(string(b)), without a copy of b.
func hasBytes(s *typedSet[string], b []byte) bool {
	if s.m != nil {
		_, ok := s.m[string(b)]
		return ok
	}
	for _, y := range s.vals {
		if string(b) == y {
			return true
		}
	}
	return false
}

// bytesOutcomes writes, for the n values of a binary view v from lo, whether
// set holds x when set is not nil, else whether bytes.Compare(x, lit)+1 is a bit of mask.
func bytesOutcomes(v *column.View, lo, n int, dst []uint64, set *typedSet[string], lit []byte, mask uint8) error {
	switch v.Kind {
	case column.Binary:
		offs := column.Slice[int32](v.Offsets)[v.Offset+lo : v.Offset+lo+n+1]
		return bytesLoop(offs, 0, v.Values, dst, set, lit, mask)
	case column.LargeBinary:
		offs := column.Slice[int64](v.Offsets)[v.Offset+lo : v.Offset+lo+n+1]
		return bytesLoop(offs, 0, v.Values, dst, set, lit, mask)
	}
	w := v.ElemWidth()
	data := v.Values[(v.Offset+lo)*w : (v.Offset+lo+n)*w]
	return bytesLoop[int64](nil, w, data, dst, set, lit, mask)
}

// elem is value r of a binary view: bounded by offs, or of width w in data
// when offs is nil; false when the offsets are out of data.
func elem[O int32 | int64](offs []O, w int, data []byte, r int) ([]byte, bool) {
	if offs == nil {
		return data[r*w : r*w+w], true
	}
	s, e := int64(offs[r]), int64(offs[r+1])
	if s < 0 || e < s || e > int64(len(data)) {
		return nil, false
	}
	return data[s:e], true
}

// bytesLoop runs over the values that offs bound in data (or, with offs
// nil, the values of width w that data holds).
func bytesLoop[O int32 | int64](offs []O, w int, data []byte, dst []uint64, set *typedSet[string], lit []byte, mask uint8) error {
	n := len(offs) - 1
	if offs == nil {
		n = len(data) / w
	}
	flip := uint64(0)
	if mask == 5 {
		flip = ^uint64(0)
	}
	for i, r := 0, 0; r < n; i++ {
		c := min(64, n-r)
		var m uint64
		switch {
		case set != nil:
			for j := 0; j < c; j++ {
				x, ok := elem(offs, w, data, r+j)
				if !ok {
					return errOffsets(offs, r+j, len(data))
				}
				m |= b2u(hasBytes(set, x)) << uint(j)
			}
		case mask == 2 || mask == 5:
			for j := 0; j < c; j++ {
				x, ok := elem(offs, w, data, r+j)
				if !ok {
					return errOffsets(offs, r+j, len(data))
				}
				m |= b2u(string(x) == string(lit)) << uint(j)
			}
			m ^= flip
		default:
			for j := 0; j < c; j++ {
				x, ok := elem(offs, w, data, r+j)
				if !ok {
					return errOffsets(offs, r+j, len(data))
				}
				m |= uint64(mask>>uint(bytes.Compare(x, lit)+1)&1) << uint(j)
			}
		}
		dst[i] = m
		r += c
	}
	return nil
}

func errOffsets[O int32 | int64](offs []O, r, n int) error {
	return fmt.Errorf("where: binary offsets [%d, %d] outside the %d-byte data", offs[r], offs[r+1], n)
}
