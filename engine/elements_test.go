package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// elementTypes are the nested types the element tests cover: every list
// kind, maps, lists of lists, structs around and inside lists.
var elementTypes = []arrow.DataType{
	arrow.ListOf(arrow.PrimitiveTypes.Int64),
	arrow.LargeListOf(arrow.BinaryTypes.String),
	arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float64),
	arrow.ListViewOf(arrow.PrimitiveTypes.Int32),
	arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64),
	arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int32)),
	arrow.ListOf(arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "y", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}, Nullable: true})),
	arrow.StructOf(arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Uint16), Nullable: true}),
	arrow.MapOf(arrow.PrimitiveTypes.Int32, arrow.ListOf(arrow.FixedWidthTypes.Boolean)),
}

// appendNested appends one random value to b (any of elementTypes' builders),
// null with probability nullFrac.
func appendNested(b array.Builder, r *rand.Rand, nullFrac float64) {
	null := r.Float64() < nullFrac
	n := r.IntN(5)
	switch b := b.(type) {
	case *array.MapBuilder:
		b.Append(!null)
		for k := 0; !null && k < n; k++ {
			appendRandom(b.KeyBuilder(), r)
			appendNested(b.ItemBuilder(), r, nullFrac)
		}
	case *array.ListViewBuilder:
		b.AppendWithSize(!null, n)
		for k := 0; k < n; k++ { // (a null's view covers values too)
			appendNested(b.ValueBuilder(), r, nullFrac)
		}
	case *array.FixedSizeListBuilder:
		b.Append(!null)
		for k := int32(0); k < b.Type().(*arrow.FixedSizeListType).Len(); k++ { // (a null's slots hold values too)
			appendNested(b.ValueBuilder(), r, nullFrac)
		}
	case array.ListLikeBuilder:
		b.Append(!null)
		for k := 0; !null && k < n; k++ {
			appendNested(b.ValueBuilder(), r, nullFrac)
		}
	case *array.StructBuilder:
		b.Append(!null)
		for k := 0; !null && k < b.NumField(); k++ {
			appendNested(b.FieldBuilder(k), r, nullFrac)
		}
	default:
		if null {
			b.AppendNull()
		} else {
			appendRandom(b, r)
		}
	}
}

// hideNulls returns data with more nulls, at random, at every level (but a
// map's entries and keys): the values under the new nulls stay, as other
// writers leave them (a null list entry over elements, a null struct over
// valid fields).
func hideNulls(mem memory.Allocator, r *rand.Rand, data arrow.ArrayData) arrow.ArrayData {
	children := make([]arrow.ArrayData, len(data.Children()))
	for i, c := range data.Children() {
		if data.DataType().ID() == arrow.MAP { // entries: hide in the values alone
			grand := []arrow.ArrayData{c.Children()[0], hideNulls(mem, r, c.Children()[1])}
			children[i] = array.NewData(c.DataType(), c.Len(), c.Buffers(), grand, c.NullN(), c.Offset())
			grand[1].Release()
			continue
		}
		children[i] = hideNulls(mem, r, c)
	}
	defer func() {
		for _, c := range children {
			c.Release()
		}
	}()
	n, off := data.Len(), data.Offset()
	bits := memory.NewResizableBuffer(mem)
	defer bits.Release()
	bits.Resize(int(bitutil.BytesForBits(int64(n + off))))
	valid := bits.Bytes()
	for i := 0; i < n; i++ {
		ok := (data.Buffers()[0] == nil || bitutil.BitIsSet(data.Buffers()[0].Bytes(), off+i)) && r.IntN(8) > 0
		bitutil.SetBitTo(valid, off+i, ok)
	}
	bufs := append([]*memory.Buffer{bits}, data.Buffers()[1:]...)
	return array.NewData(data.DataType(), n, bufs, children, array.UnknownNullCount, off)
}

// randNested makes a random array of nested type dt of n rows, nulls
// hidden over values.
func randNested(mem memory.Allocator, r *rand.Rand, dt arrow.DataType, n int, nullFrac float64) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for i := 0; i < n; i++ {
		appendNested(b, r, nullFrac)
	}
	built := b.NewArray()
	defer built.Release()
	data := hideNulls(mem, r, built.Data())
	defer data.Release()
	return array.MakeFromData(data)
}

