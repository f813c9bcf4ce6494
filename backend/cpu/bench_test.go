package cpu

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/float16"
	amath "github.com/apache/arrow/go/v17/arrow/math"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

const benchN = 16 << 20

// benchArray builds benchN values drawn by next, about nullFrac of them null.
func benchArray[T any](b array.Builder, appendValue func(T), next func(r *rand.Rand) T, nullFrac float64) arrow.Array {
	defer b.Release()
	r := rand.New(rand.NewPCG(1, 2))
	b.Reserve(benchN)
	for i := 0; i < benchN; i++ {
		if nullFrac > 0 && r.Float64() < nullFrac {
			b.AppendNull()
			continue
		}
		appendValue(next(r))
	}
	return b.NewArray()
}

func benchInt64(nullFrac float64) arrow.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	return benchArray(b, b.UnsafeAppend, func(r *rand.Rand) int64 { return r.Int64N(1<<40) - 1<<39 }, nullFrac)
}

func benchFloat64(nullFrac float64) arrow.Array {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	return benchArray(b, b.UnsafeAppend, func(r *rand.Rand) float64 { return r.NormFloat64() * 1e6 }, nullFrac)
}

func benchInt32(nullFrac float64) arrow.Array {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	return benchArray(b, b.UnsafeAppend, func(r *rand.Rand) int32 { return int32(r.Uint32()) }, nullFrac)
}

func benchFloat32(nullFrac float64) arrow.Array {
	b := array.NewFloat32Builder(memory.DefaultAllocator)
	return benchArray(b, b.UnsafeAppend, func(r *rand.Rand) float32 { return float32(r.NormFloat64() * 1e3) }, nullFrac)
}

func benchFloat16(nullFrac float64) arrow.Array {
	b := array.NewFloat16Builder(memory.DefaultAllocator)
	return benchArray(b, b.Append, func(r *rand.Rand) float16.Num {
		return float16.FromBits(column.HalfFromFloat64(r.NormFloat64() * 100))
	}, nullFrac)
}

func benchFixedSizeBinary16(nullFrac float64) arrow.Array {
	b := array.NewFixedSizeBinaryBuilder(memory.DefaultAllocator, &arrow.FixedSizeBinaryType{ByteWidth: 16})
	return benchArray(b, b.Append, benchUUID, nullFrac)
}

// benchBinary16 is benchFixedSizeBinary16's values as binary.
func benchBinary16(nullFrac float64) arrow.Array {
	b := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
	return benchArray(b, b.Append, benchUUID, nullFrac)
}

func benchUUID(r *rand.Rand) []byte {
	var u [16]byte
	binary.LittleEndian.PutUint64(u[:], r.Uint64())
	binary.LittleEndian.PutUint64(u[8:], r.Uint64())
	return u[:]
}

func benchDecimal32(nullFrac float64) arrow.Array {
	dt, _ := arrow17.NewNarrowDecimalType(32, 9, 2)
	b := array.NewFixedSizeBinaryBuilder(memory.DefaultAllocator, &arrow.FixedSizeBinaryType{ByteWidth: 4})
	st := benchArray(b, b.Append, func(r *rand.Rand) []byte {
		return binary.LittleEndian.AppendUint32(nil, uint32(r.Int32N(2e9)-1e9))
	}, nullFrac)
	defer st.Release()
	return array.NewExtensionArrayWithStorage(dt, st)
}

// benchDecimal128 is benchDecimal32's values as decimal128.
func benchDecimal128(nullFrac float64) arrow.Array {
	b := array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 9, Scale: 2})
	return benchArray(b, b.Append, func(r *rand.Rand) decimal128.Num {
		return decimal128.FromI64(int64(r.Int32N(2e9) - 1e9))
	}, nullFrac)
}

