//go:build cuda

package gpuagg_test

import (
	"context"
	"fmt"
	"log"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/arrowagg/arrowagg/arrow18/gpuagg"
	_ "github.com/arrowagg/arrowagg/backend/cuda" // the CUDA backend (cuda build)
)

// A v18 record batch aggregated on the GPU (the cuda build, on a machine
// with an NVIDIA GPU): DeviceGPU puts every column the GPU handles there,
// and the plan says so.
func Example_gpu() {
	const n = 1 << 22
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range n {
		if i%10 == 9 {
			b.AppendNull()
		} else {
			b.Append(int64(i%1000) - 500)
		}
	}
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, n)
	defer rec.Release()

	eng, err := gpuagg.New(gpuagg.WithDevice(gpuagg.DeviceGPU))
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	acc, err := eng.NewAccumulator(schema, gpuagg.Request{})
	if err != nil {
		log.Fatal(err)
	}
	if err := acc.Add(context.Background(), rec); err != nil {
		log.Fatal(err)
	}
	r, plan := acc.Results()[0], acc.Plan()[0]
	fmt.Println(r.Name, "count", r.Count, "nulls", r.NullCount, "sum", r.Sum, "min", r.Min, "max", r.Max)
	fmt.Println("backend", plan.BackendName())
	// Output:
	// x count 3774874 nulls 419430 sum -3870164 min -500 max 498
	// backend gpu
}
