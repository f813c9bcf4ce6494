//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"gorgonia.org/cu"

	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/gpuagg"
)

// BenchmarkStaging: 1 GiB of Go memory to the device: Upload and Update
// (the backend's own ring), staging rings of other shapes (piece size ×
// slots, fill goroutines), and the ring's copies per 64 MiB chunk on one
// stream or rotating over three (copies on several streams share the link).
func BenchmarkStaging(b *testing.B) {
	_, h2d := ceilings(b)
	src := make([]byte, benchBytes)
	fillRandom(rand.New(rand.NewPCG(5, 1)), src)
	var dst devBuf
	if err := testBackend.d.do(func() (err error) { dst, err = testBackend.d.pool.alloc(benchBytes); return err }); err != nil {
		b.Fatal(err)
	}
	defer testBackend.d.do(func() error { testBackend.d.pool.release(&dst); return nil }) //nolint:errcheck
	// timed reports the median rate of b.N runs of op (after one warm-up)
	// and its share of the pinned H2D ceiling.
	timed := func(b *testing.B, op func() error) {
		run := func() float64 {
			start := time.Now()
			if err := op(); err != nil {
				b.Fatal(err)
			}
			return time.Since(start).Seconds()
		}
		run()
		samples := make([]float64, b.N)
		for i := range samples {
			samples[i] = run()
		}
		t := median(samples)
		b.ReportMetric(benchBytes/t/1e9, "GB/s")
		b.ReportMetric(100*benchBytes/t/h2d, "%h2d")
	}
	b.Run("upload", func(b *testing.B) {
		arr := benchArray(b, memory.DefaultAllocator, arrow.PrimitiveTypes.Int32, false)
		defer arr.Release()
		v := viewOf(b, arr)
		timed(b, func() error {
			c, err := testBackend.Upload(context.Background(), v)
			if err == nil {
				c.Free()
			}
			return err
		})
	})
	b.Run("update", func(b *testing.B) {
		benchUpdate(b, testBackend, benchArray(b, memory.DefaultAllocator, arrow.PrimitiveTypes.Int32, false), h2d)
	})
	// With nulls each chunk's bitmap is a copy of its own, cut into pieces
	// of at least minPiece: 64 KiB against 1 MiB, run by run in turn.
	b.Run("update/nulls10", func(b *testing.B) {
		arr := benchArray(b, memory.DefaultAllocator, arrow.PrimitiveTypes.Int32, true)
		defer arr.Release()
		v := viewOf(b, arr)
		defer func() { testBackend.ring.minPiece = defaultMinPiece }()
		mins := []int{64 << 10, 1 << 20}
		samples := make([][]float64, len(mins))
		for i := -1; i < b.N; i++ {
			for k, m := range mins {
				testBackend.ring.minPiece = m
				s := gpuagg.NewState(v.Kind.Family())
				start := time.Now()
				if err := testBackend.Update(context.Background(), []*column.View{v}, []*gpuagg.State{&s}); err != nil {
					b.Fatal(err)
				}
				if i >= 0 {
					samples[k] = append(samples[k], time.Since(start).Seconds())
				}
			}
		}
		for k, m := range mins {
			b.ReportMetric(float64(v.ByteSize())/median(samples[k])/1e9, fmt.Sprintf("min%dKiB-GB/s", m>>10))
		}
	})
	for _, piece := range []int{1 << 20, 2 << 20, 4 << 20} {
		for _, slots := range []int{16, 32, 64} {
			for _, workers := range []int{8, 12, 15} {
				b.Run(fmt.Sprintf("ring/%dKiBx%d/w%d", piece>>10, slots, workers), func(b *testing.B) {
					var r *ring
					if err := testBackend.d.do(func() (err error) { r, err = testBackend.newRing(piece, slots, workers); return err }); err != nil {
						b.Fatal(err)
					}
					defer testBackend.d.do(r.free) //nolint:errcheck
					st := testBackend.up
					timed(b, func() error {
						return testBackend.d.do(func() error {
							if err := r.copy(context.Background(), testBackend.d, st, transfer{dst.ptr, src}); err != nil {
								return err
							}
							return testBackend.d.syncStream(st)
						})
					})
				})
			}
		}
	}
	for _, streams := range []int{1, 3} {
		b.Run(fmt.Sprintf("chunks64MiB/streams%d", streams), func(b *testing.B) {
			const chunk = 64 << 20
			timed(b, func() error {
				return testBackend.d.do(func() error {
					for k, i := 0, 0; i < len(src); k, i = k+1, i+chunk {
						st := testBackend.lanes[k%streams].stream
						if err := testBackend.ring.copy(context.Background(), testBackend.d, st, transfer{dst.ptr + cu.DevicePtr(i), src[i : i+chunk]}); err != nil {
							return err
						}
					}
					for k := range streams {
						if err := testBackend.d.syncStream(testBackend.lanes[k].stream); err != nil {
							return err
						}
					}
					return nil
				})
			})
		})
	}
}
