//go:build cuda

package cuda

import (
	"context"
	"flag"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/planner"
)

// BenchmarkDecision measures the planner's decision quality: for host
// columns of 2^10 to 2^30 elements of int32, int64 and float64 (no nulls, in
// ordinary Go memory), the time of one fused aggregation with the CPU forced,
// the GPU forced, and auto (the planner's choice: CPU, GPU or both at once).
// The three run interleaved, one of each per round (b.N rounds), so that the
// host's drift hits them alike; each reports its fastest and median round,
// auto its choice and its time over the faster forced backend's.
//
//	./cuda.test -test.run '^$' -test.bench Decision -test.benchtime 15x
func BenchmarkDecision(b *testing.B) {
	cpuEng, gpuEng, autoEng := decisionEngines(b)
	var cal planner.Calibration
	calOnce := sync.Once{}

	types := []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64}
	const maxLog = 30
	for _, dt := range types {
		kind := kindOf(b, dt)
		width := kind.Width()
		// One buffer of the largest size per type; smaller columns are its
		// prefixes (every run reads distinct data when the column outgrows
		// the caches).
		buf := make([]byte, (1<<maxLog)*width)
		fillParallel(buf, kind)
		for lg := 10; lg <= maxLog; lg += 2 {
			n := 1 << lg
			v := column.View{Type: dt, Kind: kind, Len: n, Values: buf[:n*width]}
			b.Run(fmt.Sprintf("%s/2^%d", dt, lg), func(b *testing.B) {
				benchDecisionView(b, &v, cpuEng, gpuEng, autoEng)
				calOnce.Do(func() { cal = calibrationOf(autoEng) })
			})
		}
		buf = nil
		runtime.GC()
	}
	b.Logf("calibration: %+v", cal)
}

// benchDecisionView times UpdateView of v on the three engines, interleaved,
// reports the times, auto's plan (choice and GPU share) and returns it.
func benchDecisionView(b *testing.B, v *column.View, cpuEng, gpuEng, autoEng *engine.Engine) planner.Decision {
	ctx := context.Background()
	d := autoEng.PlanView(ctx, v, new(agg.New(v.Kind.Family(), 0)))
	run := func(e *engine.Engine) error {
		s := agg.New(v.Kind.Family(), 0)
		return e.UpdateView(ctx, v, &s)
	}
	modes := pickModes([]decisionMode{{"cpu", func() error { return run(cpuEng) }},
		{"gpu", func() error { return run(gpuEng) }}, {"auto", func() error { return run(autoEng) }}})
	b.SetBytes(v.ByteSize() * int64(len(modes)))
	times := interleave(b, modes)
	reportDecision(b, modes, times)
	b.ReportMetric(d.GPUFraction, "gpu-share")
	b.ReportMetric(float64(d.Backend), "choice(0cpu,1gpu,2both)")
	return d
}

// decisionEngines are the engines the decision benchmarks compare, on
// every core: the CPU forced, the GPU forced, and auto.
func decisionEngines(b *testing.B) (cpuEng, gpuEng, autoEng *engine.Engine) {
	threads := runtime.GOMAXPROCS(0)
	var err error
	cpuEng, err = engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithThreads(threads))
	require.NoError(b, err)
	gpuEng, err = engine.New(engine.WithGPU(testBackend), engine.WithDevice(engine.DeviceGPU), engine.WithThreads(threads))
	require.NoError(b, err)
	autoEng, err = engine.New(engine.WithGPU(testBackend), engine.WithThreads(threads))
	require.NoError(b, err)
	return cpuEng, gpuEng, autoEng
}

// decisionMode is one way of running an aggregation in BenchmarkDecision.
type decisionMode struct {
	name string
	run  func() error
}

// decisionModes, when set, leaves out of BenchmarkDecision the modes it does
// not name (comma-separated; auto stays last): e.g. "cpu,auto" to time auto
// against the CPU without GPU runs in between.
var decisionModes = flag.String("decision.modes", "", "modes of BenchmarkDecision (default cpu,gpu,auto)")

func pickModes(all []decisionMode) []decisionMode {
	if *decisionModes == "" {
		return all
	}
	var out []decisionMode
	for _, m := range all {
		if slices.Contains(strings.Split(*decisionModes, ","), m.name) {
			out = append(out, m)
		}
	}
	return out
}

