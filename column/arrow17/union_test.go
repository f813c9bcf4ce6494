package arrow17

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
)

// codesBuf is a buffer of union type codes.
func codesBuf(codes ...int8) *memory.Buffer {
	return memory.NewBufferBytes(arrow.Int8Traits.CastToBytes(codes))
}

// offsetsBuf is a buffer of dense union offsets.
func offsetsBuf(offsets ...int32) *memory.Buffer {
	return memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))
}

func sparseUnion(t *testing.T, children []arrow.Array, names []string, typeCodes []arrow.UnionTypeCode, codes ...int8) *array.SparseUnion {
	t.Helper()
	fields := make([]arrow.Field, len(children))
	for i, c := range children {
		fields[i] = arrow.Field{Name: names[i], Type: c.DataType(), Nullable: true}
	}
	return array.NewSparseUnion(arrow.SparseUnionOf(fields, typeCodes), len(codes), children, codesBuf(codes...), 0)
}

func denseUnion(t *testing.T, children []arrow.Array, names []string, typeCodes []arrow.UnionTypeCode, codes []int8, offsets []int32) *array.DenseUnion {
	t.Helper()
	fields := make([]arrow.Field, len(children))
	for i, c := range children {
		fields[i] = arrow.Field{Name: names[i], Type: c.DataType(), Nullable: true}
	}
	return array.NewDenseUnion(arrow.DenseUnionOf(fields, typeCodes), len(codes), children, codesBuf(codes...), offsetsBuf(offsets...), 0)
}

// requireUnionView checks the view of arr, and of its slices from 1 and
// from 2 to one short of its end, against the element's nulls want.
func requireUnionView(t *testing.T, arr arrow.Array, want []bool) {
	t.Helper()
	v, err := ViewOf(arr)
	require.NoError(t, err)
	require.Equal(t, column.Opaque, v.Kind)
	require.Nil(t, v.Values)
	requireValidity(t, want, v, arr.DataType())
	for _, lo := range []int{1, 2} {
		s := array.NewSlice(arr, int64(lo), int64(arr.Len()-1))
		v, err := ViewOf(s)
		require.NoError(t, err)
		requireValidity(t, want[lo:len(want)-1], v, "slice from", lo)
		s.Release()
	}
}

// A sparse union's element is null where the element of the same position
// of the child its type code names is: neither child's nulls alone.
func TestViewOfSparseUnion(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f1 := fromJSON(t, mem, arrow.PrimitiveTypes.Int32, `[1, null, null, 4, 5, null, 7, 8]`)
	defer f1.Release()
	f2 := fromJSON(t, mem, arrow.BinaryTypes.String, `["a", null, "c", "d", null, "f", null, "h"]`)
	defer f2.Release()
	u := sparseUnion(t, []arrow.Array{f1, f2}, []string{"f1", "f2"}, []arrow.UnionTypeCode{5, 7}, 5, 7, 5, 7, 7, 5, 5, 7)
	defer u.Release()
	requireUnionView(t, u, []bool{false, true, true, false, true, true, false, false})
	require.NoError(t, CheckUnion(u))
}

// A dense union's element is null where the child value its offset
// selects is.
func TestViewOfDenseUnion(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f1 := fromJSON(t, mem, arrow.PrimitiveTypes.Int16, `[1, null, 3]`)
	defer f1.Release()
	f2 := fromJSON(t, mem, arrow.BinaryTypes.Binary, `[null, "eA=="]`)
	defer f2.Release()
	u := denseUnion(t, []arrow.Array{f1, f2}, []string{"f1", "f2"}, []arrow.UnionTypeCode{10, 20},
		[]int8{10, 20, 10, 10, 20, 10, 20}, []int32{0, 0, 1, 2, 1, 1, 0})
	defer u.Release()
	requireUnionView(t, u, []bool{false, true, true, false, false, true, true})
	require.NoError(t, CheckUnion(u))
}

