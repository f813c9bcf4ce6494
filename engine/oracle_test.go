package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"

	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// This file holds the test oracle: an independent, exact computation of the
// expected aggregates through Arrow's typed accessors and math/big, and a
// random array generator covering every supported type.

// expected is what the oracle computes for one column.
type expected struct {
	count, nulls int64
	sumInt       *big.Int   // integer, bool (trues), decimal (unscaled), duration
	sumFloat     *big.Float // exact sum of the finite values
	special      float64    // plain sum of non-finite values (NaN/±Inf), 0 if none
	abs          float64    // sum of |x| of the finite float values
	min, max     any        // int64, uint64, float64, bool, *big.Int (decimal), string

	// ordered aggregates (tracked when ordered is set); rows count across
	// the chunks
	ordered                           bool
	row                               int64
	first, last                       any
	firstRow, lastRow, argMin, argMax int64
}

// oracleTypes are the types the property tests cover.
var oracleTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
	arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean,
	arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64, arrow.FixedWidthTypes.Time32ms,
	arrow.FixedWidthTypes.Time64ns, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"},
	arrow.FixedWidthTypes.Duration_ns, &arrow.Decimal128Type{Precision: 38, Scale: 3},
	arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary,
	&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String},
	&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint8, ValueType: arrow.PrimitiveTypes.Float64},
	&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Int64},
}

// randArray makes an array of n values of type dt with about nullFrac nulls.
func randArray(mem memory.Allocator, r *rand.Rand, dt arrow.DataType, n int, nullFrac float64) arrow.Array {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		return randDict(mem, r, d, n, nullFrac)
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		if nullFrac >= 1 || (nullFrac > 0 && r.Float64() < nullFrac) {
			b.AppendNull()
			continue
		}
		if e, ok := b.(*array.ExtensionBuilder); ok { // decimal32, decimal64: their unscaled values
			fb := e.StorageBuilder().(*array.FixedSizeBinaryBuilder)
			fb.Append(binary.LittleEndian.AppendUint64(nil, uint64(randInt64(r)))[:fb.Type().(*arrow.FixedSizeBinaryType).ByteWidth])
			continue
		}
		appendRandom(b, r)
	}
	return b.NewArray()
}

// halfOracle is the value of the half-precision float of bits h, from the
// definition of the format (independently of column.HalfToFloat64).
func halfOracle(h uint16) float64 {
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	var v float64
	switch {
	case exp == 0x1f && frac != 0:
		return math.NaN()
	case exp == 0x1f:
		v = math.Inf(1)
	case exp == 0:
		v = frac / (1 << 24)
	default:
		v = (1 + frac/1024) * math.Pow(2, float64(exp-15))
	}
	if h>>15 == 1 {
		v = math.Copysign(v, -1)
	}
	return v
}

// randHalf draws the bits of a half-precision float: any bits (NaN,
// infinities and subnormals among them), small integers and zeros, and
// the extremes.
func randHalf(r *rand.Rand) uint16 {
	switch r.IntN(8) {
	case 0:
		return []uint16{0x0000, 0x8000, 0x7BFF, 0xFBFF, 0x0001, 0x8001, 0x7C00, 0xFC00, 0x7E00}[r.IntN(9)]
	case 1, 2:
		return column.HalfFromFloat64(float64(r.IntN(9) - 4))
	case 3:
		return uint16(r.IntN(0x7C00)) // finite, positive
	}
	h := uint16(r.Uint32())
	for h&0x7C00 == 0x7C00 { // no NaN nor infinity here: case 0 has them
		h = uint16(r.Uint32())
	}
	return h
}

// randInt64 draws from a mix of small values, full-range values and extremes.
func randInt64(r *rand.Rand) int64 {
	switch r.IntN(8) {
	case 0:
		return math.MaxInt64 - r.Int64N(4)
	case 1:
		return math.MinInt64 + r.Int64N(4)
	case 2, 3:
		return r.Int64N(2001) - 1000
	}
	return int64(r.Uint64())
}

