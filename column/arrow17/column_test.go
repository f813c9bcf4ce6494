package arrow17

import (
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
)

func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		dt   arrow.DataType
		kind column.Kind
	}{
		{arrow.PrimitiveTypes.Int8, column.Int8}, {arrow.PrimitiveTypes.Uint64, column.Uint64},
		{arrow.FixedWidthTypes.Date32, column.Int32}, {arrow.FixedWidthTypes.Timestamp_ns, column.Int64},
		{arrow.FixedWidthTypes.Duration_s, column.Int64}, {arrow.FixedWidthTypes.Time32s, column.Int32},
		{arrow.FixedWidthTypes.Boolean, column.Bool}, {&arrow.Decimal128Type{Precision: 10, Scale: 2}, column.Decimal128},
		{arrow.BinaryTypes.LargeString, column.LargeBinary}, {arrow.BinaryTypes.Binary, column.Binary},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Float32}, column.Float32},
	} {
		k, err := KindOf(tc.dt)
		require.NoError(t, err, tc.dt)
		require.Equal(t, tc.kind, k, tc.dt)
	}
}

// Types whose values no backend orders or sums are counted: Opaque, of the
// counts family.
func TestKindOfOpaque(t *testing.T) {
	union := arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int8}}, []arrow.UnionTypeCode{0})
	for _, dt := range []arrow.DataType{
		arrow.ListOf(arrow.PrimitiveTypes.Int8), arrow.LargeListOf(arrow.BinaryTypes.String),
		arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float64), arrow.ListViewOf(arrow.PrimitiveTypes.Int32),
		arrow.LargeListViewOf(arrow.PrimitiveTypes.Int32), arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int8),
		arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64),
		&arrow.Decimal256Type{Precision: 40, Scale: 0},
		arrow.BinaryTypes.StringView, arrow.BinaryTypes.BinaryView, arrow.FixedWidthTypes.MonthInterval,
		arrow.FixedWidthTypes.DayTimeInterval, arrow.FixedWidthTypes.MonthDayNanoInterval, arrow.Null,
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.ListOf(arrow.PrimitiveTypes.Int8)},
		arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int8}),
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int8})},
		extensionOf(arrow.PrimitiveTypes.Int64), extensionOf(arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int8})),
		union, arrow.DenseUnionOf([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, []arrow.UnionTypeCode{3}),
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: union}, extensionOf(union),
	} {
		k, err := KindOf(dt)
		require.NoError(t, err, dt)
		require.Equal(t, column.Opaque, k, dt)
		require.Equal(t, column.FamilyCounts, k.Family(), dt)
		require.Zero(t, k.Width(), dt)
	}
	require.Equal(t, "opaque", column.Opaque.String())
	require.Equal(t, "counts", column.FamilyCounts.String())
}

// Every leaf of a schema whose names repeat is aggregated: the k-th repeat
// of N is N_k (arrow-testing's generated_duplicate_fieldnames: two "ints",
// a struct of two fields named "").
func TestLeavesDuplicateNames(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ints", Type: arrow.PrimitiveTypes.Int8},
		{Name: "ints", Type: arrow.PrimitiveTypes.Int32},
		{Name: "struct", Type: arrow.StructOf(arrow.Field{Name: "", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "", Type: arrow.BinaryTypes.String})},
	}, nil)
	leaves := Leaves(schema)
	require.Equal(t, "ints, ints_1, struct., struct._1", Names(leaves))
	for _, l := range leaves {
		require.True(t, l.Supported(), l.Name)
	}
	require.Equal(t, []int{1}, leaves[1].Path)
	require.Equal(t, column.Int32, leaves[1].Kind)
	require.Equal(t, "ints", leaves[1].SchemaName)
	require.Equal(t, 2, leaves[1].Occurrence)
	require.Equal(t, `the 2nd column named "ints"`, leaves[1].Renamed())
	require.Empty(t, leaves[0].Renamed())
	require.Equal(t, []int{2, 1}, leaves[3].Path)
	require.Equal(t, column.Binary, leaves[3].Kind)
	require.Equal(t, "struct.", leaves[3].SchemaName)
	require.Equal(t, 2, leaves[3].Occurrence)
	require.Empty(t, leaves[0].SchemaName)
	require.Zero(t, leaves[0].Occurrence)
	require.Empty(t, leaves[2].SchemaName)
	l, ok := Find(leaves, "ints_1")
	require.True(t, ok)
	require.Equal(t, arrow.PrimitiveTypes.Int32, l.Type)
}

