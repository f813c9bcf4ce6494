package arrow17

import (
	"encoding/binary"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
)

// float16, fixed_size_binary, decimal32 and decimal64 are kinds of the
// float, bytes and decimal families, of their widths.
func TestNarrowKinds(t *testing.T) {
	d32, err := NewNarrowDecimalType(32, 9, 2)
	require.NoError(t, err)
	d64, err := NewNarrowDecimalType(64, 18, 4)
	require.NoError(t, err)
	for _, c := range []struct {
		dt     arrow.DataType
		kind   column.Kind
		family column.Family
		width  int
		name   string
	}{
		{arrow.FixedWidthTypes.Float16, column.Float16, column.FamilyFloat, 2, "float16"},
		{&arrow.FixedSizeBinaryType{ByteWidth: 16}, column.FixedSizeBinary, column.FamilyBytes, 0, "fixed_size_binary"},
		{d32, column.Decimal32, column.FamilyDecimal, 4, "decimal32"},
		{d64, column.Decimal64, column.FamilyDecimal, 8, "decimal64"},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: d32}, column.Decimal32, column.FamilyDecimal, 4, "decimal32"},
	} {
		k, err := KindOf(c.dt)
		require.NoError(t, err, c.dt)
		require.Equal(t, c.kind, k, c.dt)
		require.Equal(t, c.family, k.Family(), c.dt)
		require.Equal(t, c.width, k.Width(), c.dt)
		require.Equal(t, c.name, k.String())
	}
	_, err = NewNarrowDecimalType(128, 9, 2)
	require.Error(t, err)
}

// NarrowDecimalType prints as Arrow names it, tells precisions and scales
// apart, answers as decimal128 of its precision and scale, and deserializes
// what it serializes.
func TestNarrowDecimalType(t *testing.T) {
	a, _ := NewNarrowDecimalType(32, 9, 2)
	b, _ := NewNarrowDecimalType(32, 9, 3)
	c, _ := NewNarrowDecimalType(64, 9, 2)
	require.Equal(t, "decimal32(9, 2)", a.String())
	require.Equal(t, "decimal64(9, 2)", c.String())
	require.True(t, arrow.TypeEqual(a, a))
	require.False(t, arrow.TypeEqual(a, b))
	require.False(t, arrow.TypeEqual(a, c))
	require.NotEqual(t, a.Fingerprint(), b.Fingerprint())
	require.Equal(t, &arrow.Decimal128Type{Precision: 9, Scale: 2}, a.Decimal128())
	back, err := a.Deserialize(a.StorageType(), a.Serialize())
	require.NoError(t, err)
	require.True(t, a.ExtensionEquals(back))
	_, err = a.Deserialize(arrow.PrimitiveTypes.Int32, a.Serialize())
	require.Error(t, err)
}

// The views of float16 and fixed_size_binary arrays are their values at
// their offset; that of a decimal32 array its storage's, of kind
// Decimal32; buffers too short for the values are an error, not a view.
func TestNarrowViews(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	half := fromJSON(t, mem, arrow.FixedWidthTypes.Float16, `[1.5, null, -2, 0.25]`)
	defer half.Release()
	sl := array.NewSlice(half, 1, 4)
	defer sl.Release()
	v, err := ViewOf(sl)
	require.NoError(t, err)
	require.Equal(t, column.Float16, v.Kind)
	require.Equal(t, []float64{-2, 0.25}, []float64{column.HalfToFloat64(column.Values[uint16](&v)[1]), column.HalfToFloat64(column.Values[uint16](&v)[2])})
	require.Equal(t, 1, v.NullCount)

	fsb := fromJSON(t, mem, &arrow.FixedSizeBinaryType{ByteWidth: 3}, `["YWJj", null, "eHl6"]`)
	defer fsb.Release()
	fs := array.NewSlice(fsb, 2, 3)
	defer fs.Release()
	v, err = ViewOf(fs)
	require.NoError(t, err)
	require.Equal(t, column.FixedSizeBinary, v.Kind)
	require.Equal(t, 3, v.ElemWidth())
	require.Equal(t, "xyz", string(v.Values[3*v.Offset:3*(v.Offset+1)]))
	require.EqualValues(t, 3, v.ByteSize())
	short := v
	short.Values = v.Values[:3*v.Offset+2]
	require.ErrorContains(t, short.Check(), "too short")

	d32, _ := NewNarrowDecimalType(32, 9, 2)
	raw := binary.LittleEndian.AppendUint32(nil, uint32(0xFFFFFFFF))
	raw = binary.LittleEndian.AppendUint32(raw, 12345)
	storage := array.NewFixedSizeBinaryData(array.NewData(&arrow.FixedSizeBinaryType{ByteWidth: 4}, 2,
		[]*memory.Buffer{nil, memory.NewBufferBytes(raw)}, nil, 0, 0))
	defer storage.Release()
	dec := array.NewExtensionArrayWithStorage(d32, storage)
	defer dec.Release()
	v, err = ViewOf(dec)
	require.NoError(t, err)
	require.Equal(t, column.Decimal32, v.Kind)
	require.True(t, arrow.TypeEqual(d32, v.Type.(arrow.DataType)))
	require.Equal(t, []int32{-1, 12345}, column.Values[int32](&v))
}
