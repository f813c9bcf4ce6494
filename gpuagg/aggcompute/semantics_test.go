package aggcompute_test

import (
	"context"
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/compute"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/gpuagg/aggcompute"
)

func int64s(t *testing.T, mem memory.Allocator, vals []int64, valid []bool) arrow.Array {
	t.Helper()
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues(vals, valid)
	return b.NewArray()
}

// TestZeroOptionsAreArrowDefaults: the zero ScalarAggregateOptions, a nil
// one and none at all all mean Arrow C++'s defaults, skip_nulls = true and
// min_count = 1.
func TestZeroOptionsAreArrowDefaults(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	arr := int64s(t, mem, []int64{1, 0, 3}, []bool{true, false, true})
	defer arr.Release()
	var nilOpts *aggcompute.ScalarAggregateOptions
	for _, opts := range []compute.FunctionOptions{nil, nilOpts, aggcompute.ScalarAggregateOptions{}, &aggcompute.ScalarAggregateOptions{},
		aggcompute.DefaultScalarAggregateOptions()} {
		require.Equal(t, int64(4), call(t, ctx, "sum", opts, arr).(*scalar.Int64).Value, "%#v", opts)
		require.Equal(t, 2.0, call(t, ctx, "mean", opts, arr).(*scalar.Float64).Value, "%#v", opts)
	}
	empty := int64s(t, mem, nil, nil)
	defer empty.Release()
	require.False(t, call(t, ctx, "sum", aggcompute.ScalarAggregateOptions{}, empty).IsValid(), "min_count 1 by default")

	keep := aggcompute.ScalarAggregateOptions{KeepNulls: true}
	require.False(t, call(t, ctx, "sum", keep, arr).IsValid())
	require.False(t, call(t, ctx, "mean", keep, arr).IsValid())
	require.False(t, call(t, ctx, "sum", aggcompute.ScalarAggregateOptions{MinCount: new(uint32(3))}, arr).IsValid())
	require.Equal(t, int64(4), call(t, ctx, "sum", aggcompute.ScalarAggregateOptions{MinCount: new(uint32(2))}, arr).(*scalar.Int64).Value)
}

// minCountZero are the options skip_nulls = true, min_count = 0.
var minCountZero = aggcompute.ScalarAggregateOptions{MinCount: new(uint32)}

// TestMinCountZero: with min_count = 0 the sum of an empty or all-null input
// is 0 of the sum's type and the mean of floats and integers NaN, as in
// Arrow C++; the mean of decimals, min, max, first and last stay null.
func TestMinCountZero(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)

	empty := int64s(t, mem, nil, nil)
	defer empty.Release()
	allNull := int64s(t, mem, []int64{7, 8}, []bool{false, false})
	defer allNull.Release()
	fb := array.NewFloat64Builder(mem)
	fb.AppendNulls(3)
	floats := fb.NewArray()
	fb.Release()
	defer floats.Release()
	bb := array.NewBooleanBuilder(mem)
	bb.AppendNull()
	bools := bb.NewArray()
	bb.Release()
	defer bools.Release()
	dt := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	db := array.NewDecimal128Builder(mem, dt)
	db.AppendNull()
	decs := db.NewArray()
	db.Release()
	defer decs.Release()

	for _, arr := range []arrow.Array{empty, allNull} {
		s := call(t, ctx, "sum", minCountZero, arr)
		require.True(t, s.IsValid(), "sum of %d values", arr.Len())
		require.Equal(t, int64(0), s.(*scalar.Int64).Value)
		m := call(t, ctx, "mean", minCountZero, arr).(*scalar.Float64)
		require.True(t, m.IsValid())
		require.True(t, math.IsNaN(m.Value), "mean %v", m.Value)
		mm := call(t, ctx, "min_max", minCountZero, arr).(*scalar.Struct)
		require.False(t, mm.Value[0].IsValid())
		require.False(t, mm.Value[1].IsValid())
		require.False(t, call(t, ctx, "first", minCountZero, arr).IsValid())
	}
	require.Equal(t, 0.0, call(t, ctx, "sum", minCountZero, floats).(*scalar.Float64).Value)
	require.True(t, math.IsNaN(call(t, ctx, "mean", minCountZero, floats).(*scalar.Float64).Value))
	require.Equal(t, uint64(0), call(t, ctx, "sum", minCountZero, bools).(*scalar.Uint64).Value)
	ds := call(t, ctx, "sum", minCountZero, decs).(*scalar.Decimal128)
	require.True(t, ds.IsValid())
	require.Equal(t, decimal128.Num{}, ds.Value)
	require.Equal(t, int32(2), ds.Type.(*arrow.Decimal128Type).Scale)
	require.False(t, call(t, ctx, "mean", minCountZero, decs).IsValid(), "Arrow C++: the mean of no decimal is null")

	// skip_nulls = false still makes a null of any null.
	keep := aggcompute.ScalarAggregateOptions{KeepNulls: true, MinCount: new(uint32)}
	require.False(t, call(t, ctx, "sum", keep, allNull).IsValid())
	require.Equal(t, int64(0), call(t, ctx, "sum", keep, empty).(*scalar.Int64).Value)
}

