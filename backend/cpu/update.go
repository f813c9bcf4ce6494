package cpu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// The thread-level update loops of the CPU backend, one generic accumulator per
// family. Each folds a morsel of one column into local registers (several
// independent lanes, so that the loop is not bound by one dependency chain)
// and flush writes them into the morsel's fresh agg.State; morsel states are then
// combined with agg.State.Merge like every other level.
//
// For 64- and 32-bit integers and floats the accumulators hand whole morsels
// to SIMD kernels (simd_amd64.s) where the CPU has them. The Go loops remain
// the reference and the fallback: integer results are exact on both paths,
// and float lanes follow one canonical structure (floatLanes), so every path
// gives bit-identical States.

// simdKind names the instruction sets of the SIMD kernels, in increasing order.
type simdKind int

const (
	simdNone   simdKind = iota // the Go loops
	simdAVX2                   // amd64 AVX2
	simdAVX512                 // amd64 AVX-512 F/DQ/BW/VL
)

func (k simdKind) String() string {
	return [...]string{"go", "avx2", "avx512"}[k]
}

// intLanes is the lane state of the integer SIMD kernels (their memory layout:
// keep the field order). Lane k holds sum, the 64-bit wrapping sum of its
// values, and hi, the sum of their high 32 bits (x>>32, arithmetic for signed
// values), which together give the exact sum (see sums); min and max are in the
// kind's encoding (int64 bits or uint64). Integer results do not depend on the
// lane structure: any exact scheme gives the same agg.State.
type intLanes struct {
	sum, hi, min, max [8]uint64
}

func (l *intLanes) init(mn, mx uint64) {
	for k := range l.min {
		l.min[k], l.max[k] = mn, mx
	}
}

// sums returns the wrapping sum of the lanes and the sum of their high halves.
// Every value x is hi(x)*2^32 + lo(x) with 0 <= lo(x) < 2^32, so the exact sum is
// hi*2^32 + (sum - hi<<32 mod 2^64), the second term being the sum of the low
// halves: exact while fewer than 2^32 values were folded (a morsel is far less).
func (l *intLanes) sums() (sum, hi uint64) {
	for k := range l.sum {
		sum += l.sum[k]
		hi += l.hi[k]
	}
	return sum, hi
}

// castSlice reinterprets v as a []U of the same length; T and U must have the
// same size and representation of values.
func castSlice[U, T any](v []T) []U {
	return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
}

// signedAcc accumulates signed integers. A value x is split into its high 32
// bits (signed) and low 32 bits (unsigned), each summed in 64 bits: exact for
// up to 2^31 values, far more than a morsel, with no carry chain in the loop.
type signedAcc[T int8 | int16 | int32 | int64] struct {
	vals     []T
	sumHi    int64
	sumLo    uint64
	min, max int64
}

func (a *signedAcc[T]) reset(vals []T) {
	*a = signedAcc[T]{vals: vals, min: math.MaxInt64, max: math.MinInt64}
}

func (a *signedAcc[T]) dense(i, j int) {
	v := a.vals[i:j]
	wide := unsafe.Sizeof(T(0)) == 8
	h0, h1 := int64(0), int64(0)
	l0, l1 := uint64(0), uint64(0)
	mn0, mn1, mx0, mx1 := a.min, a.min, a.max, a.max
	k := 0
	for ; k+4 <= len(v); k += 4 {
		x0, x1, x2, x3 := int64(v[k]), int64(v[k+1]), int64(v[k+2]), int64(v[k+3])
		if wide {
			h0 += x0>>32 + x2>>32
			h1 += x1>>32 + x3>>32
			l0 += uint64(uint32(x0)) + uint64(uint32(x2))
			l1 += uint64(uint32(x1)) + uint64(uint32(x3))
		} else {
			h0 += x0 + x2
			h1 += x1 + x3
		}
		mn0 = min(mn0, x0, x2)
		mn1 = min(mn1, x1, x3)
		mx0 = max(mx0, x0, x2)
		mx1 = max(mx1, x1, x3)
	}
	for ; k < len(v); k++ {
		x := int64(v[k])
		if wide {
			h0 += x >> 32
			l0 += uint64(uint32(x))
		} else {
			h0 += x
		}
		mn0, mx0 = min(mn0, x), max(mx0, x)
	}
	if wide {
		a.sumHi += h0 + h1
		a.sumLo += l0 + l1
	} else {
		a.sumLo += uint64(h0 + h1) // two's complement; folded back as signed in flush
	}
	a.min, a.max = min(a.min, mn0, mn1), max(a.max, mx0, mx1)
}

