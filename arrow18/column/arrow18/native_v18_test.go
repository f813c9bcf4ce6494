package arrow18

import (
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
)

// Arrow Go v18's native decimal32 and decimal64 are the kinds Decimal32 and
// Decimal64 (decimal family, 4 and 8 bytes), as dictionary values too;
// a schema's field of one is a supported leaf.
func TestNativeDecimalKinds(t *testing.T) {
	d32 := &arrow.Decimal32Type{Precision: 9, Scale: 2}
	d64 := &arrow.Decimal64Type{Precision: 18, Scale: 0}
	for _, c := range []struct {
		dt    arrow.DataType
		kind  column.Kind
		width int
	}{
		{d32, column.Decimal32, 4},
		{&arrow.Decimal32Type{Precision: 1, Scale: 0}, column.Decimal32, 4},
		{d64, column.Decimal64, 8},
		{&arrow.Decimal64Type{Precision: 12, Scale: 2}, column.Decimal64, 8},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint16, ValueType: d32}, column.Decimal32, 4},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int64, ValueType: d64}, column.Decimal64, 8},
	} {
		k, err := KindOf(c.dt)
		require.NoError(t, err, c.dt)
		require.Equal(t, c.kind, k, c.dt)
		require.Equal(t, column.FamilyDecimal, k.Family(), c.dt)
		require.Equal(t, c.width, k.Width(), c.dt)
	}
	leaves := Leaves(arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: d32, Nullable: true},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "b", Type: d64, Nullable: true})},
	}, nil))
	require.Len(t, leaves, 2)
	for i, want := range []column.Kind{column.Decimal32, column.Decimal64} {
		require.True(t, leaves[i].Supported(), leaves[i].Name)
		require.Equal(t, want, leaves[i].Kind, leaves[i].Name)
	}
}

// The view of a native decimal32 or decimal64 array borrows its values and
// validity: sliced, the element i of the view is the array's value i, as 4-
// or 8-byte little-endian integers, and the nulls are the array's.
func TestNativeDecimalViews(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	vals := []int64{-999_999_999, 0, 7, 123_456_789, -1, 999_999_999, 42}
	valid := []bool{true, false, true, true, true, false, true}

	b32 := array.NewDecimal32Builder(mem, &arrow.Decimal32Type{Precision: 9, Scale: 2})
	b64 := array.NewDecimal64Builder(mem, &arrow.Decimal64Type{Precision: 18, Scale: 3})
	for i, v := range vals {
		if !valid[i] {
			b32.AppendNull()
			b64.AppendNull()
			continue
		}
		b32.Append(decimal.Decimal32(v))
		b64.Append(decimal.Decimal64(v * 1_000_000_000)) // past the 32-bit range
	}
	a32, a64 := b32.NewArray(), b64.NewArray()
	b32.Release()
	b64.Release()
	defer a32.Release()
	defer a64.Release()

	for _, c := range []struct {
		arr   arrow.Array
		kind  column.Kind
		value func(v []byte, i int) int64
		scale int64
	}{
		{a32, column.Decimal32, func(v []byte, i int) int64 { return int64(int32(binary.LittleEndian.Uint32(v[4*i:]))) }, 1},
		{a64, column.Decimal64, func(v []byte, i int) int64 { return int64(binary.LittleEndian.Uint64(v[8*i:])) }, 1_000_000_000},
	} {
		sl := array.NewSlice(c.arr, 1, int64(len(vals)))
		v, err := ViewOf(sl)
		require.NoError(t, err, c.arr.DataType())
		require.Equal(t, c.kind, v.Kind)
		require.True(t, arrow.TypeEqual(c.arr.DataType(), v.Type.(arrow.DataType)), "view type %v", v.Type)
		require.Equal(t, len(vals)-1, v.Len)
		require.Equal(t, 2, v.NullCount)
		require.NoError(t, v.Check())
		for i := 0; i < v.Len; i++ {
			require.Equal(t, valid[i+1], v.Valid(i), "valid %d", i)
			if valid[i+1] {
				require.Equal(t, vals[i+1]*c.scale, c.value(v.Values, v.Offset+i), "value %d", i)
			}
		}
		sl.Release()
	}
}
