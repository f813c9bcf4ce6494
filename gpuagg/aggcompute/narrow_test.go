package aggcompute_test

import (
	"encoding/binary"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/compute"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/gpuagg/aggcompute"
)

// The mean of a decimal32 column (arrow17.NarrowDecimalType) is, as for
// decimal128, the decimal of its precision and scale, the exact mean
// rounded half away from zero: decimal128(9, 2), Arrow Go having no
// decimal32 scalars.
func TestNarrowDecimalMean(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	dt, err := arrow17.NewNarrowDecimalType(32, 9, 2)
	require.NoError(t, err)
	for _, c := range []struct {
		vals []int32
		want int64 // the mean, in hundredths
	}{
		{[]int32{100, 201}, 151},    // 1.505 -> 1.51
		{[]int32{-100, -201}, -151}, // -1.505 -> -1.51
		{[]int32{1, 1, 2}, 1},       // 0.01333
		{[]int32{999_999_999, 999_999_999, 999_999_998}, 999_999_999}, // past int32 in the sum
	} {
		b := array.NewFixedSizeBinaryBuilder(mem, &arrow.FixedSizeBinaryType{ByteWidth: 4})
		for _, v := range c.vals {
			b.Append(binary.LittleEndian.AppendUint32(nil, uint32(v)))
		}
		b.AppendNull()
		storage := b.NewArray()
		b.Release()
		arr := array.NewExtensionArrayWithStorage(dt, storage)
		storage.Release()
		m := call(t, ctx, "mean", nil, arr)
		arr.Release()
		d, ok := m.(*scalar.Decimal128)
		require.True(t, ok, "%T", m)
		require.Equal(t, &arrow.Decimal128Type{Precision: 9, Scale: 2}, d.DataType())
		require.Equal(t, c.want, d.Value.BigInt().Int64(), "%v", c.vals)
	}
}

// A CountOptions mode that is none of the three is an error wrapping
// arrow.ErrInvalid, not a count of the valid values.
func TestCountUnknownMode(t *testing.T) {
	ctx := registryCtx(t)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{1, 2}, nil)
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	in := compute.NewDatum(arr)
	defer in.Release()
	_, err := compute.CallFunction(ctx, "count", aggcompute.CountOptions{Mode: aggcompute.CountAll + 1}, in)
	require.ErrorIs(t, err, arrow.ErrInvalid)
	out, err := compute.CallFunction(ctx, "count", aggcompute.CountOptions{Mode: aggcompute.CountAll}, in)
	require.NoError(t, err)
	defer out.Release()
	require.Equal(t, int64(2), out.(*compute.ScalarDatum).Value.(*scalar.Int64).Value)
}
