package engine

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/arrow18/column/arrow18"
)

// nativeDecimalTypes are Arrow Go v18's native decimal32 and decimal64 of
// their maximum precisions and of a smaller one, at scales 0 and 2.
var nativeDecimalTypes = []arrow.DataType{
	&arrow.Decimal32Type{Precision: 9, Scale: 0},
	&arrow.Decimal32Type{Precision: 9, Scale: 2},
	&arrow.Decimal32Type{Precision: 5, Scale: 2},
	&arrow.Decimal64Type{Precision: 18, Scale: 0},
	&arrow.Decimal64Type{Precision: 18, Scale: 2},
	&arrow.Decimal64Type{Precision: 12, Scale: 2},
}

// precisionOf is the precision and scale of a native decimal32 or decimal64
// (or of a dictionary's values of one).
func precisionOf(dt arrow.DataType) (precision, scale int32) {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	d := dt.(arrow.DecimalType)
	return d.GetPrecision(), d.GetScale()
}

// nativeDecimalArray is an array of type dt (decimal32 or decimal64) of the
// unscaled values vals, nil being null.
func nativeDecimalArray(mem memory.Allocator, dt arrow.DataType, vals []*int64) arrow.Array {
	switch dt := dt.(type) {
	case *arrow.Decimal32Type:
		b := array.NewDecimal32Builder(mem, dt)
		defer b.Release()
		for _, v := range vals {
			if v == nil {
				b.AppendNull()
			} else {
				b.Append(decimal.Decimal32(*v))
			}
		}
		return b.NewArray()
	case *arrow.Decimal64Type:
		b := array.NewDecimal64Builder(mem, dt)
		defer b.Release()
		for _, v := range vals {
			if v == nil {
				b.AppendNull()
			} else {
				b.Append(decimal.Decimal64(*v))
			}
		}
		return b.NewArray()
	}
	panic(fmt.Sprintf("not a native narrow decimal: %s", dt))
}

// nativeOracle is what the aggregates of the values of batches are, exactly.
type nativeOracle struct {
	count, nulls          int64
	sum                   *big.Int
	min, max, first, last int64
}

func oracleOfBatches(batches [][]*int64) nativeOracle {
	o := nativeOracle{sum: new(big.Int)}
	for _, b := range batches {
		for _, v := range b {
			if v == nil {
				o.nulls++
				continue
			}
			if o.count == 0 {
				o.min, o.max, o.first = *v, *v, *v
			}
			o.count++
			o.sum.Add(o.sum, big.NewInt(*v))
			o.min, o.max, o.last = min(o.min, *v), max(o.max, *v), *v
		}
	}
	return o
}

// decimal128Value is the unscaled value and type of a valid decimal128
// scalar.
func decimal128Value(t *testing.T, s scalar.Scalar, msg string) (*big.Int, *arrow.Decimal128Type) {
	t.Helper()
	require.NotNil(t, s, msg)
	require.True(t, s.IsValid(), msg)
	d, ok := s.(*scalar.Decimal128)
	require.True(t, ok, "%s: %T", msg, s)
	return d.Value.BigInt(), d.DataType().(*arrow.Decimal128Type)
}

