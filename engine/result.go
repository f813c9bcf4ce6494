package engine

import (
	"math"
	"math/big"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/decimal256"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// Result holds the aggregates of one column.
//
// Sum, Min, Max and Mean are nil when not requested or when the aggregate does
// not apply to the column's type (the sum of a timestamp, the mean of a
// string), and a null scalar (IsValid false) when the column has no valid
// values. Sums follow Arrow: int64 for signed integers, uint64 for unsigned
// integers and booleans (the number of true values), float64 for floats,
// decimal128(38, scale) for decimals, the column's type for durations.
// Integer and decimal sums are exact: when one does not fit its type,
// SumOverflow is set and Sum holds the exact value as decimal128(38, scale), or
// decimal256(76, scale) beyond 38 digits. SumExact always has the exact
// (unscaled) integer sum.
type Result struct {
	Name string
	Type arrow.DataType
	// Err says why the column could not be aggregated; nothing else is set then.
	Err error

	Count, NullCount int64
	Sum, Min, Max    scalar.Scalar
	Mean             scalar.Scalar // float64

	SumExact    *big.Int
	SumOverflow bool

	// First and Last are the first and last non-null values (the column's
	// type); ArgMin and ArgMax the rows (int64) of the first minimum and the
	// first maximum. Set when requested; null scalars when there is no valid
	// value.
	First, Last    scalar.Scalar
	ArgMin, ArgMax scalar.Scalar

	// State is the column's partial state, mergeable with other partials.
	State agg.State
}

// Finalize turns the state of a column of type dt into its requested results,
// as Arrow scalars; an aggregate the state does not track (State.Tracks) is
// left unset, as if not requested.
func Finalize(s *agg.State, name string, dt arrow.DataType, aggs agg.Set) Result {
	vt := dt
	if d, ok := dt.(*arrow.DictionaryType); ok {
		vt = d.ValueType
	}
	aggs &= s.Tracks | agg.Count | agg.NullCount // what the state does not know is not reported
	r := Result{Name: name, Type: dt, State: *s}
	r.Count, r.NullCount = s.Count, s.NullCount
	has := s.Count > 0
	if aggs&(agg.Sum|agg.Mean) != 0 && s.Family != column.FamilyFloat && s.Family != column.FamilyBytes {
		r.SumExact = s.Sum.Big()
	}
	if aggs.Has(agg.Sum) {
		r.Sum, r.SumOverflow = sumScalar(s, vt, has)
	}
	if aggs.Has(agg.Min) {
		r.Min = extremeScalar(s, vt, has, s.Min, s.BMin, false)
	}
	if aggs.Has(agg.Max) {
		r.Max = extremeScalar(s, vt, has, s.Max, s.BMax, true)
	}
	if aggs.Has(agg.Mean) {
		r.Mean = meanScalar(s, vt, has)
	}
	if aggs&agg.Ordered != 0 && s.Ordered() {
		finalizeOrdered(s, &r, vt, has, aggs)
	}
	return r
}

func finalizeOrdered(s *agg.State, r *Result, vt arrow.DataType, has bool, aggs agg.Set) {
	valueAt := func(enc [2]uint64, b []byte) scalar.Scalar {
		if s.Family == column.FamilyBool {
			return scalar.NewBooleanScalar(enc[0] == 1)
		}
		if s.Family == column.FamilyFloat {
			// the extremes' NaN rule does not apply to one value
			f := math.Float64frombits(enc[0])
			if vt.ID() == arrow.FLOAT32 {
				return scalar.NewFloat32Scalar(float32(f))
			}
			return scalar.NewFloat64Scalar(f)
		}
		return extremeScalar(s, vt, true, enc, b, false)
	}
	row := func(r int64) scalar.Scalar {
		if !has || r < 0 {
			return scalar.MakeNullScalar(arrow.PrimitiveTypes.Int64)
		}
		return scalar.NewInt64Scalar(r)
	}
	if aggs.Has(agg.First) {
		r.First = scalar.MakeNullScalar(vt)
		if has && s.FirstRow >= 0 {
			r.First = valueAt(s.First, s.BFirst)
		}
	}
	if aggs.Has(agg.Last) {
		r.Last = scalar.MakeNullScalar(vt)
		if has && s.LastRow >= 0 {
			r.Last = valueAt(s.Last, s.BLast)
		}
	}
	if aggs.Has(agg.ArgMin) {
		r.ArgMin = row(s.MinRow)
	}
	if aggs.Has(agg.ArgMax) {
		r.ArgMax = row(s.MaxRow)
	}
}

// sumType is the Arrow type of the sum of a column of type dt, nil when sum
// does not apply.
func sumType(dt arrow.DataType) arrow.DataType {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return arrow.PrimitiveTypes.Int64
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.BOOL:
		return arrow.PrimitiveTypes.Uint64
	case arrow.FLOAT32, arrow.FLOAT64:
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
		arrow.BOOL, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
		return true
	}
	return false
}

