package aggcompute_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/compute"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/gpuagg/aggcompute"
)

// Register the aggregates in Arrow Go's compute registry, then call them by
// name like any other compute function.
func Example() {
	if err := aggcompute.Register(compute.GetFunctionRegistry(), nil); err != nil {
		fmt.Println(err)
		return
	}
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	b.AppendValues([]float64{1e16, 1, -1e16, 2.5}, nil)
	b.AppendNull()
	arr := b.NewArray()
	b.Release()
	defer arr.Release()

	in := compute.NewDatum(arr)
	defer in.Release()
	ctx := context.Background()
	for _, fn := range []string{"sum", "min", "max", "min_max", "count", "mean"} {
		out, err := compute.CallFunction(ctx, fn, nil, in)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s\n", fn, out.(*compute.ScalarDatum).Value)
		out.Release()
	}
	// Output:
	// sum: 3.5
	// min: -1e+16
	// max: 1e+16
	// min_max: {min:float64 = -1e+16, max:float64 = 1e+16}
	// count: 4
	// mean: 0.875
}

// Register adds its fourteen functions to a registry, or none of them: a
// second Register into the same registry is an error.
func ExampleRegister() {
	reg := compute.NewRegistry()
	if err := aggcompute.Register(reg, nil); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(reg.GetFunctionNames())
	err := aggcompute.Register(reg, nil)
	fmt.Println(errors.Is(err, aggcompute.ErrRegistered), reg.NumFunctions())
	// Output:
	// [all any arg_max arg_min count count_all first first_last last max mean min min_max sum]
	// true 14
}

// The zero ScalarAggregateOptions are Arrow's defaults: nulls skipped, null
// without a valid value. KeepNulls makes a null of any null; MinCount 0 gives
// a result without valid values, 0 for a sum and NaN for a mean.
func ExampleScalarAggregateOptions() {
	reg := compute.NewRegistry()
	if err := aggcompute.Register(reg, nil); err != nil {
		fmt.Println(err)
		return
	}
	ectx := compute.DefaultExecCtx()
	ectx.Registry = reg
	ctx := compute.SetExecCtx(context.Background(), ectx)

	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues([]int64{1, 0, 3}, []bool{true, false, true})
	some := b.NewArray() // [1, null, 3]
	defer some.Release()
	b.AppendNulls(2)
	none := b.NewArray() // [null, null]
	defer none.Release()

	show := func(what, fn string, opts compute.FunctionOptions, arr arrow.Array) {
		in := compute.NewDatum(arr)
		defer in.Release()
		out, err := compute.CallFunction(ctx, fn, opts, in)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer out.Release()
		v := out.(*compute.ScalarDatum).Value
		fmt.Printf("%-19s %s (%s)\n", what+":", v, v.DataType())
	}
	show("sum, zero options", "sum", aggcompute.ScalarAggregateOptions{}, some)
	show("sum, KeepNulls", "sum", aggcompute.ScalarAggregateOptions{KeepNulls: true}, some)
	show("sum of nulls", "sum", nil, none)
	show("sum of nulls, 0", "sum", aggcompute.ScalarAggregateOptions{MinCount: new(uint32)}, none)
	show("mean of nulls, 0", "mean", aggcompute.ScalarAggregateOptions{MinCount: new(uint32)}, none)

	// The mean of a decimal is a decimal of its type, rounded half away
	// from zero.
	db := array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 5, Scale: 2})
	defer db.Release()
	db.AppendValues([]decimal128.Num{decimal128.FromI64(100), decimal128.FromI64(125)}, nil) // 1.00, 1.25
	decs := db.NewArray()
	defer decs.Release()
	show("mean of 1.00, 1.25", "mean", nil, decs)
	// Output:
	// sum, zero options:  4 (int64)
	// sum, KeepNulls:     null (int64)
	// sum of nulls:       null (int64)
	// sum of nulls, 0:    0 (int64)
	// mean of nulls, 0:   NaN (float64)
	// mean of 1.00, 1.25: 1.13 (decimal(5, 2))
}

// any and all of booleans skip nulls by default; with KeepNulls they follow
// Kleene logic: a true decides any and a false all, otherwise a null makes
// them null. Without MinCount valid values (1 by default) they are null;
// with MinCount 0, any of nothing is false and all of nothing true.
// count_all counts the rows, nulls included.
func Example_anyAll() {
	reg := compute.NewRegistry()
	if err := aggcompute.Register(reg, nil); err != nil {
		fmt.Println(err)
		return
	}
	ectx := compute.DefaultExecCtx()
	ectx.Registry = reg
	ctx := compute.SetExecCtx(context.Background(), ectx)

	b := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues([]bool{true, false}, []bool{true, false})
	trueNull := b.NewArray() // [true, null]
	defer trueNull.Release()
	b.AppendValues([]bool{false, false}, []bool{true, false})
	falseNull := b.NewArray() // [false, null]
	defer falseNull.Release()
	empty := b.NewArray() // []
	defer empty.Release()

	keep := aggcompute.ScalarAggregateOptions{KeepNulls: true}
	none := aggcompute.ScalarAggregateOptions{MinCount: new(uint32)}
	for _, c := range []struct {
		what, fn string
		opts     compute.FunctionOptions
		arr      arrow.Array
	}{
		{"any [false, null]", "any", nil, falseNull},
		{"any [false, null], KeepNulls", "any", keep, falseNull},
		{"any [true, null], KeepNulls", "any", keep, trueNull},
		{"all [true, null]", "all", nil, trueNull},
		{"all [true, null], KeepNulls", "all", keep, trueNull},
		{"all [false, null], KeepNulls", "all", keep, falseNull},
		{"all []", "all", nil, empty},
		{"all [], MinCount 0", "all", none, empty},
		{"count_all [true, null]", "count_all", nil, trueNull},
	} {
		in := compute.NewDatum(c.arr)
		out, err := compute.CallFunction(ctx, c.fn, c.opts, in)
		in.Release()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-30s %s\n", c.what+":", out.(*compute.ScalarDatum).Value)
		out.Release()
	}
	// Output:
	// any [false, null]:             false
	// any [false, null], KeepNulls:  null
	// any [true, null], KeepNulls:   true
	// all [true, null]:              true
	// all [true, null], KeepNulls:   null
	// all [false, null], KeepNulls:  false
	// all []:                        null
	// all [], MinCount 0:            true
	// count_all [true, null]:        2
}