func (a *signedAcc[T]) sparse(base int, w uint64) {
	v := a.vals[base:]
	wide := unsafe.Sizeof(T(0)) == 8
	mn, mx := a.min, a.max
	var h int64
	var l uint64
	for ; w != 0; w &= w - 1 {
		x := int64(v[bits.TrailingZeros64(w)])
		if wide {
			h += x >> 32
			l += uint64(uint32(x))
		} else {
			h += x
		}
		mn, mx = min(mn, x), max(mx, x)
	}
	if wide {
		a.sumHi += h
		a.sumLo += l
	} else {
		a.sumLo += uint64(h)
	}
	a.min, a.max = mn, mx
}

// kernel implements kernelAcc.
func (a *signedAcc[T]) kernel(lo, hi int, valid []byte) bool {
	var l intLanes
	l.init(uint64(a.min), uint64(a.max))
	v := a.vals[lo:hi]
	var ok bool
	switch unsafe.Sizeof(T(0)) {
	case 8:
		ok = kernelInt64(castSlice[int64](v), valid, &l)
	case 4:
		ok = kernelInt32(castSlice[int32](v), valid, &l)
	}
	if !ok {
		return false
	}
	sum, hi32 := l.sums()
	if unsafe.Sizeof(T(0)) == 8 {
		a.sumHi += int64(hi32)
		a.sumLo += sum - hi32<<32
	} else {
		a.sumLo += sum // the exact int64 sum, two's complement
	}
	for k := range l.min {
		a.min, a.max = min(a.min, int64(l.min[k])), max(a.max, int64(l.max[k]))
	}
	return true
}

func (a *signedAcc[T]) flush(count, nulls int64) agg.State {
	var sum agg.Int192
	if unsafe.Sizeof(T(0)) == 8 {
		// sumHi * 2^32 + sumLo, in 192 bits
		hi := agg.Int192From(a.sumHi)
		hi = agg.Int192{hi[0] << 32, hi[1]<<32 | hi[0]>>32, hi[2]<<32 | hi[1]>>32}
		sum = hi.Add(agg.Int192FromUint(a.sumLo))
	} else {
		sum = agg.Int192From(int64(a.sumLo))
	}
	return agg.Signed(count, nulls, sum, a.min, a.max)
}

// unsignedAcc accumulates unsigned integers; 64-bit values are split like the
// signed ones.
type unsignedAcc[T uint8 | uint16 | uint32 | uint64] struct {
	vals         []T
	sumHi, sumLo uint64
	min, max     uint64
}

func (a *unsignedAcc[T]) reset(vals []T) {
	*a = unsignedAcc[T]{vals: vals, min: math.MaxUint64}
}

func (a *unsignedAcc[T]) dense(i, j int) {
	v := a.vals[i:j]
	wide := unsafe.Sizeof(T(0)) == 8
	var h0, h1, l0, l1 uint64
	mn0, mn1, mx0, mx1 := a.min, a.min, a.max, a.max
	k := 0
	for ; k+4 <= len(v); k += 4 {
		x0, x1, x2, x3 := uint64(v[k]), uint64(v[k+1]), uint64(v[k+2]), uint64(v[k+3])
		if wide {
			h0 += x0>>32 + x2>>32
			h1 += x1>>32 + x3>>32
			l0 += uint64(uint32(x0)) + uint64(uint32(x2))
			l1 += uint64(uint32(x1)) + uint64(uint32(x3))
		} else {
			l0 += x0 + x2
			l1 += x1 + x3
		}
		mn0 = min(mn0, x0, x2)
		mn1 = min(mn1, x1, x3)
		mx0 = max(mx0, x0, x2)
		mx1 = max(mx1, x1, x3)
	}
	for ; k < len(v); k++ {
		x := uint64(v[k])
		if wide {
			h0 += x >> 32
			l0 += uint64(uint32(x))
		} else {
			l0 += x
		}
		mn0, mx0 = min(mn0, x), max(mx0, x)
	}
	a.sumHi += h0 + h1
	a.sumLo += l0 + l1
	a.min, a.max = min(a.min, mn0, mn1), max(a.max, mx0, mx1)
}

