package cpu

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// A state asked for count and null_count alone is folded from the validity
// bitmap: the values are never read. The view below has no values buffer at
// all, which any read of a value would trip over.
func TestCountsReadOnlyValidity(t *testing.T) {
	const n = 3*MorselSize + 77
	valid := make([]byte, (n+7)/8+1)
	rng := rand.New(rand.NewPCG(1, 2))
	want := int64(0)
	for i := 0; i < n; i++ {
		if rng.IntN(10) != 0 {
			valid[(i+3)/8] |= 1 << ((i + 3) % 8)
			want++
		}
	}
	for _, k := range []column.Kind{column.Int64, column.Float64, column.Decimal128, column.Binary, column.Bool} {
		v := column.View{Kind: k, Len: n, Validity: valid, ValidityOffset: 3}
		s := agg.New(k.Family(), agg.Count|agg.NullCount)
		cpu := &CPU{Threads: 3}
		require.NoError(t, cpu.Update(context.Background(), []*column.View{&v}, []*agg.State{&s}), "%s", k)
		require.Equal(t, want, s.Count, "%s", k)
		require.Equal(t, int64(n)-want, s.NullCount, "%s", k)
		require.Equal(t, agg.Count|agg.NullCount, s.Tracks)
	}
}

// decimalView is a decimal128 view of n values (some negative, 1 in 8 null).
func decimalView(n int) column.View {
	buf := make([]byte, 16*n)
	words := column.Slice[uint64](buf)
	valid := make([]byte, (n+7)/8)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < n; i++ {
		x := rng.Int64()
		words[2*i], words[2*i+1] = uint64(x), uint64(x>>63)
		if i%8 != 3 {
			valid[i/8] |= 1 << (i % 8)
		}
	}
	return column.View{Kind: column.Decimal128, Len: n, Values: buf, Validity: valid}
}

// A state asked for min and max without the sum skips the decimals' 192-bit
// sums, and its extremes are those of the full pass.
func TestExtremesWithoutSum(t *testing.T) {
	v := decimalView(2*MorselSize + 999)
	full := agg.New(column.FamilyDecimal, 0)
	ext := agg.New(column.FamilyDecimal, agg.Min|agg.Max)
	cpu := &CPU{Threads: 2}
	require.NoError(t, cpu.Update(context.Background(), []*column.View{&v}, []*agg.State{&full}))
	require.NoError(t, cpu.Update(context.Background(), []*column.View{&v}, []*agg.State{&ext}))
	require.Equal(t, full.Min, ext.Min)
	require.Equal(t, full.Max, ext.Max)
	require.Equal(t, full.Count, ext.Count)
	require.Equal(t, full.NullCount, ext.NullCount)
	require.False(t, ext.Tracks.Has(agg.Sum), "the state does not claim a sum it did not take")
	require.True(t, ext.Sum.IsZero())
	require.False(t, full.Sum.IsZero())
}

// BenchmarkDecimalExtremes: min and max of 1M decimals with and without the
// sum (the 192-bit additions skipped).
func BenchmarkDecimalExtremes(b *testing.B) {
	v := decimalView(1 << 20)
	cpu := &CPU{Threads: 1}
	for _, c := range []struct {
		name string
		set  agg.Set
	}{{"sum+min+max", agg.Default}, {"min+max", agg.Min | agg.Max}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(v.Values)))
			for i := 0; i < b.N; i++ {
				s := agg.New(column.FamilyDecimal, c.set)
				if err := cpu.Update(context.Background(), []*column.View{&v}, []*agg.State{&s}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Opaque views (lists, maps, ... : validity only, no values) are counted
// whatever the state was asked for, the ordered aggregates included: the
// state of their family tracks the counts alone.
func TestOpaqueCounted(t *testing.T) {
	const n = 2*MorselSize + 501
	valid := make([]byte, (n+5+7)/8)
	want := int64(0)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < n; i++ {
		if rng.IntN(3) != 0 {
			valid[(i+5)/8] |= 1 << ((i + 5) % 8)
			want++
		}
	}
	v := column.View{Type: arrow.ListOf(arrow.PrimitiveTypes.Int8), Kind: column.Opaque, Len: n, NullCount: n - int(want),
		Validity: valid, ValidityOffset: 5}
	noNulls := column.View{Type: v.Type, Kind: column.Opaque, Len: n}
	for _, set := range []agg.Set{0, agg.All, agg.Count} {
		s, all := agg.New(column.FamilyCounts, set), agg.New(column.FamilyCounts, set)
		cpu := &CPU{Threads: 2}
		require.NoError(t, cpu.Update(context.Background(), []*column.View{&v, &noNulls}, []*agg.State{&s, &all}), "%s", set)
		require.Equal(t, want, s.Count)
		require.Equal(t, int64(n)-want, s.NullCount)
		require.Equal(t, int64(n), all.Count)
		require.Zero(t, all.NullCount)
		require.Equal(t, agg.Count|agg.NullCount, s.Tracks)
	}
}

// A dictionary of Opaque values counts a valid index to a null value as a
// null, like every dictionary.
func TestOpaqueDictionaryCounted(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	values, _, err := array.FromJSON(mem, arrow.ListOf(arrow.PrimitiveTypes.Int32), strings.NewReader(`[[1], null, []]`))
	require.NoError(t, err)
	defer values.Release()
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	const n = MorselSize + 300
	var wantValid int64
	for i := 0; i < n; i++ {
		switch i % 5 {
		case 0:
			ib.AppendNull()
		case 1:
			ib.Append(1) // the null list
		default:
			ib.Append(int32(i % 2 * 2))
			wantValid++
		}
	}
	idx := ib.NewArray()
	defer idx.Release()
	dict := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: values.DataType()}, idx, values)
	defer dict.Release()
	sl := array.NewSlice(dict, 7, n)
	defer sl.Release()
	for _, a := range []arrow.Array{dict, sl} {
		v, err := arrow17.ViewOf(a)
		require.NoError(t, err)
		want := int64(0)
		for i := 0; i < a.Len(); i++ {
			d := a.(*array.Dictionary)
			if d.IsValid(i) && d.Dictionary().IsValid(d.GetValueIndex(i)) {
				want++
			}
		}
		s := agg.New(column.FamilyCounts, 0)
		require.NoError(t, (&CPU{Threads: 3}).Update(context.Background(), []*column.View{&v}, []*agg.State{&s}))
		require.Equal(t, want, s.Count)
		require.Equal(t, int64(a.Len())-want, s.NullCount)
		require.Equal(t, column.FamilyCounts, s.Family)
	}
	require.Positive(t, wantValid)
}
