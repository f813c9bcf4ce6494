package engine

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/stretchr/testify/require"
)

// TestOrderedAggregates: first, last, arg_min and arg_max of random columns of
// every type, fed as several record batches, split over accumulators merged
// directly and through serialized states, against the oracle.
func TestOrderedAggregates(t *testing.T) {
	r, seed := seeded(t)
	ctx := context.Background()
	const aggs = agg.Default | agg.Ordered
	for ti, dt := range oracleTypes {
		for _, n := range []int{0, 1, 33, 1000, 200003} {
			for _, nf := range nullDensities {
				if n > 100000 && !bigSizes(ti) {
					continue
				}
				name := fmt.Sprintf("%s/n=%d/nulls=%g seed=%d", dt, n, nf, seed)
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				e := cpuEngine(t, mem, 1+r.IntN(3))
				parent := randArray(mem, r, dt, n+5, nf)
				chunks := randomChunks(r, parent, 5, n)
				want := oracleOrdered(chunks...)
				schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: dt, Nullable: true}}, nil)

				// One accumulator over all the batches, and the batches split
				// over three accumulators merged in order: directly, and with
				// the last one's states sent as a record batch.
				whole, err := e.NewAccumulator(schema, Request{Aggs: aggs})
				require.NoError(t, err)
				parts := make([]*Accumulator, 3)
				for i := range parts {
					parts[i], err = e.NewAccumulator(schema, Request{Aggs: aggs})
					require.NoError(t, err)
				}
				for i, c := range chunks {
					rec := array.NewRecord(schema, []arrow.Array{c}, int64(c.Len()))
					require.NoError(t, whole.Add(ctx, rec))
					require.NoError(t, parts[min(i, 2)].Add(ctx, rec))
					rec.Release()
				}
				require.NoError(t, parts[0].Merge(parts[1]))
				wire, err := parts[2].StatesRecord(mem)
				require.NoError(t, err)
				require.NoError(t, parts[0].MergeRecord(wire))
				wire.Release()
				require.Equal(t, int64(n), parts[0].Rows())

				for _, acc := range []*Accumulator{whole, parts[0]} {
					res := acc.Results()[0]
					checkOrdered(t, res, want, name)
				}
				for _, c := range chunks {
					c.Release()
				}
				parent.Release()
				mem.AssertSize(t, 0)
			}
		}
	}
}

func checkOrdered(t *testing.T, res Result, want expected, msg string) {
	t.Helper()
	rowOf := func(v any) int64 {
		if v == nil {
			return -1
		}
		return v.(int64)
	}
	require.Equal(t, want.argMin, rowOf(scalarValue(res.ArgMin)), "arg_min %s", msg)
	require.Equal(t, want.argMax, rowOf(scalarValue(res.ArgMax)), "arg_max %s", msg)
	checkExtreme(t, want.first, scalarValue(res.First), "first "+msg)
	checkExtreme(t, want.last, scalarValue(res.Last), "last "+msg)
}

// TestOrderedTies: ties go to the earliest row, whatever the morsel and
// thread layout; -0 counts as smaller than +0; all-NaN columns point at the
// first NaN.
func TestOrderedTies(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	n := 3*cpu.MorselSize + 17
	vals := make([]float64, n)
	valid := make([]bool, n)
	for i := range vals {
		vals[i], valid[i] = 5, true
	}
	valid[0] = false
	vals[2*cpu.MorselSize+1], vals[cpu.MorselSize+3] = -1, -1 // the min twice: earliest wins
	vals[7], vals[3*cpu.MorselSize] = 9, 9
	arr := float64Array(mem, vals, valid)
	defer arr.Release()
	for _, threads := range []int{1, 2, 4} {
		res, err := cpuEngine(t, mem, threads).AggregateArray(ctx, arr, agg.Ordered)
		require.NoError(t, err)
		require.Equal(t, int64(cpu.MorselSize+3), scalarValue(res.ArgMin))
		require.Equal(t, int64(7), scalarValue(res.ArgMax))
		require.Equal(t, 5.0, scalarValue(res.First))
		require.Equal(t, 5.0, scalarValue(res.Last))
	}

	negZero := math.Copysign(0, -1)
	zeros := float64Array(mem, []float64{0, negZero, 0, negZero}, nil)
	defer zeros.Release()
	res, err := cpuEngine(t, mem, 1).AggregateArray(ctx, zeros, agg.Ordered)
	require.NoError(t, err)
	require.Equal(t, int64(1), scalarValue(res.ArgMin))
	require.Equal(t, int64(0), scalarValue(res.ArgMax))

	nan := math.NaN()
	nans := float64Array(mem, []float64{nan, nan}, []bool{false, true})
	defer nans.Release()
	res, err = cpuEngine(t, mem, 1).AggregateArray(ctx, nans, agg.Ordered)
	require.NoError(t, err)
	require.Equal(t, int64(1), scalarValue(res.ArgMin))
	require.Equal(t, int64(1), scalarValue(res.ArgMax))
}
