package aggcompute_test

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/compute"
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
	for _, fn := range []string{"sum", "min_max", "count", "mean"} {
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
	// min_max: {min:float64 = -1e+16, max:float64 = 1e+16}
	// count: 4
	// mean: 0.875
}
