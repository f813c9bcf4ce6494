package cpu

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"

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
//
// The sketch: a hash changes a register only when its rank exceeds the
// register. While a morsel collects its exact hashes (at most
// agg.SketchExact), every hash is folded; once a sketch has overflowed them,
// only the hashes that raise their register matter, and a morsel whose seed
// (the column state's sketch, or the worker's previous morsel of the
// column: statsAccs.sketchOf) has overflowed starts from a clone of the
// seed, so that its registers are warm: the AVX-512 kernel (kernelRaises)
// hashes the morsel's values, drops those whose rank is at most every
// register (the floor, the smallest register), gathers the registers of the
// others, and hands the Go loop only the hashes that raise them — on a
// column of many distinct values, a small part of them. The registers are
// those of agg.Sketch.Add, hash by hash (tested); the Go loops (no AVX-512)
// fold every hash.

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
// addCount folds value i as if visited c times (a dictionary's values by
// their number of uses); attach hands the totals to the morsel's state
// (built from the same values).
type statsAcc interface {
	visitor
	addCount(i int, c uint64)
	attach(s *agg.State)
}

// statsAccs holds one reusable stats accumulator of each kind.
type statsAccs struct {
	i8     intStats[int8]
	i16    intStats[int16]
	i32    intStats[int32]
	i64    intStats[int64]
	u8     intStats[uint8]
	u16    intStats[uint16]
	u32    intStats[uint32]
	u64    intStats[uint64]
	f32    floatStats[float32]
	f64    floatStats[float64]
	dec    decimalStats
	byt    bytesStats
	counts dictCounts
	set    exactSet
	hashes hashBuf

	// seed: a sketch whose hashes the morsel's state will be merged with
	// (the column's state before the call, or this worker's previous
	// morsel of the column), nil for none.
	seed *agg.Sketch
}

// hashBuf holds the sketch hashes of a run of values, computed by the SIMD
// kernels (kernelHashes) before the registers are raised.
type hashBuf [512]uint64

// sketchOf returns the sketch for a morsel when need asks for one, with
// the set of its exact hashes reset: a new one, or, when the seed has
// overflowed its exact hashes, a clone of the seed, whose registers let
// through only the hashes that raise them and whose exact hashes are moot
// (the set starts full). A morsel's state is merged with its seed's
// hashes in every case (the seed's own state, or the state it came from,
// is merged into the same state), and a merge keeps the larger register
// and the union of hashes: the merged state is the same either way.
func (m *statsAccs) sketchOf(need statsNeed) (*agg.Sketch, *exactSet) {
	if !need.sketch {
		return nil, nil
	}
	m.set.reset()
	if m.seed != nil && m.seed.Overflowed() {
		k := m.seed.Clone()
		m.set.full, m.set.floor = true, sketchFloor(&k.Registers)
		return k, &m.set
	}
	m.set.seed = m.seed
	k := m.set.spare
	if k == nil {
		k = new(agg.Sketch)
	} else {
		m.set.spare = nil
		*k = agg.Sketch{}
	}
	m.set.cur = k
	return k, &m.set
}

// dictCovered reports whether the morsel's seed keeps every value of
// dictionary d exactly (the seed has not overflowed its exact hashes, and d
// has no null value): the sketch of a morsel of d's indices, whichever
// values they use, is then the seed's (exactSet.settle). The dictionary's
// values are hashed, not its indices counted: where only the sketch is
// asked for, a morsel of a small dictionary that the seed covers costs
// d.Len hashes. Only for a morsel of rows at least a quarter of d.Len (as
// foldDictStats counts): a few rows fold their own values.
func (m *statsAccs) dictCovered(d *column.View, rows int) bool {
	if m.seed == nil || m.seed.Overflowed() || d.Validity != nil || d.Len > agg.SketchExact || d.Len > 4*rows {
		return false
	}
	a, err := m.acc(d, statsNeed{sketch: true})
	if err != nil {
		return false
	}
	for i := 0; i < d.Len; i++ {
		a.addCount(i, 1)
	}
	covered := m.set.covers()
	m.set.spare, m.set.cur = m.set.cur, nil // (a's sketch: not attached)
	return covered
}

