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

	"github.com/arrowagg/arrowagg/internal/cudrv"
)

// BenchmarkStaging: 1 GiB of Go memory to the device: Upload (the backend's
// own ring), staging rings of other shapes (piece size × slots, fill
// goroutines), and the ring's copies per 64 MiB chunk on one stream or
// rotating over three (copies on several streams share the link).
// BenchmarkUploadPaths compares Update's variants round by round.
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
							if err := r.copy(context.Background(), testBackend.d, st, toDevice(dst.ptr, src)); err != nil {
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
						if err := testBackend.ring.copy(context.Background(), testBackend.d, st, toDevice(dst.ptr+cudrv.DevicePtr(i), src[i:i+chunk])); err != nil {
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