// checkNative compares the result of a column of type dt with the oracle:
// count and null_count; the sum exact in decimal128(38, scale), never an
// overflow; min, max, first and last exact in decimal128(precision,
// scale); the mean the exact sum over count * 10^scale, rounded once.
func checkNative(t *testing.T, got Result, want nativeOracle, dt arrow.DataType, msg string) {
	t.Helper()
	require.NoError(t, got.Err, msg)
	require.True(t, arrow.TypeEqual(dt, got.Type), "%s: type %s", msg, got.Type)
	require.Equal(t, want.count, got.Count, "count %s", msg)
	require.Equal(t, want.nulls, got.NullCount, "null_count %s", msg)
	p, s := precisionOf(dt)
	if want.count == 0 {
		for what, v := range map[string]scalar.Scalar{"sum": got.Sum, "min": got.Min, "max": got.Max, "first": got.First, "last": got.Last, "mean": got.Mean} {
			require.NotNil(t, v, "%s %s", what, msg)
			require.False(t, v.IsValid(), "%s %s", what, msg)
		}
		return
	}
	require.False(t, got.SumOverflow, "sum %s", msg)
	require.Nil(t, got.SumWide, "sum %s", msg)
	require.Zero(t, want.sum.Cmp(got.SumExact), "exact sum %s: want %s got %s", msg, want.sum, got.SumExact)
	sum, st := decimal128Value(t, got.Sum, "sum "+msg)
	require.Zero(t, want.sum.Cmp(sum), "sum %s: want %s got %s", msg, want.sum, sum)
	require.Equal(t, &arrow.Decimal128Type{Precision: 38, Scale: s}, st, "sum type %s", msg)
	for _, c := range []struct {
		what string
		want int64
		got  scalar.Scalar
	}{{"min", want.min, got.Min}, {"max", want.max, got.Max}, {"first", want.first, got.First}, {"last", want.last, got.Last}} {
		v, vt := decimal128Value(t, c.got, c.what+" "+msg)
		require.Equal(t, big.NewInt(c.want).String(), v.String(), "%s %s", c.what, msg)
		require.Equal(t, &arrow.Decimal128Type{Precision: p, Scale: s}, vt, "%s type %s", c.what, msg)
	}
	den := new(big.Int).Mul(big.NewInt(want.count), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil))
	wantMean, _ := new(big.Rat).SetFrac(want.sum, den).Float64()
	require.IsType(t, &scalar.Float64{}, got.Mean, "mean %s", msg)
	require.Equal(t, math.Float64bits(wantMean), math.Float64bits(got.Mean.(*scalar.Float64).Value), "mean %s: want %v got %v", msg, wantMean, got.Mean)
}

func ptr(v int64) *int64 { return &v }

func precisionIs(dt arrow.DataType, p int32) bool {
	q, _ := precisionOf(dt)
	return p == q
}

// nativeBatches are batches of unscaled values of type dt: nulls, both signs,
// the extremes of dt's precision and, after them, sums that run near and
// past the 32-bit (decimal32) or 64-bit (decimal64) range: up and back down
// across it, so that first and last, min and max and the sum all move.
func nativeBatches(r *rand.Rand, dt arrow.DataType) [][]*int64 {
	p, _ := precisionOf(dt)
	top := new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil), big.NewInt(1)).Int64()
	first := [][]*int64{
		{nil, ptr(-7), ptr(top), nil, ptr(0), ptr(-top), ptr(1)},
		{nil, nil}, // a batch of nulls
		{},         // and an empty one
	}
	var extremes []*int64
	for range 40 + r.IntN(20) { // enough extremes to pass 2^31 or 2^63
		extremes = append(extremes, ptr(top-int64(r.IntN(1000))))
	}
	var mixed []*int64
	for range 300 {
		switch r.IntN(5) {
		case 0:
			mixed = append(mixed, nil)
		case 1:
			mixed = append(mixed, ptr(-top+int64(r.IntN(10))))
		default:
			mixed = append(mixed, ptr(r.Int64N(2*top+1)-top))
		}
	}
	return append(first, extremes, mixed, []*int64{ptr(-3), nil})
}

// TestNativeNarrowDecimals aggregates Arrow Go v18's native decimal32 and
// decimal64 columns (nulls, negative values, scales 0 and 2, over several
// batches and sliced) and compares every aggregate with an exact math/big
// oracle; the sums run past 2^31 (decimal32) and 2^63 (decimal64) and stay
// exact in decimal128(38, scale).
func TestNativeNarrowDecimals(t *testing.T) {
	r, seed := seeded(t)
	ctx := context.Background()
	for i, dt := range nativeDecimalTypes {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		e := cpuEngine(t, mem, 1+i%3)
		batches := nativeBatches(r, dt)
		want := oracleOfBatches(batches)
		var chunks []arrow.Array
		for _, b := range batches {
			chunks = append(chunks, nativeDecimalArray(mem, dt, b))
		}
		ch := arrow.NewChunked(dt, chunks)
		name := fmt.Sprintf("%s seed=%d", dt, seed)
		got, err := e.AggregateChunked(ctx, ch, agg.Default|agg.Ordered)
		require.NoError(t, err, name)
		checkNative(t, got, want, dt, name)
		// The running sum passes the range of the values' width (after the
		// batch of extremes) where the precision is the width's greatest.
		if prefix := oracleOfBatches(batches[:4]).sum; precisionIs(dt, 9) {
			require.Positive(t, prefix.Cmp(big.NewInt(math.MaxInt32)), "%s: the sum passes 2^31", name)
		} else if precisionIs(dt, 18) {
			require.Positive(t, prefix.Cmp(new(big.Int).SetUint64(math.MaxInt64)), "%s: the sum passes 2^63", name)
		}

		whole := nativeDecimalArray(mem, dt, concatBatches(batches))
		sliced := array.NewSlice(whole, 3, int64(whole.Len()-1))
		wantSliced := oracleOfBatches([][]*int64{concatBatches(batches)[3 : whole.Len()-1]})
		got, err = e.AggregateArray(ctx, sliced, agg.Default|agg.Ordered)
		require.NoError(t, err, name)
		checkNative(t, got, wantSliced, dt, name+" sliced")

		empty := nativeDecimalArray(mem, dt, []*int64{nil, nil})
		got, err = e.AggregateArray(ctx, empty, agg.Default|agg.Ordered)
		require.NoError(t, err, name)
		checkNative(t, got, nativeOracle{nulls: 2, sum: new(big.Int)}, dt, name+" all null")

		for _, a := range append(chunks, whole, sliced, empty) {
			a.Release()
		}
		ch.Release()
		mem.AssertSize(t, 0)
	}
}