// exactSet collects the distinct hashes of a morsel while there are at
// most agg.SketchExact of them (open addressing; 0 stands apart).
type exactSet struct {
	tab  [2 * agg.SketchExact]uint64
	list []uint64 // the distinct hashes, in order of arrival
	zero bool     // hash 0 was seen
	full bool     // more than agg.SketchExact distinct hashes

	// floor: every register of the morsel's sketch is at least floor
	// (kernelRaises skips the hashes of a rank at most floor).
	floor uint8

	// seed is the morsel's seed when it has not overflowed its exact
	// hashes (nil otherwise): when it keeps every hash of the morsel, the
	// morsel's sketch is the seed (settle). seeds holds its hashes for
	// the test, built once per seed (seeds are never written again).
	seed  *agg.Sketch
	seeds seedSet
	// cur is the sketch sketchOf handed out for the morsel (a new one, or
	// spare: the sketch of an earlier morsel that no state holds, settle
	// having given the seed instead, reused rather than allocated).
	cur, spare *agg.Sketch
}

func (e *exactSet) reset() {
	if len(e.list) > 0 {
		clear(e.tab[:])
	}
	e.list, e.zero, e.full, e.floor, e.seed, e.cur = e.list[:0], false, false, 0, nil, nil
}

// covers reports whether the morsel's seed (not overflowed) keeps every
// hash the morsel collected (while it has at most agg.SketchExact).
func (e *exactSet) covers() bool {
	if e.full || e.seed == nil {
		return false
	}
	if e.seeds.of != e.seed {
		e.seeds.build(e.seed)
	}
	for _, h := range e.list {
		if !e.seeds.has(h) {
			return false
		}
	}
	return true
}

// settle returns the sketch of the morsel whose hashes went into k and e:
// the seed when it keeps them all (the morsel's state is merged with the
// seed's hashes in every case, so the merged state is the same), k
// otherwise, with its exact hashes. A k that no state holds is kept for
// the next morsel (spare).
func (e *exactSet) settle(k *agg.Sketch) *agg.Sketch {
	if e.covers() {
		e.spare, e.cur = k, nil
		return e.seed
	}
	e.finish(k)
	e.cur = nil
	return k
}

// seedSet is a set of a sketch's exact hashes (open addressing; 0 stands
// apart), built for the sketch of.
type seedSet struct {
	of   *agg.Sketch
	tab  [2 * agg.SketchExact]uint64
	zero bool
}

func (c *seedSet) build(k *agg.Sketch) {
	clear(c.tab[:])
	c.of, c.zero = k, false
	const mask = len(seedSet{}.tab) - 1
	for _, h := range k.ExactHashes() {
		if h == 0 {
			c.zero = true
			continue
		}
		i := int(h) & mask
		for c.tab[i] != 0 {
			i = (i + 1) & mask
		}
		c.tab[i] = h
	}
}

