package gpuagg

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/arrowagg/arrowagg/column"
)

// The thread-level update loops of the CPU backend, one generic accumulator per
// family. Each folds a morsel of one column into local registers (several
// independent lanes, so that the loop is not bound by one dependency chain)
// and flush writes them into the morsel's fresh State; morsel states are then
// combined with State.Merge like every other level.

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

func (a *signedAcc[T]) flush(s *State) { // s is fresh
	var sum Int192
	if unsafe.Sizeof(T(0)) == 8 {
		// sumHi * 2^32 + sumLo, in 192 bits
		hi := Int192From(a.sumHi)
		hi = Int192{hi[0] << 32, hi[1]<<32 | hi[0]>>32, hi[2]<<32 | hi[1]>>32}
		sum = hi.Add(Int192FromUint(a.sumLo))
	} else {
		sum = Int192From(int64(a.sumLo))
	}
	s.Sum = s.Sum.Add(sum)
	s.Min[0] = uint64(min(int64(s.Min[0]), a.min))
	s.Max[0] = uint64(max(int64(s.Max[0]), a.max))
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

func (a *unsignedAcc[T]) flush(s *State) {
	hi := Int192{a.sumHi << 32, a.sumHi >> 32, 0}
	s.Sum = s.Sum.Add(hi).Add(Int192FromUint(a.sumLo))
	s.Min[0] = min(s.Min[0], a.min)
	s.Max[0] = max(s.Max[0], a.max)
}

// floatAcc accumulates floats with two compensated lanes (an error-free
// two-sum per value: the rounding error of every addition is kept). Min and
// max skip NaN by comparison. When a lane becomes non-finite, or a zero
// extreme leaves the sign of zero in doubt, flush re-reads the morsel on a
// careful path; ordinary data never takes it.
type floatAcc[T float32 | float64] struct {
	vals     []T
	s0, c0   float64
	s1, c1   float64
	min, max float64
	careful  bool    // the per-value path that keeps non-finite values apart
	special  float64 // careful path: plain sum of the non-finite values
}

func (a *floatAcc[T]) reset(vals []T) {
	*a = floatAcc[T]{vals: vals, min: math.Inf(1), max: math.Inf(-1)}
}

func (a *floatAcc[T]) dense(i, j int) {
	v := a.vals[i:j]
	if a.careful {
		for _, x := range v {
			a.addCareful(float64(x))
		}
		return
	}
	s0, c0, s1, c1 := a.s0, a.c0, a.s1, a.c1
	mn, mx := a.min, a.max
	k := 0
	for ; k+2 <= len(v); k += 2 {
		x0, x1 := float64(v[k]), float64(v[k+1])
		t0 := s0 + x0
		t1 := s1 + x1
		z0 := t0 - s0
		z1 := t1 - s1
		c0 += (s0 - (t0 - z0)) + (x0 - z0)
		c1 += (s1 - (t1 - z1)) + (x1 - z1)
		s0, s1 = t0, t1
		if x0 < mn {
			mn = x0
		}
		if x0 > mx {
			mx = x0
		}
		if x1 < mn {
			mn = x1
		}
		if x1 > mx {
			mx = x1
		}
	}
	for ; k < len(v); k++ {
		x := float64(v[k])
		t := s0 + x
		z := t - s0
		c0 += (s0 - (t - z)) + (x - z)
		s0 = t
		if x < mn {
			mn = x
		}
		if x > mx {
			mx = x
		}
	}
	a.s0, a.c0, a.s1, a.c1 = s0, c0, s1, c1
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
	s, c := a.s0, a.c0
	mn, mx := a.min, a.max
	for ; w != 0; w &= w - 1 {
		x := float64(v[bits.TrailingZeros64(w)])
		t := s + x
		z := t - s
		c += (s - (t - z)) + (x - z)
		s = t
		if x < mn {
			mn = x
		}
		if x > mx {
			mx = x
		}
	}
	a.s0, a.c0 = s, c
	a.min, a.max = mn, mx
}

func (a *floatAcc[T]) addCareful(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		a.special += x
		return
	}
	t := a.s0 + x
	if math.IsInf(t, 0) {
		a.special += t // finite values overflowed
		a.s0 = 0
		return
	}
	z := t - a.s0
	a.c0 += (a.s0 - (t - z)) + (x - z)
	a.s0 = t
	a.min = floatMin(a.min, x)
	a.max = floatMax(a.max, x)
}