func (a *unsignedAcc[T]) sparse(base int, w uint64) {
	v := a.vals[base:]
	wide := unsafe.Sizeof(T(0)) == 8
	mn, mx := a.min, a.max
	var h, l uint64
	for ; w != 0; w &= w - 1 {
		x := uint64(v[bits.TrailingZeros64(w)])
		if wide {
			h += x >> 32
			l += uint64(uint32(x))
		} else {
			l += x
		}
		mn, mx = min(mn, x), max(mx, x)
	}
	a.sumHi += h
	a.sumLo += l
	a.min, a.max = mn, mx
}

// kernel implements kernelAcc.
func (a *unsignedAcc[T]) kernel(lo, hi int, valid []byte) bool {
	var l intLanes
	l.init(a.min, a.max)
	v := a.vals[lo:hi]
	var ok bool
	switch unsafe.Sizeof(T(0)) {
	case 8:
		ok = kernelUint64(castSlice[uint64](v), valid, &l)
	case 4:
		ok = kernelUint32(castSlice[uint32](v), valid, &l)
	}
	if !ok {
		return false
	}
	sum, hi32 := l.sums()
	a.sumHi += hi32
	a.sumLo += sum - hi32<<32
	for k := range l.min {
		a.min, a.max = min(a.min, l.min[k]), max(a.max, l.max[k])
	}
	return true
}

func (a *unsignedAcc[T]) flush(count, nulls int64) agg.State {
	hi := agg.Int192{a.sumHi << 32, a.sumHi >> 32, 0}
	return agg.Unsigned(count, nulls, hi.Add(agg.Int192FromUint(a.sumLo)), a.min, a.max)
}

// The lanes of float sums are canonical, shared by the Go loops and the SIMD
// kernels so that both give bit-identical States. A morsel of n elements is
// cut into floatParts parts of q = morselQuarter(n) elements (the last one
// shorter or empty; the kernels stream them side by side); element i of part
// p, counted from the part's start, goes to lane p*floatPartLanes + i mod
// floatPartLanes. Each lane keeps an error-free two-sum (s, c) of its valid
// elements in element order (nulls leave it untouched), and flush adds lanes
// 0, 1, ... into the agg.State in that order.
const (
	floatParts     = 4
	floatPartLanes = 8
	floatLaneCount = floatParts * floatPartLanes
)

// morselQuarter is the length of the parts of a morsel of n elements but the
// last: a multiple of 64 at or above n/4 (so validity bits stay byte-aligned
// and a 64-element group lies in one part), at most n.
func morselQuarter(n int) int { return min(n, ((n+3)/4+63)&^63) }

// floatLanes is the lane state of a float accumulator (the SIMD kernels'
// memory layout: keep the field order).
type floatLanes struct {
	s, c [floatLaneCount]float64 // compensated sums, the canonical lanes
	// min and max are per-lane extremes of the SIMD kernels (two registers
	// each); the Go loops keep floatAcc.min/max instead (extremes do not depend
	// on the order).
	min, max [16]float64
}

// add folds x into lane k with an error-free two-sum; the SIMD kernels do the
// very same operations in the same order.
func (l *floatLanes) add(k int, x float64) {
	s := l.s[k]
	t := s + x
	z := t - s
	l.c[k] += (s - (t - z)) + (x - z)
	l.s[k] = t
}

// floatAcc accumulates floats in the canonical compensated lanes (an
// error-free two-sum per value: the rounding error of every addition is kept).
// Min and max skip NaN by comparison. When a lane becomes non-finite, or a zero
// extreme leaves the sign of zero in doubt, flush re-reads the morsel on a
// careful path; ordinary data never takes it.
type floatAcc[T float32 | float64] struct {
	vals     []T
	l        floatLanes
	lo, q    int // the morsel's first element and part length (lanes)
	min, max float64
	careful  bool    // the per-value path that keeps non-finite values apart
	special  float64 // careful path: plain sum of the non-finite values
	zs       zeroSigns[T]
}

