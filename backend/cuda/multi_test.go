//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
)

// multiLens are the lengths of the first columns of a test batch (the
// others are random, up to 5000).
var multiLens = []int{1, 33, 0, 4097, 2, 5000, 31, 1000}

// largeLen is the length of the large int64 column among the small ones:
// beyond packMaxBytes, so it takes the chunk pipeline.
const largeLen = 300_007

// multiBatch makes ncols columns of the GPU's types in turn (a random
// first one), of multiLens and random lengths (at most maxLen), null
// fractions 0, 1%, 50% and 100% in turn, sliced at random offsets, a third
// of the float columns with valid NaN and infinities; with large, the
// middle column is a large int64 one. The arrays are released by t.Cleanup.
func multiBatch(t *testing.T, mem memory.Allocator, r *rand.Rand, ncols, maxLen int, large bool) []*column.View {
	first := r.IntN(len(gpuTypes))
	views := make([]*column.View, ncols)
	for i := range views {
		dt := gpuTypes[(first+i)%len(gpuTypes)]
		n := r.IntN(5001)
		if i < len(multiLens) {
			n = multiLens[i]
		}
		n = min(n, maxLen)
		nf := testNullFracs[i%len(testNullFracs)]
		if large && i == ncols/2 {
			dt, n, nf = arrow.PrimitiveTypes.Int64, largeLen, 0.1
		}
		off := r.IntN(80)
		base := randomArray(t, mem, r, dt, off+n, nf)
		if k := kindOf(t, dt); k.Family() == column.FamilyFloat && i%3 == 0 {
			addSpecials(r, base)
		}
		arr := array.NewSlice(base, int64(off), int64(off+n))
		base.Release()
		t.Cleanup(arr.Release)
		views[i] = viewOf(t, arr)
	}
	return views
}

// addSpecials overwrites about 1% of the values of a float array with NaN,
// +Inf and -Inf (valid ones among them).
func addSpecials(r *rand.Rand, arr arrow.Array) {
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	b := arr.Data().Buffers()[1].Bytes()
	for i := 0; i < arr.Len(); i++ {
		if r.IntN(100) != 0 {
			continue
		}
		x := specials[r.IntN(len(specials))]
		if arr.DataType().ID() == arrow.FLOAT32 {
			column.Slice[float32](b)[i] = float32(x)
		} else {
			column.Slice[float64](b)[i] = x
		}
	}
}

// multiStates are fresh states for views (ordered: track the ordered
// aggregates, for the views whose index ordered says).
func multiStates(views []*column.View, ordered func(int) bool) []agg.State {
	s := make([]agg.State, len(views))
	for i, v := range views {
		s[i] = newState(v, ordered != nil && ordered(i))
	}
	return s
}

// updateCounted runs b.Update and returns the kernel launches it made.
func updateCounted(t *testing.T, b *Backend, views []*column.View, states []agg.State) uint64 {
	t.Helper()
	before := launches.Load()
	require.NoError(t, b.Update(t.Context(), views, statePtrs(states)))
	return launches.Load() - before
}

// TestMultiMatchesCPU: batches of 1, 2, 37 and 500 columns of mixed kinds
// (decimal128 and bool among them), null densities, offsets and lengths
// (0 to 5000), alone and with one large column among them, each updated
// twice into the same states, give the CPU backend's states; the small
// columns go in one launch, the large one in its chunk's; a second run
// gives identical states, float bits included.
func TestMultiMatchesCPU(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) }) // after the batches' cleanups
	r := rand.New(rand.NewPCG(31, 7))
	cpu := &cpu.CPU{Threads: 4}
	for _, ncols := range []int{1, 2, 37, 500} {
		for _, large := range []bool{false, true} {
			if large && ncols < 3 {
				continue
			}
			name := fmt.Sprintf("%d columns, large=%v", ncols, large)
			views := multiBatch(t, mem, r, ncols, 5000, large)
			want := multiStates(views, nil)
			for range 2 {
				require.NoError(t, cpu.Update(t.Context(), views, statePtrs(want)), name)
			}
			wantLaunches := uint64(1) // the small columns (the first one is not empty)
			if large {
				wantLaunches++
			}
			got := multiStates(views, nil)
			for pass := range 2 {
				require.Equal(t, wantLaunches, updateCounted(t, testBackend, views, got), "%s: launches of pass %d", name, pass)
			}
			requireMatchesCPU(t, views, want, got, name)

			again := multiStates(views, nil)
			for range 2 {
				updateCounted(t, testBackend, views, again)
			}
			for i := range got {
				requireIdentical(t, got[i], again[i], "%s: column %d, run to run", name, i)
			}
		}
	}
}

// TestMultiOrdered: in a batch whose states track the ordered aggregates
// for some columns, those take the two-kernel path of their own and the
// others are packed; every state matches the CPU's.
func TestMultiOrdered(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	views := multiBatch(t, mem, rand.New(rand.NewPCG(32, 7)), 60, 5000, false)
	for i, v := range views {
		v.Row = 1<<34 + int64(i)*10_000
	}
	ordered := func(i int) bool { return i%4 == 1 }
	want := multiStates(views, ordered)
	require.NoError(t, (&cpu.CPU{Threads: 4}).Update(t.Context(), views, statePtrs(want)))
	got := multiStates(views, ordered)
	var orderedLaunches uint64
	for i, v := range views {
		if ordered(i) && v.Len > 0 {
			orderedLaunches += 2
		}
	}
	require.Equal(t, 1+orderedLaunches, updateCounted(t, testBackend, views, got))
	requireMatchesCPU(t, views, want, got, "ordered")
}

