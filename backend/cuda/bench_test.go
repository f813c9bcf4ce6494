//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/cudrv"
)

// The GPU benchmarks report, beside Go's own figures, the median rate of
// their iterations (each timed with CUDA events for device work, with the
// wall clock for host-to-device work) and that rate as a percentage of the
// two ceilings measured in the same process: a device-to-device copy (bytes
// read + written) and a host-to-device copy from page-locked memory.
//
//	go test -tags cuda -c -o cuda.test ./backend/cuda
//	./cuda.test -test.run '^$' -test.bench . -test.benchtime 20x

const benchBytes = 1 << 30 // values of every benchmark column (bitmap extra)

var refs struct {
	once     sync.Once
	d2d, h2d float64 // bytes per second
	err      error
}

// ceilings measures the D2D and pinned H2D copy rates once per process.
func ceilings(b *testing.B) (d2d, h2d float64) {
	refs.once.Do(func() {
		refs.err = testBackend.d.do(func() error {
			p := testBackend.d.pool
			src, err := p.alloc(benchBytes)
			if err != nil {
				return err
			}
			defer p.release(&src)
			dst, err := p.alloc(benchBytes)
			if err != nil {
				return err
			}
			defer p.release(&dst)
			host, err := hostAlloc(benchBytes)
			if err != nil {
				return err
			}
			defer hostFree(host) //nolint:errcheck
			fillRandom(rand.New(rand.NewPCG(1, 1)), host)
			st := testBackend.lanes[0].stream
			t, err := timeEvents(st, 20, func() error { return cudrv.MemcpyDtoDAsync(dst.ptr, src.ptr, benchBytes, st) })
			if err != nil {
				return fmt.Errorf("timing the D2D copy: %w", err)
			}
			refs.d2d = 2 * benchBytes / t
			t, err = timeEvents(st, 10, func() error {
				return cudrv.MemcpyHtoDAsync(dst.ptr, unsafe.Pointer(&host[0]), benchBytes, st)
			})
			if err != nil {
				return fmt.Errorf("timing the pinned H2D copy: %w", err)
			}
			refs.h2d = benchBytes / t
			return nil
		})
		if refs.err == nil {
			fmt.Printf("ceilings: d2d %.3f TB/s (read+write), pinned h2d %.2f GB/s\n", refs.d2d/1e12, refs.h2d/1e9)
		}
	})
	if refs.err != nil {
		b.Fatal(refs.err)
	}
	return refs.d2d, refs.h2d
}

// timeEvents runs op iters times on stream st after two warm-ups, timing
// each with events, and returns the median in seconds; device thread.
func timeEvents(st cudrv.Stream, iters int, op func() error) (float64, error) {
	t, err := eventTimes(st, 2, iters, op)
	if err != nil {
		return 0, err
	}
	return median(t), nil
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

var benchTypes = []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64}