// elementOracle walks the elements of leaf path (field indices under the
// column) of arr one entry at a time with the arrays' accessors: an
// element exists under each valid list entry (none under a null list, nor
// under a null struct around a list), and is null where it or a struct
// after the last list is. It returns the elements as arrays of one value
// each, in order; release them.
func elementOracle(mem memory.Allocator, arr arrow.Array, path []int) []arrow.Array {
	var out []arrow.Array
	var walk func(a arrow.Array, i int, path []int, nullAbove bool)
	walk = func(a arrow.Array, i int, path []int, nullAbove bool) {
		if len(path) == 0 {
			if nullAbove || a.IsNull(i) {
				out = append(out, array.MakeArrayOfNull(mem, a.DataType(), 1))
			} else {
				out = append(out, array.NewSlice(a, int64(i), int64(i+1)))
			}
			return
		}
		switch a := a.(type) {
		case *array.Struct:
			walk(a.Field(path[0]), i, path[1:], nullAbove || a.IsNull(i))
		case array.ListLike:
			if nullAbove || a.IsNull(i) {
				return
			}
			lo, hi := a.ValueOffsets(i)
			for j := lo; j < hi; j++ {
				walk(a.ListValues(), int(j), path[1:], false)
			}
		default:
			panic(fmt.Sprintf("oracle: %s has no fields", a.DataType()))
		}
	}
	for i := 0; i < arr.Len(); i++ {
		walk(arr, i, path, false)
	}
	return out
}

// TestElementColumns: the element columns of random nested arrays of every
// list kind (nulls over hidden values, empty lists, slices of a larger
// array, several batches, and accumulators merged) aggregate as the
// oracle's walk of the same arrays: counts, sums, extremes and positions
// of the elements.
func TestElementColumns(t *testing.T) {
	r, seed := seeded(t)
	ctx := context.Background()
	const aggs = agg.Default | agg.Ordered
	for _, dt := range elementTypes {
		for _, n := range []int{0, 1, 40, 3000} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			e := cpuEngine(t, mem, 1+r.IntN(3))
			parent := randNested(mem, r, dt, n+7, 0.2)
			chunks := randomChunks(r, parent, 7, n) // sliced: offsets into the parent
			schema := arrow.NewSchema([]arrow.Field{{Name: "c", Type: dt, Nullable: true}}, nil)
			elems := arrow17.ElementLeaves(schema)
			require.NotEmpty(t, elems, "%s", dt)
			for _, l := range elems {
				msg := fmt.Sprintf("%s %s n=%d seed=%d", dt, l.Name, n, seed)
				whole, err := e.NewAccumulator(schema, Request{Columns: []string{l.Name}, Aggs: aggs})
				require.NoError(t, err, msg)
				parts := []*Accumulator{nil, nil}
				for k := range parts {
					parts[k], err = e.NewAccumulator(schema, Request{Columns: []string{l.Name}, Aggs: aggs})
					require.NoError(t, err, msg)
				}
				var want []arrow.Array
				for k, c := range chunks {
					rec := array.NewRecord(schema, []arrow.Array{c}, int64(c.Len()))
					require.NoError(t, whole.Add(ctx, rec), msg)
					require.NoError(t, parts[min(k, 1)].Add(ctx, rec), msg)
					rec.Release()
					want = append(want, elementOracle(mem, c, l.Path[1:])...)
				}
				require.NoError(t, parts[0].Merge(parts[1]), msg)
				for _, acc := range []*Accumulator{whole, parts[0]} {
					res := acc.Results()[0]
					require.True(t, arrow.TypeEqual(l.Type, res.Type), msg)
					if l.Kind == column.Opaque { // lists in lists: counted
						var count, nulls int64
						for _, w := range want {
							if w.IsNull(0) {
								nulls++
							} else {
								count++
							}
						}
						require.Equal(t, count, res.Count, "count %s", msg)
						require.Equal(t, nulls, res.NullCount, "null_count %s", msg)
						continue
					}
					o := oracleOrdered(want...)
					checkResult(t, res, o, l.Type, msg)
					checkOrdered(t, res, o, msg)
				}
				for _, w := range want {
					w.Release()
				}
			}
			for _, c := range chunks {
				c.Release()
			}
			parent.Release()
			mem.AssertSize(t, 0)
		}
	}
}

