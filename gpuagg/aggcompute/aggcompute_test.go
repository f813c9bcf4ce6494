package aggcompute_test

import (
	"context"
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/compute"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/gpuagg/aggcompute"
)

func registryCtx(t *testing.T) context.Context {
	t.Helper()
	reg := compute.NewRegistry()
	require.NoError(t, aggcompute.Register(reg, nil))
	ectx := compute.DefaultExecCtx()
	ectx.Registry = reg
	return compute.SetExecCtx(context.Background(), ectx)
}

func call(t *testing.T, ctx context.Context, fn string, opts compute.FunctionOptions, arg any) scalar.Scalar {
	t.Helper()
	in := compute.NewDatum(arg)
	defer in.Release()
	out, err := compute.CallFunction(ctx, fn, opts, in)
	require.NoError(t, err)
	defer out.Release()
	return out.(*compute.ScalarDatum).Value
}

func TestFunctions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)

	b := array.NewInt32Builder(mem)
	b.AppendValues([]int32{5, -2, 7, 0}, []bool{true, true, true, false})
	arr := b.NewArray()
	b.Release()
	defer arr.Release()

	require.Equal(t, int64(10), call(t, ctx, "sum", nil, arr).(*scalar.Int64).Value)
	require.False(t, call(t, ctx, "sum", aggcompute.ScalarAggregateOptions{KeepNulls: true}, arr).IsValid())
	require.False(t, call(t, ctx, "sum", aggcompute.ScalarAggregateOptions{MinCount: new(uint32(4))}, arr).IsValid())

	mm := call(t, ctx, "min_max", nil, arr).(*scalar.Struct)
	require.Equal(t, int32(-2), mm.Value[0].(*scalar.Int32).Value)
	require.Equal(t, int32(7), mm.Value[1].(*scalar.Int32).Value)
	nullMM := call(t, ctx, "min_max", &aggcompute.ScalarAggregateOptions{MinCount: new(uint32(10))}, arr).(*scalar.Struct)
	require.False(t, nullMM.Value[0].IsValid())

	require.Equal(t, int64(3), call(t, ctx, "count", nil, arr).(*scalar.Int64).Value)
	require.Equal(t, int64(1), call(t, ctx, "count", aggcompute.CountOptions{Mode: aggcompute.CountOnlyNull}, arr).(*scalar.Int64).Value)
	require.Equal(t, int64(4), call(t, ctx, "count", aggcompute.CountOptions{Mode: aggcompute.CountAll}, arr).(*scalar.Int64).Value)
	require.InDelta(t, 10.0/3, call(t, ctx, "mean", nil, arr).(*scalar.Float64).Value, 0)

	// The ordered aggregates: rows in order, nulls skipped, ties to the
	// earliest row.
	require.Equal(t, int32(5), call(t, ctx, "first", nil, arr).(*scalar.Int32).Value)
	require.Equal(t, int32(7), call(t, ctx, "last", nil, arr).(*scalar.Int32).Value)
	fl := call(t, ctx, "first_last", nil, arr).(*scalar.Struct)
	require.Equal(t, int32(5), fl.Value[0].(*scalar.Int32).Value)
	require.Equal(t, int32(7), fl.Value[1].(*scalar.Int32).Value)
	require.Equal(t, int64(1), call(t, ctx, "arg_min", nil, arr).(*scalar.Int64).Value)
	require.Equal(t, int64(2), call(t, ctx, "arg_max", nil, arr).(*scalar.Int64).Value)

	// Chunked arrays and scalars.
	ch := arrow.NewChunked(arr.DataType(), []arrow.Array{arr, arr})
	defer ch.Release()
	require.Equal(t, int64(20), call(t, ctx, "sum", nil, ch).(*scalar.Int64).Value)
	require.Equal(t, int64(2), call(t, ctx, "arg_max", nil, ch).(*scalar.Int64).Value, "the first of two equal maxima")
	require.Equal(t, int32(7), call(t, ctx, "last", nil, ch).(*scalar.Int32).Value)
	require.Equal(t, 1.5, call(t, ctx, "sum", nil, scalar.NewFloat64Scalar(1.5)).(*scalar.Float64).Value)

	// Strings have min_max but no sum.
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"pear", "apple", "zucchini"}, nil)
	sarr := sb.NewArray()
	sb.Release()
	defer sarr.Release()
	smm := call(t, ctx, "min_max", nil, sarr).(*scalar.Struct)
	require.Equal(t, "apple", smm.Value[0].(*scalar.String).String())
	in := compute.NewDatum(sarr)
	defer in.Release()
	_, err := compute.CallFunction(ctx, "sum", nil, in)
	require.ErrorIs(t, err, arrow.ErrNotImplemented)
}

func TestSumOverflowIsAnError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	b := array.NewInt64Builder(mem)
	b.AppendValues([]int64{math.MaxInt64, 1}, nil)
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	in := compute.NewDatum(arr)
	defer in.Release()
	_, err := compute.CallFunction(ctx, "sum", nil, in)
	require.ErrorIs(t, err, aggcompute.ErrOverflow)
	require.ErrorContains(t, err, "9223372036854775808")
	// A sum the options make null is null, overflowed or not.
	require.False(t, call(t, ctx, "sum", aggcompute.ScalarAggregateOptions{MinCount: new(uint32(3))}, arr).IsValid())
}

func TestRegisterTwiceFails(t *testing.T) {
	reg := compute.NewRegistry()
	require.NoError(t, aggcompute.Register(reg, nil))
	require.Error(t, aggcompute.Register(reg, nil))
}
