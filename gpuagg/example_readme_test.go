package gpuagg_test

import (
	"context"
	"fmt"
	"log"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/gpuagg"
)

// Example is the "Library" example of README.md: count, sum and max of an
// int64 column with a null, on the GPU when there is one, else on the CPU.
// Keep the two the same.
func Example() {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues([]int64{3, 1, 4, 1, 5}, []bool{true, true, false, true, true})
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()

	eng, err := gpuagg.New(gpuagg.WithDevice(gpuagg.DeviceAuto))
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	res, err := eng.AggregateRecord(context.Background(), rec, gpuagg.Request{Aggs: gpuagg.Sum | gpuagg.Max | gpuagg.Count})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res {
		fmt.Println(r.Name, r.Count, r.Sum, r.Max) // x 4 10 5
	}
	// Output: x 4 10 5
}
