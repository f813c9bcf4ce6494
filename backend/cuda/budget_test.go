//go:build cuda

package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/cudrv"
)

// budgetLimit is the device memory budget of the budget tests, far below
// the 64 MiB column they aggregate (and the default stream buffers).
const budgetLimit = 8 << 20

// budgetColumn is an int64 column of 64 MiB of values with 10% nulls,
// starting at row 5, and its CPU states without and with the ordered
// aggregates.
func budgetColumn(t *testing.T, mem memory.Allocator) (arrow.Array, *column.View, [2]agg.State) {
	arr := randomArray(t, mem, rand.New(rand.NewPCG(31, 31)), arrow.PrimitiveTypes.Int64, 8<<20, 0.1)
	v := viewOf(t, arr)
	v.Row = 5
	require.Greater(t, v.ByteSize(), int64(budgetLimit))
	var want [2]agg.State
	for i, ordered := range []bool{false, true} {
		want[i] = newState(v, ordered)
		cpu := &cpu.CPU{Threads: 4}
		require.NoError(t, cpu.Update(t.Context(), []*column.View{v}, []*agg.State{&want[i]}))
	}
	return arr, v, want
}

// TestMemoryBudget: under WithMemoryLimit(8 MiB), a column of 64 MiB
// streams through the device in chunks that fit the budget (no CPU
// fallback), with the CPU's states bit for bit, ordered aggregates
// included. Uploading it fails with ErrOutOfMemory and keeps no memory; a
// column within the budget uploads; Trim brings the device and page-locked
// memory back to their baseline.
func TestMemoryBudget(t *testing.T) {
	var warnings []string
	b, err := Open(WithMemoryLimit(budgetLimit), WithWarnings(func(m string) { warnings = append(warnings, m) }))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	arr, v, want := budgetColumn(t, mem)
	defer arr.Release()
	baseline, pinned0 := b.MemoryInUse(), pinnedBytes.Load()

	for i, ordered := range []bool{false, true} {
		got := newState(v, ordered)
		require.NoError(t, b.Update(t.Context(), []*column.View{v}, []*agg.State{&got}))
		require.Equal(t, want[i], got, "ordered=%v", ordered)
		require.Empty(t, warnings, "streamed on the GPU, not the CPU")
		lb := b.laneBytesForTest()
		require.Positive(t, lb)
		require.Less(t, lb*int64(len(b.lanes)), int64(budgetLimit))
		require.Greater(t, int64(len(v.Values)), 8*lb, "at least 8 chunks")
		require.LessOrEqual(t, b.MemoryInUse(), int64(budgetLimit))
	}

	inUse := b.MemoryInUse()
	col, err := b.Upload(t.Context(), v)
	require.ErrorIs(t, err, ErrOutOfMemory)
	require.Nil(t, col)
	require.Equal(t, inUse, b.MemoryInUse())

	part := array.NewSlice(arr, 1000, 101_000)
	defer part.Release()
	pv := viewOf(t, part)
	col, err = b.Upload(t.Context(), pv)
	require.NoError(t, err, "a column within the budget")
	s, err := col.Aggregate(t.Context())
	col.Free()
	require.NoError(t, err)
	require.Equal(t, cpuState(t, pv), s)

	got := newState(v, true)
	require.NoError(t, b.Update(t.Context(), []*column.View{v}, []*agg.State{&got}))
	require.Equal(t, want[1], got, "after the failed upload")
	requireBaseline(t, b, baseline, pinned0)
}

// TestMemoryBudgetEngine: engine.New with WithGPUMemoryLimit opens the
// registered backend within that budget: the 64 MiB column streams through
// in chunks, with the CPU's states, the device's free memory dropping by
// less than 32 MiB; without the limit the default stream buffers alone take
// more than 192 MiB (the control that the drop is measured).
func TestMemoryBudgetEngine(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	arr, v, want := budgetColumn(t, mem)
	defer arr.Release()
	for _, limit := range []int64{budgetLimit, 0} {
		eng, err := engine.New(engine.WithDevice(engine.DeviceGPU), engine.WithGPUMemoryLimit(limit),
			engine.WithThreads(testThreads), engine.WithCalibration(testCalibration()), engine.WithAllocator(mem))
		require.NoError(t, err)
		free0 := deviceFree(t)
		for i, ordered := range []bool{false, true} {
			got := newState(v, ordered)
			require.NoError(t, eng.UpdateView(t.Context(), v, &got))
			require.Equal(t, want[i], got, "limit=%d ordered=%v", limit, ordered)
		}
		used := free0 - deviceFree(t)
		require.NoError(t, eng.Close())
		t.Logf("device memory taken by the stream buffers with a limit of %d MiB: %.1f MiB", limit>>20, float64(used)/(1<<20))
		if limit > 0 {
			require.Less(t, used, int64(32<<20))
		} else {
			require.Greater(t, used, int64(192<<20))
		}
	}
}

// deviceFree is the device's free memory (all contexts).
func deviceFree(t *testing.T) int64 {
	var free int64
	require.NoError(t, testBackend.d.do(func() (err error) {
		free, _, err = cudrv.MemInfo()
		return err
	}))
	return free
}