func (a *floatAcc[T]) reset(vals []T) {
	*a = floatAcc[T]{vals: vals, q: math.MaxInt, min: math.Inf(1), max: math.Inf(-1)}
}

// beginMorsel implements laneAcc.
func (a *floatAcc[T]) beginMorsel(lo, hi int) {
	a.lo, a.q = lo, morselQuarter(hi-lo)
	if a.q == 0 {
		a.q = math.MaxInt
	}
}

// kernel implements kernelAcc.
func (a *floatAcc[T]) kernel(lo, hi int, valid []byte) bool {
	if a.careful || simdLevel == simdNone || lo%64 != 0 || a.lo != lo || a.q != morselQuarter(hi-lo) {
		return false
	}
	for k := range a.l.min {
		a.l.min[k], a.l.max[k] = a.min, a.max
	}
	v := a.vals[lo:hi]
	var ok bool
	switch unsafe.Sizeof(T(0)) {
	case 8:
		ok = kernelFloat64(castSlice[float64](v), valid, &a.l)
	case 4:
		ok = kernelFloat32(castSlice[float32](v), valid, &a.l)
	}
	if !ok {
		return false
	}
	for k := range a.l.min {
		if a.l.min[k] < a.min {
			a.min = a.l.min[k]
		}
		if a.l.max[k] > a.max {
			a.max = a.l.max[k]
		}
	}
	return true
}

// part returns the part of element i and the element where the part ends.
func (a *floatAcc[T]) part(i int) (p, end int) {
	p = min((i-a.lo)/a.q, floatParts-1)
	if p == floatParts-1 {
		return p, math.MaxInt
	}
	return p, a.lo + (p+1)*a.q
}

func (a *floatAcc[T]) dense(i, j int) {
	if a.careful {
		for _, x := range a.vals[i:j] {
			a.addCareful(float64(x))
		}
		return
	}
	for i < j {
		p, end := a.part(i)
		end = min(end, j)
		a.denseLanes(i, end, p*floatPartLanes)
		i = end
	}
}

// denseLanes folds elements [i, j) of one part, whose lanes start at first
// (morsels and parts start at multiples of 64, so i mod floatPartLanes is the
// lane within the part).
func (a *floatAcc[T]) denseLanes(i, j, first int) {
	mn, mx := a.min, a.max
	for k, xt := range a.vals[i:j] {
		x := float64(xt)
		a.l.add(first+(i+k)&(floatPartLanes-1), x)
		if x < mn {
			mn = x
		}
		if x > mx {
			mx = x
		}
	}
	a.min, a.max = mn, mx
}

func (a *floatAcc[T]) sparse(base int, w uint64) {
	v := a.vals[base:]
	if a.careful {
		for ; w != 0; w &= w - 1 {
			a.addCareful(float64(v[bits.TrailingZeros64(w)]))
		}
		return
	}
	p, _ := a.part(base) // a 64-element group lies in one part
	first := p * floatPartLanes
	mn, mx := a.min, a.max
	for ; w != 0; w &= w - 1 {
		k := bits.TrailingZeros64(w)
		x := float64(v[k])
		a.l.add(first+(base+k)&(floatPartLanes-1), x)
		if x < mn {
			mn = x
		}
		if x > mx {
			mx = x
		}
	}
	a.min, a.max = mn, mx
}

func (a *floatAcc[T]) addCareful(x float64) {
	a.min = agg.FloatMin(a.min, x) // NaN never wins
	a.max = agg.FloatMax(a.max, x)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		a.special += x
		return
	}
	t := a.l.s[0] + x
	if math.IsInf(t, 0) {
		a.special += t // finite values overflowed
		a.l.s[0] = 0
		return
	}
	a.l.add(0, x) // the careful path uses lane 0 only
}

// finite reports whether the fast path stayed finite (then its result is exact
// up to the compensation's bound).
func (a *floatAcc[T]) finite() bool {
	for k := range a.l.s {
		if !isFinite(a.l.s[k]) || !isFinite(a.l.c[k]) {
			return false
		}
	}
	return true
}

func isFinite(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }

// needsCareful reports whether the morsel must be re-read on the careful path:
// a non-finite lane.
func (a *floatAcc[T]) needsCareful() bool {
	return !a.finite()
}