// A repeat's name N_k passes over the names other leaves have, wherever in
// the schema they are, and over those given before; three repeats are N_1,
// N_2, N_3; the renaming depends on the schema alone.
func TestLeavesDuplicateNamesCollide(t *testing.T) {
	i8 := arrow.PrimitiveTypes.Int8
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: i8},
		{Name: "a", Type: i8},   // a_1 is taken (below): a_2
		{Name: "b", Type: i8},   //
		{Name: "a", Type: i8},   // a_3
		{Name: "a_1", Type: i8}, // the schema's own
		{Name: "b", Type: i8},   // b_1
		{Name: "b", Type: i8},   // b_2
		{Name: "b", Type: i8},   // b_3
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "x", Type: i8}, arrow.Field{Name: "x", Type: i8}, arrow.Field{Name: "x", Type: i8})},
		{Name: "s.x_1", Type: i8}, // a top-level name with a dot: s.x's second repeat passes over it
		{Name: "", Type: arrow.StructOf()},
		{Name: "", Type: arrow.StructOf()},
	}, nil)
	leaves := Leaves(schema)
	require.Equal(t, "a, a_2, b, a_3, a_1, b_1, b_2, b_3, s.x, s.x_2, s.x_3, s.x_1, , _1", Names(leaves))
	occ := make([]int, len(leaves))
	for i, l := range leaves {
		occ[i] = l.Occurrence
	}
	require.Equal(t, []int{0, 2, 0, 3, 0, 2, 3, 4, 0, 2, 3, 0, 0, 2}, occ)
	require.Equal(t, []int{8, 1}, leaves[9].Path)
	// A renamed leaf that cannot be aggregated says which it is.
	require.EqualError(t, leaves[13].Err, `column "_1" (the 2nd column named "" in the schema): column "": empty struct has no leaf to aggregate`)
	require.Equal(t, Names(leaves), Names(Leaves(schema)))
	require.Equal(t, "1st 2nd 3rd 4th 11th 12th 13th 21st 22nd 101st 111th", ordinals(1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111))
}

func ordinals(ns ...int) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = ordinal(n)
	}
	return strings.Join(out, " ")
}

func TestLeaves(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int32},
		{Name: "s", Type: arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64},
			arrow.Field{Name: "t", Type: arrow.StructOf(arrow.Field{Name: "y", Type: arrow.BinaryTypes.String})},
			arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8)},
		)},
		{Name: "e", Type: arrow.StructOf()},
	}, nil)
	leaves := Leaves(schema)
	require.Equal(t, "a, s.x, s.t.y, s.l, e", Names(leaves))
	require.Equal(t, []int{1, 1, 0}, leaves[2].Path)
	require.True(t, leaves[2].Supported())
	require.True(t, leaves[3].Supported(), "a list in a struct is a leaf, counted")
	require.Equal(t, column.Opaque, leaves[3].Kind)
	require.Equal(t, []int{1, 2}, leaves[3].Path)
	require.False(t, leaves[4].Supported())
	require.ErrorIs(t, leaves[4].Err, arrow.ErrNotImplemented)
	_, ok := Find(leaves, "s.t.y")
	require.True(t, ok)
}

func TestViewOfSliceAndValidation(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewInt16Builder(mem)
	b.AppendValues([]int16{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []bool{true, false, true, true, true, true, true, true, false, true})
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	sl := array.NewSlice(arr, 3, 9)
	defer sl.Release()
	v, err := ViewOf(sl)
	require.NoError(t, err)
	require.Equal(t, 3, v.Offset)
	require.Equal(t, 3, v.ValidityOffset)
	require.Equal(t, 6, v.Len)
	require.Equal(t, 1, v.NullCount)
	require.Equal(t, []int16{4, 5, 6, 7, 8, 9}, column.Values[int16](&v))
	require.False(t, v.Valid(5))
	require.Equal(t, int64(6*2+1), v.ByteSize())

	// Arrow refuses to build most malformed arrays; views re-check what the
	// backends rely on all the same.
	short := column.View{Type: arrow.PrimitiveTypes.Int64, Kind: column.Int64, Len: 100, Values: make([]byte, 64)}
	require.ErrorContains(t, short.Check(), "too short")
	offs := arrow.Int32Traits.CastToBytes([]int32{0, 2, 1000})
	bin := column.View{Type: arrow.BinaryTypes.String, Kind: column.Binary, Len: 2, Offsets: offs, Values: []byte("abc")}
	require.ErrorContains(t, bin.Check(), "outside")
	bits := column.View{Type: arrow.PrimitiveTypes.Int8, Kind: column.Int8, Len: 20, Values: make([]byte, 20), Validity: []byte{0xff}, NullCount: 1}
	require.ErrorContains(t, bits.Check(), "validity")
}