func randFloat(r *rand.Rand) float64 {
	switch r.IntN(10) {
	case 0:
		return (r.Float64() - 0.5) * 1e300
	case 1:
		return (r.Float64() - 0.5) * 1e-300 // includes subnormal-scale values
	case 2:
		return math.Float64frombits(r.Uint64N(1 << 52)) // subnormal
	case 3:
		return float64(r.IntN(5) - 2) // small integers and zeros
	}
	return r.NormFloat64() * math.Pow(10, float64(r.IntN(30)-15))
}

func randBytes(r *rand.Rand) []byte {
	b := make([]byte, r.IntN(12))
	for i := range b {
		b[i] = byte(r.IntN(256))
		if r.IntN(3) > 0 {
			b[i] = 'a' + byte(r.IntN(4)) // many shared prefixes
		}
	}
	return b
}

func appendRandom(b array.Builder, r *rand.Rand) {
	x := randInt64(r)
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(x))
	case *array.Int16Builder:
		b.Append(int16(x))
	case *array.Int32Builder:
		b.Append(int32(x))
	case *array.Int64Builder:
		b.Append(x)
	case *array.Uint8Builder:
		b.Append(uint8(x))
	case *array.Uint16Builder:
		b.Append(uint16(x))
	case *array.Uint32Builder:
		b.Append(uint32(x))
	case *array.Uint64Builder:
		b.Append(uint64(x))
	case *array.Float32Builder:
		b.Append(float32(randFloat(r)))
	case *array.Float64Builder:
		b.Append(randFloat(r))
	case *array.BooleanBuilder:
		b.Append(x&1 == 1)
	case *array.Date32Builder:
		b.Append(arrow.Date32(int32(x)))
	case *array.Date64Builder:
		b.Append(arrow.Date64(x))
	case *array.Time32Builder:
		b.Append(arrow.Time32(int32(x) % 86400000))
	case *array.Time64Builder:
		b.Append(arrow.Time64(x % 86400000000000))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(x))
	case *array.DurationBuilder:
		b.Append(arrow.Duration(x))
	case *array.Decimal128Builder:
		b.Append(decimal128.New(randInt64(r), uint64(randInt64(r))))
	case *array.StringBuilder:
		b.Append(string(randBytes(r)))
	case *array.LargeStringBuilder:
		b.Append(string(randBytes(r)))
	case *array.BinaryBuilder:
		b.Append(randBytes(r))
	case *array.Float16Builder:
		b.Append(float16.FromBits(randHalf(r)))
	case *array.FixedSizeBinaryBuilder:
		v := randBytes(r)
		w := b.Type().(*arrow.FixedSizeBinaryType).ByteWidth
		b.Append(append(v, make([]byte, w)...)[:w])
	default:
		panic(fmt.Sprintf("no random values for %T", b))
	}
}

// randDict makes a dictionary array whose dictionary has nulls too, with
// indices drawn at random.
func randDict(mem memory.Allocator, r *rand.Rand, dt *arrow.DictionaryType, n int, nullFrac float64) arrow.Array {
	dictLen := 1 + r.IntN(50)
	dict := randArray(mem, r, dt.ValueType, dictLen, 0.1)
	defer dict.Release()
	ib := array.NewBuilder(mem, dt.IndexType)
	defer ib.Release()
	for i := 0; i < n; i++ {
		if nullFrac >= 1 || (nullFrac > 0 && r.Float64() < nullFrac) {
			ib.AppendNull()
			continue
		}
		j := r.IntN(dictLen)
		switch ib := ib.(type) {
		case *array.Int16Builder:
			ib.Append(int16(j))
		case *array.Uint8Builder:
			ib.Append(uint8(j))
		case *array.Int32Builder:
			ib.Append(int32(j))
		default:
			panic(fmt.Sprintf("no dictionary index builder %T", ib))
		}
	}
	idx := ib.NewArray()
	defer idx.Release()
	return array.NewDictionaryArray(dt, idx, dict)
}

