package arrow17

import (
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
)

func fromJSON(t *testing.T, mem memory.Allocator, dt arrow.DataType, js string) arrow.Array {
	t.Helper()
	arr, _, err := array.FromJSON(mem, dt, strings.NewReader(js))
	require.NoError(t, err, dt)
	return arr
}

// requireValidity checks that view v has, element for element, the nulls
// of want (which Arrow itself tells: IsNull).
func requireValidity(t *testing.T, want []bool, v column.View, msg ...any) {
	t.Helper()
	require.Equal(t, len(want), v.Len, msg...)
	nulls := 0
	for i, null := range want {
		require.Equal(t, !null, v.Valid(i), append([]any{"element %d of %v"}, append([]any{i}, msg...)...)...)
		if null {
			nulls++
		}
	}
	require.Equal(t, nulls, v.NullCount, msg...)
	if v.Validity != nil {
		require.Equal(t, v.Len-nulls, bitutil.CountSetBits(v.Validity, v.ValidityOffset, v.Len), msg...)
	}
}

func isNull(arr arrow.Array) []bool {
	out := make([]bool, arr.Len())
	for i := range out {
		out[i] = arr.IsNull(i)
	}
	return out
}

// The views of lists, maps, decimal256, views and intervals are Opaque: their validity, sliced or not, and no values.
func TestViewOfOpaque(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, c := range []struct {
		dt arrow.DataType
		js string
	}{
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[1], null, [], [2, null], null, [3], [], null, [4, 5, 6], [7]]`},
		{arrow.LargeListOf(arrow.BinaryTypes.String), `[["a"], null, [], [null], null, ["b"], [], null, ["c"], []]`},
		{arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), `[[1, 2], null, [3, null], null, [5, 6], [null, null], null, [1, 1], [2, 2], null]`},
		{arrow.ListViewOf(arrow.PrimitiveTypes.Int32), `[[1], null, [], [2, null], null, [3], [], null, [4, 5, 6], [7]]`},
		{arrow.LargeListViewOf(arrow.PrimitiveTypes.Int32), `[null, null, [], [2, null], null, [3], [], null, [4, 5, 6], null]`},
		{arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32),
			`[[{"key": "a", "value": 1}], null, [], [{"key": "b", "value": null}], null, [], null, [], [], null]`},
		{&arrow.Decimal256Type{Precision: 40, Scale: 2}, `["1.25", null, "3.00", "4", null, null, "5", "6", "7", null]`},
		{arrow.BinaryTypes.StringView, `["a", null, "a long string beyond twelve bytes", null, "b", "c", "d", null, "e", "f"]`},
		{arrow.BinaryTypes.BinaryView, `["YQ==", null, "YQ==", "YQ==", null, "YQ==", null, "YQ==", "YQ==", "YQ=="]`},
		{arrow.FixedWidthTypes.DayTimeInterval, `[{"days": 1, "milliseconds": 2}, null, null, {"days": 1, "milliseconds": 2},
			{"days": 1, "milliseconds": 2}, null, {"days": 1, "milliseconds": 2}, null, null, {"days": 1, "milliseconds": 2}]`},
	} {
		arr := fromJSON(t, mem, c.dt, c.js)
		for _, bounds := range [][2]int{{0, 10}, {3, 9}, {1, 2}, {5, 5}} {
			sl := array.NewSlice(arr, int64(bounds[0]), int64(bounds[1]))
			v, err := ViewOf(sl)
			require.NoError(t, err, c.dt)
			require.Equal(t, column.Opaque, v.Kind, c.dt)
			require.True(t, arrow.TypeEqual(c.dt, v.Type.(arrow.DataType)), c.dt)
			require.Nil(t, v.Values, c.dt)
			require.Equal(t, sl.NullN(), v.NullCount, "%s %v", c.dt, bounds)
			requireValidity(t, isNull(sl), v, "%s %v", c.dt, bounds)
			if v.NullCount > 0 {
				require.Equal(t, bitutil.BytesForBits(int64(v.Len)), v.ByteSize(), "the validity alone is read")
			} else {
				require.Zero(t, v.ByteSize())
			}
			sl.Release()
		}
		arr.Release()
	}
}

// A run-end encoded array is null where the value of its run is: the
// values' nulls expanded over the runs, in slices that start and end inside
// runs too.
func TestViewOfRunEndEncoded(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, ends := range []arrow.DataType{arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64} {
		runEnds := fromJSON(t, mem, ends, `[3, 4, 8, 9, 15, 20]`)
		values := fromJSON(t, mem, arrow.BinaryTypes.String, `["a", null, "b", null, null, "c"]`)
		// element i: the value of the first run that ends after i
		want := make([]bool, 20)
		for i := range want {
			want[i] = i == 3 || (i >= 8 && i < 15)
		}
		ree := array.NewRunEndEncodedArray(runEnds, values, 20, 0)
		for _, bounds := range [][2]int{{0, 20}, {2, 19}, {3, 4}, {9, 12}, {16, 16}, {0, 3}} {
			sl := array.NewSlice(ree, int64(bounds[0]), int64(bounds[1]))
			v, err := ViewOf(sl)
			require.NoError(t, err, "%s %v", ends, bounds)
			require.Equal(t, column.Opaque, v.Kind)
			requireValidity(t, want[bounds[0]:bounds[1]], v, "%s %v", ends, bounds)
			sl.Release()
		}
		ree.Release()
		runEnds.Release()
		values.Release()
	}

	// Values that are null in a dictionary, or a null array.
	dictValues := fromJSON(t, mem, arrow.BinaryTypes.String, `["x", null]`)
	defer dictValues.Release()
	idx := fromJSON(t, mem, arrow.PrimitiveTypes.Int8, `[0, 1, null]`)
	defer idx.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	dict := array.NewDictionaryArray(dt, idx, dictValues)
	defer dict.Release()
	runEnds := fromJSON(t, mem, arrow.PrimitiveTypes.Int32, `[2, 5, 6]`)
	defer runEnds.Release()
	ree := array.NewRunEndEncodedArray(runEnds, dict, 6, 0)
	defer ree.Release()
	v, err := ViewOf(ree)
	require.NoError(t, err)
	requireValidity(t, []bool{false, false, true, true, true, true}, v)
	nulls := array.NewNull(3)
	defer nulls.Release()
	runEnds3 := fromJSON(t, mem, arrow.PrimitiveTypes.Int32, `[1, 2, 4]`)
	defer runEnds3.Release()
	ree = array.NewRunEndEncodedArray(runEnds3, nulls, 4, 0)
	defer ree.Release()
	v, err = ViewOf(ree)
	require.NoError(t, err)
	requireValidity(t, []bool{true, true, true, true}, v)
}

// Run ends that go back or stop before the array's end are errors, never
// reads out of bounds.
func TestViewOfRunEndEncodedCorrupt(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	values := fromJSON(t, mem, arrow.PrimitiveTypes.Int64, `[1, null, 3]`)
	defer values.Release()
	for _, c := range []struct {
		ends string
		n    int
		err  string
	}{
		{`[2, 5, 4]`, 6, "run end 4 after 5"},
		{`[2, 2, 6]`, 6, "run end 2 after 2"},
		{`[1, 2, 3]`, 6, "the runs end at 3, the array at 6"},
	} {
		ends := array.NewData(arrow.PrimitiveTypes.Int32, 3, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(int32s(t, c.ends)))}, nil, 0, 0)
		data := array.NewData(arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64), c.n, []*memory.Buffer{nil},
			[]arrow.ArrayData{ends, values.Data()}, 0, 0)
		ree := array.MakeFromData(data)
		_, err := ViewOf(ree)
		require.ErrorContains(t, err, c.err, c.ends)
		ree.Release()
		data.Release()
		ends.Release()
	}
}

func int32s(t *testing.T, js string) []int32 {
	arr := fromJSON(t, memory.DefaultAllocator, arrow.PrimitiveTypes.Int32, js)
	defer arr.Release()
	return append([]int32(nil), arr.(*array.Int32).Int32Values()...)
}

// A null array is all nulls; an extension array has its storage's nulls.
func TestViewOfNullAndExtension(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	nulls := array.NewNull(70)
	defer nulls.Release()
	v, err := ViewOf(nulls)
	require.NoError(t, err)
	require.Equal(t, column.Opaque, v.Kind)
	want := make([]bool, 70)
	for i := range want {
		want[i] = true
	}
	requireValidity(t, want, v)

	for _, c := range []struct {
		dt arrow.DataType
		js string
	}{
		{arrow.PrimitiveTypes.Int64, `[1, null, 3, null, 5, 6]`},
		{arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int8, Nullable: true}), `[{"x": 1}, null, {"x": null}, null, {"x": 2}, null]`},
		{arrow.ListOf(arrow.PrimitiveTypes.Int8), `[[1], null, [], null, [null], null]`},
	} {
		storage := fromJSON(t, mem, c.dt, c.js)
		ext := array.NewExtensionArrayWithStorage(extensionOf(c.dt), storage)
		sl := array.NewSlice(ext, 1, 5)
		v, err := ViewOf(sl)
		require.NoError(t, err, c.dt)
		require.Equal(t, column.Opaque, v.Kind, c.dt)
		require.Nil(t, v.Values, c.dt)
		require.True(t, arrow.TypeEqual(sl.DataType(), v.Type.(arrow.DataType)))
		requireValidity(t, isNull(sl), v, c.dt)
		sl.Release()
		ext.Release()
		storage.Release()
	}

}

// A list in a struct is null where the struct is: Extract folds the
// struct's nulls into the list's validity.
func TestExtractListInStruct(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	st := arrow.StructOf(arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true})
	arr := fromJSON(t, mem, st, `[{"l": [1]}, null, {"l": null}, {"l": []}, null, {"l": [null]}]`)
	defer arr.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: st, Nullable: true}}, nil)
	for _, bounds := range [][2]int{{0, 6}, {1, 5}} {
		sl := array.NewSlice(arr, int64(bounds[0]), int64(bounds[1]))
		rec := array.NewRecord(schema, []arrow.Array{sl}, int64(sl.Len()))
		leaves := Leaves(schema)
		require.Equal(t, "s.l", Names(leaves))
		var c Column
		require.NoError(t, Extract(&c, rec, leaves[0], mem))
		require.Equal(t, column.Opaque, c.Kind)
		want := []bool{false, true, true, false, true, false}[bounds[0]:bounds[1]]
		requireValidity(t, want, c.View, bounds)
		c.Release()
		rec.Release()
		sl.Release()
	}
}

// A dictionary of lists is a dictionary view whose dictionary is Opaque.
func TestViewOfDictionaryOfLists(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	values := fromJSON(t, mem, arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[1], null, []]`)
	defer values.Release()
	idx := fromJSON(t, mem, arrow.PrimitiveTypes.Uint16, `[0, 1, null, 2, 1]`)
	defer idx.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint16, ValueType: values.DataType()}
	dict := array.NewDictionaryArray(dt, idx, values)
	defer dict.Release()
	v, err := ViewOf(dict)
	require.NoError(t, err)
	require.Equal(t, column.Opaque, v.Kind)
	require.Equal(t, column.Uint16, v.IndexKind)
	require.Equal(t, column.Opaque, v.Dict.Kind)
	requireValidity(t, []bool{false, true, false}, *v.Dict)
	require.Equal(t, 1, v.NullCount, "the indices' own nulls; those of the dictionary are the backends' to count")
}
