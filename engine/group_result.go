package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/decimal256"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"

	"github.com/arrowagg/arrowagg/agg"
)

// The grouped result's columns, built from agg's finalized states (Final)
// straight into Arrow builders: the types of Finalize's scalars (sumType,
// ValueType, float64 means, int64 rows), the common ones appended directly,
// the others through the scalars Finalize makes (valueScalar), so that a
// value has one Arrow form whichever way it is built.

// sumFits reports whether the exact sum s fits the sum type dt.
func sumFits(s agg.Int192, dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT64, arrow.DURATION:
		return s.FitsInt64()
	case arrow.UINT64:
		return s.FitsUint64()
	case arrow.DECIMAL128:
		if s.FitsInt64() {
			return true
		}
		_, ok := decimalScalar(s, dt.(*arrow.Decimal128Type).Scale)
		return ok
	}
	return true
}

// appendAggregate appends aggregate a of the finalized state f of a column
// whose values are of type vt, to b, of type dt (a decimal256 sum when
// wide).
func appendAggregate(b array.Builder, a agg.Set, f *agg.Final, vt, dt arrow.DataType, wide bool) error {
	has := f.Valid()
	switch a {
	case agg.Count:
		b.(*array.Int64Builder).Append(f.Count)
	case agg.NullCount:
		b.(*array.Int64Builder).Append(f.NullCount)
	case agg.ArgMin, agg.ArgMax:
		r := f.ArgMin
		if a == agg.ArgMax {
			r = f.ArgMax
		}
		if !has || r < 0 {
			b.AppendNull()
		} else {
			b.(*array.Int64Builder).Append(r)
		}
	case agg.Mean:
		var scale int32
		if d, ok := vt.(*arrow.Decimal128Type); ok {
			scale = d.Scale
		}
		if m, ok := f.Mean(scale); ok {
			b.(*array.Float64Builder).Append(m)
		} else {
			b.AppendNull()
		}
	case agg.Sum:
		switch {
		case !has:
			b.AppendNull()
		case wide:
			b.(*array.Decimal256Builder).Append(decimal256.FromBigInt(f.Sum.Big()))
		case dt.ID() == arrow.FLOAT64:
			b.(*array.Float64Builder).Append(f.FloatSum)
		case dt.ID() == arrow.INT64:
			b.(*array.Int64Builder).Append(int64(f.Sum[0]))
		case dt.ID() == arrow.UINT64:
			b.(*array.Uint64Builder).Append(f.Sum[0])
		case dt.ID() == arrow.DURATION:
			b.(*array.DurationBuilder).Append(arrow.Duration(int64(f.Sum[0])))
		case dt.ID() == arrow.DECIMAL128:
			b.(*array.Decimal128Builder).Append(decimal128.FromBigInt(new(big.Int).Set(f.Sum.Big())))
		default:
			b.AppendNull()
		}
	case agg.Min:
		return appendValue(b, dt, has, f.Min)
	case agg.Max:
		return appendValue(b, dt, has, f.Max)
	case agg.First:
		return appendValue(b, dt, has && f.FirstRow >= 0, f.First)
	case agg.Last:
		return appendValue(b, dt, has && f.LastRow >= 0, f.Last)
	default:
		b.AppendNull()
	}
	return nil
}

// appendValue appends the value v of type dt (a null when !has) to b.
func appendValue(b array.Builder, dt arrow.DataType, has bool, v agg.Value) error {
	if !has {
		b.AppendNull()
		return nil
	}
	switch b := b.(type) {
	case *array.Int64Builder:
		b.Append(int64(v.Bits[0]))
	case *array.Int32Builder:
		b.Append(int32(int64(v.Bits[0])))
	case *array.Uint64Builder:
		b.Append(v.Bits[0])
	case *array.Uint32Builder:
		b.Append(uint32(v.Bits[0]))
	case *array.Float64Builder:
		b.Append(v.Float)
	case *array.Float32Builder:
		b.Append(float32(v.Float))
	case *array.BooleanBuilder:
		b.Append(v.Bool)
	case *array.StringBuilder:
		b.Append(string(v.Bytes))
	case *array.BinaryBuilder:
		if dt.ID() == arrow.BINARY {
			b.Append(v.Bytes)
			break
		}
		return scalar.Append(b, valueScalar(dt, true, v))
	case *array.FixedSizeBinaryBuilder:
		// (arrow-go's scalar.Append of a fixed_size_binary appends past
		// the builder's values without reserving them.)
		if w := b.Type().(*arrow.FixedSizeBinaryType).ByteWidth; len(v.Bytes) != w {
			return fmt.Errorf("a value of %d bytes for %s", len(v.Bytes), dt)
		}
		b.Append(v.Bytes)
	default:
		return scalar.Append(b, valueScalar(dt, true, v))
	}
	return nil
}