// BenchmarkFused measures the fused sum+min+max+count pass over benchN values
// at one goroutine and at GOMAXPROCS, and arrow/math's SIMD sum (sum only) on
// the same data in the same run where it has one (int64, float64). Bytes are
// those the pass reads: values, and validity where there are nulls. The
// backend's scratch is warmed up first, so allocs/op is the steady state.
func BenchmarkFused(b *testing.B) {
	ctx := context.Background()
	threads := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		threads = append(threads, n)
	}
	for _, tc := range []struct {
		name string
		make func(nullFrac float64) arrow.Array
	}{
		{"int64", benchInt64}, {"float64", benchFloat64}, {"int32", benchInt32}, {"float32", benchFloat32},
		// the narrow kinds (widen.go) beside the wide kinds they are folded as
		{"float16", benchFloat16}, {"decimal32", benchDecimal32}, {"decimal128", benchDecimal128},
		{"fixed_size_binary16", benchFixedSizeBinary16}, {"binary16", benchBinary16},
	} {
		for _, nullFrac := range []float64{0, 0.1} {
			arr := tc.make(nullFrac)
			name := tc.name
			if nullFrac > 0 {
				name = fmt.Sprintf("%s-nulls%.0f", name, 100*nullFrac)
			}
			if a, ok := arr.(*array.Int64); ok {
				b.Run(name+"/arrow-math-sum", func(b *testing.B) {
					b.SetBytes(int64(a.Len() * 8))
					var sink int64
					for i := 0; i < b.N; i++ {
						sink += amath.Int64.Sum(a)
					}
					_ = sink
				})
			}
			if a, ok := arr.(*array.Float64); ok {
				b.Run(name+"/arrow-math-sum", func(b *testing.B) {
					b.SetBytes(int64(a.Len() * 8))
					var sink float64
					for i := 0; i < b.N; i++ {
						sink += amath.Float64.Sum(a)
					}
					_ = sink
				})
			}
			for _, n := range threads {
				b.Run(fmt.Sprintf("%s/fused-threads%d", name, n), func(b *testing.B) {
					c := &CPU{Threads: n}
					v, err := arrow17.ViewOf(arr)
					if err != nil {
						b.Fatal(err)
					}
					// As the engine's UpdateView calls it on a CPU-only
					// engine: one view, its slices on the stack.
					update := func(s *agg.State) error {
						views, states := [1]*column.View{&v}, [1]*agg.State{s}
						return c.Update(ctx, views[:], states[:])
					}
					s := newState(v.Kind.Family())
					if err := update(&s); err != nil {
						b.Fatal(err)
					}
					b.SetBytes(v.ByteSize())
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						s = newState(v.Kind.Family())
						if err := update(&s); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			arr.Release()
		}
	}
}

// BenchmarkStats measures the statistics asked for by name beside the
// default six, on one goroutine, over benchN values with 10% nulls: the
// six alone, with stddev and variance (moments), with approx_distinct
// (sketch), and all of them; per value, the wall time (ns/value) and the
// CPU time of the goroutine's thread (cpu-ns/value: on a loaded host, the
// steadier of the two).
func BenchmarkStats(b *testing.B) {
	ctx := context.Background()
	sets := []struct {
		name string
		set  agg.Set
	}{
		{"six", agg.Default}, {"moments", agg.Default | agg.Moments},
		{"sketch", agg.Default | agg.ApproxDistinct}, {"all", agg.Default | agg.Moments | agg.ApproxDistinct},
	}
	for _, tc := range []struct {
		name string
		make func(nullFrac float64) arrow.Array
	}{
		{"int64", benchInt64}, {"float64", benchFloat64}, {"int32", benchInt32}, {"float32", benchFloat32},
	} {
		arr := tc.make(0.1)
		v, err := arrow17.ViewOf(arr)
		if err != nil {
			b.Fatal(err)
		}
		for _, set := range sets {
			b.Run(tc.name+"-nulls10/"+set.name, func(b *testing.B) {
				c := &CPU{Threads: 1} // one worker: it runs on this goroutine
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.SetBytes(v.ByteSize())
				b.ResetTimer()
				cpu0, known := threadCPU()
				for i := 0; i < b.N; i++ {
					s := agg.New(v.Kind.Family(), set.set)
					views, states := [1]*column.View{&v}, [1]*agg.State{&s}
					if err := c.Update(ctx, views[:], states[:]); err != nil {
						b.Fatal(err)
					}
				}
				cpu1, _ := threadCPU()
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchN, "ns/value")
				if known {
					b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N)/benchN, "cpu-ns/value")
				}
			})
		}
		arr.Release()
	}
}