// TestElementHandMade: a list whose null entry covers elements, an empty
// list and a null struct around a valid list: the elements under the nulls
// are not counted (null_count counts only null elements).
func TestElementHandMade(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	values, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int64, strings.NewReader(`[1, 2, 100, 200, 3, null, 4, 5]`))
	require.NoError(t, err)
	defer values.Release()
	offsets := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, 2, 4, 4, 6, 8}))
	valid := memory.NewBufferBytes([]byte{0b11101}) // entry 1 ([100, 200]) null
	data := array.NewData(arrow.ListOf(arrow.PrimitiveTypes.Int64), 5, []*memory.Buffer{valid, offsets}, []arrow.ArrayData{values.Data()}, 1, 0)
	defer data.Release()
	list := array.MakeFromData(data)
	defer list.Release()
	// The struct is null at row 4 ([4, 5]).
	sv := memory.NewBufferBytes([]byte{0b01111})
	st, err := array.NewStructArrayWithNulls([]arrow.Array{list}, []string{"l"}, sv, 1, 0)
	require.NoError(t, err)
	defer st.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: list.DataType(), Nullable: true}, {Name: "s", Type: st.DataType(), Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{list, st}, 5)
	defer rec.Release()
	e := cpuEngine(t, mem, 2)
	res, err := e.AggregateRecord(context.Background(), rec, Request{Columns: []string{"l[]", "s.l[]"}, Aggs: agg.Default | agg.Ordered})
	require.NoError(t, err)
	// l[]: 1, 2, 3, null, 4, 5 (100 and 200 under the null entry).
	require.Equal(t, []int64{5, 1, 15, 1, 5}, []int64{res[0].Count, res[0].NullCount, scalarValue(res[0].Sum).(int64), scalarValue(res[0].Min).(int64), scalarValue(res[0].Max).(int64)})
	require.Equal(t, int64(5), scalarValue(res[0].ArgMax), "positions are elements: 5 is the sixth")
	// s.l[]: 1, 2, 3, null (row 4's struct is null).
	require.Equal(t, []int64{3, 1, 6, 3}, []int64{res[1].Count, res[1].NullCount, scalarValue(res[1].Sum).(int64), scalarValue(res[1].Max).(int64)})
	require.Equal(t, int64(2), scalarValue(res[1].ArgMax))
}

// TestElementPathErrors: a path that does not apply to its column says
// why, wrapping ErrUnknownColumn; a struct element names its fields.
func TestElementPathErrors(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "tags", Type: arrow.PrimitiveTypes.Int64},
		{Name: "l", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int8}))},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int8)},
	}, nil)
	for _, c := range []struct{ name, why string }{
		{"tags[]", `column "tags" is int64, not a list`},
		{"l{key}", `not a map ("{key}" does not apply): name its elements, l[]`},
		{"m[]", `not a list ("[]" does not apply): name its keys or values, m{key} or m{value}`},
		{"l[]", `column "l[]" is a struct: name one of its fields (l[].x)`},
		{"l[].z", `column "l[]" has no field that "l[].z" names`},
	} {
		_, err := Request{Columns: []string{c.name}}.Resolve(schema)
		require.ErrorIs(t, err, ErrUnknownColumn, c.name)
		require.ErrorContains(t, err, c.why, c.name)
	}
	_, err := Request{Columns: []string{"nope[]"}}.Resolve(schema)
	require.ErrorIs(t, err, ErrUnknownColumn)
	require.ErrorContains(t, err, `unknown column "nope[]" (columns: tags, l, m)`)
	ls, err := Request{Columns: []string{"l[].x", "m{value}", "m{key}"}}.Resolve(schema)
	require.NoError(t, err)
	require.Equal(t, []int{1, 0, 0}, ls[0].Path)
	require.Equal(t, []int{2, 0, 1}, ls[1].Path)
	require.Equal(t, []int{2, 0, 0}, ls[2].Path)
	require.Equal(t, 1, ls[0].Repeated)
}

// Resident data keeps the columns of the rows: an accumulator of element
// columns refuses it (it would fold another column), and folds the batches.
func TestElementColumnsNotResident(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	e := residentEngine(t, newFakeResident(), mem, DeviceGPU)
	rz, err := e.NewResidency(1 << 30)
	require.NoError(t, err)
	arr, _, err := array.FromJSON(mem, arrow.ListOf(arrow.PrimitiveTypes.Int64), strings.NewReader(`[[1, 2], null, [3]]`))
	require.NoError(t, err)
	defer arr.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arr.DataType(), Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{arr}, 3)
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	defer tbl.Release()
	res, err := rz.UploadTable(ctx, tbl)
	require.NoError(t, err)
	defer res.Release()
	acc, err := e.NewAccumulator(schema, Request{Columns: []string{"x[]"}})
	require.NoError(t, err)
	err = acc.AddResident(ctx, res)
	require.ErrorIs(t, err, arrow.ErrNotImplemented)
	require.ErrorContains(t, err, `column "x[]"`)
	require.NoError(t, acc.Add(ctx, rec))
	require.Equal(t, int64(3), acc.Results()[0].Count)
}