// directColumn is a result column of 4- or 8-byte values written in place,
// each range of resultRange groups by the task that builds it (a range's
// validity bytes are its own: resultRange is a multiple of 8), instead of
// through a builder per range whose arrays are then concatenated. Its
// values are those appendAggregate and appendValue append, for the
// aggregates and types directAggregate takes.
type directColumn struct {
	dt     arrow.DataType
	width  int
	bufs   [2]*memory.Buffer // validity, values
	valid  []byte
	values []byte
	nulls  []int64 // per range
}

// directWidth is the bytes of a value of type dt that directColumn writes
// as appendValue appends it; 0: not such a type.
func directWidth(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64:
		return 8
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32:
		return 4
	}
	return 0
}

// directAggregate reports whether aggregate a of type dt (a decimal256 sum
// when wide) is written as a directColumn.
func directAggregate(a agg.Set, dt arrow.DataType, wide bool) bool {
	switch a {
	case agg.Count, agg.NullCount, agg.ArgMin, agg.ArgMax, agg.Mean:
		return true
	case agg.Sum:
		return !wide && (dt.ID() == arrow.FLOAT64 || dt.ID() == arrow.INT64 || dt.ID() == arrow.UINT64)
	case agg.Min, agg.Max, agg.First, agg.Last:
		return directWidth(dt) > 0
	}
	return false
}

// newDirectColumn makes the column of n values of type dt (directWidth)
// in ranges of resultRange, its buffers from mem.
func newDirectColumn(mem memory.Allocator, dt arrow.DataType, n, ranges int) *directColumn {
	d := &directColumn{dt: dt, width: directWidth(dt), nulls: make([]int64, ranges)}
	for k, size := range []int{int(bitutil.BytesForBits(int64(n))), n * d.width} {
		d.bufs[k] = memory.NewResizableBuffer(mem)
		d.bufs[k].Resize(size)
	}
	d.valid, d.values = d.bufs[0].Bytes(), d.bufs[1].Bytes()
	return d
}

// set writes value i, bits (the value's bits, little-endian, of its width).
func (d *directColumn) set(i int, bits uint64) {
	bitutil.SetBit(d.valid, i)
	if d.width == 8 {
		binary.LittleEndian.PutUint64(d.values[8*i:], bits)
	} else {
		binary.LittleEndian.PutUint32(d.values[4*i:], uint32(bits))
	}
}

// null makes value i, of range r, null.
func (d *directColumn) null(i, r int) {
	bitutil.ClearBit(d.valid, i)
	d.nulls[r]++
}

// value writes v (a null when !has) at i, of range r, as appendValue
// appends it.
func (d *directColumn) value(i, r int, has bool, v agg.Value) {
	if !has {
		d.null(i, r)
		return
	}
	switch d.dt.ID() {
	case arrow.FLOAT64:
		d.set(i, math.Float64bits(v.Float))
	case arrow.FLOAT32:
		d.set(i, uint64(math.Float32bits(float32(v.Float))))
	default:
		d.set(i, v.Bits[0])
	}
}

// aggregate writes aggregate a of the finalized state f (of a column of
// values of type vt) at i, of range r, as appendAggregate appends it.
func (d *directColumn) aggregate(i, r int, a agg.Set, f *agg.Final, vt arrow.DataType) {
	has := f.Valid()
	switch a {
	case agg.Count:
		d.set(i, uint64(f.Count))
	case agg.NullCount:
		d.set(i, uint64(f.NullCount))
	case agg.ArgMin, agg.ArgMax:
		row := f.ArgMin
		if a == agg.ArgMax {
			row = f.ArgMax
		}
		if !has || row < 0 {
			d.null(i, r)
		} else {
			d.set(i, uint64(row))
		}
	case agg.Mean:
		var scale int32
		if dec, ok := vt.(*arrow.Decimal128Type); ok {
			scale = dec.Scale
		}
		if m, ok := f.Mean(scale); ok {
			d.set(i, math.Float64bits(m))
		} else {
			d.null(i, r)
		}
	case agg.Sum:
		switch {
		case !has:
			d.null(i, r)
		case d.dt.ID() == arrow.FLOAT64:
			d.set(i, math.Float64bits(f.FloatSum))
		default:
			d.set(i, f.Sum[0])
		}
	case agg.Min:
		d.value(i, r, has, f.Min)
	case agg.Max:
		d.value(i, r, has, f.Max)
	case agg.First:
		d.value(i, r, has && f.FirstRow >= 0, f.First)
	case agg.Last:
		d.value(i, r, has && f.LastRow >= 0, f.Last)
	}
}

// array is the column as an Arrow array of n values; the column is spent.
func (d *directColumn) array(n int) arrow.Array {
	defer d.release()
	var nulls int64
	for _, k := range d.nulls {
		nulls += k
	}
	valid := d.bufs[0]
	if nulls == 0 {
		valid = nil
	}
	data := array.NewData(d.dt, n, []*memory.Buffer{valid, d.bufs[1]}, nil, int(nulls), 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// release releases the column's buffers (once array has taken them, its
// own).
func (d *directColumn) release() {
	for k, b := range d.bufs {
		if b != nil {
			b.Release()
			d.bufs[k] = nil
		}
	}
}