// interleave runs every mode once (a warm-up), then rounds of one run of
// each mode, in turn, and returns each mode's times in seconds.
func interleave(b *testing.B, modes []decisionMode) [][]float64 {
	for _, m := range modes {
		require.NoError(b, m.run(), m.name)
	}
	times := make([][]float64, len(modes))
	b.ResetTimer()
	// At least b.N rounds; more, up to maxRounds, while they take little
	// time: the fastest of many rounds of a short run is a steadier figure.
	const maxRounds, cheap = 201, 1500 * time.Millisecond
	began := time.Now()
	for i := 0; i < b.N || (i < maxRounds && time.Since(began) < cheap); i++ {
		// The rounds go through a Williams design: the rotations of the
		// modes, then the rotations of their reverse, so that each mode
		// starts as many rounds and follows each other mode as often (a run
		// leaves caches, clocks and the memory system to the next one).
		r := i % (2 * len(modes))
		for j := range modes {
			k := (r + j) % len(modes)
			if r >= len(modes) {
				k = len(modes) - 1 - k
			}
			m := modes[k]
			start := time.Now()
			if err := m.run(); err != nil {
				b.Fatalf("%s: %v", m.name, err)
			}
			times[k] = append(times[k], time.Since(start).Seconds())
		}
	}
	b.StopTimer()
	return times
}

// reportDecision reports each mode's fastest and median round in µs, and
// auto's (the last mode's) over the faster of the others', fastest to
// fastest and median to median.
func reportDecision(b *testing.B, modes []decisionMode, times [][]float64) {
	bestMin, bestMed := math.Inf(1), math.Inf(1)
	for k, m := range modes {
		lo, med := slices.Min(times[k]), median(times[k])
		b.ReportMetric(lo*1e6, m.name+"-min-µs")
		b.ReportMetric(med*1e6, m.name+"-median-µs")
		if k < len(modes)-1 {
			bestMin, bestMed = min(bestMin, lo), min(bestMed, med)
		}
	}
	auto := times[len(times)-1]
	b.ReportMetric(slices.Min(auto)/bestMin, "auto/faster-min")
	b.ReportMetric(median(auto)/bestMed, "auto/faster-median")
	// Paired: auto over the faster mode (by fastest round) in the same
	// round, the median over rounds; the drift of the host between rounds
	// cancels out.
	faster := 0
	for k := range modes[:len(modes)-1] {
		if slices.Min(times[k]) < slices.Min(times[faster]) {
			faster = k
		}
	}
	ratios := make([]float64, len(auto))
	for i := range auto {
		ratios[i] = auto[i] / times[faster][i]
	}
	b.ReportMetric(median(ratios), "auto/faster-paired")
}

// calibrationOf returns the calibration an engine planned with.
func calibrationOf(e *engine.Engine) planner.Calibration { return e.Calibration(context.Background()) }

// fillParallel fills buf with varied values of kind using every core:
// random bits for integers, finite values (in ±2^20) for floats, as real
// columns have.
func fillParallel(buf []byte, kind column.Kind) {
	workers := runtime.GOMAXPROCS(0)
	per := (len(buf) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min(len(buf), (w+1)*per)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func(p []byte, seed int) {
			defer wg.Done()
			x := uint64(seed)*0x9e3779b97f4a7c15 + 1
			next := func() uint64 {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				return x
			}
			switch kind {
			case column.Float64:
				f := column.Slice[float64](p)
				for i := range f {
					f[i] = float64(int64(next()>>11)-1<<52) / (1 << 32)
				}
			default:
				for i := range p {
					p[i] = byte(next())
				}
			}
		}(buf[lo:hi], w)
	}
	wg.Wait()
}

