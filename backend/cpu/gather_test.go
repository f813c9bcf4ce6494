package cpu

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/compute"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// A dictionary of numbers without nulls is folded by gathering the values
// its indices point at (gatherDict): its state must be the state of the
// same values as a plain array, for every index and value type, with and
// without nulls among the indices, sliced at odd offsets, at every SIMD
// level. The floats are integers, so that any order sums them exactly.
func TestGatheredDictionaryIsItsValues(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := compute.WithAllocator(context.Background(), mem)
	r := rand.New(rand.NewPCG(1, 2))
	indexTypes := []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Int16,
		arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint32,
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint64}
	valueTypes := []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Int32,
		arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint64,
		arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64}
	for _, it := range indexTypes {
		for _, vt := range valueTypes {
			for _, nulls := range []bool{false, true} {
				const n = 2*MorselSize + 777
				const dictLen = 100
				vb := array.NewBuilder(mem, vt)
				for i := 0; i < dictLen; i++ {
					x := r.IntN(200)
					if !arrow.IsUnsignedInteger(vt.ID()) {
						x -= 100
					}
					require.NoError(t, vb.AppendValueFromString(strconv.Itoa(x)))
				}
				values := vb.NewArray()
				vb.Release()
				ib := array.NewBuilder(mem, it)
				for i := 0; i < n; i++ {
					if nulls && r.IntN(7) == 0 {
						ib.AppendNull()
						continue
					}
					require.NoError(t, ib.AppendValueFromString(strconv.Itoa(r.IntN(dictLen))))
				}
				idx := ib.NewArray()
				ib.Release()
				dict := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: it, ValueType: vt}, idx, values)
				idx.Release()
				values.Release()
				for _, off := range []int{0, 13} {
					d := array.NewSlice(dict, int64(off), int64(n))
					plain, err := compute.CastArray(ctx, d, compute.SafeCastOptions(vt))
					require.NoError(t, err)
					for _, l := range append(simdLevels(), simdNone) {
						dv, err := arrow17.ViewOf(d)
						require.NoError(t, err)
						pv, err := arrow17.ViewOf(plain)
						require.NoError(t, err)
						require.True(t, gatherable(&dv))
						got, want := morselStates(t, l, &dv), morselStates(t, l, &pv)
						require.Len(t, got, len(want))
						for k := range want {
							require.Equal(t, summary(&want[k]), summary(&got[k]), "%s[%s] nulls %v offset %d simd %d morsel %d", vt, it, nulls, off, l, k)
						}
					}
					plain.Release()
					d.Release()
				}
				dict.Release()
			}
		}
	}
}

// An index past the dictionary is an error naming it, as before gathering.
func TestGatheredDictionaryIndexOutOfRange(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	values, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int64, strings.NewReader(`[5, 6, 7]`))
	require.NoError(t, err)
	defer values.Release()
	for js, want := range map[string]string{
		`[0, 1, 3, 2]`:     "dictionary index 3 not in [0, 3) at element 2",
		`[0, null, 1, -1]`: "dictionary index -1 not in [0, 3) at element 3",
	} {
		idx, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int32, strings.NewReader(js))
		require.NoError(t, err)
		dict := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Int64}, idx, values)
		idx.Release()
		v, err := arrow17.ViewOf(dict)
		require.NoError(t, err)
		s := agg.New(column.FamilySigned, 0)
		err = (&CPU{Threads: 1}).Update(context.Background(), []*column.View{&v}, []*agg.State{&s})
		require.ErrorContains(t, err, want)
		dict.Release()
	}
}

// summary is what a state says of its values, whatever the order in which
// they were folded.
func summary(s *agg.State) any {
	f := s.Finalize(agg.Default)
	return []any{s.Count, s.NullCount, f}
}
