package aggcompute_test

import (
	"math/big"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/stretchr/testify/require"
)

// sum and min_max of Arrow Go v18's native decimal32, through the compute
// registry, array and chunked array: the exact sum as decimal128(38,
// scale), past the 32-bit range, and min and max as decimal128 of the
// column's precision and scale (engine.Result says why decimal128).
func TestNativeDecimal32SumMinMax(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	dt := &arrow.Decimal32Type{Precision: 9, Scale: 2}
	const top = 999_999_999
	chunks := [][]int64{{top, -5, top}, {top, 250}, {-top}}
	var arrs []arrow.Array
	want := new(big.Int)
	for _, c := range chunks {
		b := array.NewDecimal32Builder(mem, dt)
		for _, v := range c {
			b.Append(decimal.Decimal32(v))
			want.Add(want, big.NewInt(v))
		}
		b.AppendNull()
		arrs = append(arrs, b.NewArray())
		b.Release()
	}
	ch := arrow.NewChunked(dt, arrs)
	defer ch.Release()
	for _, a := range arrs {
		defer a.Release()
	}
	require.Equal(t, "2000000243", want.String())

	sum := call(t, ctx, "sum", nil, ch).(*scalar.Decimal128)
	require.Equal(t, want.String(), sum.Value.BigInt().String())
	require.Equal(t, &arrow.Decimal128Type{Precision: 38, Scale: 2}, sum.DataType())

	mm := call(t, ctx, "min_max", nil, ch).(*scalar.Struct)
	min, max := mm.Value[0].(*scalar.Decimal128), mm.Value[1].(*scalar.Decimal128)
	require.Equal(t, int64(-top), min.Value.BigInt().Int64())
	require.Equal(t, int64(top), max.Value.BigInt().Int64())
	require.Equal(t, &arrow.Decimal128Type{Precision: 9, Scale: 2}, min.DataType())
	require.Equal(t, &arrow.Decimal128Type{Precision: 9, Scale: 2}, max.DataType())

	// One array: its sum, min and max.
	one := call(t, ctx, "sum", nil, arrs[0]).(*scalar.Decimal128)
	require.Equal(t, "1999999993", one.Value.BigInt().String())
	mm = call(t, ctx, "min_max", nil, arrs[0]).(*scalar.Struct)
	require.Equal(t, int64(-5), mm.Value[0].(*scalar.Decimal128).Value.BigInt().Int64())
	require.Equal(t, int64(top), mm.Value[1].(*scalar.Decimal128).Value.BigInt().Int64())
}

// The mean of Arrow Go v18's native decimal32 and decimal64 is the
// decimal128 of their precision and scale (no scalars of theirs), the exact
// mean rounded half away from zero, as for decimal128.
func TestNativeDecimalMean(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	d32 := &arrow.Decimal32Type{Precision: 9, Scale: 2}
	b := array.NewDecimal32Builder(mem, d32)
	b.AppendValues([]decimal.Decimal32{-100, -201}, nil)
	b.AppendNull()
	a32 := b.NewArray()
	b.Release()
	defer a32.Release()
	m := call(t, ctx, "mean", nil, a32).(*scalar.Decimal128)
	require.Equal(t, &arrow.Decimal128Type{Precision: 9, Scale: 2}, m.DataType())
	require.Equal(t, int64(-151), m.Value.BigInt().Int64()) // -1.505 -> -1.51

	d64 := &arrow.Decimal64Type{Precision: 18, Scale: 3}
	b64 := array.NewDecimal64Builder(mem, d64)
	b64.AppendValues([]decimal.Decimal64{999_999_999_999_999_999, 999_999_999_999_999_998}, nil)
	a64 := b64.NewArray()
	b64.Release()
	defer a64.Release()
	m = call(t, ctx, "mean", nil, a64).(*scalar.Decimal128)
	require.Equal(t, &arrow.Decimal128Type{Precision: 18, Scale: 3}, m.DataType())
	require.Equal(t, "999999999999999999", m.Value.BigInt().String()) // ...998.5 -> ...999
}
