package engine

import (
	"math/big"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/decimal256"
	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// Result holds the aggregates of one column.
//
// Sum, Min, Max and Mean are nil when not requested or when the aggregate does
// not apply to the column's type (the sum of a timestamp, the mean of a
// string; all but count and null_count of the columns only counted, lists,
// maps and the other column.Opaque kinds), and a null scalar (IsValid false)
// when the column has no valid values.
//
// Sum has one Go type per column type, whatever the data: *scalar.Int64 for
// signed integers, *scalar.Uint64 for unsigned integers and booleans (the
// number of true values), *scalar.Float64 for floats (float16 included),
// *scalar.Decimal128 of decimal128(38, scale) for decimals (decimal32 and
// decimal64 included) and *scalar.Duration of the column's type for
// durations, as Arrow's sum. Min, max, first and last are of the column's
// type (float16 as *scalar.Float16, fixed_size_binary as
// *scalar.FixedSizeBinary), but for decimal32 and decimal64
// (arrow17.NarrowDecimalType, and the native decimal32 and decimal64 of
// Arrow Go v18), which arrow-go v17 has no scalars of: theirs are decimal128
// of the column's precision and scale, and their sum is decimal128's,
// decimal128(38, scale). (nativeDecimal128 says why: arrow-go v18 has the
// native types and arrays but no scalars of them either, and Arrow C++
// registers its sum and mean kernels for decimal128 and decimal256 only.)
// Integer and decimal sums are exact: when one does not fit that type,
// SumOverflow is set, Sum is a null scalar of that type and SumWide holds
// the exact value. SumExact always has the exact (unscaled) integer sum.
//
// Mean is a float64 for every type it applies to, decimals included: the
// exact sum over the count, rounded once. (Arrow C++'s mean of a decimal is a
// decimal of the column's type; package gpuagg/aggcompute's mean follows
// Arrow C++.)
type Result struct {
	Name string
	Type arrow.DataType
	// Err says why the column could not be aggregated; nothing else is set
	// then. Only a column the request did not name has it (see Request).
	Err error

	Count, NullCount int64
	Sum, Min, Max    scalar.Scalar
	Mean             scalar.Scalar // float64

	SumExact    *big.Int
	SumOverflow bool
	// SumWide is the exact sum when SumOverflow is set, nil otherwise:
	// decimal128(38, scale) (scale 0 for integers) when it has at most 38
	// digits, else decimal256(76, scale).
	SumWide scalar.Scalar

	// First and Last are the first and last non-null values (the column's
	// type); ArgMin and ArgMax the rows (int64) of the first minimum and the
	// first maximum. Set when requested and they apply (not to the columns
	// only counted); null scalars when there is no valid value.
	First, Last    scalar.Scalar
	ArgMin, ArgMax scalar.Scalar

	// Stddev and Variance are the sample standard deviation and variance
	// (float64, ddof 1: DuckDB's stddev and variance; pyarrow's with
	// ddof=1), where mean applies, null with fewer than two valid values.
	// ApproxDistinct is the estimated number of distinct valid values
	// (int64; a HyperLogLog sketch, exact for booleans; 0 without valid
	// values), for every type. Set when requested.
	Stddev, Variance scalar.Scalar
	ApproxDistinct   scalar.Scalar

	// State is the column's partial state, mergeable with other partials.
	State agg.State
}

// ValueType is the type the values of a column of type dt answer in (min,
// max, first, last; the decimal of a decimal's mean): a dictionary's value
// type; for decimal32 and decimal64 (NarrowDecimalType, and the native ones
// of Arrow Go versions that have them: nativeDecimal128) the decimal128 of
// their precision and scale; dt itself otherwise.
func ValueType(dt arrow.DataType) arrow.DataType {
	vt := dt
	if d, ok := dt.(*arrow.DictionaryType); ok {
		vt = d.ValueType
	}
	if d, ok := vt.(*arrow17.NarrowDecimalType); ok {
		return d.Decimal128()
	}
	if d, ok := nativeDecimal128(vt); ok {
		return d
	}
	return vt
}

// Finalize turns the state of a column of type dt into its requested results,
// as Arrow scalars: agg's neutral values (State.Finalize) in this Arrow
// version's types. An aggregate the state does not track (State.Tracks) is
// left unset, as if not requested.
func Finalize(s *agg.State, name string, dt arrow.DataType, aggs agg.Set) Result {
	vt := ValueType(dt)
	f := s.Finalize(aggs)
	aggs = f.Set
	r := Result{Name: name, Type: dt, State: *s}
	r.Count, r.NullCount = f.Count, f.NullCount
	has := f.Valid()
	if aggs&(agg.Sum|agg.Mean) != 0 && f.Family != column.FamilyFloat && f.Family != column.FamilyBytes {
		r.SumExact = f.Sum.Big()
	}
	if aggs.Has(agg.Sum) {
		r.Sum, r.SumWide = sumScalar(&f, vt, has)
		r.SumOverflow = r.SumWide != nil
	}
	if aggs.Has(agg.Min) {
		r.Min = valueScalar(vt, has, f.Min)
	}
	if aggs.Has(agg.Max) {
		r.Max = valueScalar(vt, has, f.Max)
	}
	if aggs.Has(agg.Mean) {
		r.Mean = meanScalar(&f, vt)
	}
	row := func(r int64) scalar.Scalar {
		if !has || r < 0 {
			return scalar.MakeNullScalar(arrow.PrimitiveTypes.Int64)
		}
		return scalar.NewInt64Scalar(r)
	}
	if aggs.Has(agg.First) {
		r.First = valueScalar(vt, has && f.FirstRow >= 0, f.First)
	}
	if aggs.Has(agg.Last) {
		r.Last = valueScalar(vt, has && f.LastRow >= 0, f.Last)
	}
	if aggs.Has(agg.ArgMin) {
		r.ArgMin = row(f.ArgMin)
	}
	if aggs.Has(agg.ArgMax) {
		r.ArgMax = row(f.ArgMax)
	}
	if aggs.Has(agg.Variance) {
		r.Variance = momentScalar(&f, vt, (*agg.Final).Variance)
	}
	if aggs.Has(agg.Stddev) {
		r.Stddev = momentScalar(&f, vt, (*agg.Final).Stddev)
	}
	if aggs.Has(agg.ApproxDistinct) {
		r.ApproxDistinct = scalar.NewInt64Scalar(f.Distinct)
	}
	return r
}

// momentScalar is stddev or variance (m) of a column of type dt: nil where
// they do not apply (where mean does not), null without two valid values.
func momentScalar(f *agg.Final, dt arrow.DataType, m func(*agg.Final, int32) (float64, bool)) scalar.Scalar {
	if !meanApplies(dt) {
		return nil
	}
	var scale int32
	if d, ok := dt.(*arrow.Decimal128Type); ok {
		scale = d.Scale
	}
	v, ok := m(f, scale)
	if !ok {
		return scalar.MakeNullScalar(arrow.PrimitiveTypes.Float64)
	}
	return scalar.NewFloat64Scalar(v)
}

// sumType is the Arrow type of the sum of a column of type dt, nil when sum
// does not apply.
func sumType(dt arrow.DataType) arrow.DataType {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return arrow.PrimitiveTypes.Int64
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.BOOL:
		return arrow.PrimitiveTypes.Uint64
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return arrow.PrimitiveTypes.Float64
	case arrow.DECIMAL128:
		return &arrow.Decimal128Type{Precision: 38, Scale: dt.(*arrow.Decimal128Type).Scale}
	case arrow.DURATION:
		return dt
	}
	return nil
}

