package agg

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
)

// The grouped update loops agree with the one State: group g's state is
// the merge of states of its values one by one.
func TestFoldAgainstStates(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, groups = 5000, 13
	vals := make([]int64, n)
	fvals := make([]float64, n)
	validity := make([]byte, n/8+1)
	rows := make([]int32, n)
	ids := make([]int32, n)
	for i := range n {
		vals[i] = r.Int64() >> uint(r.IntN(64))
		fvals[i] = float64(vals[i]) / 3
		if r.IntN(10) != 0 {
			validity[i/8] |= 1 << (i % 8)
		}
		rows[i] = int32(i)
		ids[i] = int32(r.IntN(groups))
	}
	for _, set := range []Set{Default, Count | Min, Sum, Default | Ordered} {
		gi, err := NewGroups(column.FamilySigned, set)
		require.NoError(t, err)
		gf, err := NewGroups(column.FamilyFloat, set)
		require.NoError(t, err)
		gi.Grow(groups)
		gf.Grow(groups)
		FoldSigned(gi, vals, validity, 0, rows, ids, 100)
		FoldFloat(gf, fvals, validity, 0, rows, ids, 100)
		for g := range int32(groups) {
			wi, wf := New(column.FamilySigned, set), New(column.FamilyFloat, set)
			for i := range n {
				if ids[i] != g {
					continue
				}
				if validity[i/8]>>(i%8)&1 == 0 {
					wi.AddNulls(1)
					wf.AddNulls(1)
					continue
				}
				si := Signed(1, 0, Int192From(vals[i]), vals[i], vals[i])
				sf := Float(1, 0, fvals[i], 0, 0, fvals[i], fvals[i])
				if set.Any(Ordered) {
					si.SetPositions(Positions{First: si.Min, Last: si.Min})
					sf.SetPositions(Positions{First: sf.Min, Last: sf.Min})
				}
				si.ShiftRows(100 + int64(i))
				sf.ShiftRows(100 + int64(i))
				wi.Merge(&si)
				wf.Merge(&sf)
			}
			got, gotf := gi.State(g), gf.State(g)
			checkFinal(t, set, wi.Finalize(set), got.Finalize(set))
			checkFinal(t, set, wf.Finalize(set), gotf.Finalize(set))
		}
	}
}

// checkFinal compares what a Final answers of set.
func checkFinal(t *testing.T, set Set, want, got Final) {
	t.Helper()
	require.Equal(t, want.Count, got.Count)
	require.Equal(t, want.NullCount, got.NullCount)
	if set.Any(Sum | Mean) {
		require.Equal(t, want.Sum, got.Sum)
		require.Equal(t, want.FloatSum, got.FloatSum)
	}
	if set.Any(Min | Max) {
		require.Equal(t, want.Min, got.Min)
		require.Equal(t, want.Max, got.Max)
	}
	if set.Any(Ordered) {
		require.Equal(t, [4]int64{want.FirstRow, want.LastRow, want.ArgMin, want.ArgMax}, [4]int64{got.FirstRow, got.LastRow, got.ArgMin, got.ArgMax})
		require.Equal(t, want.First, got.First)
		require.Equal(t, want.Last, got.Last)
	}
}

func BenchmarkFoldSigned(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 1 << 16
	vals := make([]int64, n)
	validity := make([]byte, n/8)
	rows := make([]int32, n)
	ids := make([]int32, n)
	for i := range n {
		vals[i] = r.Int64() >> 20
		validity[i/8] |= byte(1) << (i % 8)
		rows[i] = int32(i)
		ids[i] = int32(r.IntN(10))
	}
	g, _ := NewGroups(column.FamilySigned, Count|Sum|Min|Max)
	g.Grow(10)
	b.SetBytes(n * 8)
	for b.Loop() {
		FoldSigned(g, vals, validity, 0, rows, ids, 0)
	}
}
