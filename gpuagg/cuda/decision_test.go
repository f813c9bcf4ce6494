//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/gpuagg"
	"github.com/arrowagg/arrowagg/planner"
)

// BenchmarkDecision measures the planner's decision quality: for host
// columns of 2^10 to 2^30 elements of int32, int64 and float64 (no nulls, in
// ordinary Go memory), the time of one fused aggregation with the CPU forced,
// the GPU forced, and auto (the planner's choice: CPU, GPU or both at once).
// Each auto run reports its choice and GPU share as metrics.
//
//	./cuda.test -test.run '^$' -test.bench Decision -test.benchtime 5x
func BenchmarkDecision(b *testing.B) {
	ctx := context.Background()
	threads := runtime.GOMAXPROCS(0)
	cpuEng, err := gpuagg.New(gpuagg.WithDevice(gpuagg.DeviceCPU), gpuagg.WithThreads(threads))
	require.NoError(b, err)
	gpuEng, err := gpuagg.New(gpuagg.WithGPU(testBackend), gpuagg.WithDevice(gpuagg.DeviceGPU), gpuagg.WithThreads(threads))
	require.NoError(b, err)
	autoEng, err := gpuagg.New(gpuagg.WithGPU(testBackend), gpuagg.WithThreads(threads))
	require.NoError(b, err)
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
			for _, mode := range []struct {
				name string
				e    *gpuagg.Engine
			}{{"cpu", cpuEng}, {"gpu", gpuEng}, {"auto", autoEng}} {
				b.Run(fmt.Sprintf("%s/2^%d/%s", dt, lg, mode.name), func(b *testing.B) {
					b.SetBytes(v.ByteSize())
					s := gpuagg.NewState(kind.Family())
					var d planner.Decision
					if mode.name == "auto" {
						d = autoEng.PlanView(ctx, &v, &s)
						calOnce.Do(func() { cal = calibrationOf(autoEng) })
					}
					require.NoError(b, mode.e.UpdateView(ctx, &v, &s)) // warm
					secs := make([]float64, 0, b.N)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						s := gpuagg.NewState(kind.Family())
						start := time.Now()
						if err := mode.e.UpdateView(ctx, &v, &s); err != nil {
							b.Fatal(err)
						}
						secs = append(secs, time.Since(start).Seconds())
					}
					b.StopTimer()
					b.ReportMetric(median(secs)*1e6, "median-µs")
					if mode.name == "auto" { // (after the loop: ResetTimer drops metrics)
						b.ReportMetric(d.GPUFraction, "gpu-share")
						b.ReportMetric(float64(d.Backend), "choice(0cpu,1gpu,2both)")
					}
				})
			}
		}
	}
	b.Logf("calibration: %+v", cal)
}

// calibrationOf returns the calibration an engine planned with.
func calibrationOf(e *gpuagg.Engine) planner.Calibration { return e.Calibration(context.Background()) }

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