// BenchmarkDecisionResident is BenchmarkDecision for data resident on the
// GPU (kept there by an engine.Residency, a copy still in host memory): one
// record batch of a single column of 2^10 to 2^30 elements, aggregated
// through the same API by the three: forced CPU (Engine.AggregateRecord on
// the host copy), forced GPU (a Residency of a DeviceGPU engine: every column
// on the device) and auto (a Residency of the default engine, whose planner
// keeps on the host the columns the CPU aggregates faster than a launch).
//
//	./cuda.test -test.run '^$' -test.bench DecisionResident -test.benchtime 15x
func BenchmarkDecisionResident(b *testing.B) {
	ctx := context.Background()
	cpuEng, gpuEng, autoEng := decisionEngines(b)
	const budget = 20 << 30
	gpuRes, err := gpuEng.NewResidency(budget)
	require.NoError(b, err)
	defer gpuRes.Close()
	autoRes, err := autoEng.NewResidency(budget)
	require.NoError(b, err)
	defer autoRes.Close()
	req := engine.Request{Aggs: agg.Default}

	types := []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64}
	const maxLog = 30
	for _, dt := range types {
		kind := kindOf(b, dt)
		width := kind.Width()
		buf := make([]byte, (1<<maxLog)*width)
		fillParallel(buf, kind)
		for lg := 10; lg <= maxLog; lg += 2 {
			n := 1 << lg
			b.Run(fmt.Sprintf("%s/2^%d", dt, lg), func(b *testing.B) {
				data := array.NewData(dt, n, []*memory.Buffer{nil, memory.NewBufferBytes(buf[:n*width])}, nil, 0, 0)
				arr := array.MakeFromData(data)
				data.Release()
				schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: dt}}, nil)
				rec := array.NewRecord(schema, []arrow.Array{arr}, int64(n))
				arr.Release()
				defer rec.Release()
				onGPU, err := gpuRes.UploadRecord(ctx, rec)
				require.NoError(b, err)
				defer onGPU.Release()
				auto, err := autoRes.UploadRecord(ctx, rec)
				require.NoError(b, err)
				defer auto.Release()
				modes := []decisionMode{
					{"cpu", func() error { _, err := cpuEng.AggregateRecord(ctx, rec, req); return err }},
					{"gpu", func() error { _, err := onGPU.Results(ctx, req); return err }},
					{"auto", func() error { _, err := auto.Results(ctx, req); return err }},
				}
				b.SetBytes(int64(n*width) * int64(len(modes)))
				before := autoRes.Stats()
				times := interleave(b, modes)
				after := autoRes.Stats()
				reportDecision(b, modes, times)
				// A contested column's calls go to either backend: the share
				// of auto's calls (warm-up included) that ran on the device.
				hits, host := after.Hits-before.Hits, after.HostUses-before.HostUses
				share := float64(hits) / float64(max(1, hits+host))
				choice := 0.0
				if share >= 0.5 {
					choice = 1
				}
				b.ReportMetric(choice, "choice(0cpu,1gpu,2both)")
				b.ReportMetric(share, "gpu-share")
				_, plan, err := auto.Aggregate(ctx, req)
				require.NoError(b, err)
				b.Logf("auto: %s on %s: %s", plan[0].Backend, plan[0].Location, plan[0].Reason)
			})
		}
		buf = nil
		runtime.GC()
	}
}

// BenchmarkDecisionPinned is BenchmarkDecision for large columns in
// page-locked host memory (HostAllocator: the DMA engine reads them with no
// staging copy), where the planner may split a column between the GPU and
// the CPU: 2^26 to 2^30 int32 values and 2^26 to 2^28 float64 ones.
//
//	./cuda.test -test.run '^$' -test.bench DecisionPinned -test.benchtime 5x
func BenchmarkDecisionPinned(b *testing.B) {
	cpuEng, gpuEng, autoEng := decisionEngines(b)
	pin := testBackend.HostAllocator()
	for _, c := range []struct {
		dt     arrow.DataType
		maxLog int
	}{{arrow.PrimitiveTypes.Int32, 30}, {arrow.PrimitiveTypes.Float64, 28}} {
		kind := kindOf(b, c.dt)
		width := kind.Width()
		buf := pin.Allocate((1 << c.maxLog) * width)
		fillParallel(buf, kind)
		for lg := 26; lg <= c.maxLog; lg += 2 {
			n := 1 << lg
			v := column.View{Type: c.dt, Kind: kind, Len: n, Values: buf[:n*width]}
			b.Run(fmt.Sprintf("%s/2^%d", c.dt, lg), func(b *testing.B) {
				d := benchDecisionView(b, &v, cpuEng, gpuEng, autoEng)
				b.Logf("auto: %s: %s", d.Backend, d.Reason())
			})
		}
		pin.Free(buf)
	}
}