// finite reports whether the fast path stayed finite (then its result is exact
// up to the compensation's bound).
func (a *floatAcc[T]) finite() bool {
	return !math.IsInf(a.s0+a.s1+a.c0+a.c1, 0) && !math.IsNaN(a.s0+a.s1+a.c0+a.c1)
}

// needsCareful reports whether the morsel must be re-read on the careful path:
// a non-finite lane, or a zero extreme whose sign the fast comparison may have
// missed (min prefers -0, max prefers +0, as a total order does).
func (a *floatAcc[T]) needsCareful() bool {
	return !a.finite() || a.min == 0 || a.max == 0
}

func (a *floatAcc[T]) flush(s *State) {
	s.addFloatPartial(a.s0, a.c0)
	s.addFloatPartial(a.s1, a.c1)
	if a.special != 0 || math.IsNaN(a.special) {
		s.FSpecial += a.special
	}
	s.Min[0] = math.Float64bits(floatMin(math.Float64frombits(s.Min[0]), a.min))
	s.Max[0] = math.Float64bits(floatMax(math.Float64frombits(s.Max[0]), a.max))
}

// decimalAcc accumulates decimal128 values (stored as {lo, hi} words) into a
// 192-bit sum.
type decimalAcc struct {
	vals     []uint64 // two words a value
	sum      Int192
	min, max [2]uint64
}

func (a *decimalAcc) reset(vals []uint64) {
	e := NewState(column.FamilyDecimal)
	*a = decimalAcc{vals: vals, min: e.Min, max: e.Max}
}

func (a *decimalAcc) one(i int) {
	x := [2]uint64{a.vals[2*i], a.vals[2*i+1]}
	a.sum = a.sum.Add(Int192From128(x[0], int64(x[1])))
	if dec128Less(x, a.min) {
		a.min = x
	}
	if dec128Less(a.max, x) {
		a.max = x
	}
}

func (a *decimalAcc) dense(i, j int) {
	for k := i; k < j; k++ {
		a.one(k)
	}
}

func (a *decimalAcc) sparse(base int, w uint64) {
	for ; w != 0; w &= w - 1 {
		a.one(base + bits.TrailingZeros64(w))
	}
}

func (a *decimalAcc) flush(s *State) {
	s.Sum, s.Min, s.Max = a.sum, a.min, a.max
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

func (a *boolAcc) flush(s *State) { s.Sum = Int192FromUint(uint64(a.trues)) }

// bytesAcc tracks the bytewise min and max of a string or binary column. The
// extremes borrow the input until flush copies them into the state.
type bytesAcc struct {
	v        *column.View
	min, max []byte
	seen     bool
	err      error
}

func (a *bytesAcc) value(i int) []byte {
	v := a.v
	var lo, hi int64
	if v.Kind == column.LargeBinary {
		o := column.Slice[int64](v.Offsets)
		lo, hi = o[v.Offset+i], o[v.Offset+i+1]
	} else {
		o := column.Slice[int32](v.Offsets)
		lo, hi = int64(o[v.Offset+i]), int64(o[v.Offset+i+1])
	}
	if lo < 0 || hi < lo || hi > int64(len(v.Values)) {
		if a.err == nil {
			a.err = fmt.Errorf("%s value %d has offsets [%d, %d] outside its %d-byte data buffer", v.Type, i, lo, hi, len(v.Values))
		}
		return nil
	}
	return v.Values[lo:hi]
}

func (a *bytesAcc) one(i int) {
	b := a.value(i)
	if !a.seen {
		a.min, a.max, a.seen = b, b, true
		return
	}
	if bytes.Compare(b, a.min) < 0 {
		a.min = b
	}
	if bytes.Compare(b, a.max) > 0 {
		a.max = b
	}
}

func (a *bytesAcc) dense(i, j int) {
	for k := i; k < j; k++ {
		a.one(k)
	}
}

func (a *bytesAcc) sparse(base int, w uint64) {
	for ; w != 0; w &= w - 1 {
		a.one(base + bits.TrailingZeros64(w))
	}
}

func (a *bytesAcc) flush(s *State) {
	if a.seen {
		s.BMin = append(s.BMin[:0], a.min...)
		s.BMax = append(s.BMax[:0], a.max...)
	}
}
