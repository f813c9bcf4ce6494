//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/planner"
)

// testThreads is the CPU goroutines of the test engines.
const testThreads = 8

// testCalibration is a calibration for engines of testThreads goroutines
// on the test backend's GPU, so that tests plan without measuring: the CPU
// at 4 GB/s per goroutine, 12 GB/s at most; host memory fast enough for a
// split; the GPU path at 20 GB/s from ordinary memory, 20 µs per launch.
// Columns of less than about 0.5 MB go to the CPU, larger ones to the GPU,
// and columns of 32 MiB or more are split between them.
func testCalibration() planner.Calibration {
	cal := planner.Defaults(testThreads)
	cal.HostMemory = 200e9
	cal.GPU, cal.HostStaged, cal.H2DPinned, cal.H2DPageable, cal.DeviceRead = testBackend.DeviceName(), 20e9, 25e9, 10e9, 2e12
	cal.Launch = 20 * time.Microsecond
	return cal
}

// concTask is one goroutine's work in TestConcurrentEngine and what it got.
type concTask struct {
	kind      int
	ordered   bool
	rec       arrow.Record  // the slice aggregated (kinds 0 and 1)
	arrs      []arrow.Array // the slices aggregated (kinds 2 and 3)
	views     []*column.View
	got, want []agg.State
	plans     []engine.ColumnPlan
	err       error
}

// TestConcurrentEngine: 64 goroutines share one Engine (DeviceAuto on the
// test backend) and the backend itself, on mixed work at once: records
// whose columns the planner sends to the GPU, to the CPU (small columns,
// strings, dictionaries) or splits between them, with and without the
// ordered aggregates; single views through UpdateView; and resident columns
// uploaded, aggregated and freed. Every result equals the CPU engine's
// (float sums within the documented bound), each backend choice occurs, and
// the backend holds as much device memory afterwards as before.
func TestConcurrentEngine(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(12, 12))

	// mixed: GPU kinds large and small, strings and a dictionary.
	const nMixed = 200_003
	var fields []arrow.Field
	var cols []arrow.Array
	for i, c := range []struct {
		dt       arrow.DataType
		nullFrac float64
	}{
		{arrow.PrimitiveTypes.Int64, 0.1}, {arrow.PrimitiveTypes.Float64, 0.05}, {arrow.PrimitiveTypes.Int8, 0.2},
		{arrow.FixedWidthTypes.Boolean, 0.3}, {&arrow.Decimal128Type{Precision: 38, Scale: 2}, 0.1},
		{arrow.PrimitiveTypes.Uint32, 0}, {arrow.PrimitiveTypes.Float32, 0.5},
	} {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: c.dt, Nullable: true})
		cols = append(cols, randomArray(t, mem, r, c.dt, nMixed, c.nullFrac))
	}
	sb := array.NewStringBuilder(mem)
	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String})
	for i := 0; i < nMixed; i++ {
		if i%17 == 0 {
			sb.AppendNull()
		} else {
			sb.Append(fmt.Sprintf("s%06d", r.IntN(1_000_000)))
		}
		require.NoError(t, db.(*array.BinaryDictionaryBuilder).AppendString(fmt.Sprintf("d%02d", r.IntN(40))))
	}
	fields = append(fields, arrow.Field{Name: "str", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "dict", Type: db.Type()})
	cols = append(cols, sb.NewArray(), db.NewArray())
	sb.Release()
	db.Release()
	mixed := array.NewRecord(arrow.NewSchema(fields, nil), cols, nMixed)
	for _, c := range cols {
		c.Release()
	}
	defer mixed.Release()

	// big: columns of more than 32 MiB, split between the CPU and the GPU.
	const nBig = 4_500_000
	bigI := randomArray(t, mem, r, arrow.PrimitiveTypes.Int64, nBig, 0.05)
	bigF := randomArray(t, mem, r, arrow.PrimitiveTypes.Float64, nBig, 0.05)
	big := array.NewRecord(arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil), []arrow.Array{bigI, bigF}, nBig)
	bigI.Release()
	bigF.Release()
	defer big.Release()

	// The backend's memory before: the stream buffers allocated (as the
	// other tests leave them), no resident column.
	warm := agg.New(column.FamilySigned, 0)
	require.NoError(t, testBackend.Update(t.Context(), []*column.View{viewOf(t, big.Column(0))}, []*agg.State{&warm}))
	baseline := testBackend.MemoryInUse()
	cpuEng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithThreads(testThreads), engine.WithAllocator(mem))
	require.NoError(t, err)
	eng, err := engine.New(engine.WithGPU(testBackend), engine.WithThreads(testThreads), engine.WithAllocator(mem),
		engine.WithCalibration(testCalibration()), engine.WithMinSplitBytes(32<<20))
	require.NoError(t, err)
	require.Equal(t, engine.DeviceAuto, eng.Device())

	const workers = 64
	tasks := make([]concTask, workers)
	var wg sync.WaitGroup
	for g := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			task := &tasks[g]
			task.kind, task.ordered = g%4, g%8 >= 4
			task.err = runConcTask(t.Context(), task, g, cpuEng, eng, mixed, big)
		}()
	}
	wg.Wait()
	defer func() {
		for _, task := range tasks {
			if task.rec != nil {
				task.rec.Release()
			}
			for _, a := range task.arrs {
				a.Release()
			}
		}
	}()

	seen := map[string]int{}
	for g := range tasks {
		task := &tasks[g]
		name := fmt.Sprintf("goroutine %d (kind %d, ordered %v)", g, task.kind, task.ordered)
		require.NoError(t, task.err, name)
		require.Len(t, task.got, len(task.views), name)
		require.Len(t, task.want, len(task.views), name)
		for i, v := range task.views {
			w, got := task.want[i], task.got[i]
			if !testBackend.Handles(v) {
				require.Equal(t, w, got, "%s column %d", name, i) // the CPU's both times
				continue
			}
			requireSame(t, v, w, got, "%s column %d", name, i)
			require.Equal(t, task.ordered, got.Ordered(), name)
			if task.ordered {
				requireSameOrdered(t, w, got, "%s column %d", name, i)
			}
		}
		for _, p := range task.plans {
			seen[p.BackendName()]++
		}
	}
	t.Logf("column plans: %v", seen)
	for _, b := range []string{"cpu", "gpu", "cpu+gpu"} {
		require.Positive(t, seen[b], "no column planned on %s", b)
	}
	require.Equal(t, baseline, testBackend.MemoryInUse(), "resident columns freed, stream buffers as before")
}