// zeroExtremes returns a visitor that finds the signed zeros among the
// morsel's values when one of its extremes is zero, whose sign the fast
// comparisons may have missed (min prefers -0, max prefers +0, as FloatMin
// and FloatMax, the careful path's, do), or nil; signZeros then signs them.
func (a *floatAcc[T]) zeroExtremes() visitor {
	if a.careful || (a.min != 0 && a.max != 0) {
		return nil
	}
	a.zs = zeroSigns[T]{vals: a.vals}
	return &a.zs
}

// signZeros gives a zero extreme its sign, from the zeros zeroExtremes'
// visitor found: a zero minimum means no value is negative, so it is -0
// when a -0 was seen; a zero maximum is +0 when a +0 was seen.
func (a *floatAcc[T]) signZeros() {
	negZero := math.Copysign(0, -1)
	if a.min == 0 {
		a.min = 0
		if a.zs.neg {
			a.min = negZero
		}
	}
	if a.max == 0 {
		a.max = negZero
		if a.zs.pos {
			a.max = 0
		}
	}
}

// zeroSigns is a visitor that records whether the values it visits hold
// -0 and +0 (without a branch a value: zeros may be half the values).
type zeroSigns[T float32 | float64] struct {
	vals     []T
	neg, pos bool
}

func (z *zeroSigns[T]) dense(i, j int) {
	var neg, pos bool
	switch v := z.vals[i:j]; unsafe.Sizeof(T(0)) {
	case 8:
		neg, pos = hasZeros(castSlice[uint64](v), 1<<63)
	case 4:
		neg, pos = hasZeros(castSlice[uint32](v), 1<<31)
	}
	z.neg, z.pos = z.neg || neg, z.pos || pos
}

func (z *zeroSigns[T]) sparse(base int, w uint64) {
	v := z.vals[base:]
	for ; w != 0; w &= w - 1 {
		x := float64(v[bits.TrailingZeros64(w)])
		z.neg = z.neg || x == 0 && math.Signbit(x)
		z.pos = z.pos || x == 0 && !math.Signbit(x)
	}
}

// hasZeros reports whether the float bits b hold -0 (the sign bit alone,
// sign) and +0: the least of b^sign, and of b, is 0 (min is a conditional
// move, not a branch).
func hasZeros[U uint32 | uint64](b []U, sign U) (neg, pos bool) {
	neg, pos, b = kernelZeros(b)
	if neg && pos {
		return true, true
	}
	n0, n1, p0, p1 := ^U(0), ^U(0), ^U(0), ^U(0) // (two chains of moves each, not one)
	for ; len(b) >= 2; b = b[2:] {
		x, y := b[0], b[1]
		n0, p0 = min(n0, x^sign), min(p0, x)
		n1, p1 = min(n1, y^sign), min(p1, y)
	}
	for _, x := range b {
		n0, p0 = min(n0, x^sign), min(p0, x)
	}
	return neg || min(n0, n1) == 0, pos || min(p0, p1) == 0
}

func (a *floatAcc[T]) flush(count, nulls int64) agg.State {
	return agg.FloatLanes(count, nulls, a.l.s[:], a.l.c[:], a.special, a.min, a.max)
}

// decimalAcc accumulates decimal128 values (stored as {lo, hi} words) into a
// 192-bit sum.
type decimalAcc struct {
	vals     []uint64 // two words a value
	sum      agg.Int192
	min, max [2]uint64
	noSum    bool // extremes only (agg.Extremes)
}

func (a *decimalAcc) reset(vals []uint64, noSum bool) {
	e := agg.New(column.FamilyDecimal, 0)
	*a = decimalAcc{vals: vals, min: e.Min, max: e.Max, noSum: noSum}
}

// dense folds values [i, j) with the sum's and the extremes' words in
// registers (a value at a time through agg.Int192.Add and
// agg.Decimal128Less took 27 ns a value, this 4).
func (a *decimalAcc) dense(i, j int) {
	vals := a.vals[2*i : 2*j]
	s0, s1, s2 := a.sum[0], a.sum[1], a.sum[2]
	mnlo, mnhi, mxlo, mxhi := a.min[0], int64(a.min[1]), a.max[0], int64(a.max[1])
	for k := 0; k+1 < len(vals); k += 2 {
		lo, hi := vals[k], int64(vals[k+1])
		if !a.noSum {
			var c uint64
			s0, c = bits.Add64(s0, lo, 0)
			s1, c = bits.Add64(s1, uint64(hi), c)
			s2 += uint64(hi>>63) + c
		}
		if hi < mnhi || hi == mnhi && lo < mnlo {
			mnlo, mnhi = lo, hi
		}
		if hi > mxhi || hi == mxhi && lo > mxlo {
			mxlo, mxhi = lo, hi
		}
	}
	a.sum = agg.Int192{s0, s1, s2}
	a.min, a.max = [2]uint64{mnlo, uint64(mnhi)}, [2]uint64{mxlo, uint64(mxhi)}
}