// TestMultiPackets: with 64 KiB chunks (a lane holds 64 KiB, a packed
// column at most 16 KiB) on two streams, 3000 short columns (more than the
// results buffer holds at once) take many packets in several windows, and
// columns beyond the cut take the chunk pipeline; the states match the
// CPU's, with far fewer launches than columns.
func TestMultiPackets(t *testing.T) {
	b, err := Open(WithChunkBytes(64<<10), WithStreams(2))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	r := rand.New(rand.NewPCG(33, 7))
	const ncols = 3000
	require.Greater(t, ncols, len(b.hout)/multiStateBytes, "more columns than one window")
	views := make([]*column.View, ncols)
	var bytes int64
	big := 0
	for i := range views {
		dt := gpuTypes[i%len(gpuTypes)]
		n := r.IntN(700)
		if i%500 == 7 {
			n = 20_000 // beyond 16 KiB for every type but bool
			if kindOf(t, dt) != column.Bool {
				big++
			}
		}
		arr := randomArray(t, mem, r, dt, n, testNullFracs[i%len(testNullFracs)])
		t.Cleanup(arr.Release)
		views[i] = viewOf(t, arr)
		bytes += views[i].ByteSize()
	}
	want := multiStates(views, nil)
	require.NoError(t, (&cpu.CPU{Threads: 4}).Update(t.Context(), views, statePtrs(want)))
	got := multiStates(views, nil)
	n := updateCounted(t, b, views, got)
	t.Logf("%d columns, %d bytes, %d of them beyond the cut: %d launches", ncols, bytes, big, n)
	requireMatchesCPU(t, views, want, got, "packets")
	// A launch reads at most a lane's 64 KiB of values and 8 KiB of bitmap.
	require.GreaterOrEqual(t, n, uint64((bytes+72<<10-1)/(72<<10)), "several packets")
	require.Less(t, n, uint64(ncols/10), "far fewer launches than columns")
	require.GreaterOrEqual(t, n, uint64(big), "a launch at least for each large column")
}

// TestMultiMemory: packed updates use the stream buffers alone: device
// memory returns to what the lanes hold after each call, and to the
// scratch after Trim; page-locked memory to what it was.
func TestMultiMemory(t *testing.T) {
	b, err := Open()
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	views := multiBatch(t, mem, rand.New(rand.NewPCG(34, 7)), 500, 5000, false)
	scratch, pinned0 := b.MemoryInUse(), pinnedBytes.Load()
	states := multiStates(views, nil)
	updateCounted(t, b, views, states)
	withLanes := b.MemoryInUse()
	require.Greater(t, withLanes, scratch)
	for range 3 {
		require.Equal(t, uint64(1), updateCounted(t, b, views, multiStates(views, nil)))
		require.Equal(t, withLanes, b.MemoryInUse())
	}
	requireBaseline(t, b, scratch, pinned0, "packed updates")
}

// TestMultiCancel: a cancelled context stops a packed update, which leaves
// the states as they were.
func TestMultiCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	views := multiBatch(t, mem, rand.New(rand.NewPCG(35, 7)), 40, 5000, false)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	got := multiStates(views, nil)
	require.ErrorIs(t, testBackend.Update(ctx, views, statePtrs(got)), context.Canceled)
	requireStatesIdentical(t, multiStates(views, nil), got)
}

// TestMultiFaults injects a driver failure at every point and occurrence
// of a packed Update (two streams, 128 KiB chunks, so that the 40 columns,
// each of at most 1500 values, fit the 32 KiB cut and make several
// packets): an allocation of the stream buffers shrinks the
// chunks, or, failing every time, hands the columns to the CPU; a launch,
// copy or synchronization fails the call with the driver's error and
// leaves the states untouched and the lanes idle. The next call gives the
// fault-free states, and after Trim the memory is back to its baseline.
func TestMultiFaults(t *testing.T) {
	var warnings []string
	b, err := Open(WithChunkBytes(128<<10), WithStreams(2), WithWarnings(func(m string) { warnings = append(warnings, m) }))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	views := multiBatch(t, mem, rand.New(rand.NewPCG(36, 7)), 40, 1500, false)
	start := multiStates(views, nil)
	want := slices.Clone(start)
	require.NoError(t, (&cpu.CPU{Threads: 4}).Update(t.Context(), views, statePtrs(want)))
	baseline, pinned0 := b.MemoryInUse(), pinnedBytes.Load()
	run := func() ([]agg.State, error) {
		got := slices.Clone(start)
		return got, b.Update(t.Context(), views, statePtrs(got))
	}
	ref, err := run()
	require.NoError(t, err)
	requireMatchesCPU(t, views, want, ref, "fault-free")

	require.NoError(t, b.Trim())
	count := &faults{}
	before := launches.Load()
	got, err := withFaults(t, b, count, run)
	require.NoError(t, err)
	require.Greater(t, launches.Load()-before, uint64(1), "several packets")
	require.Equal(t, int(launches.Load()-before), count.calls[faultLaunch], "every launch can fail")
	requireStatesIdentical(t, ref, got, "counting")
	for p := range numFaultPoints {
		require.Positive(t, count.calls[p], "calls at %s", p)
	}
	t.Logf("calls of one packed Update: %v", count.calls)
	sweep := faultSweep{b: b, warnings: &warnings, run: run, views: views, start: start, want: want, ref: ref,
		baseline: baseline, pinned0: pinned0}
	sweep.each(t, count)
}