// TestMinAndMax: min and max are functions of their own, of the input's type.
func TestMinAndMax(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	b := array.NewInt16Builder(mem)
	b.AppendValues([]int16{4, -9, 0, 12}, []bool{true, true, false, true})
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	require.Equal(t, int16(-9), call(t, ctx, "min", nil, arr).(*scalar.Int16).Value)
	require.Equal(t, int16(12), call(t, ctx, "max", nil, arr).(*scalar.Int16).Value)
	require.False(t, call(t, ctx, "max", aggcompute.ScalarAggregateOptions{KeepNulls: true}, arr).IsValid())
	require.False(t, call(t, ctx, "min", aggcompute.ScalarAggregateOptions{MinCount: new(uint32(4))}, arr).IsValid())
}

// TestDecimalMean: the mean of decimal128(p, s) is a decimal128(p, s), the
// exact quotient rounded half away from zero, as in Arrow C++.
func TestDecimalMean(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	dt := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	for _, tc := range []struct {
		unscaled []int64
		want     int64
	}{
		{[]int64{100, 200, 201}, 167},                 // 5.01 / 3 = 1.67
		{[]int64{1, 2}, 2},                            // 0.015: half away from zero
		{[]int64{-1, -2}, -2},                         // -0.015
		{[]int64{1, 1, 2}, 1},                         // 0.01333...
		{[]int64{-1, -1, -2}, -1},                     // -0.01333...
		{[]int64{5, -5, 7}, 2},                        // 0.02333...
		{[]int64{9999999999, 9999999999}, 9999999999}, // the largest value of the precision
	} {
		b := array.NewDecimal128Builder(mem, dt)
		for _, v := range tc.unscaled {
			b.Append(decimal128.FromI64(v))
		}
		b.AppendNull()
		arr := b.NewArray()
		b.Release()
		m, ok := call(t, ctx, "mean", nil, arr).(*scalar.Decimal128)
		arr.Release()
		require.True(t, ok, "mean of %v", tc.unscaled)
		require.True(t, arrow.TypeEqual(dt, m.Type), "type %s", m.Type)
		require.Equal(t, decimal128.FromI64(tc.want), m.Value, "mean of %v", tc.unscaled)
	}
}

// TestUnsupportedTypesWrapArrowErrors: a type no aggregate applies to, or one
// arrowagg does not read, is an error that errors.Is finds as
// arrow.ErrNotImplemented.
func TestUnsupportedTypesWrapArrowErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
	lb.Append(true)
	lb.ValueBuilder().(*array.Int32Builder).Append(1)
	list := lb.NewArray()
	lb.Release()
	defer list.Release()
	sb := array.NewStringBuilder(mem)
	sb.Append("a")
	strs := sb.NewArray()
	sb.Release()
	defer strs.Release()
	two := int64s(t, mem, []int64{1}, nil)
	defer two.Release()
	st, err := array.NewStructArray([]arrow.Array{two, strs}, []string{"a", "b"})
	require.NoError(t, err)
	defer st.Release()
	nulls := array.NewNull(3)
	defer nulls.Release()

	for _, tc := range []struct {
		fn  string
		arr arrow.Array
	}{
		{"sum", list}, {"min", list}, {"mean", list}, {"first", list},
		{"sum", st}, {"min_max", st},
		{"sum", strs}, {"mean", strs},
		{"min", nulls},
	} {
		in := compute.NewDatum(tc.arr)
		_, err := compute.CallFunction(ctx, tc.fn, nil, in)
		in.Release()
		require.ErrorIs(t, err, arrow.ErrNotImplemented, "%s of %s", tc.fn, tc.arr.DataType())
	}
}

