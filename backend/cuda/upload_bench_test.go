//go:build cuda

package cuda

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/staging"
)

// BenchmarkUploadPaths: the ways 1 GiB of Go memory reaches the device,
// interleaved round by round (b.N rounds, the order rotating) so that the
// figures of one round share the host's state, other tenants' memory
// traffic included: Update through the staging ring (upload and
// aggregation) as the backend does it (slots filled by vector stores whose
// lines are then demoted to the shared cache, bitmaps in pieces of 1 MiB
// at least) and through a ring of its own filled by Go's copy, without
// nulls and with 10% (the latter also with bitmaps in pieces of 64 KiB, as
// before); the ring's copy alone; and as references a 16-goroutine host
// memcpy and a DMA from page-locked memory. Each way runs twice in its
// turn, the second timed. Each round is printed, with the rings' mean and
// slowest fill of a piece and the time the device's thread waited for
// fills and for copies; the metrics are medians and worst rounds.
func BenchmarkUploadPaths(b *testing.B) {
	_, h2d := ceilings(b)
	arr := benchArray(b, memory.DefaultAllocator, arrow.PrimitiveTypes.Int32, false)
	defer arr.Release()
	v := viewOf(b, arr)
	src := arr.Data().Buffers()[1].Bytes()[:benchBytes]
	d := testBackend.d
	var dst devBuf
	var pin []byte
	if err := d.do(func() (err error) {
		if dst, err = d.pool.alloc(benchBytes); err != nil {
			return err
		}
		pin, err = hostAlloc(benchBytes)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	defer d.do(func() error { d.pool.release(&dst); return hostFree(pin) }) //nolint:errcheck
	copy(pin, src)
	goDst := make([]byte, benchBytes)
	copy(goDst, src)
	st := testBackend.up
	dma := func(p []byte) error {
		if err := d.copyHtoD(dst.ptr, unsafe.Pointer(&p[0]), int64(len(p)), st); err != nil {
			return err
		}
		return d.syncStream(st)
	}
	type path struct {
		name  string
		op    func() error
		bytes int64 // moved (bitmap included); 0: benchBytes
		ring  *ring // whose fill statistics to print
	}
	// The backend's ring is allocated at its first Update.
	first := agg.New(v.Kind.Family(), 0)
	if err := testBackend.Update(context.Background(), []*column.View{v}, []*agg.State{&first}); err != nil {
		b.Fatal(err)
	}
	// update runs Update over w with ring r (nil: the backend's) in the
	// backend's place, filled the way f says, cutting bitmaps into pieces
	// of at least minPiece (0: the ring's).
	update := func(w *column.View, r *ring, f staging.Fill, minPiece int) func() error {
		return func() error {
			if r != nil {
				old := testBackend.ring
				testBackend.ring = r
				defer func() { testBackend.ring = old }()
			}
			oldFill, oldMin := testBackend.ring.Fill, testBackend.ring.MinPiece
			testBackend.ring.Fill = f
			if minPiece > 0 {
				testBackend.ring.MinPiece = minPiece
			}
			defer func() { testBackend.ring.Fill, testBackend.ring.MinPiece = oldFill, oldMin }()
			s := agg.New(w.Kind.Family(), 0)
			return testBackend.Update(context.Background(), []*column.View{w}, []*agg.State{&s})
		}
	}
	// Go's copy fills a ring of its own: the slots' cache state after one
	// way of filling does not carry over to the other.
	var copyRing *ring
	if err := d.do(func() (err error) {
		copyRing, err = testBackend.newRing(defaultPiece, defaultSlots, testBackend.opts.copyThreads)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	defer d.do(copyRing.free) //nolint:errcheck
	nullArr := benchArray(b, memory.DefaultAllocator, arrow.PrimitiveTypes.Int32, true)
	defer nullArr.Release()
	nv := viewOf(b, nullArr)
	def := testBackend.ring
	paths := []path{
		{"update", update(v, nil, staging.DefaultFill, 0), 0, def},
		{"update-copy", update(v, copyRing, staging.FillCopy, 0), 0, copyRing},
		{"update-nulls10", update(nv, nil, staging.DefaultFill, 0), nv.ByteSize(), def},
		{"update-nulls10-copy", update(nv, copyRing, staging.FillCopy, 0), nv.ByteSize(), copyRing},
		{"update-nulls10-copy-min64KiB", update(nv, copyRing, staging.FillCopy, 64<<10), nv.ByteSize(), copyRing},
		{name: "ring", ring: testBackend.ring, op: func() error {
			return d.do(func() error {
				if err := testBackend.ring.copy(context.Background(), d, st, toDevice(dst.ptr, src)); err != nil {
					return err
				}
				return d.syncStream(st)
			})
		}},
		{name: "memcpy16", op: func() error { parallelCopy(goDst, src, 16); return nil }},
		{name: "pinned", op: func() error { return d.do(func() error { return dma(pin) }) }},
	}
	for _, p := range paths { // warm-up
		if err := p.op(); err != nil {
			b.Fatalf("%s: %v", p.name, err)
		}
	}
	rates := make([][]float64, len(paths))
	b.ResetTimer()
	for r := range b.N {
		var line strings.Builder
		fmt.Fprintf(&line, "round %d:", r)
		for k := range paths {
			i := (k + r) % len(paths)
			// One untimed call first: each way's own steady state.
			if err := paths[i].op(); err != nil {
				b.Fatalf("%s: %v", paths[i].name, err)
			}
			if r := paths[i].ring; r != nil {
				r.ResetStats()
			}
			start := time.Now()
			if err := paths[i].op(); err != nil {
				b.Fatalf("%s: %v", paths[i].name, err)
			}
			bytes := float64(cmp.Or(paths[i].bytes, benchBytes))
			rate := bytes / time.Since(start).Seconds() / 1e9
			rates[i] = append(rates[i], rate)
			fmt.Fprintf(&line, " %s %.1f", paths[i].name, rate)
			if r := paths[i].ring; r != nil {
				st := r.Stats()
				fmt.Fprintf(&line, " (fill %.2f/%.1f ms, waited %.1f+%.1f ms)", st.Fill.Seconds()*1e3/float64(max(st.Pieces, 1)),
					st.MaxFill.Seconds()*1e3, st.WaitFill.Seconds()*1e3, st.WaitCopy.Seconds()*1e3)
			}
		}
		fmt.Println(line.String())
	}
	for i, p := range paths {
		b.ReportMetric(median(rates[i]), p.name+"-GB/s")
		b.ReportMetric(slices.Min(rates[i]), p.name+"-worst")
	}
	b.ReportMetric(100*median(rates[0])*1e9/h2d, "update-%h2d")
}

// BenchmarkCancelLatency: how soon Update of 1 GiB of Go memory (about 22
// ms through the staging ring) returns once its context is cancelled, the
// cancellation landing at a random point of the call (median and slowest of
// b.N calls, in ms). The ring asks the context every 64 pieces and the
// pipeline before each chunk; the copies already enqueued are waited for.
func BenchmarkCancelLatency(b *testing.B) {
	arr := benchArray(b, memory.DefaultAllocator, arrow.PrimitiveTypes.Int32, false)
	defer arr.Release()
	v := viewOf(b, arr)
	rng := rand.New(rand.NewPCG(21, 22))
	lat := make([]float64, 0, b.N)
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		after := time.Duration(rng.Int64N(int64(20 * time.Millisecond)))
		var at atomic.Int64 // when cancel was called (UnixNano)
		timer := time.AfterFunc(after, func() {
			at.Store(time.Now().UnixNano())
			cancel()
		})
		s := agg.New(v.Kind.Family(), 0)
		err := testBackend.Update(ctx, []*column.View{v}, []*agg.State{&s})
		end := time.Now().UnixNano()
		timer.Stop()
		cancel()
		switch {
		case errors.Is(err, context.Canceled):
			lat = append(lat, float64(end-at.Load())/1e6)
		case err != nil:
			b.Fatal(err)
		}
	}
	if len(lat) == 0 {
		b.Fatal("no call was cancelled before it finished")
	}
	b.ReportMetric(median(lat), "median-ms")
	b.ReportMetric(slices.Max(lat), "max-ms")
	b.ReportMetric(float64(len(lat)), "cancelled")
}
