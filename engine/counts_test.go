package engine

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
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
