package engine

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
)

// Count and null_count come out the same whether or not the other
// aggregates are asked for, dictionaries with null values included.
func TestCountsMatchFullPass(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(3, 4))
	ib := array.NewInt32Builder(mem)
	sb := array.NewStringBuilder(mem)
	for i := 0; i < 2*cpu.MorselSize+5; i++ {
		if rng.IntN(7) == 0 {
			ib.AppendNull()
			sb.AppendNull()
			continue
		}
		ib.Append(rng.Int32())
		sb.Append(string(rune('a' + rng.IntN(26))))
	}
	ints, strs := ib.NewArray(), sb.NewArray()
	defer ints.Release()
	defer strs.Release()
	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	for i := 0; i < 1000; i++ {
		if i%5 == 0 {
			db.AppendNull()
			continue
		}
		require.NoError(t, db.AppendString(string(rune('a'+i%9))))
	}
	dict := db.NewArray()
	defer db.Release()
	defer dict.Release()
	// a dictionary with a null value that valid indices point at
	vb := array.NewStringBuilder(mem)
	vb.AppendValues([]string{"x", "", "z"}, []bool{true, false, true})
	values := vb.NewArray()
	defer values.Release()
	xb := array.NewInt8Builder(mem)
	for i := 0; i < 3000; i++ {
		xb.Append(int8(i % 3))
	}
	xb.AppendNull()
	indices := xb.NewArray()
	defer indices.Release()
	nullValues := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, indices, values)
	defer nullValues.Release()
	eng, err := New(WithDevice(DeviceCPU), WithAllocator(mem))
	require.NoError(t, err)
	defer eng.Close()
	for _, arr := range []arrow.Array{ints, strs, dict, nullValues} {
		all, err := eng.AggregateArray(context.Background(), arr, agg.Default)
		require.NoError(t, err)
		counts, err := eng.AggregateArray(context.Background(), arr, agg.Count|agg.NullCount)
		require.NoError(t, err)
		require.Equal(t, all.Count, counts.Count, "%s", arr.DataType())
		require.Equal(t, all.NullCount, counts.NullCount, "%s", arr.DataType())
		require.Nil(t, counts.Sum)
		require.Nil(t, counts.Min)
	}
	r, err := eng.AggregateArray(context.Background(), nullValues, agg.Count|agg.NullCount)
	require.NoError(t, err)
	require.Equal(t, int64(1001), r.NullCount)
}

