package arrow17_test

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// Leaves flattens a schema into the columns a backend aggregates: struct
// fields become dotted leaves, a list or a union is a leaf whose nulls are
// counted, and a column with nothing to aggregate (an empty struct) is a
// leaf with Err set rather than a failure of the whole schema.
func ExampleLeaves() {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "pos", Type: arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float32},
			arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Float32},
		)},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String)},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "either", Type: arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int8}}, []arrow.UnionTypeCode{0})},
		{Name: "none", Type: arrow.StructOf()},
	}, nil)
	leaves := arrow17.Leaves(schema)
	for _, l := range leaves {
		if !l.Supported() {
			fmt.Printf("%-5s path %v: %v\n", l.Name, l.Path, l.Err)
			continue
		}
		fmt.Printf("%-5s path %v: kind %s (%s)\n", l.Name, l.Path, l.Kind, l.Kind.Family())
	}
	l, ok := arrow17.Find(leaves, "pos.y")
	fmt.Println("find pos.y:", ok, l.Path)
	// Output:
	// id    path [0]: kind int64 (signed)
	// pos.x path [1 0]: kind float32 (float)
	// pos.y path [1 1]: kind float32 (float)
	// tags  path [2]: kind opaque (counts)
	// name  path [3]: kind binary (bytes)
	// either path [4]: kind opaque (counts)
	// none  path [5]: column "none": empty struct has no leaf to aggregate
	// find pos.y: true [1 1]
}

// Extract gives the physical view of one leaf in one record batch: the
// values buffer with its element offset, and the validity bitmap, with the
// nulls of an enclosing struct folded in. Values reads the elements without
// a copy.
func ExampleExtract() {
	mem := memory.DefaultAllocator
	xb := array.NewInt32Builder(mem)
	defer xb.Release()
	xb.AppendValues([]int32{10, 20, 30, 40}, []bool{true, false, true, true}) // row 1: x is null
	x := xb.NewArray()
	defer x.Release()
	// row 2: the struct is null, though its field x holds 30
	valid := memory.NewBufferBytes([]byte{0b1011})
	pos, err := array.NewStructArrayWithNulls([]arrow.Array{x}, []string{"x"}, valid, 1, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pos.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "pos", Type: pos.DataType(), Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{pos}, int64(pos.Len()))
	defer rec.Release()

	leaf, _ := arrow17.Find(arrow17.Leaves(schema), "pos.x")
	var c arrow17.Column
	if err := arrow17.Extract(&c, rec, leaf, mem); err != nil {
		fmt.Println(err)
		return
	}
	defer c.Release()
	fmt.Println("kind:", c.Kind, "len:", c.Len)
	for i, x := range column.Values[int32](&c.View) {
		if c.Valid(i) {
			fmt.Printf("row %d: %d\n", i, x)
		} else {
			fmt.Printf("row %d: null (the buffer holds %d)\n", i, x)
		}
	}
	// Output:
	// kind: int32 len: 4
	// row 0: 10
	// row 1: null (the buffer holds 20)
	// row 2: null (the buffer holds 30)
	// row 3: 40
}