// The children's own logical nulls: a nested union's, a null child's
// (always), a struct child's (its validity, not its fields'), a dictionary
// child's (the value its index points at), a run-end encoded child's (its
// run's value).
func TestViewOfUnionNestedChildren(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f1 := fromJSON(t, mem, arrow.PrimitiveTypes.Int16, `[1, null, 3]`)
	defer f1.Release()
	f2 := fromJSON(t, mem, arrow.BinaryTypes.Binary, `[null, "eA=="]`)
	defer f2.Release()
	// Its elements' nulls: false, true, true, false, false, true, true.
	dense := denseUnion(t, []arrow.Array{f1, f2}, []string{"f1", "f2"}, []arrow.UnionTypeCode{10, 20},
		[]int8{10, 20, 10, 10, 20, 10, 20}, []int32{0, 0, 1, 2, 1, 1, 0})
	defer dense.Release()
	nulls := array.NewNull(7)
	defer nulls.Release()
	outer := sparseUnion(t, []arrow.Array{dense, nulls}, []string{"d", "n"}, []arrow.UnionTypeCode{0, 1}, 0, 1, 0, 0, 1, 0, 0)
	defer outer.Release()
	requireUnionView(t, outer, []bool{false, true, true, false, true, true, true})

	// A struct {x} null at 1, whose x is null at 0.
	x := fromJSON(t, mem, arrow.PrimitiveTypes.Int8, `[null, 2, 3]`)
	defer x.Release()
	st, err := array.NewStructArrayWithNulls([]arrow.Array{x}, []string{"x"}, memory.NewBufferBytes([]byte{0b101}), 1, 0)
	require.NoError(t, err)
	defer st.Release()
	n1 := array.NewNull(1)
	defer n1.Release()
	withStruct := denseUnion(t, []arrow.Array{st, n1}, []string{"s", "n"}, []arrow.UnionTypeCode{0, 1},
		[]int8{0, 0, 0, 1, 0}, []int32{0, 1, 2, 0, 0})
	defer withStruct.Release()
	requireUnionView(t, withStruct, []bool{false, true, false, true, false})

	// A dictionary ["a", null] indexed [0, 1, null, 1, 0], and run ends
	// [2, 4, 5] of values [null, 5, 6].
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	dict := fromJSON(t, mem, arrow.BinaryTypes.String, `["a", null]`)
	defer dict.Release()
	idx := fromJSON(t, mem, arrow.PrimitiveTypes.Int8, `[0, 1, null, 1, 0]`)
	defer idx.Release()
	d := array.NewDictionaryArray(dictType, idx, dict)
	defer d.Release()
	ends := fromJSON(t, mem, arrow.PrimitiveTypes.Int32, `[2, 4, 5]`)
	defer ends.Release()
	vals := fromJSON(t, mem, arrow.PrimitiveTypes.Int64, `[null, 5, 6]`)
	defer vals.Release()
	ree := array.NewRunEndEncodedArray(ends, vals, 5, 0)
	defer ree.Release()
	mixed := sparseUnion(t, []arrow.Array{d, ree}, []string{"d", "r"}, []arrow.UnionTypeCode{3, 4}, 3, 4, 3, 4, 4)
	defer mixed.Release()
	// dict "a"; run 0 (null); dict's index null; run 1 (5); run 2 (6).
	requireUnionView(t, mixed, []bool{false, true, true, false, false})
}

// A dictionary child whose index points outside its dictionary is an
// error, as for a dictionary column, not a null.
func TestUnionDictionaryIndexOutside(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	dict := fromJSON(t, mem, arrow.BinaryTypes.String, `["a", "b"]`)
	defer dict.Release()
	idx := fromJSON(t, mem, arrow.PrimitiveTypes.Int8, `[0, 7, 1]`)
	defer idx.Release()
	d := array.NewDictionaryArray(dictType, idx, dict)
	defer d.Release()
	u := sparseUnion(t, []arrow.Array{d}, []string{"d"}, []arrow.UnionTypeCode{0}, 0, 0, 0)
	defer u.Release()
	_, err := ViewOf(u)
	require.ErrorContains(t, err, "dictionary element 1 has index 7, outside its dictionary of 2 values")
}