// TestCountEveryType: count accepts every type, the null type, lists and
// structs included, counting the input's own nulls as Arrow C++ does.
func TestCountEveryType(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	nulls := array.NewNull(5)
	defer nulls.Release()
	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
	lb.Append(true)
	lb.ValueBuilder().(*array.Int32Builder).Append(1)
	lb.AppendNull()
	lb.Append(true)
	list := lb.NewArray()
	lb.Release()
	defer list.Release()
	a := int64s(t, mem, []int64{1, 2, 3, 4}, []bool{false, false, true, true})
	defer a.Release()
	b := int64s(t, mem, []int64{1, 2, 3, 4}, nil)
	defer b.Release()
	valid := memory.NewBufferBytes([]byte{0b1011})
	st, err := array.NewStructArrayWithNulls([]arrow.Array{a, b}, []string{"a", "b"}, valid, 1, 0)
	require.NoError(t, err)
	defer st.Release()
	one, err := array.NewStructArrayWithNulls([]arrow.Array{a}, []string{"a"}, valid, 1, 0)
	require.NoError(t, err)
	defer one.Release()

	count := func(arg any, mode aggcompute.CountMode) int64 {
		return call(t, ctx, "count", aggcompute.CountOptions{Mode: mode}, arg).(*scalar.Int64).Value
	}
	for _, tc := range []struct {
		arg                any
		valid, null, total int64
	}{
		{nulls, 0, 5, 5},
		{list, 2, 1, 3},
		{st, 3, 1, 4},
		{one, 3, 1, 4}, // the struct's nulls, not its leaf's
		{arrow.NewChunked(arrow.Null, []arrow.Array{nulls, nulls}), 0, 10, 10},
		{scalar.MakeNullScalar(arrow.Null), 0, 1, 1},
		{scalar.NewInt64Scalar(5), 1, 0, 1},
	} {
		require.Equal(t, tc.valid, count(tc.arg, aggcompute.CountOnlyValid), "%v", tc.arg)
		require.Equal(t, tc.null, count(tc.arg, aggcompute.CountOnlyNull), "%v", tc.arg)
		require.Equal(t, tc.total, count(tc.arg, aggcompute.CountAll), "%v", tc.arg)
		if ch, ok := tc.arg.(*arrow.Chunked); ok {
			ch.Release()
		}
	}
}

// TestRegisterIsAtomic: Register adds every function or none, and a second
// Register into the same registry is one error naming the functions there.
func TestRegisterIsAtomic(t *testing.T) {
	reg := compute.NewRegistry()
	taken := compute.NewMetaFunction("mean", compute.Unary(), compute.FunctionDoc{},
		func(context.Context, compute.FunctionOptions, ...compute.Datum) (compute.Datum, error) {
			return nil, nil
		})
	require.True(t, reg.AddFunction(taken, false))
	err := aggcompute.Register(reg, nil)
	require.ErrorIs(t, err, aggcompute.ErrRegistered)
	require.ErrorContains(t, err, `"mean"`)
	require.Equal(t, []string{"mean"}, reg.GetFunctionNames(), "nothing added")

	reg = compute.NewRegistry()
	require.NoError(t, aggcompute.Register(reg, nil))
	n := reg.NumFunctions()
	err = aggcompute.Register(reg, nil)
	require.ErrorIs(t, err, aggcompute.ErrRegistered)
	require.Equal(t, n, reg.NumFunctions())
}
