package engine

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

func narrowDecimal(t testing.TB, bits, precision, scale int32) *arrow17.NarrowDecimalType {
	dt, err := arrow17.NewNarrowDecimalType(bits, precision, scale)
	require.NoError(t, err)
	return dt
}

// narrowTypes are the types the CPU backend folds as another kind of their
// family (float16, fixed_size_binary, decimal32, decimal64), plain and as
// dictionaries' values.
func narrowTypes(t testing.TB) []arrow.DataType {
	d32, d64 := narrowDecimal(t, 32, 9, 2), narrowDecimal(t, 64, 18, 3)
	return []arrow.DataType{
		arrow.FixedWidthTypes.Float16, &arrow.FixedSizeBinaryType{ByteWidth: 5}, &arrow.FixedSizeBinaryType{ByteWidth: 1},
		d32, d64,
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.FixedWidthTypes.Float16},
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint8, ValueType: &arrow.FixedSizeBinaryType{ByteWidth: 3}},
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: d64},
	}
}

// TestNarrowKindsAgainstOracle aggregates random float16, fixed_size_binary,
// decimal32 and decimal64 columns (dictionary-encoded too), of sizes up to
// more than a morsel, sliced, whole and in chunks, and compares every
// aggregate with the exact oracle: count and null_count; min and max (NaN
// skipped, -0 below +0; bytewise; decimals exact); the float16 sum within
// the compensated sum's bound of the exact (math/big) sum, decimal sums
// exact (math/big) and their mean the exact quotient rounded once; first,
// last, arg_min and arg_max; variance and stddev (exact for decimals) and
// approx_distinct.
func TestNarrowKindsAgainstOracle(t *testing.T) {
	r, seed := seeded(t)
	ctx := context.Background()
	for _, dt := range narrowTypes(t) {
		for _, n := range []int{0, 1, 7, 64, 65, 257, 70001} {
			for _, nf := range nullDensities {
				if n > 1000 && nf != 0.5 { // more than a morsel: once
					continue
				}
				name := fmt.Sprintf("%s/n=%d/nulls=%g seed=%d", dt, n, nf, seed)
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				off := r.IntN(71)
				parent := randArray(mem, r, dt, off+n+r.IntN(3), nf)
				arr := array.NewSlice(parent, int64(off), int64(off+n))
				e := cpuEngine(t, mem, 1+r.IntN(4))

				want := oracleOrdered(arr)
				got, err := e.AggregateArray(ctx, arr, agg.Default|agg.Ordered)
				require.NoError(t, err, name)
				checkResult(t, got, want, dt, name)
				checkOrdered(t, got, want, name)

				chunks := randomChunks(r, parent, off, n)
				ch := arrow.NewChunked(dt, chunks)
				gotc, err := e.AggregateChunked(ctx, ch, agg.Default|agg.Ordered)
				require.NoError(t, err, name)
				checkResult(t, gotc, want, dt, name+" chunked")
				checkOrdered(t, gotc, oracleOrdered(chunks...), name+" chunked")

				var scale int32
				if d, ok := resultType(dt).(*arrow.Decimal128Type); ok {
					scale = d.Scale
				}
				st, err := e.AggregateChunked(ctx, ch, statsAggs)
				require.NoError(t, err, name)
				checkStats(t, st, oracleStats(validValues(arr), scale), dt, name+" stats")

				ch.Release()
				for _, c := range chunks {
					c.Release()
				}
				arr.Release()
				parent.Release()
				mem.AssertSize(t, 0)
			}
		}
	}
}

// A float16 column aggregates as the float64 column of its values does,
// bit for bit (sum, mean, min, max, variance: the same lanes), the NaN and
// signed zeros of the other floats included; a fixed_size_binary column as
// the binary column of its values; a decimal32 or decimal64 column as the
// decimal128 column of its values, of the same precision and scale.
func TestNarrowKindsAsTheirWideKinds(t *testing.T) {
	r, seed := seeded(t)
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := cpuEngine(t, mem, 3)
	const aggs = agg.All
	for _, dt := range narrowTypes(t)[:5] {
		for _, n := range []int{1, 100, 70001} {
			for _, nf := range []float64{0, 0.3} {
				name := fmt.Sprintf("%s/n=%d/nulls=%g seed=%d", dt, n, nf, seed)
				arr := randArray(mem, r, dt, n, nf)
				wide := widened(t, mem, arr)
				got, err := e.AggregateArray(ctx, arr, aggs)
				require.NoError(t, err, name)
				want, err := e.AggregateArray(ctx, wide, aggs)
				require.NoError(t, err, name)
				require.Equal(t, want.Count, got.Count, name)
				require.Equal(t, want.NullCount, got.NullCount, name)
				for _, c := range []struct {
					what      string
					got, want scalar.Scalar
				}{{"sum", got.Sum, want.Sum}, {"mean", got.Mean, want.Mean}, {"min", got.Min, want.Min}, {"max", got.Max, want.Max},
					{"first", got.First, want.First}, {"last", got.Last, want.Last}, {"arg_min", got.ArgMin, want.ArgMin},
					{"arg_max", got.ArgMax, want.ArgMax}, {"variance", got.Variance, want.Variance}, {"stddev", got.Stddev, want.Stddev}} {
					gv, wv := scalarValue(c.got), scalarValue(c.want)
					if f, ok := wv.(float64); ok {
						require.IsType(t, 0.0, gv, "%s %s", name, c.what)
						require.Equal(t, math.Float64bits(f), math.Float64bits(gv.(float64)), "%s %s: want %v got %v", name, c.what, f, gv)
						continue
					}
					require.Equal(t, fmt.Sprint(wv), fmt.Sprint(gv), "%s %s", name, c.what)
				}
				require.Equal(t, scalarValue(want.ApproxDistinct), scalarValue(got.ApproxDistinct), name)
				arr.Release()
				wide.Release()
			}
		}
	}
}

// widened is arr (float16, fixed_size_binary, decimal32 or decimal64) as
// float64, binary or decimal128 of the same values, built through the
// oracle's accessors.
func widened(t *testing.T, mem memory.Allocator, arr arrow.Array) arrow.Array {
	var b array.Builder
	switch dt := arr.DataType().(type) {
	case *arrow.Float16Type:
		b = array.NewFloat64Builder(mem)
	case *arrow.FixedSizeBinaryType:
		b = array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	case *arrow17.NarrowDecimalType:
		b = array.NewDecimal128Builder(mem, dt.Decimal128())
	default:
		t.Fatalf("no wide type for %s", dt)
	}
	defer b.Release()
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.Float64Builder:
			b.Append(valueOf(arr, i).(float64))
		case *array.BinaryBuilder:
			b.Append([]byte(valueOf(arr, i).(string)))
		case *array.Decimal128Builder:
			b.Append(decimal128.FromBigInt(valueOf(arr, i).(*big.Int)))
		}
	}
	return b.NewArray()
}
