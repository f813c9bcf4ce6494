package cpu

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// The statistics asked for by name (agg.Moments: the sums of squares of
// stddev and variance; agg.ApproxDistinct: a HyperLogLog sketch) are folded
// in the same visit of each morsel as the other aggregates: once the
// morsel's sum, extremes and counts are folded (by the SIMD kernels where
// there are some), its values, still in cache, go through a stats
// accumulator, whose totals are attached to the morsel's state
// (agg.State.SetSquares, SetFloatSquares, SetSketch). The morsel is read
// from memory once, and nothing of the statistics runs unless a state tracks
// them. Booleans need no accumulator: their counts answer the statistics.
//
// Integer squares are exact (128-bit products, 192-bit sums); float squares
// are error-free products (an FMA gives each product's rounding error)
// summed with error-free two-sums in the canonical lanes of the float sums,
// so a morsel's squares are the same bits whatever path folded its sums.

// statsNeed is what a morsel's state asks of the statistics.
type statsNeed struct {
	moments bool // the sums of squares
	sketch  bool // the HyperLogLog sketch
}

func (n statsNeed) any() bool { return n.moments || n.sketch }

// needOf is what s asks of the statistics of a view of family f.
func needOf(s *agg.State, f column.Family) statsNeed {
	switch f {
	case column.FamilyBool:
		return statsNeed{}
	case column.FamilyBytes:
		return statsNeed{sketch: s.Tracks.Has(agg.ApproxDistinct)}
	}
	return statsNeed{moments: s.Tracks.Any(agg.Moments), sketch: s.Tracks.Has(agg.ApproxDistinct)}
}

// statsAcc is a visitor that folds the statistics of the values it visits;
// attach hands its totals to the morsel's state (built from the same
// values).
type statsAcc interface {
	visitor
	attach(s *agg.State)
}

// statsAccs holds one reusable stats accumulator of each kind.
type statsAccs struct {
	i8   intStats[int8]
	i16  intStats[int16]
	i32  intStats[int32]
	i64  intStats[int64]
	u8   uintStats[uint8]
	u16  uintStats[uint16]
	u32  uintStats[uint32]
	u64  uintStats[uint64]
	f32  floatStats[float32]
	f64  floatStats[float64]
	dec  decimalStats
	byt  bytesStats
	used dictUse
}

// sketchOf returns a zeroed sketch for a morsel when need asks for one.
func sketchOf(need statsNeed) *agg.Sketch {
	if need.sketch {
		return new(agg.Sketch)
	}
	return nil
}

// statsAcc returns the stats accumulator of the values of v (a view, or a
// dictionary's values), reset for a morsel of elements [lo, hi) of the
// column.
func (m *statsAccs) acc(v *column.View, need statsNeed, lo, hi int) (statsAcc, error) {
	sk := sketchOf(need)
	switch v.Kind {
	case column.Int8:
		m.i8 = intStats[int8]{vals: column.Values[int8](v), moments: need.moments, sk: sk}
		return &m.i8, nil
	case column.Int16:
		m.i16 = intStats[int16]{vals: column.Values[int16](v), moments: need.moments, sk: sk}
		return &m.i16, nil
	case column.Int32:
		m.i32 = intStats[int32]{vals: column.Values[int32](v), moments: need.moments, sk: sk}
		return &m.i32, nil
	case column.Int64:
		m.i64 = intStats[int64]{vals: column.Values[int64](v), moments: need.moments, sk: sk}
		return &m.i64, nil
	case column.Uint8:
		m.u8 = uintStats[uint8]{vals: column.Values[uint8](v), moments: need.moments, sk: sk}
		return &m.u8, nil
	case column.Uint16:
		m.u16 = uintStats[uint16]{vals: column.Values[uint16](v), moments: need.moments, sk: sk}
		return &m.u16, nil
	case column.Uint32:
		m.u32 = uintStats[uint32]{vals: column.Values[uint32](v), moments: need.moments, sk: sk}
		return &m.u32, nil
	case column.Uint64:
		m.u64 = uintStats[uint64]{vals: column.Values[uint64](v), moments: need.moments, sk: sk}
		return &m.u64, nil
	case column.Float32:
		m.f32.reset(column.Values[float32](v), need.moments, sk, lo, hi)
		return &m.f32, nil
	case column.Float64:
		m.f64.reset(column.Values[float64](v), need.moments, sk, lo, hi)
		return &m.f64, nil
	case column.Decimal128:
		words := column.Slice[uint64](v.Values)
		m.dec = decimalStats{vals: words[2*v.Offset : 2*(v.Offset+v.Len)], moments: need.moments, sk: sk}
		return &m.dec, nil
	case column.Binary, column.LargeBinary:
		m.byt = bytesStats{v: v, sk: sk}
		return &m.byt, nil
	}
	return nil, fmt.Errorf("no CPU statistics for %s (%s)", v.Type, v.Kind)
}

