//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/planner"
)

// residencyCalibration is a plausible calibration of testBackend's GPU, so
// that the tests do not measure one. The tests force the GPU: with
// DeviceAuto, columns the CPU aggregates before a launch returns would stay
// on the host.
func residencyCalibration() planner.Calibration {
	n := runtime.GOMAXPROCS(0)
	return planner.Calibration{Host: "test", CPUPerThread: 5e9, CPUMax: 5e9 * float64(min(n, 8)), MaxThreads: n,
		CPUOverhead: 5 * time.Microsecond, GPU: testBackend.DeviceName(), H2DPinned: 50e9, H2DPageable: 20e9,
		HostStaged: 40e9, DeviceRead: 3e12, Launch: 20 * time.Microsecond}
}

// residencyRecord is a record batch of n rows: a column of every type the
// GPU handles (10% nulls, sliced at an odd offset) and a string column.
func residencyRecord(t testing.TB, mem memory.Allocator, r *rand.Rand, n int) arrow.Record {
	var fields []arrow.Field
	var cols []arrow.Array
	for i, dt := range gpuTypes {
		parent := randomArray(t, mem, r, dt, n+5, 0.1)
		cols = append(cols, array.NewSlice(parent, 5, int64(n+5)))
		parent.Release()
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: true})
	}
	sb := array.NewStringBuilder(mem)
	for i := 0; i < n; i++ {
		sb.Append(fmt.Sprintf("s%06d", r.IntN(1000000)))
	}
	cols = append(cols, sb.NewArray())
	sb.Release()
	fields = append(fields, arrow.Field{Name: "str", Type: arrow.BinaryTypes.String})
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// requireResidentSame checks GPU results against the CPU's, column by
// column: integers, decimals and the ordered aggregates exactly, float sums
// within the documented bound.
func requireResidentSame(t *testing.T, rec arrow.Record, want, got []engine.Result, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	for i := range want {
		v := viewOf(t, rec.Column(i))
		m := fmt.Sprintf("%s: column %s (%s)", msg, want[i].Name, v.Type)
		requireSame(t, v, want[i].State, got[i].State, m)
		if want[i].State.Ordered() {
			requireSameOrdered(t, want[i].State, got[i].State, m)
		}
	}
}

// TestResidency: records whose columns together exceed the budget, made
// resident and aggregated in turns (each twice in a row), evicting each
// other: every result equals the CPU's, the plan shows where each column was, the residency's
// books match the device memory the backend holds, and Close returns it to
// where it was.
func TestResidency(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := t.Context()
	r := rand.New(rand.NewPCG(21, 21))
	e, err := engine.New(engine.WithGPU(testBackend), engine.WithDevice(engine.DeviceGPU),
		engine.WithCalibration(residencyCalibration()), engine.WithAllocator(mem))
	require.NoError(t, err)
	cpu, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithAllocator(mem))
	require.NoError(t, err)

	// The stream buffers exist before the baseline: the host path uses them.
	warm := randomArray(t, mem, r, arrow.PrimitiveTypes.Int64, 1000, 0)
	gpuState(t, testBackend, viewOf(t, warm), false)
	warm.Release()
	baseline := testBackend.MemoryInUse()

	recs := make([]arrow.Record, 3)
	for i := range recs {
		recs[i] = residencyRecord(t, mem, r, 300_000+i*4099)
		defer recs[i].Release()
	}
	var largest int64 // device bytes of the largest record's GPU columns
	for i := range gpuTypes {
		largest += testBackend.DeviceBytes(viewOf(t, recs[2].Column(i)))
	}
	rz, err := e.NewResidency(largest * 3 / 2)
	require.NoError(t, err)
	res := make([]*engine.Resident, len(recs))
	for i, rec := range recs {
		res[i], err = rz.UploadRecord(ctx, rec)
		require.NoError(t, err)
		require.Equal(t, rz.Stats().Resident, testBackend.MemoryInUse()-baseline, "DeviceBytes is what Upload takes")
	}

	req := engine.Request{Aggs: agg.Default | agg.Ordered}
	want := make([][]engine.Result, len(recs))
	for i, rec := range recs {
		want[i], err = cpu.AggregateRecord(ctx, rec, req)
		require.NoError(t, err)
	}
	reasons := map[string]int{}
	for round := 0; round < 3; round++ {
		for k := range 2 * len(recs) {
			i := k / 2 // each record twice in a row: the second call finds it resident
			got, plan, err := res[i].Aggregate(ctx, req)
			require.NoError(t, err)
			requireResidentSame(t, recs[i], want[i], got, fmt.Sprintf("round %d record %d", round, i))
			for c, p := range plan[:len(gpuTypes)] {
				require.Equal(t, "device", p.LocationName(), "column %d: %s", c, p.Reason)
				require.Equal(t, "gpu", p.BackendName())
				if k%2 == 1 {
					require.Contains(t, p.Reason, "resident on the GPU (uploaded 1 call ago)")
				}
				reasons[p.Reason[:min(len(p.Reason), 26)]]++
			}
			require.Equal(t, "host", plan[len(gpuTypes)].LocationName(), "strings")
			st := rz.Stats()
			require.LessOrEqual(t, st.Resident, st.Budget)
			require.Equal(t, st.Resident, testBackend.MemoryInUse()-baseline)
		}
	}
	t.Logf("plan reasons: %v", reasons)
	st := rz.Stats()
	t.Logf("stats: %+v", st)
	require.Positive(t, st.Evictions)
	require.Positive(t, st.Reuploads)
	require.Equal(t, int64(3*len(recs)*len(gpuTypes)), st.Hits, "every second call")

	// Rows before the resident ones: the ordered aggregates' rows move.
	head := residencyRecord(t, mem, r, 5000)
	defer head.Release()
	wantAcc, err := cpu.NewAccumulator(head.Schema(), req)
	require.NoError(t, err)
	acc, err := e.NewAccumulator(head.Schema(), req)
	require.NoError(t, err)
	for _, a := range []*engine.Accumulator{wantAcc, acc} {
		require.NoError(t, a.Add(ctx, head))
	}
	require.NoError(t, wantAcc.Add(ctx, recs[0]))
	require.NoError(t, acc.AddResident(ctx, res[0]))
	requireResidentSame(t, recs[0], wantAcc.Results(), acc.Results(), "after other rows")

	for _, x := range res {
		x.Release()
	}
	require.Equal(t, baseline, testBackend.MemoryInUse(), "released")
	require.NoError(t, rz.Close())
	require.Equal(t, baseline, testBackend.MemoryInUse())
}