// oracle computes the expected aggregates of the chunks with typed accessors.
func oracle(chunks ...arrow.Array) expected {
	return runOracle(false, chunks)
}

// oracleOrdered is oracle with the ordered aggregates too.
func oracleOrdered(chunks ...arrow.Array) expected {
	return runOracle(true, chunks)
}

func runOracle(ordered bool, chunks []arrow.Array) expected {
	e := expected{sumInt: new(big.Int), sumFloat: new(big.Float).SetPrec(4096), ordered: ordered,
		firstRow: -1, lastRow: -1, argMin: -1, argMax: -1}
	for _, arr := range chunks {
		oracleChunk(&e, arr)
	}
	return e
}

func oracleChunk(e *expected, arr arrow.Array) {
	values := arr
	index := func(i int) int { return i }
	if d, ok := arr.(*array.Dictionary); ok {
		values = d.Dictionary()
		index = d.GetValueIndex
	}
	for i := 0; i < arr.Len(); i, e.row = i+1, e.row+1 {
		if arr.IsNull(i) || values.IsNull(index(i)) {
			e.nulls++
			continue
		}
		e.count++
		v := valueOf(values, index(i))
		var oldMin, oldMax string
		if e.ordered {
			oldMin, oldMax = fmt.Sprint(e.min), fmt.Sprint(e.max)
		}
		switch v := v.(type) {
		case int64:
			e.addInt(v)
		case uint64:
			e.addUint(v)
		case float64:
			e.addFloat(v)
		case bool:
			if v {
				e.sumInt.Add(e.sumInt, big.NewInt(1))
			}
			if e.min == nil {
				e.min, e.max = v, v
			}
			e.min = e.min.(bool) && v
			e.max = e.max.(bool) || v
		case *big.Int:
			e.sumInt.Add(e.sumInt, v)
			if e.min == nil || v.Cmp(e.min.(*big.Int)) < 0 {
				e.min = v
			}
			if e.max == nil || v.Cmp(e.max.(*big.Int)) > 0 {
				e.max = v
			}
		case string:
			e.addBytes([]byte(v))
		}
		// Ordered aggregates: the first change of an extreme is its row (the
		// extremes change only when a value strictly beats them; -0 beats +0
		// for min and prints differently).
		if !e.ordered {
			continue
		}
		if e.firstRow < 0 {
			e.firstRow, e.first = e.row, v
		}
		e.lastRow, e.last = e.row, v
		if fmt.Sprint(e.min) != oldMin || e.argMin < 0 {
			e.argMin = e.row
		}
		if fmt.Sprint(e.max) != oldMax || e.argMax < 0 {
			e.argMax = e.row
		}
	}
}

// valueOf is element j of a flat array in the oracle's terms.
func valueOf(values arrow.Array, j int) any {
	switch a := values.(type) {
	case *array.Int8:
		return int64(a.Value(j))
	case *array.Int16:
		return int64(a.Value(j))
	case *array.Int32:
		return int64(a.Value(j))
	case *array.Int64:
		return a.Value(j)
	case *array.Date32:
		return int64(a.Value(j))
	case *array.Date64:
		return int64(a.Value(j))
	case *array.Time32:
		return int64(a.Value(j))
	case *array.Time64:
		return int64(a.Value(j))
	case *array.Timestamp:
		return int64(a.Value(j))
	case *array.Duration:
		return int64(a.Value(j))
	case *array.Uint8:
		return uint64(a.Value(j))
	case *array.Uint16:
		return uint64(a.Value(j))
	case *array.Uint32:
		return uint64(a.Value(j))
	case *array.Uint64:
		return a.Value(j)
	case *array.Float32:
		return float64(a.Value(j))
	case *array.Float64:
		return a.Value(j)
	case *array.Boolean:
		return a.Value(j)
	case *array.Decimal128:
		return a.Value(j).BigInt()
	case *array.String:
		return a.Value(j)
	case *array.LargeString:
		return a.Value(j)
	case *array.Binary:
		return string(a.Value(j))
	case *array.Float16:
		return halfOracle(a.Value(j).Uint16())
	case *array.FixedSizeBinary:
		return string(a.Value(j))
	case *arrow17.NarrowDecimalArray:
		b := a.Storage().(*array.FixedSizeBinary).Value(j)
		var x int64
		if len(b) == 4 {
			x = int64(int32(binary.LittleEndian.Uint32(b)))
		} else {
			x = int64(binary.LittleEndian.Uint64(b))
		}
		return big.NewInt(x)
	}
	panic(fmt.Sprintf("oracle: no case for %T", values))
}