// sparse folds the values of the set bits of w, a run of set bits at a
// time.
func (a *decimalAcc) sparse(base int, w uint64) {
	for w != 0 {
		i := bits.TrailingZeros64(w)
		n := bits.TrailingZeros64(^(w >> i)) // (64 when every bit from i is set)
		a.dense(base+i, base+i+n)
		w &^= (uint64(1)<<n - 1) << i
	}
}

func (a *decimalAcc) flush(count, nulls int64) agg.State {
	if a.noSum {
		return agg.Extremes(column.FamilyDecimal, count, nulls, a.min, a.max)
	}
	return agg.Decimal(count, nulls, a.sum, a.min, a.max)
}

// boolAcc counts the true values of a boolean column (its sum); min and max
// follow from the count of true and valid values.
type boolAcc struct {
	values []byte // values bitmap
	off    int    // bit offset of element 0
	trues  int64
}

func (a *boolAcc) dense(i, j int) {
	for k := i; k < j; k += 64 {
		a.trues += int64(bits.OnesCount64(loadBits(a.values, a.off+k, min(64, j-k))))
	}
}

func (a *boolAcc) sparse(base int, w uint64) {
	a.trues += int64(bits.OnesCount64(loadBits(a.values, a.off+base, 64) & w))
}

func (a *boolAcc) flush(count, nulls int64) agg.State { return agg.Bool(count, nulls, a.trues) }

// bytesAcc tracks the bytewise min and max of a string or binary column. The
// extremes borrow the input until flush copies them into the state.
//
// Most values of a column lie strictly between the extremes seen so far, and
// for those a comparison of 8-byte prefixes decides: a value's key is its
// first 8 bytes read big-endian, zero-padded (prefixKey), and a key strictly
// between the extremes' keys means a value strictly between them, so only
// values whose key ties or passes an extreme's are compared in full.
type bytesAcc struct {
	v               *column.View
	min, max        []byte
	minKey, maxKey  uint64
	seen            bool
	err             error
	off32           []int32 // the offsets (one of the two), from element 0
	off64           []int64
	offsetsResolved bool
}

// bounds returns the byte range of element i, or ok false (and the error
// noted) when the offsets point outside the data.
func (a *bytesAcc) bounds(i int) (lo, hi int64, ok bool) {
	v := a.v
	if !a.offsetsResolved {
		if v.Kind == column.LargeBinary {
			a.off64 = column.Slice[int64](v.Offsets)
		} else {
			a.off32 = column.Slice[int32](v.Offsets)
		}
		a.offsetsResolved = true
	}
	if a.off64 != nil {
		lo, hi = a.off64[v.Offset+i], a.off64[v.Offset+i+1]
	} else {
		lo, hi = int64(a.off32[v.Offset+i]), int64(a.off32[v.Offset+i+1])
	}
	if lo < 0 || hi < lo || hi > int64(len(v.Values)) {
		if a.err == nil {
			a.err = fmt.Errorf("%s value %d has offsets [%d, %d] outside its %d-byte data buffer", v.Type, i, lo, hi, len(v.Values))
		}
		return 0, 0, false
	}
	return lo, hi, true
}

func (a *bytesAcc) value(i int) []byte {
	lo, hi, ok := a.bounds(i)
	if !ok {
		return nil
	}
	return a.v.Values[lo:hi]
}

// prefixKey is the first 8 bytes of data[lo:hi] as a big-endian number,
// zero-padded: keys order as the values do wherever they differ (a smaller
// key is a smaller value, a larger key a larger one; equal keys decide
// nothing).
func prefixKey(data []byte, lo, hi int64) uint64 {
	if lo+8 <= int64(len(data)) {
		return wordKey(data, lo, hi)
	}
	var k uint64
	for j := int64(0); j < 8; j++ {
		k <<= 8
		if j < hi-lo {
			k |= uint64(data[lo+j])
		}
	}
	return k
}

