package engine

import (
	"fmt"
	"math/big"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/decimal256"
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