func (e *expected) addInt(v int64) {
	e.sumInt.Add(e.sumInt, big.NewInt(v))
	if e.min == nil || v < e.min.(int64) {
		e.min = v
	}
	if e.max == nil || v > e.max.(int64) {
		e.max = v
	}
}

func (e *expected) addUint(v uint64) {
	e.sumInt.Add(e.sumInt, new(big.Int).SetUint64(v))
	if e.min == nil || v < e.min.(uint64) {
		e.min = v
	}
	if e.max == nil || v > e.max.(uint64) {
		e.max = v
	}
}

// addFloat: exact sum of finite values; NaN and infinities apart; min/max
// skip NaN (NaN only when every value is NaN) and order -0 before +0.
func (e *expected) addFloat(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		e.special += v
	} else {
		e.sumFloat.Add(e.sumFloat, big.NewFloat(v))
		e.abs += math.Abs(v)
	}
	if math.IsNaN(v) {
		if e.min == nil {
			e.min, e.max = v, v
		}
		return
	}
	if e.min == nil || math.IsNaN(e.min.(float64)) {
		e.min, e.max = v, v
		return
	}
	mn, mx := e.min.(float64), e.max.(float64)
	if v < mn || (v == mn && math.Signbit(v)) {
		e.min = v
	}
	if v > mx || (v == mx && !math.Signbit(v)) {
		e.max = v
	}
}

func (e *expected) absSum() float64 { return e.abs }

func (e *expected) addBytes(v []byte) {
	s := string(v)
	if e.min == nil || bytes.Compare(v, []byte(e.min.(string))) < 0 {
		e.min = s
	}
	if e.max == nil || bytes.Compare(v, []byte(e.max.(string))) > 0 {
		e.max = s
	}
}

// scalarValue returns the Go value of a scalar in the oracle's terms.
func scalarValue(s scalar.Scalar) any {
	if s == nil || !s.IsValid() {
		return nil
	}
	switch s := s.(type) {
	case *scalar.Int8:
		return int64(s.Value)
	case *scalar.Int16:
		return int64(s.Value)
	case *scalar.Int32:
		return int64(s.Value)
	case *scalar.Int64:
		return s.Value
	case *scalar.Date32:
		return int64(s.Value)
	case *scalar.Date64:
		return int64(s.Value)
	case *scalar.Time32:
		return int64(s.Value)
	case *scalar.Time64:
		return int64(s.Value)
	case *scalar.Timestamp:
		return int64(s.Value)
	case *scalar.Duration:
		return int64(s.Value)
	case *scalar.Uint8:
		return uint64(s.Value)
	case *scalar.Uint16:
		return uint64(s.Value)
	case *scalar.Uint32:
		return uint64(s.Value)
	case *scalar.Uint64:
		return s.Value
	case *scalar.Float32:
		return float64(s.Value)
	case *scalar.Float64:
		return s.Value
	case *scalar.Boolean:
		return s.Value
	case *scalar.Decimal128:
		return s.Value.BigInt()
	case *scalar.Decimal256:
		return s.Value.BigInt()
	case *scalar.String:
		return string(s.Value.Bytes())
	case *scalar.LargeString:
		return string(s.Value.Bytes())
	case *scalar.Binary:
		return string(s.Value.Bytes())
	case *scalar.Float16:
		return halfOracle(s.Value.Uint16())
	case *scalar.FixedSizeBinary:
		return string(s.Value.Bytes())
	}
	panic(fmt.Sprintf("scalarValue: %T", s))
}
