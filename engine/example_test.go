package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/engine"
)

// AggregateArray takes one column: a struct array of one leaf is that leaf,
// the struct's nulls included; a struct array of several leaves is an error
// wrapping arrow.ErrNotImplemented; a type only counted (null, a union) gives
// count and null_count.
func ExampleEngine_AggregateArray() {
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU))
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()

	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues([]int64{3, 1, 4}, nil)
	x := b.NewArray()
	defer x.Release()
	r, err := eng.AggregateArray(ctx, x, agg.Sum|agg.Count)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("int64:", r.Count, r.Sum)

	// {x} with its second row null.
	one, err := array.NewStructArrayWithNulls([]arrow.Array{x}, []string{"x"}, memory.NewBufferBytes([]byte{0b101}), 1, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer one.Release()
	r, err = eng.AggregateArray(ctx, one, agg.Sum|agg.Count)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("struct of one leaf:", r.Count, r.Sum)

	two, err := array.NewStructArray([]arrow.Array{x, x}, []string{"x", "y"})
	if err != nil {
		log.Fatal(err)
	}
	defer two.Release()
	_, err = eng.AggregateArray(ctx, two, agg.Sum)
	fmt.Println("struct of two leaves:", errors.Is(err, arrow.ErrNotImplemented))

	// A column of a type only counted (null, lists, maps, ...): its count
	// and null_count, and no sum.
	nulls := array.NewNull(3)
	defer nulls.Release()
	r, err = eng.AggregateArray(ctx, nulls, agg.Sum|agg.Count|agg.NullCount)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("null type:", r.Count, r.NullCount, r.Sum)

	// A union: an element is null where the child value it selects is.
	u, _, err := array.FromJSON(memory.DefaultAllocator, arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int8, Nullable: true}},
		[]arrow.UnionTypeCode{0}), strings.NewReader(`[[0, 1], [0, null]]`))
	if err != nil {
		log.Fatal(err)
	}
	defer u.Release()
	r, err = eng.AggregateArray(ctx, u, agg.Count|agg.NullCount)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("union:", r.Count, r.NullCount)
	// Output:
	// int64: 3 8
	// struct of one leaf: 2 7
	// struct of two leaves: true
	// null type: 0 3 <nil>
	// union: 1 1
}