// TestResidencyClose: Close frees the resident columns at once, before the
// data is released.
func TestResidencyClose(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := t.Context()
	e, err := engine.New(engine.WithGPU(testBackend), engine.WithDevice(engine.DeviceGPU),
		engine.WithCalibration(residencyCalibration()), engine.WithAllocator(mem))
	require.NoError(t, err)
	before := testBackend.MemoryInUse()
	rz, err := e.NewResidency(1 << 30)
	require.NoError(t, err)
	rec := residencyRecord(t, mem, rand.New(rand.NewPCG(22, 22)), 100_000)
	defer rec.Release()
	res, err := rz.UploadRecord(ctx, rec)
	require.NoError(t, err)
	defer res.Release()
	require.Equal(t, len(gpuTypes), rz.Stats().Columns)
	require.Greater(t, testBackend.MemoryInUse(), before)
	require.NoError(t, rz.Close())
	require.Equal(t, before, testBackend.MemoryInUse())
	_, _, err = res.Aggregate(ctx, engine.Request{})
	require.ErrorIs(t, err, engine.ErrResidencyClosed)
}

// BenchmarkResidency: aggregating a 1 GiB record batch (one column) again
// and again: resident on the device, through the engine's host path (the
// planner's choice: GPU pipeline, CPU or both), and on the CPU alone; wall
// clock per call, GB/s of the column's bytes (median of the iterations).
// The one-time upload is reported as upload_ms.
//
//	./cuda.test -test.run '^$' -test.bench Residency -test.benchtime 20x
func BenchmarkResidency(b *testing.B) {
	ctx := context.Background()
	e, err := engine.New(engine.WithGPU(testBackend))
	if err != nil {
		b.Fatal(err)
	}
	e.Calibration(ctx) // measured (or loaded) before any timing
	cpu, err := engine.New(engine.WithDevice(engine.DeviceCPU))
	if err != nil {
		b.Fatal(err)
	}
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64} {
		for _, nulls := range []bool{false, true} {
			arr := benchArray(b, memory.DefaultAllocator, dt, nulls)
			schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: dt, Nullable: nulls}}, nil)
			rec := array.NewRecord(schema, []arrow.Array{arr}, int64(arr.Len()))
			arr.Release()
			v, err := arrow17.ViewOf(rec.Column(0))
			if err != nil {
				b.Fatal(err)
			}
			bytes := float64(v.ByteSize())
			for _, mode := range []string{"resident", "host", "cpu"} {
				b.Run(fmt.Sprintf("%s/%s/%s", dt, nullsName(nulls), mode), func(b *testing.B) {
					var upload time.Duration // resident: the one-time upload
					call := func(ctx context.Context) error {
						var err error
						switch mode {
						case "host":
							_, err = e.AggregateRecord(ctx, rec, engine.Request{})
						case "cpu":
							_, err = cpu.AggregateRecord(ctx, rec, engine.Request{})
						}
						return err
					}
					if mode == "resident" {
						rz, err := e.NewResidency(4 << 30)
						if err != nil {
							b.Fatal(err)
						}
						defer rz.Close()
						start := time.Now()
						res, err := rz.UploadRecord(ctx, rec)
						if err != nil {
							b.Fatal(err)
						}
						defer res.Release()
						upload = time.Since(start)
						if st := rz.Stats(); st.Columns != 1 {
							b.Fatalf("the column is not resident: %+v", st)
						}
						call = func(ctx context.Context) error {
							_, plan, err := res.Aggregate(ctx, engine.Request{})
							if err == nil && plan[0].LocationName() != "device" {
								err = fmt.Errorf("aggregated from %s: %s", plan[0].Location, plan[0].Reason)
							}
							return err
						}
					}
					if err := call(ctx); err != nil { // warm-up
						b.Fatal(err)
					}
					b.SetBytes(int64(bytes))
					b.ResetTimer()
					samples := make([]float64, b.N)
					for i := range samples {
						start := time.Now()
						if err := call(ctx); err != nil {
							b.Fatal(err)
						}
						samples[i] = time.Since(start).Seconds()
					}
					b.ReportMetric(bytes/median(samples)/1e9, "GB/s")
					if upload > 0 {
						b.ReportMetric(upload.Seconds()*1e3, "upload_ms")
					}
				})
			}
			rec.Release()
		}
	}
}