// foldStats folds the statistics of elements [lo, hi) of v into s, the
// morsel's state just built from them.
func (m *morselAccs) foldStats(s *agg.State, v *column.View, lo, hi int) error {
	if v.Dict != nil {
		return m.foldDictStats(s, v, lo, hi)
	}
	a, err := m.st.acc(v, m.need, lo, hi)
	if err != nil {
		return err
	}
	visit(a, v.Validity, v.ValidityOffset, lo, hi)
	a.attach(s)
	return nil
}

// foldDictStats folds the statistics of a dictionary morsel: the squares
// through its indices, and the sketch of the dictionary values the valid
// indices use, each hashed once (when the dictionary is not much larger
// than the morsel; otherwise through the indices too).
func (m *morselAccs) foldDictStats(s *agg.State, v *column.View, lo, hi int) error {
	need := m.need
	byUse := need.sketch && v.Dict.Len <= 4*(hi-lo)
	if need.moments || !byUse {
		inner := need
		inner.sketch = need.sketch && !byUse
		// Lanes by dictionary index, as the float sums of a dictionary's
		// values have them (no morsel parts).
		a, err := m.st.acc(v.Dict, inner, 0, 0)
		if err != nil {
			return err
		}
		if _, err := visitIndices(v, a, lo, hi); err != nil {
			return err
		}
		a.attach(s)
	}
	if !byUse {
		return nil
	}
	u := &m.st.used
	u.reset(v.Dict.Len)
	if _, err := visitIndices(v, u, lo, hi); err != nil {
		return err
	}
	a, err := m.st.acc(v.Dict, statsNeed{sketch: true}, 0, v.Dict.Len)
	if err != nil {
		return err
	}
	u.each(a)
	a.attach(s)
	return nil
}

// dictUse marks the dictionary values that valid indices point at (the
// dictionary accumulator visits each valid value as dense(j, j+1)).
type dictUse struct {
	used []uint64 // a bit per dictionary value
}

func (u *dictUse) reset(n int) {
	w := (n + 63) / 64
	if cap(u.used) < w {
		u.used = make([]uint64, w)
	}
	u.used = u.used[:w]
	clear(u.used)
}

func (u *dictUse) dense(i, j int) {
	for k := i; k < j; k++ {
		u.used[k>>6] |= 1 << (k & 63)
	}
}

func (u *dictUse) sparse(base int, w uint64) {
	for ; w != 0; w &= w - 1 {
		k := base + bits.TrailingZeros64(w)
		u.used[k>>6] |= 1 << (k & 63)
	}
}

// each visits the marked values with v.
func (u *dictUse) each(v visitor) {
	for i, w := range u.used {
		if w != 0 {
			v.sparse(64*i, w)
		}
	}
}

// sketchAdd folds hash h into sketch k.
func sketchAdd(k *agg.Sketch, h uint64) {
	r, rank := agg.SketchSlot(h)
	if rank > k[r] {
		k[r] = rank
	}
}

// intStats folds the squares (exact: 192-bit sums of 128-bit squares) and
// the sketch of signed integers.
type intStats[T int8 | int16 | int32 | int64] struct {
	vals       []T
	moments    bool
	sk         *agg.Sketch
	q0, q1, q2 uint64 // the sum of squares, 192 bits
}

func (a *intStats[T]) one(x T) {
	if a.moments {
		m := uint64(int64(x))
		if x < 0 {
			m = -m
		}
		hi, lo := bits.Mul64(m, m)
		var c uint64
		a.q0, c = bits.Add64(a.q0, lo, 0)
		a.q1, c = bits.Add64(a.q1, hi, c)
		a.q2 += c
	}
	if a.sk != nil {
		sketchAdd(a.sk, agg.HashInt(uint64(int64(x))))
	}
}

func (a *intStats[T]) dense(i, j int) {
	v := a.vals[i:j]
	switch {
	case a.moments && a.sk != nil:
		sk := a.sk
		q0, q1, q2 := a.q0, a.q1, a.q2
		for _, x := range v {
			m := uint64(int64(x))
			if x < 0 {
				m = -m
			}
			hi, lo := bits.Mul64(m, m)
			var c uint64
			q0, c = bits.Add64(q0, lo, 0)
			q1, c = bits.Add64(q1, hi, c)
			q2 += c
			r, rank := agg.SketchSlot(agg.HashInt(uint64(int64(x))))
			if rank > sk[r] {
				sk[r] = rank
			}
		}
		a.q0, a.q1, a.q2 = q0, q1, q2
	case a.moments:
		q0, q1, q2 := a.q0, a.q1, a.q2
		for _, x := range v {
			m := uint64(int64(x))
			if x < 0 {
				m = -m
			}
			hi, lo := bits.Mul64(m, m)
			var c uint64
			q0, c = bits.Add64(q0, lo, 0)
			q1, c = bits.Add64(q1, hi, c)
			q2 += c
		}
		a.q0, a.q1, a.q2 = q0, q1, q2
	default:
		sk := a.sk
		for _, x := range v {
			r, rank := agg.SketchSlot(agg.HashInt(uint64(int64(x))))
			if rank > sk[r] {
				sk[r] = rank
			}
		}
	}
}

