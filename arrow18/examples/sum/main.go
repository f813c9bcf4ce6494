// Command sum is a program of Arrow Go v18 alone: it aggregates a v18
// record batch with arrowagg (on the GPU when the cuda build has one, else
// on the CPU) and calls the aggregates of Arrow Go v18's compute registry.
// Its dependencies include no Arrow Go v17 package (its test lists them).
//
//	go run github.com/arrowagg/arrowagg/arrow18/examples/sum
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/arrowagg/arrowagg/arrow18/gpuagg"
	"github.com/arrowagg/arrowagg/arrow18/gpuagg/aggcompute"
)

func main() {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues([]float64{1e16, 1, -1e16, 2.5}, nil)
	b.AppendNull()
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()

	eng, err := gpuagg.New() // DeviceAuto: the GPU where there is one and it pays
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	res, err := eng.AggregateRecord(ctx, rec, gpuagg.Request{})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res {
		fmt.Println(r.Name, "count", r.Count, "sum", r.Sum, "mean", r.Mean) // price count 4 sum 3.5 mean 0.875
	}

	if err := aggcompute.Register(compute.GetFunctionRegistry(), eng); err != nil {
		log.Fatal(err)
	}
	out, err := compute.CallFunction(ctx, "min_max", nil, compute.NewDatum(col))
	if err != nil {
		log.Fatal(err)
	}
	defer out.Release()
	fmt.Println("min_max", out.(*compute.ScalarDatum).Value)
}