// A union in a struct: the struct's nulls fold into the union's (Extract),
// and the engine's front ends see the same view.
func TestExtractUnionInStruct(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f1 := fromJSON(t, mem, arrow.PrimitiveTypes.Int32, `[1, null, null, 4, 5, null, 7, 8]`)
	defer f1.Release()
	f2 := fromJSON(t, mem, arrow.BinaryTypes.String, `["a", null, "c", "d", null, "f", null, "h"]`)
	defer f2.Release()
	u := sparseUnion(t, []arrow.Array{f1, f2}, []string{"f1", "f2"}, []arrow.UnionTypeCode{5, 7}, 5, 7, 5, 7, 7, 5, 5, 7)
	defer u.Release()
	st, err := array.NewStructArrayWithNulls([]arrow.Array{u}, []string{"u"}, memory.NewBufferBytes([]byte{0b11111110}), 1, 0)
	require.NoError(t, err)
	defer st.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: st.DataType(), Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{st}, 8)
	defer rec.Release()
	leaves := Leaves(schema)
	require.Len(t, leaves, 1)
	require.Equal(t, "s.u", leaves[0].Name)
	require.Equal(t, column.Opaque, leaves[0].Kind)
	require.True(t, leaves[0].Supported())
	var c Column
	require.NoError(t, Extract(&c, rec, leaves[0], mem))
	defer c.Release()
	requireValidity(t, []bool{true, true, true, false, true, true, false, false}, c.View)
}

// Type codes of no child, offsets outside their child, buffers shorter
// than the union: errors saying which element and why, never a panic.
func TestViewOfUnionCorrupt(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f1 := fromJSON(t, mem, arrow.PrimitiveTypes.Int16, `[1, null, 3]`)
	defer f1.Release()
	f2 := fromJSON(t, mem, arrow.BinaryTypes.Binary, `[null, "eA==", null]`)
	defer f2.Release()
	children, names, codes := []arrow.Array{f1, f2}, []string{"f1", "f2"}, []arrow.UnionTypeCode{10, 20}
	for _, c := range []struct {
		name string
		arr  arrow.Array
		msg  string
	}{
		{"sparse, a code of no child", sparseUnion(t, children, names, codes, 10, 20, 9), `sparse_union element 2 has type code 9, which is none of its type's [10 20]`},
		{"sparse, a negative code", sparseUnion(t, children, names, codes, 10, -3, 10), `sparse_union element 1 has type code -3, which is none of its type's [10 20]`},
		{"dense, an offset past its child", denseUnion(t, children, names, codes, []int8{10, 20, 10}, []int32{0, 1, 3}),
			`dense_union element 2 selects value 3 of child "f1" (type code 10), which has 3 values`},
		{"dense, a negative offset", denseUnion(t, children, names, codes, []int8{10, 20}, []int32{0, -1}),
			`dense_union element 1 selects value -1 of child "f2" (type code 20), which has 3 values`},
		{"dense, a code of no child", denseUnion(t, children, names, codes, []int8{10, 30}, []int32{0, 0}),
			`dense_union element 1 has type code 30, which is none of its type's [10 20]`},
		{"sparse, a short code buffer", array.NewSparseUnion(arrow.SparseUnionOf([]arrow.Field{{Name: "f1", Type: f1.DataType()}, {Name: "f2", Type: f2.DataType()}}, codes),
			3, children, codesBuf(10, 20), 0), `sparse_union array of 3 elements at offset 0: type code buffer of 2 bytes`},
		{"dense, a short offset buffer", array.NewDenseUnion(arrow.DenseUnionOf([]arrow.Field{{Name: "f1", Type: f1.DataType()}, {Name: "f2", Type: f2.DataType()}}, codes),
			3, children, codesBuf(10, 20, 10), offsetsBuf(0, 0), 0), `dense_union array of 3 elements at offset 0: offset buffer of 8 bytes`},
	} {
		_, err := ViewOf(c.arr)
		require.EqualError(t, err, c.msg, c.name)
		require.EqualError(t, CheckUnion(c.arr.(array.Union)), c.msg, c.name)
		// A union holding it fails the same way.
		n := array.NewNull(c.arr.Len())
		outer := sparseUnion(t, []arrow.Array{c.arr, n}, []string{"u", "n"}, []arrow.UnionTypeCode{0, 1}, make([]int8, c.arr.Len())...)
		_, err = ViewOf(outer)
		require.EqualError(t, err, c.msg, c.name)
		outer.Release()
		n.Release()
		c.arr.Release()
	}
}