// meanApplies reports whether mean is defined for the type.
func meanApplies(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.BOOL, arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
		return true
	}
	return false
}

// sumScalar is the sum of a column of type dt as its sum type (sumType), and
// when it does not fit that type a null of it and the exact value (wide).
func sumScalar(s *agg.Final, dt arrow.DataType, has bool) (sum, wide scalar.Scalar) {
	st := sumType(dt)
	if st == nil {
		return nil, nil
	}
	if !has {
		return scalar.MakeNullScalar(st), nil
	}
	var scale int32
	switch st.ID() {
	case arrow.FLOAT64:
		return scalar.NewFloat64Scalar(s.FloatSum), nil
	case arrow.UINT64:
		if s.Sum.FitsUint64() {
			return scalar.NewUint64Scalar(s.Sum[0]), nil
		}
	case arrow.INT64:
		if s.Sum.FitsInt64() {
			return scalar.NewInt64Scalar(int64(s.Sum[0])), nil
		}
	case arrow.DURATION:
		if s.Sum.FitsInt64() {
			return scalar.NewDurationScalar(arrow.Duration(int64(s.Sum[0])), st), nil
		}
	case arrow.DECIMAL128:
		scale = st.(*arrow.Decimal128Type).Scale
		if d, ok := decimalScalar(s.Sum, scale); ok {
			return d, nil
		}
	}
	return scalar.MakeNullScalar(st), wideDecimalScalar(s.Sum, scale)
}