// Columns whose values are counted but neither ordered nor summed (lists,
// maps, run-end encoded, decimal256, views,
// intervals, null) answer count and null_count, Arrow's (the logical nulls
// of a run-end encoded array), sliced or not, whatever is asked; the other
// aggregates are nil, never an error.
func TestOpaqueColumnsCounted(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	eng, err := New(WithDevice(DeviceCPU), WithAllocator(mem))
	require.NoError(t, err)
	defer eng.Close()
	type col struct {
		dt    arrow.DataType
		js    string
		nulls []bool // nil: IsNull's
	}
	cols := []col{
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[1], null, [], [2, null], null, [3]]`, nil},
		{arrow.LargeListOf(arrow.PrimitiveTypes.Int32), `[[1], null, [], [null], null, [3]]`, nil},
		{arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), `[[1, 2], null, [3, null], null, [5, 6], [null, null]]`, nil},
		{arrow.ListViewOf(arrow.PrimitiveTypes.Int32), `[null, null, [], [2, null], null, [3]]`, nil},
		{arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), `[[{"key": "a", "value": 1}], null, [], [], null, null]`, nil},
		{&arrow.Decimal256Type{Precision: 40, Scale: 2}, `["1.25", null, "3.00", "4", null, null]`, nil},
		{arrow.BinaryTypes.StringView, `["a", null, "a long string beyond twelve bytes", null, "b", "c"]`, nil},
		{arrow.BinaryTypes.BinaryView, `["YQ==", null, "YQ==", "YQ==", null, "YQ=="]`, nil},
		{arrow.FixedWidthTypes.MonthDayNanoInterval, `[{"months": 1, "days": 1, "nanoseconds": 2}, null, null,
			{"months": 1, "days": 1, "nanoseconds": 2}, {"months": 1, "days": 1, "nanoseconds": 2}, null]`, nil},
		// runs [0, 2) 1.5, [2, 3) null, [3, 6) null, [6, 7) 2
		{arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64), `[1.5, 1.5, null, null, null, null, 2]`,
			[]bool{false, false, true, true, true, true, false}},
		{arrow.Null, `[null, null, null]`, []bool{true, true, true}},
	}
	for _, c := range cols {
		arr, _, err := array.FromJSON(mem, c.dt, strings.NewReader(c.js))
		require.NoError(t, err, c.dt)
		want := c.nulls
		if want == nil {
			for i := 0; i < arr.Len(); i++ {
				want = append(want, arr.IsNull(i))
			}
			nulls := 0
			for _, n := range want {
				if n {
					nulls++
				}
			}
			require.Equal(t, arr.NullN(), nulls)
		}
		sl := array.NewSlice(arr, 1, int64(arr.Len()))
		for _, a := range []arrow.Array{arr, sl} {
			w := want[len(want)-a.Len():]
			var nulls int64
			for _, n := range w {
				if n {
					nulls++
				}
			}
			for _, aggs := range []agg.Set{0, agg.All, agg.Count | agg.NullCount, agg.Sum | agg.First} {
				r, err := eng.AggregateArray(context.Background(), a, aggs)
				require.NoError(t, err, "%s %s", c.dt, aggs)
				require.Equal(t, int64(a.Len())-nulls, r.Count, "%s %s", c.dt, aggs)
				require.Equal(t, nulls, r.NullCount, "%s %s", c.dt, aggs)
				for _, s := range []scalar.Scalar{r.Sum, r.Min, r.Max, r.Mean, r.First, r.Last, r.ArgMin, r.ArgMax} {
					require.Nil(t, s, "%s %s", c.dt, aggs)
				}
				require.Nil(t, r.SumExact)
			}
		}
		sl.Release()
		arr.Release()
	}
}

// Chunks, struct nulls and serialized states: a list leaf of a struct is
// null where the struct is, over every chunk of a table, and its states
// travel like any other.
func TestOpaqueLeavesOfStructs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	eng, err := New(WithDevice(DeviceCPU), WithAllocator(mem), WithThreads(3))
	require.NoError(t, err)
	defer eng.Close()
	st := arrow.StructOf(arrow.Field{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		arrow.Field{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int8), Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: st, Nullable: true}}, nil)
	var recs []arrow.Record
	var wantTags, wantM [2]int64 // count, null_count
	for b := 0; b < 3; b++ {
		bld := array.NewStructBuilder(mem, st)
		lb := bld.FieldBuilder(0).(*array.ListBuilder)
		mb := bld.FieldBuilder(1).(*array.MapBuilder)
		for i := 0; i < cpu.MorselSize/2+b; i++ {
			switch {
			case i%7 == 0: // the struct is null: so are its leaves
				bld.AppendNull()
				wantTags[1]++
				wantM[1]++
				continue
			case i%3 == 0:
				bld.Append(true)
				lb.AppendNull()
				wantTags[1]++
			default:
				bld.Append(true)
				lb.Append(true)
				lb.ValueBuilder().(*array.StringBuilder).Append("x")
				wantTags[0]++
			}
			if i%2 == 0 {
				mb.AppendNull()
				wantM[1]++
			} else {
				mb.Append(true)
				wantM[0]++
			}
		}
		arr := bld.NewArray()
		bld.Release()
		recs = append(recs, array.NewRecord(schema, []arrow.Array{arr}, int64(arr.Len())))
		arr.Release()
	}
	tbl := array.NewTableFromRecords(schema, recs)
	defer tbl.Release()
	res, err := eng.AggregateTable(context.Background(), tbl, Request{})
	require.NoError(t, err)
	require.Len(t, res, 2)
	require.Equal(t, "s.tags", res[0].Name)
	require.Equal(t, [2]int64{res[0].Count, res[0].NullCount}, wantTags)
	require.Equal(t, [2]int64{res[1].Count, res[1].NullCount}, wantM)

	// The states of one accumulator, serialized and merged into another.
	acc, err := eng.NewAccumulator(schema, Request{Aggs: agg.All})
	require.NoError(t, err)
	for _, rec := range recs {
		require.NoError(t, acc.Add(context.Background(), rec))
		rec.Release()
	}
	sr, err := acc.StatesRecord(mem)
	require.NoError(t, err)
	defer sr.Release()
	other, err := eng.NewAccumulator(schema, Request{Aggs: agg.All})
	require.NoError(t, err)
	require.NoError(t, other.MergeRecord(sr))
	got := other.Results()
	require.Equal(t, [2]int64{got[0].Count, got[0].NullCount}, wantTags)
	require.Nil(t, got[0].First)
}

// A dictionary of lists or of structs (the struct's own validity) is null
// where its index is, or points at a null value, like every dictionary.
func TestOpaqueDictionaries(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	eng, err := New(WithDevice(DeviceCPU), WithAllocator(mem))
	require.NoError(t, err)
	defer eng.Close()
	idx, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int8, strings.NewReader(`[0, 1, null, 2, 1, 0, null, 2]`))
	require.NoError(t, err)
	defer idx.Release()
	for _, c := range []struct {
		dt     arrow.DataType
		values string
	}{
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[1], null, []]`},
		{arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), `[{"x": 1}, null, {"x": null}]`},
	} {
		values, _, err := array.FromJSON(mem, c.dt, strings.NewReader(c.values))
		require.NoError(t, err)
		dict := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: c.dt}, idx, values)
		sl := array.NewSlice(dict, 1, 7)
		for _, a := range []arrow.Array{dict, sl} {
			d := a.(*array.Dictionary)
			var nulls int64
			for i := 0; i < d.Len(); i++ {
				if d.IsNull(i) || d.Dictionary().IsNull(d.GetValueIndex(i)) {
					nulls++
				}
			}
			r, err := eng.AggregateArray(context.Background(), a, agg.All)
			require.NoError(t, err, c.dt)
			require.Equal(t, nulls, r.NullCount, c.dt)
			require.Equal(t, int64(a.Len())-nulls, r.Count, c.dt)
			require.Nil(t, r.Min)
		}
		sl.Release()
		dict.Release()
		values.Release()
	}
}
