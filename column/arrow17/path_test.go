package arrow17

import (
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"
)

// Paths resolve against names that hold dots and brackets themselves,
// trying every field a path continues with.
func TestResolveElementNames(t *testing.T) {
	i64 := arrow.PrimitiveTypes.Int64
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.StructOf(arrow.Field{Name: "b", Type: arrow.ListOf(i64)})},
		{Name: "a.b", Type: i64},
		{Name: "x[]", Type: i64},
		{Name: "x", Type: arrow.ListOf(arrow.MapOf(arrow.BinaryTypes.String, arrow.StructOf(arrow.Field{Name: "v.w", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8)})))},
	}, nil)
	for _, c := range []struct {
		name     string
		path     []int
		repeated int
		typ      arrow.DataType
	}{
		{"a.b[]", []int{0, 0, 0}, 1, i64},
		// x's elements; a leaf of that name is looked up first by the
		// callers (engine.Request.Resolve, dataset's Select).
		{"x[]", []int{3, 0}, 1, arrow.MapOf(arrow.BinaryTypes.String, arrow.StructOf(arrow.Field{Name: "v.w", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8)}))},
		{"x[]{key}", []int{3, 0, 0, 0}, 2, arrow.BinaryTypes.String},
		{"x[]{value}.v.w", []int{3, 0, 0, 1, 0}, 2, arrow.ListOf(arrow.PrimitiveTypes.Int8)},
		{"x[]{value}.v.w[]", []int{3, 0, 0, 1, 0, 0}, 3, arrow.PrimitiveTypes.Int8},
	} {
		l, found, err := ResolveElement(schema, c.name)
		require.NoError(t, err, c.name)
		require.Equal(t, c.path != nil, found, c.name)
		if !found {
			continue
		}
		require.Equal(t, c.name, l.Name)
		require.Equal(t, c.path, l.Path, c.name)
		require.Equal(t, c.repeated, l.Repeated, c.name)
		require.True(t, arrow.TypeEqual(c.typ, l.Type), "%s: %s", c.name, l.Type)
		require.NoError(t, l.Err)
	}
	for _, name := range []string{"a", "nope[]", "a.c[]", "x"} {
		_, found, _ := ResolveElement(schema, name)
		require.False(t, found, name)
	}
	_, _, err := ResolveElement(schema, "a.b{key}")
	require.ErrorContains(t, err, `column "a.b" is list<item: int64, nullable>, not a map ("{key}" does not apply): name its elements, a.b[]`)
	_, _, err = ResolveElement(schema, "x[]{value}.z")
	require.ErrorContains(t, err, `column "x[]{value}" has no field that "x[]{value}.z" names`)

	var names []string
	for _, l := range ElementLeaves(schema) {
		names = append(names, l.Name)
		r, found, err := ResolveElement(schema, l.Name)
		require.NoError(t, err, l.Name)
		require.True(t, found, l.Name)
		require.Equal(t, l.Path, r.Path, l.Name)
	}
	require.Equal(t, []string{"a.b[]", "x[]", "x[]{key}", "x[]{value}.v.w", "x[]{value}.v.w[]"}, names)
}

// List offsets beyond the values are an error of Extract, never a read
// out of bounds.
func TestExtractElementsBadOffsets(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	values, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int64, strings.NewReader(`[1, 2, 3]`))
	require.NoError(t, err)
	defer values.Release()
	offsets := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, 2, 9}))
	data := array.NewData(arrow.ListOf(arrow.PrimitiveTypes.Int64), 2, []*memory.Buffer{nil, offsets}, []arrow.ArrayData{values.Data()}, 0, 0)
	defer data.Release()
	list := array.MakeFromData(data)
	defer list.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: list.DataType(), Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{list}, 2)
	defer rec.Release()
	l, found, err := ResolveElement(schema, "l[]")
	require.NoError(t, err)
	require.True(t, found)
	var c Column
	err = Extract(&c, rec, l, mem)
	require.ErrorContains(t, err, `column "l[]": list offsets [0, 9) outside the 3 elements of its values`)
	c.Release()
}
