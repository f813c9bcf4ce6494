package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// groupKinds are the value kinds with a grouped kernel.
var groupKinds = []column.Kind{column.Int8, column.Int16, column.Int32, column.Int64, column.Uint8, column.Uint16,
	column.Uint32, column.Uint64, column.Float32, column.Float64}

// TestGroupWindow checks that a window of groups is the most whose table
// fits the grouped kernels' shared memory, and that the kinds without a
// grouped kernel have none.
func TestGroupWindow(t *testing.T) {
	for _, k := range groupKinds {
		w := GroupWindow(k)
		require.LessOrEqual(t, GroupSharedBytes(k, w), AggGroupSharedBytes, k)
		require.Greater(t, GroupSharedBytes(k, w+1), AggGroupSharedBytes, k)
		require.Equal(t, "arrowagg_group_"+k.String(), GroupKernel(k))
	}
	require.Equal(t, 1177, GroupWindow(column.Int64))
	require.Equal(t, 433, GroupWindow(column.Float64))
	// Float windows of few groups have a table per warp and a staged step
	// per warp (group.cuh's FloatWarpTable), within the shared memory.
	warps := AggBlockThreads / AggWarpThreads
	require.Equal(t, warps*10*AggGroupFloatEntryBytes+AggBlockThreads*12, GroupSharedBytes(column.Float64, 10))
	for w := 1; w <= AggGroupFloatWarpGroups; w++ {
		require.LessOrEqual(t, GroupSharedBytes(column.Float32, w), AggGroupSharedBytes, w)
	}
	require.Equal(t, AggGroupFloatStageBytes+(AggGroupFloatWarpGroups+1)*AggGroupFloatEntryBytes,
		GroupSharedBytes(column.Float64, AggGroupFloatWarpGroups+1))
	// Integer tables of few groups have a copy a lane; of many, one.
	require.Equal(t, 32, GroupReplicas(11))
	require.Equal(t, 11*32*AggGroupIntEntryBytes, GroupSharedBytes(column.Int8, 11))
	require.Equal(t, 1, GroupReplicas(1001))
	require.Equal(t, 2, GroupReplicas(500))
	for w := 1; w <= GroupWindow(column.Int64); w++ {
		r := GroupReplicas(w)
		require.LessOrEqual(t, GroupSharedBytes(column.Int64, w), AggGroupSharedBytes, w)
		require.True(t, r == AggWarpThreads || w*2*r*AggGroupIntEntryBytes > AggGroupSharedBytes, w)
	}
	for _, k := range []column.Kind{column.Bool, column.Decimal128, column.Binary} {
		require.Empty(t, GroupKernel(k), k)
		require.Zero(t, GroupWords(k), k)
		require.False(t, GroupKeyKind(k), k)
	}
	require.True(t, GroupKeyKind(column.Uint8))
	require.True(t, GroupKeyKind(column.Int64))
}

// TestGroupState decodes a group's words: the family's state, then the
// group's rows, whose invalid values are the state's nulls.
func TestGroupState(t *testing.T) {
	minus7 := uint64(math.MaxUint64 - 6)
	w := []uint64{minus7, math.MaxUint64, uint64(0xfffffffffffffffb), 1, 3, 5} // sum -7, min -5, max 1, count 3, rows 5
	require.Len(t, w, GroupWords(column.Int64))
	require.Equal(t, agg.Signed(3, 2, agg.Int192From(-7), -5, 1), GroupState(column.Int64, w))

	w = []uint64{10, 1, 2, 40, 2, 2} // 2^64 + 10, count 2, rows 2
	require.Equal(t, agg.Unsigned(2, 0, agg.Int192{10, 1, 0}, 2, 40), GroupState(column.Uint32, w))

	// A group of rows with no valid value: its rows are nulls.
	f := []uint64{0, 0, 0, uint64(0x7ff0000000000000), 0x800fffffffffffff, 0, 4}
	require.Len(t, f, GroupWords(column.Float64))
	got := GroupState(column.Float64, f)
	require.Equal(t, int64(0), got.Count)
	require.Equal(t, int64(4), got.NullCount)
}