// benchArray makes a benchmark column of benchBytes of values (10% nulls
// when nulls), in memory from mem.
func benchArray(b *testing.B, mem memory.Allocator, dt arrow.DataType, nulls bool) arrow.Array {
	k := kindOf(b, dt)
	n := benchBytes / k.Width()
	vals := memory.NewResizableBuffer(mem)
	defer vals.Release()
	vals.Resize(n * k.Width())
	var validity *memory.Buffer
	if nulls {
		validity = memory.NewResizableBuffer(mem)
		defer validity.Release()
		validity.Resize(int(bitutil.BytesForBits(int64(n))))
	}
	parts := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(p), 11))
			lo, hi := n*p/parts, n*(p+1)/parts
			switch k {
			case column.Int32:
				v := column.Slice[int32](vals.Bytes())[lo:hi]
				for i := range v {
					v[i] = int32(r.Uint32())
				}
			case column.Int64:
				v := column.Slice[int64](vals.Bytes())[lo:hi]
				for i := range v {
					v[i] = int64(r.Uint64())
				}
			case column.Float32:
				v := column.Slice[float32](vals.Bytes())[lo:hi]
				for i := range v {
					v[i] = float32(r.NormFloat64() * 1e3)
				}
			case column.Float64:
				v := column.Slice[float64](vals.Bytes())[lo:hi]
				for i := range v {
					v[i] = r.NormFloat64() * 1e6
				}
			}
			if validity != nil {
				vb := validity.Bytes()
				for i := len(vb) * p / parts; i < len(vb)*(p+1)/parts; i++ {
					x := byte(0xff)
					for bit := 0; bit < 8; bit++ {
						if r.IntN(10) == 0 {
							x &^= 1 << bit
						}
					}
					vb[i] = x
				}
			}
		}()
	}
	wg.Wait()
	nullCount := 0
	if validity != nil {
		nullCount = n - bitutil.CountSetBits(validity.Bytes(), 0, n)
	}
	data := array.NewData(dt, n, []*memory.Buffer{validity, vals}, nil, nullCount, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

func nullsName(nulls bool) string {
	if nulls {
		return "nulls10"
	}
	return "nonulls"
}

// BenchmarkResident: fused sum+min+max+count over 1 GiB columns already in
// device memory, one launch each, timed with CUDA events (bitmap bytes
// counted when there are nulls).
func BenchmarkResident(b *testing.B) { benchResident(b, passes{}) }

// BenchmarkResidentOrdered: the same with the ordered aggregates (first,
// last, arg_min, arg_max): the fused launch and the ordered pass after it,
// timed together over the same bytes.
func BenchmarkResidentOrdered(b *testing.B) { benchResident(b, passes{ordered: true}) }

// BenchmarkResidentMoments: the same with stddev and variance: the moments
// kernel (the sums of squares in the same launch), over the same bytes.
func BenchmarkResidentMoments(b *testing.B) { benchResident(b, passes{moments: true}) }

// BenchmarkResidentSketch: the same with stddev, variance and
// approx_distinct: the sketch kernel (the sums of squares and the sketch in
// the same launch), over the same bytes, raising one device sketch.
func BenchmarkResidentSketch(b *testing.B) { benchResident(b, passes{moments: true, sketch: true}) }

func benchResident(b *testing.B, p passes) {
	d2d, _ := ceilings(b)
	ctx := context.Background()
	for _, dt := range benchTypes {
		for _, nulls := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/%s", dt, nullsName(nulls)), func(b *testing.B) {
				arr := benchArray(b, memory.DefaultAllocator, dt, nulls)
				defer arr.Release()
				v := viewOf(b, arr)
				col, err := testBackend.Upload(ctx, v)
				if err != nil {
					b.Fatal(err)
				}
				defer col.Free()
				checkAgainstCPU(b, v, col, p)
				bytes := float64(col.ByteSize())
				b.SetBytes(col.ByteSize())
				b.ResetTimer()
				var t float64
				err = testBackend.d.do(func() error {
					ln := &testBackend.lanes[0]
					var sk devBuf
					defer testBackend.d.pool.release(&sk)
					if p.sketch {
						var err error
						if sk, err = testBackend.d.newSketch(); err != nil {
							return err
						}
					}
					var err error
					t, err = timeEvents(ln.stream, b.N, func() error {
						return col.launch(ln.stream, &ln.sc, 0, uint64(col.n), p, sk.ptr)
					})
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(bytes/t/1e12, "TB/s")
				b.ReportMetric(100*bytes/t/d2d, "%d2d")
			})
		}
	}
}