func (c *seedSet) has(h uint64) bool {
	if h == 0 {
		return c.zero
	}
	const mask = len(seedSet{}.tab) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		switch c.tab[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// add records hash h (a no-op once full).
func (e *exactSet) add(h uint64) {
	if e.full {
		return
	}
	if h == 0 {
		if !e.zero {
			e.zero = true
			e.note(0)
		}
		return
	}
	const mask = len(exactSet{}.tab) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		switch e.tab[i] {
		case h:
			return
		case 0:
			e.tab[i] = h
			e.note(h)
			return
		}
	}
}

func (e *exactSet) note(h uint64) {
	e.list = append(e.list, h)
	if len(e.list) > agg.SketchExact {
		e.full = true
	}
}

// finish hands the exact hashes (or their overflow) to sketch k.
func (e *exactSet) finish(k *agg.Sketch) { k.SetExact(e.list, e.full) }

// acc returns the stats accumulator of the values of v (a view, or a
// dictionary's values), reset for a morsel.
func (m *statsAccs) acc(v *column.View, need statsNeed) (statsAcc, error) {
	sk, ex := m.sketchOf(need)
	switch v.Kind {
	case column.Int8:
		m.i8 = intStats[int8]{vals: column.Values[int8](v), moments: need.moments, sk: sk, ex: ex, hb: &m.hashes}
		return &m.i8, nil
	case column.Int16:
		m.i16 = intStats[int16]{vals: column.Values[int16](v), moments: need.moments, sk: sk, ex: ex, hb: &m.hashes}
		return &m.i16, nil
	case column.Int32:
		m.i32 = intStats[int32]{vals: column.Values[int32](v), moments: need.moments, sk: sk, ex: ex, hb: &m.hashes}
		return &m.i32, nil
	case column.Int64:
		m.i64 = intStats[int64]{vals: column.Values[int64](v), moments: need.moments, sk: sk, ex: ex, hb: &m.hashes}
		return &m.i64, nil
	case column.Uint8:
		m.u8 = intStats[uint8]{vals: column.Values[uint8](v), moments: need.moments, sk: sk, ex: ex, hb: &m.hashes}
		return &m.u8, nil
	case column.Uint16:
		m.u16 = intStats[uint16]{vals: column.Values[uint16](v), moments: need.moments, sk: sk, ex: ex, hb: &m.hashes}
		return &m.u16, nil
	case column.Uint32:
		m.u32 = intStats[uint32]{vals: column.Values[uint32](v), moments: need.moments, sk: sk, ex: ex, hb: &m.hashes}
		return &m.u32, nil
	case column.Uint64:
		m.u64 = intStats[uint64]{vals: column.Values[uint64](v), moments: need.moments, sk: sk, ex: ex, hb: &m.hashes}
		return &m.u64, nil
	case column.Float32:
		m.f32.reset(column.Values[float32](v), need.moments, sk, ex, &m.hashes)
		return &m.f32, nil
	case column.Float64:
		m.f64.reset(column.Values[float64](v), need.moments, sk, ex, &m.hashes)
		return &m.f64, nil
	case column.Decimal128:
		words := column.Slice[uint64](v.Values)
		m.dec = decimalStats{vals: words[2*v.Offset : 2*(v.Offset+v.Len)], moments: need.moments, sk: sk, ex: ex}
		return &m.dec, nil
	case column.Binary, column.LargeBinary:
		m.byt = bytesStats{v: v, sk: sk, ex: ex}
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
	a, err := m.st.acc(v, m.need)
	if err != nil {
		return err
	}
	// The kernels fold the squares of [lo, lo+nq) and the sketch of [lo,
	// lo+nk); the Go loops the rest, each statistic where its kernel did not.
	k, ok := a.(statsKernel)
	nq, nk := 0, 0
	if ok {
		var valid []byte
		if v.Validity != nil {
			valid = alignedBits(v.Validity, v.ValidityOffset, lo, hi, &m.vbits)
		}
		if m.need.moments {
			nq = k.kernelSquares(lo, hi, valid)
		}
		if m.need.sketch {
			nk = k.kernelSketch(lo, hi, valid)
		}
	}
	short, long := min(nq, nk), max(nq, nk)
	if long > short {
		// One statistic alone on [lo+short, lo+long).
		k.setMoments(m.need.moments && nq < nk)
		k.setSketch(m.need.sketch && nk < nq)
		visit(a, v.Validity, v.ValidityOffset, lo+short, lo+long)
		k.setMoments(m.need.moments)
		k.setSketch(m.need.sketch)
	}
	visit(a, v.Validity, v.ValidityOffset, lo+long, hi)
	if c, ok := a.(careful); ok && c.needsCareful() {
		c.setCareful()
		visit(a, v.Validity, v.ValidityOffset, lo, hi)
	}
	a.attach(s)
	return nil
}

// foldDictStats folds the statistics of a dictionary morsel. When the
// dictionary is not much larger than the morsel, the valid indices only
// count the uses of each value, and each used value is folded once, with
// its count; otherwise each valid index folds its value.
func (m *morselAccs) foldDictStats(s *agg.State, v *column.View, lo, hi int) error {
	if m.need.sketch && !m.need.moments && m.st.dictCovered(v.Dict, hi-lo) {
		s.SetSketch(m.st.seed)
		return nil
	}
	a, err := m.st.acc(v.Dict, m.need)
	if err != nil {
		return err
	}
	if v.Dict.Len <= 4*(hi-lo) {
		h := &m.st.counts
		h.reset(v.Dict.Len)
		if v.Dict.Validity == nil {
			// The indices were checked by the morsel's fold: count them
			// straight.
			countIndices(v, h.n, lo, hi)
		} else if _, err := visitIndices(v, h, lo, hi); err != nil {
			return err
		}
		for i, c := range h.n {
			if c != 0 {
				a.addCount(i, uint64(c))
			}
		}
		a.attach(s)
		return nil
	}
	if _, err := visitIndices(v, a, lo, hi); err != nil {
		return err
	}
	if c, ok := a.(careful); ok && c.needsCareful() {
		c.setCareful()
		visitIndices(v, a, lo, hi) //nolint:errcheck // same indices: checked above
	}
	a.attach(s)
	return nil
}

// dictCounts counts the uses of each dictionary value by the valid indices
// (the dictionary accumulator visits each valid value as dense(j, j+1)).
type dictCounts struct {
	n []uint32
}

func (u *dictCounts) reset(n int) {
	if cap(u.n) < n {
		u.n = make([]uint32, n)
	}
	u.n = u.n[:n]
	clear(u.n)
}

func (u *dictCounts) dense(i, j int) {
	for k := i; k < j; k++ {
		u.n[k]++
	}
}

func (u *dictCounts) sparse(base int, w uint64) {
	for ; w != 0; w &= w - 1 {
		u.n[base+bits.TrailingZeros64(w)]++
	}
}

// idxCounts counts the valid indices of a dictionary view whose values are
// all valid (and whose indices are in range: the morsel's fold checked them).
type idxCounts[I int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64] struct {
	idx []I
	n   []uint32
}

func (c *idxCounts[I]) dense(i, j int) {
	n := c.n
	for _, x := range c.idx[i:j] {
		n[x]++
	}
}

func (c *idxCounts[I]) sparse(base int, w uint64) {
	idx := c.idx[base:]
	for ; w != 0; w &= w - 1 {
		c.n[idx[bits.TrailingZeros64(w)]]++
	}
}

// countIndices counts into n the uses of each dictionary value by the valid
// indices of elements [lo, hi) of v.
func countIndices(v *column.View, n []uint32, lo, hi int) {
	switch v.IndexKind {
	case column.Int8:
		visit(&idxCounts[int8]{column.Values[int8](v), n}, v.Validity, v.ValidityOffset, lo, hi)
	case column.Int16:
		visit(&idxCounts[int16]{column.Values[int16](v), n}, v.Validity, v.ValidityOffset, lo, hi)
	case column.Int32:
		visit(&idxCounts[int32]{column.Values[int32](v), n}, v.Validity, v.ValidityOffset, lo, hi)
	case column.Int64:
		visit(&idxCounts[int64]{column.Values[int64](v), n}, v.Validity, v.ValidityOffset, lo, hi)
	case column.Uint8:
		visit(&idxCounts[uint8]{column.Values[uint8](v), n}, v.Validity, v.ValidityOffset, lo, hi)
	case column.Uint16:
		visit(&idxCounts[uint16]{column.Values[uint16](v), n}, v.Validity, v.ValidityOffset, lo, hi)
	case column.Uint32:
		visit(&idxCounts[uint32]{column.Values[uint32](v), n}, v.Validity, v.ValidityOffset, lo, hi)
	case column.Uint64:
		visit(&idxCounts[uint64]{column.Values[uint64](v), n}, v.Validity, v.ValidityOffset, lo, hi)
	}
}

// mulSmall is x·c (exact: the products of the statistics fit 320 bits).
func mulSmall(x agg.Uint320, c uint64) agg.Uint320 {
	var out agg.Uint320
	var carry uint64
	for i, w := range x {
		hi, lo := bits.Mul64(w, c)
		var k uint64
		out[i], k = bits.Add64(lo, carry, 0)
		carry = hi + k
	}
	return out
}

// sketchAdd folds hash h into sketch k and the exact set e.
func sketchAdd(k *agg.Sketch, e *exactSet, h uint64) {
	r, rank := agg.SketchSlot(h)
	setMax(&k.Registers, r, rank)
	e.add(h)
}

// sketchDense folds the sketch hashes of vals into k and e: through the
// SIMD kernels where there are some, the rest with hash. While e collects
// the exact hashes, every hash is folded; once it is full, only those that
// raise their register (kernelRaises picks them).
func sketchDense[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](k *agg.Sketch, e *exactSet, hb *hashBuf, vals []T, hash func(T) uint64) {
	regs := &k.Registers
	for len(vals) >= 8 {
		chunk := vals[:min(len(vals), len(hb))]
		if e.full {
			n, m := kernelRaises(chunk, nil, regs, e.floor, hb[:])
			if n == 0 {
				break
			}
			raise(regs, hb[:m])
			vals = vals[n:]
			continue
		}
		n := kernelHashes(chunk, hb[:])
		if n == 0 {
			break
		}
		for _, h := range hb[:n] {
			r, rank := agg.SketchSlot(h)
			setMax(regs, r, rank)
			if !e.full {
				e.add(h)
			}
		}
		vals = vals[n:]
	}
	for _, x := range vals {
		h := hash(x)
		r, rank := agg.SketchSlot(h)
		setMax(regs, r, rank)
		if !e.full {
			e.add(h)
		}
	}
}

// raise folds hashes into the registers alone.
func raise(regs *[agg.SketchRegisters]uint8, hashes []uint64) {
	for _, h := range hashes {
		r, rank := agg.SketchSlot(h)
		setMax(regs, r, rank)
	}
}

// sketchSparse folds the sketch hashes of the values vals[k] of the set
// bits k of w into k and e (the 64 values hashed by the SIMD kernels where
// there are some and 64 values are there; once e is full, only the hashes
// that raise their register).
func sketchSparse[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](sk *agg.Sketch, e *exactSet, hb *hashBuf, vals []T, w uint64, hash func(T) uint64) {
	regs := &sk.Registers
	if len(vals) >= 64 {
		if e.full {
			valid := [8]byte{byte(w), byte(w >> 8), byte(w >> 16), byte(w >> 24), byte(w >> 32), byte(w >> 40), byte(w >> 48), byte(w >> 56)}
			if n, m := kernelRaises(vals[:64], valid[:], regs, e.floor, hb[:64]); n == 64 {
				raise(regs, hb[:m])
				return
			}
		} else if kernelHashes(vals[:64], hb[:64]) == 64 {
			for ; w != 0; w &= w - 1 {
				h := hb[bits.TrailingZeros64(w)]
				r, rank := agg.SketchSlot(h)
				setMax(regs, r, rank)
				if !e.full {
					e.add(h)
				}
			}
			return
		}
	}
	for ; w != 0; w &= w - 1 {
		h := hash(vals[bits.TrailingZeros64(w)])
		r, rank := agg.SketchSlot(h)
		setMax(regs, r, rank)
		if !e.full {
			e.add(h)
		}
	}
}

func floatHash[T float32 | float64](x T) uint64 { return agg.HashFloat(float64(x)) }

// setMax raises register r to rank without a branch: on a fresh sketch
// whether a rank raises its register is a coin toss, which a branch
// mispredicts.
func setMax(regs *[agg.SketchRegisters]uint8, r uint32, rank uint8) {
	r &= agg.SketchRegisters - 1 // (r is below: no bounds check)
	old := int32(regs[r])
	d := int32(rank) - old
	d &= ^(d >> 31)
	regs[r] = uint8(old + d)
}

// intSqLanes are the SIMD kernels' lanes of the integer squares: the four
// pieces of squares (weights 1, 2^32, 2^64, 2^96), 8 lanes each (the
// kernels' memory layout: keep it).
type intSqLanes [4][8]uint64

// floatSqLanes are the lanes of the float squares: the compensated sums
// (s[k], c[k]) of lane k (the kernels' memory layout: keep it).
type floatSqLanes struct {
	s, c [sqLanes]float64
}

// statsKernel is implemented by the stats accumulators whose statistics
// have SIMD kernels: kernelSquares folds the squares of elements [lo, lo+n)
// and kernelSketch their sketch (n: hi-lo rounded down to a multiple of 8;
// valid: their validity from bit 0, nil for all valid), each returning n,
// or 0 where it has no kernel (kernelSketch: also while the morsel's exact
// hashes are collected); setMoments and setSketch turn the Go loops'
// statistics on and off (on: only those the morsel asks for).
type statsKernel interface {
	kernelSquares(lo, hi int, valid []byte) int
	kernelSketch(lo, hi int, valid []byte) int
	setMoments(on bool)
	setSketch(on bool)
}

// kernelSketch folds the sketch of vals, valid (bit i: element i; nil: all
// valid), into k with kernelRaises, all but the last len(vals) mod 8 values,
// and returns their number; 0 where there is no kernel. The exact hashes
// must be full (moot).
func kernelSketch[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](k *agg.Sketch, floor uint8, hb *hashBuf, vals []T, valid []byte) int {
	done := 0
	for len(vals)-done >= 8 {
		var vb []byte
		if valid != nil {
			vb = valid[done/8:] // done: a multiple of 8
		}
		n, m := kernelRaises(vals[done:min(len(vals), done+len(hb))], vb, &k.Registers, floor, hb[:])
		if n == 0 {
			break
		}
		raise(&k.Registers, hb[:m])
		done += n
	}
	return done
}

// squares accumulates exact sums of 128-bit squares without carry chains:
// each square is cut into four 32-bit pieces, summed apart in 64 bits (exact
// for 2^32 squares, far more than a morsel).
type squares struct {
	p0, p1, p2, p3 uint64 // the pieces of weight 1, 2^32, 2^64, 2^96
}

// total is the exact sum.
func (q *squares) total() agg.Uint320 {
	return agg.Uint320{q.p0}.
		Add(agg.Uint320{q.p1 << 32, q.p1 >> 32}).
		Add(agg.Uint320{0, q.p2}).
		Add(agg.Uint320{0, q.p3 << 32, q.p3 >> 32})
}

// magnitude is |x| of an integer value as a uint64, and whether its square
// fits 64 bits (a type narrower than 64 bits).
func magnitude[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](x T) (uint64, bool) {
	narrow := unsafe.Sizeof(x) < 8
	if T(0)-1 > 0 { // unsigned
		return uint64(x), narrow
	}
	if narrow {
		// Without a branch: a random sign is a coin toss for a predictor
		// (the compiler's code for int64 below has none already).
		s := int64(x) >> 63
		return uint64((int64(x) ^ s) - s), narrow
	}
	if x < 0 {
		return -uint64(int64(x)), narrow
	}
	return uint64(x), narrow
}

// hashOf is the sketch hash of an integer value: signed values
// sign-extended, unsigned ones zero-extended.
func hashOf[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](x T) uint64 {
	if T(0)-1 < 0 { // signed
		return agg.HashInt(uint64(int64(x)))
	}
	return agg.HashInt(uint64(x))
}

// intStats folds the exact squares and the sketch of integers (signed
// values sign-extended, unsigned ones zero-extended).
type intStats[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64] struct {
	vals    []T
	moments bool
	noSk    bool // the Go loops leave the sketch alone (setSketch)
	sk      *agg.Sketch
	ex      *exactSet
	hb      *hashBuf
	q       squares
	counted agg.Uint320 // the squares of addCount
}

func (a *intStats[T]) setMoments(on bool) { a.moments = on }
func (a *intStats[T]) setSketch(on bool)  { a.noSk = !on }

// kernelSketch implements statsKernel.
func (a *intStats[T]) kernelSketch(lo, hi int, valid []byte) int {
	if a.sk == nil || !a.ex.full {
		return 0
	}
	return kernelSketch(a.sk, a.ex.floor, a.hb, a.vals[lo:hi], valid)
}

// kernelSquares implements statsKernel.
func (a *intStats[T]) kernelSquares(lo, hi int, valid []byte) int {
	var l intSqLanes
	n := kernelIntSquares(a.vals[lo:hi], valid, &l)
	for k := range l[0] {
		a.q.p0 += l[0][k]
		a.q.p1 += l[1][k]
		a.q.p2 += l[2][k]
		a.q.p3 += l[3][k]
	}
	return n
}

func (a *intStats[T]) addCount(i int, c uint64) {
	x := a.vals[i]
	if a.moments {
		m, _ := magnitude(x)
		hi, lo := bits.Mul64(m, m)
		a.counted = a.counted.Add(mulSmall(agg.Uint320{lo, hi}, c))
	}
	if a.sk != nil {
		sketchAdd(a.sk, a.ex, hashOf(x))
	}
}

func (a *intStats[T]) dense(i, j int) {
	v := a.vals[i:j]
	if a.moments {
		// The pieces in local variables (registers), two sets of them for
		// independent adds.
		q := &a.q
		p0, p1, p2, p3 := q.p0, q.p1, q.p2, q.p3
		var r0, r1, r2, r3 uint64
		k := 0
		if _, narrow := magnitude(T(0)); narrow {
			for ; k+2 <= len(v); k += 2 {
				m0, _ := magnitude(v[k])
				m1, _ := magnitude(v[k+1])
				s0, s1 := m0*m0, m1*m1
				p0 += s0 & 0xffffffff
				p1 += s0 >> 32
				r0 += s1 & 0xffffffff
				r1 += s1 >> 32
			}
		} else {
			for ; k+2 <= len(v); k += 2 {
				m0, _ := magnitude(v[k])
				m1, _ := magnitude(v[k+1])
				h0, l0 := bits.Mul64(m0, m0)
				h1, l1 := bits.Mul64(m1, m1)
				p0 += l0 & 0xffffffff
				p1 += l0 >> 32
				p2 += h0 & 0xffffffff
				p3 += h0 >> 32
				r0 += l1 & 0xffffffff
				r1 += l1 >> 32
				r2 += h1 & 0xffffffff
				r3 += h1 >> 32
			}
		}
		for ; k < len(v); k++ {
			m, _ := magnitude(v[k])
			h, l := bits.Mul64(m, m)
			p0 += l & 0xffffffff
			p1 += l >> 32
			p2 += h & 0xffffffff
			p3 += h >> 32
		}
		q.p0, q.p1, q.p2, q.p3 = p0+r0, p1+r1, p2+r2, p3+r3
	}
	if a.sk != nil && !a.noSk {
		sketchDense(a.sk, a.ex, a.hb, v, hashOf[T])
	}
}

func (a *intStats[T]) sparse(base int, w uint64) {
	v := a.vals[base:]
	if a.moments {
		q := &a.q
		p0, p1, p2, p3 := q.p0, q.p1, q.p2, q.p3
		if _, narrow := magnitude(T(0)); narrow {
			for m := w; m != 0; m &= m - 1 {
				x, _ := magnitude(v[bits.TrailingZeros64(m)])
				s := x * x
				p0 += s & 0xffffffff
				p1 += s >> 32
			}
		} else {
			for m := w; m != 0; m &= m - 1 {
				x, _ := magnitude(v[bits.TrailingZeros64(m)])
				h, l := bits.Mul64(x, x)
				p0 += l & 0xffffffff
				p1 += l >> 32
				p2 += h & 0xffffffff
				p3 += h >> 32
			}
		}
		q.p0, q.p1, q.p2, q.p3 = p0, p1, p2, p3
	}
	if a.sk != nil && !a.noSk {
		sketchSparse(a.sk, a.ex, a.hb, v, w, hashOf[T])
	}
}

func (a *intStats[T]) attach(s *agg.State) {
	if a.moments {
		s.SetSquares(a.q.total().Add(a.counted))
	}
	if a.sk != nil {
		s.SetSketch(a.ex.settle(a.sk))
		a.sk = nil
	}
}

// floatStats folds the squares of floats in sqLanes lanes, element i of
// the view (counted from the view's first element) in lane i mod sqLanes:
// each square as an error-free product x² = p + e (e from an FMA), p added
// to the lane with an error-free two-sum and e to its compensation, in
// element order (the SIMD kernels do the same operations in the same order,
// 8 lanes at once: kernelSquares). When a lane ends the morsel not finite
// (an infinity or a NaN among the values, an overflow), the morsel's
// squares are folded again on the careful path (the Go loops), which keeps
// the squares and lane sums that are not finite apart in special (the lane
// starting again from 0, as agg adds non-finite partial sums).
type floatStats[T float32 | float64] struct {
	vals    []T
	moments bool
	noSk    bool // the Go loops leave the sketch alone (setSketch)
	sk      *agg.Sketch
	ex      *exactSet
	hb      *hashBuf
	careful bool
	l       floatSqLanes
	special float64
}

func (a *floatStats[T]) setMoments(on bool) { a.moments = on }
func (a *floatStats[T]) setSketch(on bool)  { a.noSk = !on }

// kernelSketch implements statsKernel.
func (a *floatStats[T]) kernelSketch(lo, hi int, valid []byte) int {
	if a.sk == nil || !a.ex.full {
		return 0
	}
	return kernelSketch(a.sk, a.ex.floor, a.hb, a.vals[lo:hi], valid)
}

// kernelSquares implements statsKernel (the fast path only: the careful
// one is the Go loops').
func (a *floatStats[T]) kernelSquares(lo, hi int, valid []byte) int {
	if a.careful || lo%sqLanes != 0 {
		return 0
	}
	return kernelFloatSquares(a.vals[lo:hi], valid, &a.l)
}

// sqLanes is the number of lanes of the float squares.
const sqLanes = 8

func (a *floatStats[T]) reset(vals []T, moments bool, sk *agg.Sketch, ex *exactSet, hb *hashBuf) {
	*a = floatStats[T]{vals: vals, moments: moments, sk: sk, ex: ex, hb: hb}
}

// squareFast adds x² to lane k without looking for non-finite values.
func (a *floatStats[T]) squareFast(k int, x float64) {
	p := x * x
	e := math.FMA(x, x, -p)
	s := a.l.s[k]
	t := s + p
	z := t - s
	a.l.c[k] += (s - (t - z)) + (p - z) + e
	a.l.s[k] = t
}

// squareCareful adds x² to lane k, keeping non-finite squares and sums apart.
func (a *floatStats[T]) squareCareful(k int, x float64) {
	p := x * x
	s := a.l.s[k]
	t := s + p
	if t-t != 0 { // not finite: p or the lane's sum
		a.special += t
		a.l.s[k] = 0
		return
	}
	e := math.FMA(x, x, -p)
	z := t - s
	a.l.c[k] += (s - (t - z)) + (p - z) + e
	a.l.s[k] = t
}

// addCount adds c·x² of value i to lane i mod sqLanes (c·x² as an
// error-free product of c and x²'s leading part, the error of x² times c
// into the compensation), on the careful path.
func (a *floatStats[T]) addCount(i int, c uint64) {
	x := float64(a.vals[i])
	if a.moments {
		k := i & (sqLanes - 1)
		cf := float64(c) // exact: c is at most a morsel's length
		p := x * x
		e := math.FMA(x, x, -p)
		pc := cf * p
		s := a.l.s[k]
		t := s + pc
		if t-t != 0 {
			a.special += t
			a.l.s[k] = 0
		} else {
			ec := math.FMA(cf, p, -pc) + cf*e
			z := t - s
			a.l.c[k] += (s - (t - z)) + (pc - z) + ec
			a.l.s[k] = t
		}
	}
	if a.sk != nil {
		sketchAdd(a.sk, a.ex, agg.HashFloat(x))
	}
}

func (a *floatStats[T]) dense(i, j int) {
	if a.moments {
		if a.careful {
			for k, xt := range a.vals[i:j] {
				a.squareCareful((i+k)&(sqLanes-1), float64(xt))
			}
		} else {
			for k, xt := range a.vals[i:j] {
				a.squareFast((i+k)&(sqLanes-1), float64(xt))
			}
		}
	}
	if a.sk != nil && !a.noSk {
		sketchDense(a.sk, a.ex, a.hb, a.vals[i:j], floatHash[T])
	}
}

func (a *floatStats[T]) sparse(base int, w uint64) {
	v := a.vals[base:]
	if a.moments {
		for m := w; m != 0; m &= m - 1 {
			k := bits.TrailingZeros64(m)
			if a.careful {
				a.squareCareful((base+k)&(sqLanes-1), float64(v[k]))
			} else {
				a.squareFast((base+k)&(sqLanes-1), float64(v[k]))
			}
		}
	}
	if a.sk != nil && !a.noSk {
		sketchSparse(a.sk, a.ex, a.hb, v, w, floatHash[T])
	}
}

// needsCareful reports whether a lane ended the fast path not finite.
func (a *floatStats[T]) needsCareful() bool {
	for k := range a.l.s {
		if !isFinite(a.l.s[k]) || !isFinite(a.l.c[k]) {
			return true
		}
	}
	return false
}

// setCareful restarts the squares on the careful path (the sketch is kept:
// it was folded once).
func (a *floatStats[T]) setCareful() {
	a.l, a.special, a.careful = floatSqLanes{}, 0, true
}

func (a *floatStats[T]) attach(s *agg.State) {
	if a.moments {
		s.SetFloatSquares(a.l.s[:], a.l.c[:], a.special)
	}
	if a.sk != nil {
		s.SetSketch(a.ex.settle(a.sk))
		a.sk = nil
	}
}

// decimalStats folds the exact squares (320-bit sums) and the sketch of
// decimal128 values.
type decimalStats struct {
	vals    []uint64 // two words a value
	moments bool
	sk      *agg.Sketch
	ex      *exactSet
	sq      agg.Uint320
}

func (a *decimalStats) one(i int) {
	lo, hi := a.vals[2*i], a.vals[2*i+1]
	if a.moments {
		a.sq = a.sq.Add(agg.SquareDecimal(lo, hi))
	}
	if a.sk != nil {
		sketchAdd(a.sk, a.ex, agg.HashDecimal(lo, hi))
	}
}

func (a *decimalStats) addCount(i int, c uint64) {
	lo, hi := a.vals[2*i], a.vals[2*i+1]
	if a.moments {
		a.sq = a.sq.Add(mulSmall(agg.SquareDecimal(lo, hi), c))
	}
	if a.sk != nil {
		sketchAdd(a.sk, a.ex, agg.HashDecimal(lo, hi))
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
		s.SetSketch(a.ex.settle(a.sk))
		a.sk = nil
	}
}

// bytesStats folds the sketch of strings and binaries (offsets out of range
// are reported by the extremes' accumulator, which reads the same values
// first; here such a value is skipped).
type bytesStats struct {
	v  *column.View
	sk *agg.Sketch
	ex *exactSet
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
	sketchAdd(a.sk, a.ex, agg.HashBytes(v.Values[lo:hi]))
}

func (a *bytesStats) addCount(i int, _ uint64) {
	if a.sk != nil {
		a.one(i)
	}
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
		s.SetSketch(a.ex.settle(a.sk))
		a.sk = nil
	}
}