// Sums of decimal32 exactly at and one past the 32-bit range, and of
// decimal64 at and one past the 64-bit range, both signs: exact, no
// overflow (decimal128(38, scale) holds them).
func TestNativeNarrowDecimalSumsAtTheRange(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := cpuEngine(t, mem, 2)
	const top9, top18 = 999_999_999, 999_999_999_999_999_999
	for _, c := range []struct {
		dt   arrow.DataType
		vals []int64
		want string
	}{
		{&arrow.Decimal32Type{Precision: 9, Scale: 2}, []int64{top9, top9, 147_483_649}, "2147483647"},
		{&arrow.Decimal32Type{Precision: 9, Scale: 2}, []int64{top9, top9, 147_483_650}, "2147483648"},
		{&arrow.Decimal32Type{Precision: 9, Scale: 0}, []int64{-top9, -top9, -147_483_650}, "-2147483648"},
		{&arrow.Decimal32Type{Precision: 9, Scale: 0}, []int64{-top9, -top9, -147_483_651}, "-2147483649"},
		{&arrow.Decimal64Type{Precision: 18, Scale: 2}, []int64{top18, top18, top18, top18, top18, top18, top18, top18, top18, 223_372_036_854_775_816}, "9223372036854775807"},
		{&arrow.Decimal64Type{Precision: 18, Scale: 2}, []int64{top18, top18, top18, top18, top18, top18, top18, top18, top18, 223_372_036_854_775_817}, "9223372036854775808"},
		{&arrow.Decimal64Type{Precision: 18, Scale: 0}, []int64{-top18, -top18, -top18, -top18, -top18, -top18, -top18, -top18, -top18, -223_372_036_854_775_818}, "-9223372036854775809"},
	} {
		var batches [][]*int64
		for i, v := range c.vals { // a batch a value, a null between
			batches = append(batches, []*int64{ptr(v)})
			if i%2 == 0 {
				batches = append(batches, []*int64{nil})
			}
		}
		var chunks []arrow.Array
		for _, b := range batches {
			chunks = append(chunks, nativeDecimalArray(mem, c.dt, b))
		}
		ch := arrow.NewChunked(c.dt, chunks)
		got, err := e.AggregateChunked(ctx, ch, agg.Default|agg.Ordered)
		require.NoError(t, err, c.dt)
		want := oracleOfBatches(batches)
		require.Equal(t, c.want, want.sum.String(), "the test's own sum")
		checkNative(t, got, want, c.dt, fmt.Sprintf("%s %s", c.dt, c.want))
		ch.Release()
		for _, a := range chunks {
			a.Release()
		}
	}
}