func sumScalar(s *agg.State, dt arrow.DataType, has bool) (scalar.Scalar, bool) {
	st := sumType(dt)
	if st == nil {
		return nil, false
	}
	if !has {
		return scalar.MakeNullScalar(st), false
	}
	switch st.ID() {
	case arrow.FLOAT64:
		return scalar.NewFloat64Scalar(s.FloatSum()), false
	case arrow.UINT64:
		if s.Sum.FitsUint64() {
			return scalar.NewUint64Scalar(s.Sum[0]), false
		}
	case arrow.INT64, arrow.DURATION:
		if s.Sum.FitsInt64() {
			if st.ID() == arrow.DURATION {
				return scalar.NewDurationScalar(arrow.Duration(int64(s.Sum[0])), st), false
			}
			return scalar.NewInt64Scalar(int64(s.Sum[0])), false
		}
	case arrow.DECIMAL128:
		scale := st.(*arrow.Decimal128Type).Scale
		if d, ok := decimalScalar(s.Sum, scale); ok {
			return d, false
		}
		return wideDecimalScalar(s.Sum, scale), true
	}
	return wideDecimalScalar(s.Sum, 0), true
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

func meanScalar(s *agg.State, dt arrow.DataType, has bool) scalar.Scalar {
	if !meanApplies(dt) {
		return nil
	}
	if !has {
		return scalar.MakeNullScalar(arrow.PrimitiveTypes.Float64)
	}
	if s.Family == column.FamilyFloat {
		return scalar.NewFloat64Scalar(s.FloatSum() / float64(s.Count))
	}
	// Exact sum / (count * 10^scale), rounded once.
	num, den := s.Sum.Big(), big.NewInt(s.Count)
	if d, ok := dt.(*arrow.Decimal128Type); ok && d.Scale != 0 {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil)
		if d.Scale > 0 {
			den.Mul(den, p)
		} else {
			num.Mul(num, p.Exp(big.NewInt(10), big.NewInt(int64(-d.Scale)), nil))
		}
	}
	f, _ := new(big.Rat).SetFrac(num, den).Float64()
	return scalar.NewFloat64Scalar(f)
}

// extremeScalar makes the min (isMax false) or max scalar of type dt.
func extremeScalar(s *agg.State, dt arrow.DataType, has bool, enc [2]uint64, b []byte, isMax bool) scalar.Scalar {
	if !has {
		return scalar.MakeNullScalar(dt)
	}
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
		f := math.Float64frombits(enc[0])
		if math.Float64frombits(s.Min[0]) > math.Float64frombits(s.Max[0]) {
			f = math.NaN() // every valid value was NaN
		}
		if dt.ID() == arrow.FLOAT32 {
			return scalar.NewFloat32Scalar(float32(f))
		}
		return scalar.NewFloat64Scalar(f)
	case arrow.BOOL:
		trues := int64(s.Sum[0])
		if isMax {
			return scalar.NewBooleanScalar(trues > 0)
		}
		return scalar.NewBooleanScalar(trues == s.Count)
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
	}
	return nil // not reached: column.KindOf admits only the types above
}
