package column

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"
)

func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		dt   arrow.DataType
		kind Kind
	}{
		{arrow.PrimitiveTypes.Int8, Int8}, {arrow.PrimitiveTypes.Uint64, Uint64},
		{arrow.FixedWidthTypes.Date32, Int32}, {arrow.FixedWidthTypes.Timestamp_ns, Int64},
		{arrow.FixedWidthTypes.Duration_s, Int64}, {arrow.FixedWidthTypes.Time32s, Int32},
		{arrow.FixedWidthTypes.Boolean, Bool}, {&arrow.Decimal128Type{Precision: 10, Scale: 2}, Decimal128},
		{arrow.BinaryTypes.LargeString, LargeBinary}, {arrow.BinaryTypes.Binary, Binary},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Float32}, Float32},
	} {
		k, err := KindOf(tc.dt)
		require.NoError(t, err, tc.dt)
		require.Equal(t, tc.kind, k, tc.dt)
	}
	union := arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int8}}, []arrow.UnionTypeCode{0})
	for _, dt := range []arrow.DataType{union, arrow.DenseUnionOf([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, []arrow.UnionTypeCode{3}),
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: union},
		extensionOf(union)} {
		k, err := KindOf(dt)
		require.ErrorIs(t, err, arrow.ErrNotImplemented, dt)
		require.Equal(t, Unsupported, k)
	}
}

// Types whose values no backend orders or sums are counted: Opaque, of the
// counts family.
func TestKindOfOpaque(t *testing.T) {
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
	} {
		k, err := KindOf(dt)
		require.NoError(t, err, dt)
		require.Equal(t, Opaque, k, dt)
		require.Equal(t, FamilyCounts, k.Family(), dt)
		require.Zero(t, k.Width(), dt)
	}
	require.Equal(t, "opaque", Opaque.String())
	require.Equal(t, "counts", FamilyCounts.String())
}

// A leaf whose name an earlier leaf has is not aggregated, and says why
// (arrow-testing's generated_duplicate_fieldnames).
func TestLeavesDuplicateNames(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ints", Type: arrow.PrimitiveTypes.Int8},
		{Name: "ints", Type: arrow.PrimitiveTypes.Int32},
		{Name: "struct", Type: arrow.StructOf(arrow.Field{Name: "", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "", Type: arrow.BinaryTypes.String})},
	}, nil)
	leaves := Leaves(schema)
	require.Equal(t, "ints, ints, struct., struct.", Names(leaves))
	require.True(t, leaves[0].Supported())
	require.True(t, leaves[2].Supported())
	require.EqualError(t, leaves[1].Err, `column "ints" (int32): another column of the schema has this name, and only the first one is aggregated`)
	require.EqualError(t, leaves[3].Err, `column "struct." (utf8): another column of the schema has this name, and only the first one is aggregated`)
	require.Equal(t, Unsupported, leaves[3].Kind)
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
	require.Equal(t, Opaque, leaves[3].Kind)
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
	require.Equal(t, []int16{4, 5, 6, 7, 8, 9}, Values[int16](&v))
	require.False(t, v.Valid(5))
	require.Equal(t, int64(6*2+1), v.ByteSize())

	// Arrow refuses to build most malformed arrays; views re-check what the
	// backends rely on all the same.
	short := View{Type: arrow.PrimitiveTypes.Int64, Kind: Int64, Len: 100, Values: make([]byte, 64)}
	require.ErrorContains(t, short.check(), "too short")
	offs := arrow.Int32Traits.CastToBytes([]int32{0, 2, 1000})
	bin := View{Type: arrow.BinaryTypes.String, Kind: Binary, Len: 2, Offsets: offs, Values: []byte("abc")}
	require.ErrorContains(t, bin.check(), "outside")
	bits := View{Type: arrow.PrimitiveTypes.Int8, Kind: Int8, Len: 20, Values: make([]byte, 20), Validity: []byte{0xff}, NullCount: 1}
	require.ErrorContains(t, bits.check(), "validity")
}