// BenchmarkResidentCall: what a caller waits for to aggregate a 1 GiB
// resident column (DeviceColumn.update: the launches, the state read back,
// and with approx_distinct a fresh device sketch, its warm-up and its read
// back): the default six (six), with stddev and variance (moments), and
// with approx_distinct too (sketch), one call an iteration, wall time.
func BenchmarkResidentCall(b *testing.B) {
	ctx := context.Background()
	sets := []struct {
		name string
		aggs agg.Set
	}{{"six", agg.Default}, {"moments", agg.Default | agg.Stddev | agg.Variance},
		{"sketch", agg.Default | agg.Stddev | agg.Variance | agg.ApproxDistinct}}
	for _, dt := range benchTypes {
		for _, nulls := range []bool{false, true} {
			arr := benchArray(b, memory.DefaultAllocator, dt, nulls)
			v := viewOf(b, arr)
			col, err := testBackend.Upload(ctx, v)
			if err != nil {
				b.Fatal(err)
			}
			for _, set := range sets {
				b.Run(fmt.Sprintf("%s/%s/%s", dt, nullsName(nulls), set.name), func(b *testing.B) {
					b.SetBytes(col.ByteSize())
					start := time.Now()
					for b.Loop() {
						s := agg.New(v.Kind.Family(), set.aggs)
						if err := col.update(ctx, &s); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(col.ByteSize())*float64(b.N)/time.Since(start).Seconds()/1e12, "TB/s")
				})
			}
			col.Free()
			arr.Release()
		}
	}
}

// checkAgainstCPU makes sure the benchmarked kernels compute the right
// thing (the ordered aggregates and the sums of squares too, where p asks).
func checkAgainstCPU(b *testing.B, v *column.View, col *DeviceColumn, p passes) {
	set := agg.Default
	if p.ordered {
		set |= agg.Ordered
	}
	if p.moments {
		set |= agg.Moments
	}
	if p.sketch {
		set |= agg.ApproxDistinct
	}
	got := agg.New(v.Kind.Family(), set)
	if err := col.Update(context.Background(), &got, v.Row); err != nil {
		b.Fatal(err)
	}
	want := agg.New(v.Kind.Family(), set)
	cpu := &cpu.CPU{Threads: runtime.GOMAXPROCS(0)}
	if err := cpu.Update(context.Background(), []*column.View{v}, []*agg.State{&want}); err != nil {
		b.Fatal(err)
	}
	if got.Count != want.Count || got.Min != want.Min || got.Max != want.Max ||
		(v.Kind.Family() != column.FamilyFloat && got.Sum != want.Sum) ||
		got.FirstRow != want.FirstRow || got.LastRow != want.LastRow || got.First != want.First ||
		got.Last != want.Last || got.MinRow != want.MinRow || got.MaxRow != want.MaxRow ||
		got.Tracks != want.Tracks || (v.Kind.Family() != column.FamilyFloat && got.Sq != want.Sq) {
		b.Fatalf("GPU state %+v, CPU state %+v", got, want)
	}
	if p.sketch && (got.Sketch == nil || want.Sketch == nil || got.Sketch.Registers != want.Sketch.Registers ||
		got.Finalize(set).Distinct != want.Finalize(set).Distinct) {
		b.Fatalf("GPU sketch differs from the CPU's")
	}
}

// BenchmarkEndToEnd: Update of 1 GiB columns in host memory (upload and
// aggregation), wall clock per call: ordinary Go memory through the staging
// pipeline and page-locked Arrow buffers (HostAllocator); the CPU backend on
// the same data for comparison.
func BenchmarkEndToEnd(b *testing.B) {
	_, h2d := ceilings(b)
	pin := testBackend.HostAllocator()
	cpu := &cpu.CPU{Threads: runtime.GOMAXPROCS(0)}
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64} {
		for _, nulls := range []bool{false, true} {
			for _, mode := range []string{"staged", "pinned", "cpu"} {
				b.Run(fmt.Sprintf("%s/%s/%s", dt, nullsName(nulls), mode), func(b *testing.B) {
					mem, backend := memory.Allocator(memory.DefaultAllocator), backend.Backend(testBackend)
					switch mode {
					case "pinned":
						mem = pin
					case "cpu":
						backend = cpu
					}
					benchUpdate(b, backend, benchArray(b, mem, dt, nulls), h2d)
				})
			}
		}
	}
}

