package cpu

import (
	"fmt"
	"math/bits"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// MorselSize is the number of elements of one unit of CPU work. Columns are
// partitioned by size alone, never by thread count, and morsel states are
// merged in order, so every result is the same for every GOMAXPROCS. The
// planner reads it too: a column of fewer values occupies fewer goroutines,
// and a split between the GPU and the CPU falls on a morsel boundary.
const MorselSize = 1 << 16

// accumulator is a visitor whose totals, with the count and nulls of the
// values it visited, make a partial agg.State (agg's constructors).
type accumulator interface {
	visitor
	flush(count, nulls int64) agg.State
}

// morselAccs holds one reusable accumulator of each kind, so that aggregating
// a column allocates nothing per morsel.
type morselAccs struct {
	i8   signedAcc[int8]
	i16  signedAcc[int16]
	i32  signedAcc[int32]
	i64  signedAcc[int64]
	u8   unsignedAcc[uint8]
	u16  unsignedAcc[uint16]
	u32  unsignedAcc[uint32]
	u64  unsignedAcc[uint64]
	f32  floatAcc[float32]
	f64  floatAcc[float64]
	dec  decimalAcc
	bool boolAcc
	byt  bytesAcc
	cnt  countAcc

	vbits    []byte   // scratch of alignedBits
	gathered []uint64 // scratch of gatherDict (8-byte aligned)
	wide     []byte   // scratch of widenMorsel: a morsel of narrow values widened
	// wideView is the view of the morsel widened (or of a dictionary of
	// narrow values with its dictionary widened), held here so that it
	// does not escape per morsel.
	wideView column.View

	// noSum: the morsel's state does not track the sum, so the loops that
	// pay for it per value (the 192-bit decimal sum) skip it; the SIMD
	// passes of integers and floats fold it at memory speed and keep it.
	noSum bool

	// need: the statistics the morsel's state asks for (stats.go), folded
	// by st after the other aggregates.
	need statsNeed
	st   statsAccs
}

// kernelAcc is implemented by the accumulators that have SIMD kernels for some
// of their element types. kernel folds elements [lo, hi) (lo a multiple of
// 64) whose validity bits start at bit 0 of valid (nil: all valid), or reports
// false, having done nothing, where there is no kernel.
type kernelAcc interface {
	kernel(lo, hi int, valid []byte) bool
}

// laneAcc is implemented by the accumulators whose lanes depend on the bounds
// of the morsel (the float lanes): beginMorsel is called before a morsel is
// folded.
type laneAcc interface {
	beginMorsel(lo, hi int)
}

// fold aggregates elements [lo, hi) of v into a, with a SIMD kernel where there
// is one, and returns the number of valid elements.
func (m *morselAccs) fold(a accumulator, v *column.View, lo, hi int) int64 {
	if l, ok := a.(laneAcc); ok {
		l.beginMorsel(lo, hi)
	}
	if k, ok := a.(kernelAcc); ok && simdLevel != simdNone && hi > lo {
		var valid []byte
		if v.Validity != nil {
			valid = alignedBits(v.Validity, v.ValidityOffset, lo, hi, &m.vbits)
		}
		if k.kernel(lo, hi, valid) {
			if valid == nil {
				return int64(hi - lo)
			}
			return countBits(valid, hi-lo) // after the kernel: in cache
		}
	}
	return visit(a, v.Validity, v.ValidityOffset, lo, hi)
}

// careful is implemented by the float accumulators: a morsel whose fast pass
// met non-finite values is read again on the careful path.
type careful interface {
	needsCareful() bool
	setCareful()
}

// zeroSigned is implemented by the float value accumulators: a morsel whose
// fast pass ended with a zero extreme has its zeros' signs found, not the
// whole morsel read again.
type zeroSigned interface {
	zeroExtremes() visitor
	signZeros()
}

// settle finishes the fast pass of accumulator a over a morsel: it reads
// the morsel again on the careful path where the pass was not finite, or
// else gives a zero extreme its sign; revisit visits the morsel's values
// (as the pass did) with a visitor.
func settle(a visitor, revisit func(visitor)) {
	if c, ok := a.(careful); ok && c.needsCareful() {
		c.setCareful() // lane 0 alone, per value: the lane structure is moot
		revisit(a)
		return
	}
	if z, ok := a.(zeroSigned); ok {
		if v := z.zeroExtremes(); v != nil {
			revisit(v)
			z.signZeros()
		}
	}
}

func (a *floatAcc[T]) setCareful() {
	vals := a.vals
	a.reset(vals)
	a.careful = true
}

// valueAcc returns the accumulator for the values of a (non-dictionary) view,
// reset for a new morsel.
func (m *morselAccs) valueAcc(v *column.View) (accumulator, error) {
	switch v.Kind {
	case column.Int8:
		m.i8.reset(column.Values[int8](v))
		return &m.i8, nil
	case column.Int16:
		m.i16.reset(column.Values[int16](v))
		return &m.i16, nil
	case column.Int32:
		m.i32.reset(column.Values[int32](v))
		return &m.i32, nil
	case column.Int64:
		m.i64.reset(column.Values[int64](v))
		return &m.i64, nil
	case column.Uint8:
		m.u8.reset(column.Values[uint8](v))
		return &m.u8, nil
	case column.Uint16:
		m.u16.reset(column.Values[uint16](v))
		return &m.u16, nil
	case column.Uint32:
		m.u32.reset(column.Values[uint32](v))
		return &m.u32, nil
	case column.Uint64:
		m.u64.reset(column.Values[uint64](v))
		return &m.u64, nil
	case column.Float32:
		m.f32.reset(column.Values[float32](v))
		return &m.f32, nil
	case column.Float64:
		m.f64.reset(column.Values[float64](v))
		return &m.f64, nil
	case column.Decimal128:
		words := column.Slice[uint64](v.Values)
		m.dec.reset(words[2*v.Offset:2*(v.Offset+v.Len)], m.noSum)
		return &m.dec, nil
	case column.Bool:
		m.bool = boolAcc{values: v.Values, off: v.Offset}
		return &m.bool, nil
	case column.Binary, column.LargeBinary:
		m.byt = bytesAcc{v: v}
		return &m.byt, nil
	case column.Opaque:
		return &m.cnt, nil
	}
	return nil, fmt.Errorf("no CPU update for %s (%s)", v.Type, v.Kind)
}

// updateMorsel aggregates elements [lo, hi) of v into the fresh state s.
func (m *morselAccs) updateMorsel(s *agg.State, v *column.View, lo, hi int) error {
	if v.Dict != nil {
		return m.updateDict(s, v, lo, hi)
	}
	a, err := m.valueAcc(v)
	if err != nil {
		return err
	}
	n := m.fold(a, v, lo, hi)
	settle(a, func(x visitor) { visit(x, v.Validity, v.ValidityOffset, lo, hi) })
	*s = a.flush(n, int64(hi-lo)-n)
	if m.byt.err != nil {
		err, m.byt.err = m.byt.err, nil
		return err
	}
	if m.need.any() {
		return m.foldStats(s, v, lo, hi)
	}
	return nil
}

// dictAcc visits the indices of a dictionary column and folds the dictionary
// values they point at into the values' accumulator, without materializing
// them. A valid index that points at a null dictionary value is a null.
type dictAcc[I int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64] struct {
	idx    []I
	dict   *column.View
	target visitor
	nulls  int64
	err    error
}

func (d *dictAcc[I]) one(i int) {
	j := int64(d.idx[i])
	if j < 0 || j >= int64(d.dict.Len) {
		if d.err == nil {
			d.err = fmt.Errorf("dictionary index %d not in [0, %d) at element %d", j, d.dict.Len, i)
		}
		d.nulls++
		return
	}
	if !d.dict.Valid(int(j)) {
		d.nulls++
		return
	}
	d.target.dense(int(j), int(j)+1)
}

func (d *dictAcc[I]) dense(i, j int) {
	for k := i; k < j; k++ {
		d.one(k)
	}
}

func (d *dictAcc[I]) sparse(base int, w uint64) {
	for ; w != 0; w &= w - 1 {
		d.one(base + bits.TrailingZeros64(w))
	}
}

func visitDict[I int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](v *column.View, target visitor, lo, hi int) (valid int64, err error) {
	d := dictAcc[I]{idx: column.Values[I](v), dict: v.Dict, target: target}
	n := visit(&d, v.Validity, v.ValidityOffset, lo, hi)
	return n - d.nulls, d.err
}

func (m *morselAccs) updateDict(s *agg.State, v *column.View, lo, hi int) error {
	if gatherable(v) {
		// The values the indices point at, gathered in order, fold as a
		// dense column: its kernels, not a call per index.
		g, err := m.gatherDict(v, lo, hi)
		if err != nil {
			return err
		}
		a, err := m.valueAcc(&g)
		if err != nil {
			return err
		}
		n := m.fold(a, &g, 0, g.Len)
		settle(a, func(x visitor) { visit(x, nil, 0, 0, g.Len) })
		*s = a.flush(n, int64(hi-lo)-n)
		if m.need.any() {
			return m.foldStats(s, v, lo, hi)
		}
		return nil
	}
	a, err := m.valueAcc(v.Dict)
	if err != nil {
		return err
	}
	n, err := visitIndices(v, a, lo, hi)
	if err != nil {
		return err
	}
	settle(a, func(x visitor) {
		visitIndices(v, x, lo, hi) //nolint:errcheck // same indices: checked above
	})
	*s = a.flush(n, int64(hi-lo)-n)
	if m.byt.err != nil {
		err, m.byt.err = m.byt.err, nil
		return err
	}
	if m.need.any() {
		return m.foldStats(s, v, lo, hi)
	}
	return nil
}

func visitIndices(v *column.View, a visitor, lo, hi int) (int64, error) {
	switch v.IndexKind {
	case column.Int8:
		return visitDict[int8](v, a, lo, hi)
	case column.Int16:
		return visitDict[int16](v, a, lo, hi)
	case column.Int32:
		return visitDict[int32](v, a, lo, hi)
	case column.Int64:
		return visitDict[int64](v, a, lo, hi)
	case column.Uint8:
		return visitDict[uint8](v, a, lo, hi)
	case column.Uint16:
		return visitDict[uint16](v, a, lo, hi)
	case column.Uint32:
		return visitDict[uint32](v, a, lo, hi)
	case column.Uint64:
		return visitDict[uint64](v, a, lo, hi)
	}
	return 0, fmt.Errorf("dictionary index kind %s is not an integer", v.IndexKind)
}

// countAcc is the accumulator of Opaque values, which are counted and
// never read: a dictionary of them visits its indices, a null dictionary
// value making a null (countsOnly folds the others from their validity).
type countAcc struct{}

func (*countAcc) dense(int, int)     {}
func (*countAcc) sparse(int, uint64) {}

func (*countAcc) flush(count, nulls int64) agg.State {
	return agg.Counts(column.FamilyCounts, count, nulls)
}