// A native decimal32 or decimal64 column answers as the NarrowDecimalType
// column over the same bytes does (the v17 front end's decimal32 and
// decimal64): every aggregate, bit for bit.
func TestNativeNarrowDecimalsAsNarrowDecimalType(t *testing.T) {
	r, _ := seeded(t)
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := cpuEngine(t, mem, 2)
	for _, dt := range nativeDecimalTypes {
		p, s := precisionOf(dt)
		bits := int32(dt.(arrow.FixedWidthDataType).BitWidth())
		nt, err := arrow18.NewNarrowDecimalType(bits, p, s)
		require.NoError(t, err)
		native := nativeDecimalArray(mem, dt, concatBatches(nativeBatches(r, dt)))
		data := native.Data()
		storageData := array.NewData(nt.StorageType(), data.Len(), data.Buffers(), nil, data.NullN(), data.Offset())
		storage := array.MakeFromData(storageData)
		storageData.Release()
		ext := array.NewExtensionArrayWithStorage(nt, storage)
		storage.Release()

		got, err := e.AggregateArray(ctx, native, agg.All)
		require.NoError(t, err, dt)
		want, err := e.AggregateArray(ctx, ext, agg.All)
		require.NoError(t, err, nt)
		require.Equal(t, want.Count, got.Count, dt)
		require.Equal(t, want.NullCount, got.NullCount, dt)
		for _, c := range []struct {
			what      string
			got, want scalar.Scalar
		}{{"sum", got.Sum, want.Sum}, {"mean", got.Mean, want.Mean}, {"min", got.Min, want.Min}, {"max", got.Max, want.Max},
			{"first", got.First, want.First}, {"last", got.Last, want.Last}, {"arg_min", got.ArgMin, want.ArgMin},
			{"arg_max", got.ArgMax, want.ArgMax}, {"variance", got.Variance, want.Variance}, {"stddev", got.Stddev, want.Stddev},
			{"approx_distinct", got.ApproxDistinct, want.ApproxDistinct}} {
			require.NotNil(t, c.got, "%s %s", dt, c.what)
			require.True(t, scalar.Equals(c.want, c.got), "%s %s: want %s got %s", dt, c.what, c.want, c.got)
		}
		ext.Release()
		native.Release()
	}
}

func concatBatches(batches [][]*int64) []*int64 {
	var all []*int64
	for _, b := range batches {
		all = append(all, b...)
	}
	return all
}

// A record batch of a decimal64 column, a dictionary of decimal32 values and
// a struct field of decimal32 (the leaves of the schema, the struct's nulls
// folded in): each aggregates exactly, by name.
func TestNativeNarrowDecimalsInARecord(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := cpuEngine(t, mem, 2)
	d32, d64 := &arrow.Decimal32Type{Precision: 9, Scale: 2}, &arrow.Decimal64Type{Precision: 18, Scale: 0}
	const top9 = 999_999_999

	plain := []*int64{ptr(-5), nil, ptr(999_999_999_999_999_999), ptr(12)}
	col64 := nativeDecimalArray(mem, d64, plain)
	defer col64.Release()

	dictValues := nativeDecimalArray(mem, d32, []*int64{ptr(top9), ptr(-top9), ptr(250)})
	defer dictValues.Release()
	ib := array.NewInt8Builder(mem)
	ib.AppendValues([]int8{2, 0, 0, 1}, []bool{true, true, true, false})
	indices := ib.NewArray()
	ib.Release()
	defer indices.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: d32}
	dict := array.NewDictionaryArray(dt, indices, dictValues)
	defer dict.Release()

	inner := nativeDecimalArray(mem, d32, []*int64{ptr(1), ptr(-top9), ptr(7), ptr(3)})
	defer inner.Release()
	st := arrow.StructOf(arrow.Field{Name: "x", Type: d32, Nullable: true})
	sdata := array.NewData(st, 4, []*memory.Buffer{memory.NewBufferBytes([]byte{0b1011})}, []arrow.ArrayData{inner.Data()}, 1, 0)
	strct := array.NewStructData(sdata)
	sdata.Release()
	defer strct.Release()

	schema := arrow.NewSchema([]arrow.Field{
		{Name: "d64", Type: d64, Nullable: true},
		{Name: "dict", Type: dt, Nullable: true},
		{Name: "s", Type: st, Nullable: true},
	}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col64, dict, strct}, 4)
	defer rec.Release()

	res, err := e.AggregateRecord(ctx, rec, Request{Aggs: agg.Default | agg.Ordered})
	require.NoError(t, err)
	require.Len(t, res, 3)
	require.Equal(t, []string{"d64", "dict", "s.x"}, []string{res[0].Name, res[1].Name, res[2].Name})
	checkNative(t, res[0], oracleOfBatches([][]*int64{plain}), d64, "d64")
	// The dictionary's values, as its indices select them.
	checkNative(t, res[1], oracleOfBatches([][]*int64{{ptr(250), ptr(top9), ptr(top9), nil}}), dt, "dict")
	// Row 2 of the struct is null: its field's value there is not counted.
	checkNative(t, res[2], oracleOfBatches([][]*int64{{ptr(1), ptr(-top9), nil, ptr(3)}}), d32, "s.x")
}