// wordKey is prefixKey where 8 bytes of data start at lo: one load, and the
// bytes past the value cut with a shift, not a branch on its length.
func wordKey(data []byte, lo, hi int64) uint64 {
	k := bits.ReverseBytes64(binary.LittleEndian.Uint64(data[lo:]))
	sh := uint(max(0, 8-(hi-lo))) * 8
	return k >> sh << sh
}

// between reports whether data[lo:hi] (n = len(data)) is a valid value
// whose prefix key lies strictly between minK and maxK: a value strictly
// between the extremes, which needs nothing more.
func between(data []byte, n, lo, hi int64, minK, maxK uint64) bool {
	if lo < 0 || hi < lo || lo+8 > n || hi > n {
		return false
	}
	k := wordKey(data, lo, hi)
	return k > minK && k < maxK
}

func (a *bytesAcc) one(i int) {
	lo, hi, ok := a.bounds(i)
	if !ok {
		return
	}
	data := a.v.Values
	k := prefixKey(data, lo, hi)
	if a.seen && k > a.minKey && k < a.maxKey {
		return // strictly between the extremes
	}
	b := data[lo:hi]
	if !a.seen {
		a.min, a.max, a.seen = b, b, true
		a.minKey, a.maxKey = k, k
		return
	}
	if k <= a.minKey && bytes.Compare(b, a.min) < 0 {
		a.min, a.minKey = b, k
	}
	if k >= a.maxKey && bytes.Compare(b, a.max) > 0 {
		a.max, a.maxKey = b, k
	}
}

func (a *bytesAcc) dense(i, j int) {
	if i >= j {
		return
	}
	if !a.seen {
		a.one(i) // the first value: the extremes' keys start there
		if i++; i >= j {
			return
		}
	}
	a.bounds(i) // resolves the offsets
	if a.off64 != nil {
		denseBytes(a, a.off64, i, j)
	} else {
		denseBytes(a, a.off32, i, j)
	}
}

// denseBytes folds elements [i, j) of a's view, whose offsets are off (from
// element 0), once a has seen a value: the prefix keys of most values fall
// strictly between the extremes' and nothing more is read of them; the
// others (and offsets out of range, which one reports) take one's full path.
func denseBytes[O int32 | int64](a *bytesAcc, off []O, i, j int) {
	data := a.v.Values
	n := int64(len(data))
	minK, maxK := a.minKey, a.maxKey
	off = off[a.v.Offset+i : a.v.Offset+j+1]
	for k := 0; k+1 < len(off); k++ {
		if between(data, n, int64(off[k]), int64(off[k+1]), minK, maxK) {
			continue
		}
		a.one(i + k)
		minK, maxK = a.minKey, a.maxKey
	}
}

func (a *bytesAcc) sparse(base int, w uint64) {
	if w == ^uint64(0) {
		a.dense(base, base+64)
		return
	}
	if !a.seen && w != 0 {
		a.one(base + bits.TrailingZeros64(w))
		w &= w - 1
	}
	if w == 0 {
		return
	}
	a.bounds(base + bits.TrailingZeros64(w)) // resolves the offsets
	if a.off64 != nil {
		sparseBytes(a, a.off64, base, w)
	} else {
		sparseBytes(a, a.off32, base, w)
	}
}

// sparseBytes is denseBytes for the elements base+k of the set bits k of w.
func sparseBytes[O int32 | int64](a *bytesAcc, off []O, base int, w uint64) {
	data := a.v.Values
	n := int64(len(data))
	minK, maxK := a.minKey, a.maxKey
	off = off[a.v.Offset+base:]
	for ; w != 0; w &= w - 1 {
		k := bits.TrailingZeros64(w)
		if between(data, n, int64(off[k]), int64(off[k+1]), minK, maxK) {
			continue
		}
		a.one(base + k)
		minK, maxK = a.minKey, a.maxKey
	}
}

func (a *bytesAcc) flush(count, nulls int64) agg.State {
	return agg.Bytes(count, nulls, a.min, a.max)
}
