package gpuagg_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	arrow17 "github.com/apache/arrow/go/v17/arrow"
	array17 "github.com/apache/arrow/go/v17/arrow/array"
	ipc17 "github.com/apache/arrow/go/v17/arrow/ipc"
	memory17 "github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/arrow18/gpuagg"
	"github.com/arrowagg/arrowagg/arrow18/gpuagg/aggcompute"
	engine17 "github.com/arrowagg/arrowagg/engine"
)

// Arrow Go v18's compute registry has no aggregate functions: aggcompute
// registers Arrow C++'s, computed by the engine, and v18 programs call them
// by name, on arrays and on chunked arrays.
func Example_computeRegistry() {
	if err := aggcompute.Register(compute.GetFunctionRegistry(), nil); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues([]int64{3, 1, 4, 1, 5}, []bool{true, true, false, true, true})
	arr := b.NewArray()
	defer arr.Release()
	sum, err := compute.CallFunction(ctx, "sum", nil, compute.NewDatum(arr))
	if err != nil {
		log.Fatal(err)
	}
	defer sum.Release()
	fmt.Println("sum:", sum.(*compute.ScalarDatum).Value)

	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	defer fb.Release()
	fb.AppendValues([]float64{2.5, -1}, nil)
	c1 := fb.NewArray()
	defer c1.Release()
	fb.AppendValues([]float64{7, 0.5}, nil)
	c2 := fb.NewArray()
	defer c2.Release()
	chunked := arrow.NewChunked(arrow.PrimitiveTypes.Float64, []arrow.Array{c1, c2})
	defer chunked.Release()
	mm, err := compute.CallFunction(ctx, "min_max", nil, compute.NewDatum(chunked))
	if err != nil {
		log.Fatal(err)
	}
	defer mm.Release()
	fmt.Println("min_max:", mm.(*compute.ScalarDatum).Value)
	// Output:
	// sum: 10
	// min_max: {min:float64 = -1, max:float64 = 7}
}

// Partial states travel as an Arrow record (StatesRecord), whichever front
// end made them: states of rows a v17 program aggregated, sent as an Arrow
// IPC stream, merge with those of a v18 program's rows into one result.
func Example_mergeV17States() {
	ctx := context.Background()

	// A v17 program aggregates the first rows and sends its states.
	b17 := array17.NewInt64Builder(memory17.DefaultAllocator)
	b17.AppendValues([]int64{10, 20, 30}, nil)
	col17 := b17.NewArray()
	b17.Release()
	schema17 := arrow17.NewSchema([]arrow17.Field{{Name: "x", Type: arrow17.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rec17 := array17.NewRecord(schema17, []arrow17.Array{col17}, 3)
	col17.Release()
	eng17, err := engine17.New(engine17.WithDevice(engine17.DeviceCPU))
	if err != nil {
		log.Fatal(err)
	}
	acc17, err := eng17.NewAccumulator(schema17, engine17.Request{})
	if err != nil {
		log.Fatal(err)
	}
	if err := acc17.Add(ctx, rec17); err != nil {
		log.Fatal(err)
	}
	rec17.Release()
	states17, err := acc17.StatesRecord(memory17.DefaultAllocator)
	if err != nil {
		log.Fatal(err)
	}
	var wire bytes.Buffer
	w := ipc17.NewWriter(&wire, ipc17.WithSchema(states17.Schema()))
	if err := w.Write(states17); err != nil {
		log.Fatal(err)
	}
	w.Close()
	states17.Release()

	// A v18 program aggregates the next rows, then merges what it received.
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{-5, 0}, []bool{true, false})
	col := b.NewArray()
	b.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, 2)
	col.Release()
	defer rec.Release()
	eng, err := gpuagg.New(gpuagg.WithDevice(gpuagg.DeviceCPU))
	if err != nil {
		log.Fatal(err)
	}
	acc, err := eng.NewAccumulator(schema, gpuagg.Request{})
	if err != nil {
		log.Fatal(err)
	}
	r, err := ipc.NewReader(&wire)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Release()
	for r.Next() {
		if err := acc.MergeRecord(r.RecordBatch()); err != nil {
			log.Fatal(err)
		}
	}
	if err := acc.Add(ctx, rec); err != nil { // rows 3 and 4, after the v17 ones
		log.Fatal(err)
	}
	res := acc.Results()[0]
	fmt.Println(res.Name, "count", res.Count, "nulls", res.NullCount, "sum", res.Sum, "min", res.Min, "max", res.Max, "mean", res.Mean)
	// Output: x count 4 nulls 1 sum 55 min -5 max 30 mean 13.75
}