// BenchmarkSketchKernels measures the sketch's kernels on 512 int64 values
// in cache, in CPU time per value (cpu-ns/value): the hashes alone
// (kernelHashes), and the register filter (kernelRaises) where the
// registers let no hash through (all at the largest rank: the floor drops
// them all), where every hash passes the floor and the gathered registers
// drop them all (floor 0, registers at the largest rank), and where every
// hash raises its register (all 0); then the hashes and the floor's filter
// of 32-bit values.
func BenchmarkSketchKernels(b *testing.B) {
	vals := make([]int64, 512)
	for i := range vals {
		vals[i] = int64(uint64(i) * 0x9e3779b97f4a7c15)
	}
	var out [512]uint64
	run := func(name string, f func()) {
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0, known := threadCPU()
			for i := 0; i < b.N; i++ {
				f()
			}
			cpu1, _ := threadCPU()
			if known {
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N)/float64(len(vals)), "cpu-ns/value")
			}
		})
	}
	run("hashes", func() { kernelHashes(vals, out[:]) })
	var full, empty [agg.SketchRegisters]uint8
	for i := range full {
		full[i] = 51
	}
	run("raises-floor-drops-all", func() { kernelRaises(vals, nil, &full, 51, out[:]) })
	run("raises-registers-drop-all", func() { kernelRaises(vals, nil, &full, 0, out[:]) })
	run("raises-all", func() { kernelRaises(vals, nil, &empty, 0, out[:]) })
	// 32-bit values, whose first round is cheaper (sign- or zero-extended).
	i32, u32 := make([]int32, len(vals)), make([]uint32, len(vals))
	for i, v := range vals {
		i32[i], u32[i] = int32(v>>32), uint32(v>>32)
	}
	run("int32-hashes", func() { kernelHashes(i32, out[:]) })
	run("uint32-hashes", func() { kernelHashes(u32, out[:]) })
	run("int32-raises-floor-drops-all", func() { kernelRaises(i32, nil, &full, 51, out[:]) })
}

// BenchmarkZeroExtremes: 8M float64 values on one worker, normal ones and
// the same clamped at zero (half of them +0: every morsel's minimum is a
// zero, whose sign the morsel's zeros decide).
func BenchmarkZeroExtremes(b *testing.B) {
	for _, clamp := range []bool{false, true} {
		bl := array.NewFloat64Builder(memory.DefaultAllocator)
		r := rand.New(rand.NewPCG(1, 2))
		for range 8 << 20 {
			x := r.NormFloat64() * 1e3
			if clamp {
				x = max(0, x)
			}
			bl.Append(x)
		}
		arr := bl.NewArray()
		bl.Release()
		v, err := arrow17.ViewOf(arr)
		if err != nil {
			b.Fatal(err)
		}
		name := "normal"
		if clamp {
			name = "clamped-at-zero"
		}
		b.Run(name, func(b *testing.B) {
			c := &CPU{Threads: 1}
			b.SetBytes(v.ByteSize())
			for range b.N {
				s := agg.New(v.Kind.Family(), agg.Default)
				views, states := [1]*column.View{&v}, [1]*agg.State{&s}
				if err := c.Update(context.Background(), views[:], states[:]); err != nil {
					b.Fatal(err)
				}
			}
		})
		arr.Release()
	}
}