// runConcTask runs goroutine g's work, by task.kind: 0, a slice of mixed
// (a record of GPU and CPU columns); 1, a slice of big (split columns); 2,
// two columns of mixed resident on the device; 3, two columns of mixed
// through UpdateView (one the CPU takes, one the GPU). The CPU engine's
// states go into task.want. It runs on its own goroutine: no assertions.
func runConcTask(ctx context.Context, task *concTask, g int, cpuEng, eng *engine.Engine, mixed, big arrow.Record) error {
	aggs := agg.Default
	if task.ordered {
		aggs |= agg.Ordered
	}
	switch task.kind {
	case 0, 1:
		src := mixed
		if task.kind == 1 {
			src = big
		}
		task.rec = src.NewSlice(int64(g*7), src.NumRows()-int64(g*13))
		for i := range task.rec.NumCols() {
			v, err := arrow17.ViewOf(task.rec.Column(int(i)))
			if err != nil {
				return err
			}
			task.views = append(task.views, &v)
		}
		var err error
		if task.want, _, err = accumulate(ctx, cpuEng, task.rec, aggs); err != nil {
			return fmt.Errorf("cpu engine: %w", err)
		}
		task.got, task.plans, err = accumulate(ctx, eng, task.rec, aggs)
		return err
	}
	lo, hi := int64(g*5), int64(mixed.NumRows())-int64(g*3)
	cols := []int{0, 4} // resident: int64 and decimal
	if task.kind == 3 {
		cols = []int{2, 1} // UpdateView: int8 (the CPU's) and float64 (the GPU's)
	}
	for _, c := range cols {
		arr := array.NewSlice(mixed.Column(c), lo, hi)
		task.arrs = append(task.arrs, arr)
		v, err := arrow17.ViewOf(arr)
		if err != nil {
			return err
		}
		v.Row = lo
		want := newState(&v, task.ordered)
		got := want
		cpu := &cpu.CPU{Threads: 2}
		if err := cpu.Update(ctx, []*column.View{&v}, []*agg.State{&want}); err != nil {
			return err
		}
		if task.kind == 3 {
			if err := eng.UpdateView(ctx, &v, &got); err != nil {
				return fmt.Errorf("UpdateView: %w", err)
			}
		} else {
			col, err := testBackend.Upload(ctx, &v)
			if err != nil {
				return err
			}
			err = col.Update(ctx, &got, v.Row)
			col.Free()
			if err != nil {
				return err
			}
		}
		task.views = append(task.views, &v)
		task.want = append(task.want, want)
		task.got = append(task.got, got)
	}
	return nil
}

// accumulate aggregates rec with e through an Accumulator: the states and
// how each column was planned.
func accumulate(ctx context.Context, e *engine.Engine, rec arrow.Record, aggs agg.Set) ([]agg.State, []engine.ColumnPlan, error) {
	acc, err := e.NewAccumulator(rec.Schema(), engine.Request{Aggs: aggs})
	if err != nil {
		return nil, nil, err
	}
	if err := acc.Add(ctx, rec); err != nil {
		return nil, nil, err
	}
	return acc.States(), acc.Plan(), nil
}