func (a *intStats[T]) sparse(base int, w uint64) {
	v := a.vals[base:]
	for ; w != 0; w &= w - 1 {
		a.one(v[bits.TrailingZeros64(w)])
	}
}

func (a *intStats[T]) attach(s *agg.State) {
	if a.moments {
		s.SetSquares(agg.Uint320{a.q0, a.q1, a.q2})
	}
	if a.sk != nil {
		s.SetSketch(a.sk)
		a.sk = nil
	}
}

// uintStats is intStats for unsigned integers.
type uintStats[T uint8 | uint16 | uint32 | uint64] struct {
	vals       []T
	moments    bool
	sk         *agg.Sketch
	q0, q1, q2 uint64
}

func (a *uintStats[T]) one(x T) {
	if a.moments {
		hi, lo := bits.Mul64(uint64(x), uint64(x))
		var c uint64
		a.q0, c = bits.Add64(a.q0, lo, 0)
		a.q1, c = bits.Add64(a.q1, hi, c)
		a.q2 += c
	}
	if a.sk != nil {
		sketchAdd(a.sk, agg.HashInt(uint64(x)))
	}
}

func (a *uintStats[T]) dense(i, j int) {
	v := a.vals[i:j]
	switch {
	case a.moments && a.sk != nil:
		sk := a.sk
		q0, q1, q2 := a.q0, a.q1, a.q2
		for _, x := range v {
			hi, lo := bits.Mul64(uint64(x), uint64(x))
			var c uint64
			q0, c = bits.Add64(q0, lo, 0)
			q1, c = bits.Add64(q1, hi, c)
			q2 += c
			r, rank := agg.SketchSlot(agg.HashInt(uint64(x)))
			if rank > sk[r] {
				sk[r] = rank
			}
		}
		a.q0, a.q1, a.q2 = q0, q1, q2
	case a.moments:
		q0, q1, q2 := a.q0, a.q1, a.q2
		for _, x := range v {
			hi, lo := bits.Mul64(uint64(x), uint64(x))
			var c uint64
			q0, c = bits.Add64(q0, lo, 0)
			q1, c = bits.Add64(q1, hi, c)
			q2 += c
		}
		a.q0, a.q1, a.q2 = q0, q1, q2
	default:
		sk := a.sk
		for _, x := range v {
			r, rank := agg.SketchSlot(agg.HashInt(uint64(x)))
			if rank > sk[r] {
				sk[r] = rank
			}
		}
	}
}

func (a *uintStats[T]) sparse(base int, w uint64) {
	v := a.vals[base:]
	for ; w != 0; w &= w - 1 {
		a.one(v[bits.TrailingZeros64(w)])
	}
}

func (a *uintStats[T]) attach(s *agg.State) {
	if a.moments {
		s.SetSquares(agg.Uint320{a.q0, a.q1, a.q2})
	}
	if a.sk != nil {
		s.SetSketch(a.sk)
		a.sk = nil
	}
}

// floatStats folds the squares of floats in the canonical lanes of the
// float sums (floatLanes: lane p*floatPartLanes + i mod floatPartLanes for
// element i of part p): each square as an error-free product x² = p + e
// (e from an FMA), p added with an error-free two-sum and e into the lane's
// compensation. A square or lane sum that is not finite (an infinity or a
// NaN among the values, an overflow) goes to special instead, and the lane
// starts again from 0, as agg adds non-finite partial sums.
type floatStats[T float32 | float64] struct {
	vals    []T
	moments bool
	sk      *agg.Sketch
	s, c    [floatLaneCount]float64
	special float64
	lo, q   int // the morsel's first element and part length
}

func (a *floatStats[T]) reset(vals []T, moments bool, sk *agg.Sketch, lo, hi int) {
	a.vals, a.moments, a.sk, a.special = vals, moments, sk, 0
	if moments {
		clear(a.s[:])
		clear(a.c[:])
	}
	a.lo, a.q = lo, morselQuarter(hi-lo)
	if a.q == 0 {
		a.q = math.MaxInt
	}
}