// BenchmarkChunks: the staging pipeline on a 1 GiB int32 column in Go memory
// with other chunk sizes (the default is 64 MiB on 3 streams).
func BenchmarkChunks(b *testing.B) {
	_, h2d := ceilings(b)
	arr := benchArray(b, memory.DefaultAllocator, arrow.PrimitiveTypes.Int32, false)
	defer arr.Release()
	for _, mib := range []int{8, 16, 32, 128} {
		b.Run(fmt.Sprintf("%dMiBx3", mib), func(b *testing.B) {
			be, err := Open(WithChunkBytes(mib << 20))
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close() //nolint:errcheck
			arr.Retain()
			benchUpdate(b, be, arr, h2d)
		})
	}
}

// benchUpdate times backend.Update over arr (released at the end) and reports
// the median rate and its share of the pinned H2D ceiling.
func benchUpdate(b *testing.B, backend backend.Backend, arr arrow.Array, h2d float64) {
	defer arr.Release()
	v := viewOf(b, arr)
	bytes := float64(v.ByteSize())
	b.SetBytes(v.ByteSize())
	run := func() time.Duration {
		s := agg.New(v.Kind.Family(), 0)
		start := time.Now()
		if err := backend.Update(context.Background(), []*column.View{v}, []*agg.State{&s}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	// The heap's free memory goes back to the OS now rather than by the
	// runtime's background scavenger during the timed calls (earlier
	// benchmarks free gigabytes).
	debug.FreeOSMemory()
	run() // warm-up: stream buffers, page faults
	b.ResetTimer()
	samples := make([]float64, b.N)
	for i := range samples {
		samples[i] = run().Seconds()
	}
	t := median(samples)
	b.ReportMetric(bytes/t/1e9, "GB/s")
	b.ReportMetric(bytes/slices.Min(samples)/1e9, "GB/s-best")
	b.ReportMetric(bytes/slices.Max(samples)/1e9, "GB/s-worst")
	b.ReportMetric(100*bytes/t/h2d, "%h2d")
}

// BenchmarkHostCopy: copying 1 GiB of Go memory with 1 or 16 goroutines
// into Go memory and into page-locked memory: the ceiling of the staging
// copy on this host (staging cannot beat it, and shares the memory bandwidth
// with the DMA).
func BenchmarkHostCopy(b *testing.B) {
	src := make([]byte, benchBytes)
	fillRandom(rand.New(rand.NewPCG(3, 1)), src)
	goDst := make([]byte, benchBytes)
	copy(goDst, src)
	var pinDst []byte
	if err := testBackend.d.do(func() (err error) { pinDst, err = hostAlloc(benchBytes); return err }); err != nil {
		b.Fatal(err)
	}
	defer testBackend.d.do(func() error { return hostFree(pinDst) }) //nolint:errcheck
	for _, dst := range []struct {
		name string
		buf  []byte
	}{{"go", goDst}, {"pinned", pinDst}} {
		for _, threads := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/threads%d", dst.name, threads), func(b *testing.B) {
				b.SetBytes(benchBytes)
				samples := make([]float64, b.N)
				for i := range samples {
					start := time.Now()
					parallelCopy(dst.buf, src, threads)
					samples[i] = time.Since(start).Seconds()
				}
				b.ReportMetric(benchBytes/median(samples)/1e9, "GB/s")
			})
		}
	}
}

// parallelCopy copies src to dst with threads goroutines, each a share of
// the bytes (len(src) a multiple of threads).
func parallelCopy(dst, src []byte, threads int) {
	var wg sync.WaitGroup
	share := len(src) / threads
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[t*share:(t+1)*share], src[t*share:(t+1)*share])
		}()
	}
	wg.Wait()
}