var maxDecimal38 = new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil), big.NewInt(1))

// decimalScalar returns v as decimal128(38, scale) if it has at most 38 digits.
func decimalScalar(v agg.Int192, scale int32) (scalar.Scalar, bool) {
	b := v.Big()
	if new(big.Int).Abs(b).Cmp(maxDecimal38) > 0 {
		return nil, false
	}
	return scalar.NewDecimal128Scalar(decimal128.FromBigInt(b), &arrow.Decimal128Type{Precision: 38, Scale: scale}), true
}

// wideDecimalScalar returns v exactly: decimal128(38, scale) when it fits,
// else decimal256(76, scale).
func wideDecimalScalar(v agg.Int192, scale int32) scalar.Scalar {
	if d, ok := decimalScalar(v, scale); ok {
		return d
	}
	return scalar.NewDecimal256Scalar(decimal256.FromBigInt(v.Big()), &arrow.Decimal256Type{Precision: 76, Scale: scale})
}

func meanScalar(f *agg.Final, dt arrow.DataType) scalar.Scalar {
	if !meanApplies(dt) {
		return nil
	}
	var scale int32
	if d, ok := dt.(*arrow.Decimal128Type); ok {
		scale = d.Scale
	}
	m, ok := f.Mean(scale)
	if !ok {
		return scalar.MakeNullScalar(arrow.PrimitiveTypes.Float64)
	}
	return scalar.NewFloat64Scalar(m)
}

// valueScalar makes a scalar of type dt of v (a null one when !has).
func valueScalar(dt arrow.DataType, has bool, v agg.Value) scalar.Scalar {
	if !has {
		return scalar.MakeNullScalar(dt)
	}
	enc, b := v.Bits, v.Bytes
	i := int64(enc[0])
	switch dt.ID() {
	case arrow.INT8:
		return scalar.NewInt8Scalar(int8(i))
	case arrow.INT16:
		return scalar.NewInt16Scalar(int16(i))
	case arrow.INT32:
		return scalar.NewInt32Scalar(int32(i))
	case arrow.INT64:
		return scalar.NewInt64Scalar(i)
	case arrow.UINT8:
		return scalar.NewUint8Scalar(uint8(enc[0]))
	case arrow.UINT16:
		return scalar.NewUint16Scalar(uint16(enc[0]))
	case arrow.UINT32:
		return scalar.NewUint32Scalar(uint32(enc[0]))
	case arrow.UINT64:
		return scalar.NewUint64Scalar(enc[0])
	case arrow.FLOAT32, arrow.FLOAT64:
		if dt.ID() == arrow.FLOAT32 {
			return scalar.NewFloat32Scalar(float32(v.Float))
		}
		return scalar.NewFloat64Scalar(v.Float)
	case arrow.FLOAT16: // a half: exact
		return scalar.NewFloat16Scalar(float16.FromBits(column.HalfFromFloat64(v.Float)))
	case arrow.BOOL:
		return scalar.NewBooleanScalar(v.Bool)
	case arrow.DECIMAL128:
		return scalar.NewDecimal128Scalar(decimal128.New(int64(enc[1]), enc[0]), dt)
	case arrow.DATE32:
		return scalar.NewDate32Scalar(arrow.Date32(i))
	case arrow.DATE64:
		return scalar.NewDate64Scalar(arrow.Date64(i))
	case arrow.TIME32:
		return scalar.NewTime32Scalar(arrow.Time32(i), dt)
	case arrow.TIME64:
		return scalar.NewTime64Scalar(arrow.Time64(i), dt)
	case arrow.TIMESTAMP:
		return scalar.NewTimestampScalar(arrow.Timestamp(i), dt)
	case arrow.DURATION:
		return scalar.NewDurationScalar(arrow.Duration(i), dt)
	case arrow.STRING:
		return scalar.NewStringScalar(string(b))
	case arrow.LARGE_STRING:
		return scalar.NewLargeStringScalar(string(b))
	case arrow.BINARY:
		return scalar.NewBinaryScalar(memory.NewBufferBytes(append([]byte(nil), b...)), dt)
	case arrow.LARGE_BINARY:
		return scalar.NewLargeBinaryScalar(memory.NewBufferBytes(append([]byte(nil), b...)))
	case arrow.FIXED_SIZE_BINARY:
		return scalar.NewFixedSizeBinaryScalar(memory.NewBufferBytes(append([]byte(nil), b...)), dt)
	}
	return nil // not reached: arrow17.KindOf admits only the types above
}