// part returns the part of element i and the element where the part ends.
func (a *floatStats[T]) part(i int) (p, end int) {
	p = min((i-a.lo)/a.q, floatParts-1)
	if p == floatParts-1 {
		return p, math.MaxInt
	}
	return p, a.lo + (p+1)*a.q
}

// square adds x² to lane k.
func (a *floatStats[T]) square(k int, x float64) {
	p := x * x
	e := math.FMA(x, x, -p)
	s := a.s[k]
	t := s + p
	if t-t != 0 { // not finite: p or the lane's sum
		a.special += t
		a.s[k] = 0
		return
	}
	z := t - s
	a.c[k] += (s - (t - z)) + (p - z) + e
	a.s[k] = t
}

func (a *floatStats[T]) dense(i, j int) {
	if a.moments {
		for ii := i; ii < j; {
			p, end := a.part(ii)
			end = min(end, j)
			first := p * floatPartLanes
			for k, xt := range a.vals[ii:end] {
				a.square(first+(ii+k)&(floatPartLanes-1), float64(xt))
			}
			ii = end
		}
	}
	if sk := a.sk; sk != nil {
		for _, xt := range a.vals[i:j] {
			r, rank := agg.SketchSlot(agg.HashFloat(float64(xt)))
			if rank > sk[r] {
				sk[r] = rank
			}
		}
	}
}

func (a *floatStats[T]) sparse(base int, w uint64) {
	v := a.vals[base:]
	if a.moments {
		p, _ := a.part(base) // a 64-element group lies in one part
		first := p * floatPartLanes
		for m := w; m != 0; m &= m - 1 {
			k := bits.TrailingZeros64(m)
			a.square(first+(base+k)&(floatPartLanes-1), float64(v[k]))
		}
	}
	if a.sk != nil {
		for ; w != 0; w &= w - 1 {
			sketchAdd(a.sk, agg.HashFloat(float64(v[bits.TrailingZeros64(w)])))
		}
	}
}

func (a *floatStats[T]) attach(s *agg.State) {
	if a.moments {
		s.SetFloatSquares(a.s[:], a.c[:], a.special)
	}
	if a.sk != nil {
		s.SetSketch(a.sk)
		a.sk = nil
	}
}

// decimalStats folds the exact squares (320-bit sums) and the sketch of
// decimal128 values.
type decimalStats struct {
	vals    []uint64 // two words a value
	moments bool
	sk      *agg.Sketch
	sq      agg.Uint320
}

func (a *decimalStats) one(i int) {
	lo, hi := a.vals[2*i], a.vals[2*i+1]
	if a.moments {
		a.sq = a.sq.Add(agg.SquareDecimal(lo, hi))
	}
	if a.sk != nil {
		sketchAdd(a.sk, agg.HashDecimal(lo, hi))
	}
}

func (a *decimalStats) dense(i, j int) {
	for k := i; k < j; k++ {
		a.one(k)
	}
}

func (a *decimalStats) sparse(base int, w uint64) {
	for ; w != 0; w &= w - 1 {
		a.one(base + bits.TrailingZeros64(w))
	}
}

func (a *decimalStats) attach(s *agg.State) {
	if a.moments {
		s.SetSquares(a.sq)
	}
	if a.sk != nil {
		s.SetSketch(a.sk)
		a.sk = nil
	}
}

// bytesStats folds the sketch of strings and binaries (offsets out of range
// are reported by the extremes' accumulator, which reads the same values
// first; here such a value is skipped).
type bytesStats struct {
	v  *column.View
	sk *agg.Sketch
}

func (a *bytesStats) one(i int) {
	v := a.v
	var lo, hi int64
	if v.Kind == column.LargeBinary {
		off := column.Slice[int64](v.Offsets)
		lo, hi = off[v.Offset+i], off[v.Offset+i+1]
	} else {
		off := column.Slice[int32](v.Offsets)
		lo, hi = int64(off[v.Offset+i]), int64(off[v.Offset+i+1])
	}
	if lo < 0 || hi < lo || hi > int64(len(v.Values)) {
		return
	}
	sketchAdd(a.sk, agg.HashBytes(v.Values[lo:hi]))
}

func (a *bytesStats) dense(i, j int) {
	if a.sk == nil {
		return
	}
	for k := i; k < j; k++ {
		a.one(k)
	}
}

func (a *bytesStats) sparse(base int, w uint64) {
	if a.sk == nil {
		return
	}
	for ; w != 0; w &= w - 1 {
		a.one(base + bits.TrailingZeros64(w))
	}
}

func (a *bytesStats) attach(s *agg.State) {
	if a.sk != nil {
		s.SetSketch(a.sk)
		a.sk = nil
	}
}
