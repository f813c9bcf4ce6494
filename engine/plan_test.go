package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/planner"
)

// fakeGPU is a GPU backend for tests on machines without one: it aggregates
// with the CPU code and counts what it was given.
type fakeGPU struct {
	cpu      cpu.CPU
	elements atomic.Int64
	calls    atomic.Int64
	fail     error // when set, Update fails with it (and changes nothing)
}

func (f *fakeGPU) Name() string { return "gpu" }
func (f *fakeGPU) Handles(v *column.View) bool {
	return v.Kind.Family() != column.FamilyBytes && v.Kind != column.Opaque && v.Dict == nil
}
func (f *fakeGPU) Close() error                         { return nil }
func (f *fakeGPU) SupportsOrdered() bool                { return true }
func (f *fakeGPU) Locate(*column.View) planner.Location { return planner.Host }
func (f *fakeGPU) Update(ctx context.Context, views []*column.View, states []*agg.State) error {
	f.calls.Add(1)
	if f.fail != nil {
		return f.fail
	}
	for _, v := range views {
		f.elements.Add(int64(v.Len))
	}
	return f.cpu.Update(ctx, views, states)
}

// splitCalibration makes the planner split large columns about half and half.
func splitCalibration() planner.Calibration {
	return planner.Calibration{Host: "test", CPUPerThread: 10e9, CPUMax: 10e9, MaxThreads: 2, HostMemory: 100e9, CPUOverhead: time.Microsecond,
		GPU: "fake", H2DPinned: 20e9, H2DPageable: 5e9, HostStaged: 10e9, DeviceRead: 1e12, Launch: 20 * time.Microsecond}
}

// TestSplitExecution: a column split between the "GPU" and the CPU gives the
// oracle's answer, the plan says how it split, small columns stay on the CPU
// and strings never go to the GPU.
func TestSplitExecution(t *testing.T) {
	r, seed := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	gpu := &fakeGPU{cpu: cpu.CPU{Threads: 1}}
	e, err := New(WithGPU(gpu), WithCalibration(splitCalibration()), WithThreads(2), WithAllocator(mem), WithMinSplitBytes(2<<20))
	require.NoError(t, err)
	defer e.Close()

	n := 4 << 20 / 8 // 4 MiB of int64: above the split threshold
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int8, arrow.BinaryTypes.String}
	cols := make([]arrow.Array, len(types))
	fields := make([]arrow.Field, len(types))
	for i, dt := range types {
		parent := randArray(mem, r, dt, n+3, 0.1)
		cols[i] = array.NewSlice(parent, 3, int64(3+n))
		parent.Release()
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: true}
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()

	acc, err := e.NewAccumulator(rec.Schema(), Request{Aggs: agg.Default | agg.Ordered})
	require.NoError(t, err)
	require.NoError(t, acc.Add(context.Background(), rec))
	res := acc.Results()
	for i := range res {
		want := oracleOrdered(rec.Column(i))
		msg := fmt.Sprintf("%s seed=%d", types[i], seed)
		checkResult(t, res[i], want, types[i], msg)
		checkOrdered(t, res[i], want, msg)
	}
	plan := acc.Plan()
	require.Equal(t, "cpu+gpu", plan[0].BackendName(), plan[0].Reason)
	require.InDelta(t, 0.5, plan[0].GPUFraction, 1e-9)
	require.Equal(t, "cpu", plan[1].BackendName(), "0.5 MiB of int8: below the split threshold, and the cpu is faster than a launch plus the copy")
	require.Equal(t, "cpu", plan[2].BackendName())
	require.Contains(t, plan[2].Reason, "does not handle")
	// The fake GPU got about half of each split column, in whole morsels.
	got := gpu.elements.Load()
	require.Equal(t, int64(0), got%cpu.MorselSize)
	require.InDelta(t, float64(n)/2, float64(got), cpu.MorselSize)
	require.Greater(t, plan[0].Measured, time.Duration(0))
	require.Greater(t, plan[0].Estimated, time.Duration(0))
}

func TestForcedDevices(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r, _ := seeded(t)
	arr := randArray(mem, r, arrow.PrimitiveTypes.Float64, 1000, 0.2)
	defer arr.Release()
	want := oracle(arr)
	for _, d := range []Device{DeviceCPU, DeviceGPU, DeviceAuto} {
		gpu := &fakeGPU{cpu: cpu.CPU{Threads: 1}}
		e, err := New(WithGPU(gpu), WithDevice(d), WithCalibration(splitCalibration()), WithAllocator(mem))
		require.NoError(t, err)
		res, err := e.AggregateArray(context.Background(), arr, agg.Default)
		require.NoError(t, err)
		checkResult(t, res, want, arr.DataType(), d.String())
		switch d {
		case DeviceGPU:
			require.Equal(t, int64(1000), gpu.elements.Load())
		default: // a small column stays on the CPU when the planner decides
			require.Zero(t, gpu.elements.Load(), d.String())
		}
	}
}

// TestFailedBatchChangesNothing: when the GPU part of a batch fails, the
// columns the CPU aggregated in the same batch are not counted either, so
// that adding the batch again counts every row once.
func TestFailedBatchChangesNothing(t *testing.T) {
	r, seed := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	gpu := &fakeGPU{cpu: cpu.CPU{Threads: 1}}
	e, err := New(WithGPU(gpu), WithDevice(DeviceGPU), WithCalibration(splitCalibration()), WithThreads(2), WithAllocator(mem))
	require.NoError(t, err)
	defer e.Close()
	cpuEng, err := New(WithDevice(DeviceCPU), WithAllocator(mem))
	require.NoError(t, err)

	const n = 300_000
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64}
	cols := make([]arrow.Array, len(types))
	fields := make([]arrow.Field, len(types))
	for i, dt := range types {
		cols[i] = randArray(mem, r, dt, n, 0.1)
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: true}
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, n)
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()

	ctx := context.Background()
	req := Request{Aggs: agg.Default | agg.Ordered}
	acc, err := e.NewAccumulator(rec.Schema(), req)
	require.NoError(t, err)
	require.NoError(t, acc.Add(ctx, rec))
	before := slices.Clone(acc.States())

	gpu.fail = errors.New("injected launch failure")
	err = acc.Add(ctx, rec)
	require.ErrorIs(t, err, gpu.fail, "seed %d", seed)
	require.Equal(t, before, acc.States(), "a failed batch changed the states (seed %d)", seed)

	gpu.fail = nil
	require.NoError(t, acc.Add(ctx, rec))
	want, err := cpuEng.NewAccumulator(rec.Schema(), req)
	require.NoError(t, err)
	require.NoError(t, want.Add(ctx, rec))
	require.NoError(t, want.Add(ctx, rec))
	for i, w := range want.States() {
		g := acc.States()[i]
		if w.Family == column.FamilyFloat {
			// The GPU's part of a batch is merged as one partial: float
			// sums may round differently in the last bits.
			require.InEpsilon(t, w.FSum+w.FComp, g.FSum+g.FComp, 1e-12, "seed %d", seed)
			w.FSum, w.FComp, g.FSum, g.FComp = 0, 0, 0, 0
		}
		require.Equal(t, w, g, "column %d, seed %d", i, seed)
	}
}
