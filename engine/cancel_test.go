package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// pollCtx is a context that counts the calls of its Err method (the polls
// of the operation it is given to), closes marked at the mark-th and cancels
// itself at the at-th (0: never): a cancellation, or a point to cancel
// from, at a fixed point of the operation, whatever the timing.
type pollCtx struct {
	context.Context
	cancel     context.CancelFunc
	at, mark   int64
	polls      atomic.Int64
	cancelled  atomic.Int64 // polls that found the context cancelled
	marked     chan struct{}
	markedOnce sync.Once
}

// newPollCtx returns a context cancelled at its at-th poll and its cancel
// function.
func newPollCtx(at int64) (*pollCtx, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	return &pollCtx{Context: ctx, cancel: cancel, at: at, marked: make(chan struct{})}, cancel
}

func (c *pollCtx) Err() error {
	n := c.polls.Add(1)
	if n == c.at {
		c.cancel()
	}
	if n >= c.mark {
		c.markedOnce.Do(func() { close(c.marked) })
	}
	err := c.Context.Err()
	if err != nil {
		c.cancelled.Add(1)
	}
	return err
}

// fixedArray builds n values val(i) of type dt in buffers of mem; element i
// is null when nullEvery > 0 and i%nullEvery == 0.
func fixedArray[T int32 | int64 | float64](mem memory.Allocator, dt arrow.DataType, n, nullEvery int, val func(i int) T) arrow.Array {
	values := memory.NewResizableBuffer(mem)
	defer values.Release()
	values.Resize(n * int(dt.(arrow.FixedWidthDataType).Bytes()))
	vals := arrow.GetData[T](values.Bytes())[:n]
	for i := range vals {
		vals[i] = val(i)
	}
	validity, nulls := nullBitmap(mem, n, nullEvery)
	if validity != nil {
		defer validity.Release()
	}
	data := array.NewData(dt, n, []*memory.Buffer{validity, values}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// nullBitmap is the validity bitmap of n elements, every nullEvery-th null
// (nil when nullEvery is 0), and its null count.
func nullBitmap(mem memory.Allocator, n, nullEvery int) (*memory.Buffer, int) {
	if nullEvery <= 0 {
		return nil, 0
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := buf.Bytes()
	bitutil.SetBitsTo(bits, 0, int64(n), true)
	nulls := 0
	for i := 0; i < n; i += nullEvery {
		bitutil.ClearBit(bits, i)
		nulls++
	}
	return buf, nulls
}

// stringArray builds n strings of 4 to 19 bytes in buffers of mem.
func stringArray(mem memory.Allocator, n, nullEvery int) arrow.Array {
	offsets := memory.NewResizableBuffer(mem)
	defer offsets.Release()
	offsets.Resize((n + 1) * 4)
	offs := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	for i := 0; i < n; i++ {
		offs[i+1] = offs[i] + int32(4+i%16)
	}
	values := memory.NewResizableBuffer(mem)
	defer values.Release()
	values.Resize(int(offs[n]))
	b := values.Bytes()
	for i := range b {
		b[i] = 'a' + byte((i*7+i/13)%26)
	}
	validity, nulls := nullBitmap(mem, n, nullEvery)
	if validity != nil {
		defer validity.Release()
	}
	data := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{validity, offsets, values}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// structArray is a struct of n elements, every 5th null, over an int32
// field with nulls of its own: the engine combines the two bitmaps into a
// buffer of its allocator.
func structArray(mem memory.Allocator, n int) arrow.Array {
	child := fixedArray(mem, arrow.PrimitiveTypes.Int32, n, 3, func(i int) int32 { return int32(i*7919) - 1<<30 })
	defer child.Release()
	validity, nulls := nullBitmap(mem, n, 5)
	defer validity.Release()
	dt := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	data := array.NewData(dt, n, []*memory.Buffer{validity}, []arrow.ArrayData{child.Data()}, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// cancelColumns are the columns the cancellation tests and benchmarks
// aggregate, by name: each makes an array of n elements.
var cancelColumns = []struct {
	name string
	make func(mem memory.Allocator, n int) arrow.Array
}{
	{"int64", func(mem memory.Allocator, n int) arrow.Array {
		return fixedArray(mem, arrow.PrimitiveTypes.Int64, n, 7, func(i int) int64 { return int64(uint64(i) * 0x9E3779B97F4A7C15) })
	}},
	{"float64", func(mem memory.Allocator, n int) arrow.Array {
		return fixedArray(mem, arrow.PrimitiveTypes.Float64, n, 0, func(i int) float64 { return float64(i%1000) * 0.25 })
	}},
	{"string", func(mem memory.Allocator, n int) arrow.Array { return stringArray(mem, n, 11) }},
	{"struct", structArray},
}

// cancelRecord is a record of every cancelColumns column, n rows.
func cancelRecord(mem memory.Allocator, n int) arrow.Record {
	fields := make([]arrow.Field, len(cancelColumns))
	cols := make([]arrow.Array, len(cancelColumns))
	for i, c := range cancelColumns {
		cols[i] = c.make(mem, n)
		defer cols[i].Release()
		fields[i] = arrow.Field{Name: c.name, Type: cols[i].DataType(), Nullable: true}
	}
	return array.NewRecord(arrow.NewSchema(fields, nil), cols, int64(n))
}

// Cancelling an Add half-way returns context.Canceled, frees the engine's
// buffers (the combined bitmap of the struct leaf), leaves the states as they
// were, and the accumulator stays usable.
func TestCancelAccumulator(t *testing.T) {
	rec := cancelRecord(memory.DefaultAllocator, 1<<20) // 16 morsels a column
	defer rec.Release()
	for _, threads := range []int{1, 2, 3} {
		for _, at := range []int64{1, 2, 5} {
			t.Run(fmt.Sprintf("threads=%d/poll=%d", threads, at), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				eng := cpuEngine(t, mem, threads)
				acc, err := eng.NewAccumulator(rec.Schema(), Request{})
				require.NoError(t, err)
				before := append([]agg.State(nil), acc.States()...)

				ctx, cancel := newPollCtx(at)
				defer cancel()
				err = acc.Add(ctx, rec)
				require.ErrorIs(t, err, context.Canceled)
				assert.Equal(t, before, acc.States(), "a cancelled batch changed the states")
				assert.Zero(t, acc.Rows())
				assert.Zero(t, mem.CurrentAlloc(), "the engine's buffers are freed")

				require.NoError(t, acc.Add(context.Background(), rec))
				fresh, err := eng.NewAccumulator(rec.Schema(), Request{})
				require.NoError(t, err)
				require.NoError(t, fresh.Add(context.Background(), rec))
				assert.Equal(t, fresh.States(), acc.States())
			})
		}
	}
}

// The page path's entry point stops too.
func TestCancelUpdateView(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	arr := cancelColumns[0].make(mem, 1<<20)
	defer arr.Release()
	eng := cpuEngine(t, mem, 2)
	v, err := arrow17.ViewOf(arr)
	require.NoError(t, err)
	s := newState(v.Kind.Family())
	ctx, cancel := newPollCtx(2)
	defer cancel()
	require.ErrorIs(t, eng.UpdateView(ctx, &v, &s), context.Canceled)
	assert.Equal(t, newState(v.Kind.Family()), s)
}

// BenchmarkCancel measures how long aggregating batches of a large column
// (32M elements; as many batches, one Accumulator.Add each, as take about
// 200 ms) takes to return after its context is cancelled half-way:
// ms-to-stop is the mean, worst-ms-to-stop the worst of the iterations,
// full-ms the time of the whole run. Each iteration cancels at a different
// point, between 10% and 60% of the way; missed counts those that ended
// before their cancel came (a busy machine), left out of the figures. ns/op
// is left out: it is not the latency.
func BenchmarkCancel(b *testing.B) {
	const n = 32 << 20
	threads := runtime.GOMAXPROCS(0)
	for _, c := range cancelColumns {
		b.Run(c.name, func(b *testing.B) {
			arr := c.make(memory.DefaultAllocator, n)
			defer arr.Release()
			schema := arrow.NewSchema([]arrow.Field{{Name: c.name, Type: arr.DataType(), Nullable: true}}, nil)
			rec := array.NewRecord(schema, []arrow.Array{arr}, int64(n))
			defer rec.Release()
			eng := cpuEngine(b, memory.DefaultAllocator, threads)
			batches := 1
			add := func(ctx context.Context) error {
				acc, err := eng.NewAccumulator(schema, Request{})
				if err != nil {
					return err
				}
				for range batches {
					if err := acc.Add(ctx, rec); err != nil {
						return err
					}
				}
				return nil
			}
			// As many batches as take about 200 ms: the fast kinds fold a
			// batch in a few tens of milliseconds.
			start := time.Now()
			require.NoError(b, add(context.Background()))
			batches = max(1, int(200*time.Millisecond/time.Since(start)))
			measureCancel(b, add)
			b.ReportMetric(float64(batches), "batches")
		})
	}
}

// measureCancel runs op to completion (best of two), then b.N times
// cancelled part-way, and reports the latencies from cancel to return. The
// point is one of progress, not of time (others may share the CPUs): the
// iterations cancel once op has polled its context 10% to 60% of the times
// a whole run does.
func measureCancel(b *testing.B, op func(ctx context.Context) error) {
	full := time.Duration(1<<63 - 1)
	var polls int64
	for range 2 {
		ctx, cancel := newPollCtx(0)
		start := time.Now()
		require.NoError(b, op(ctx))
		full = min(full, time.Since(start))
		polls = ctx.polls.Load()
		cancel()
	}
	b.ResetTimer()
	var total, worst time.Duration
	missed := 0
	for i := 0; i < b.N; i++ {
		ctx, cancel := newPollCtx(0)
		ctx.mark = max(1, polls*int64(10+50*(i%8)/7)/100)
		done := make(chan error, 1)
		go func() { done <- op(ctx) }()
		<-ctx.marked
		t0 := time.Now()
		cancel()
		err := <-done
		took := time.Since(t0)
		switch {
		case errors.Is(err, context.Canceled):
		case err == nil && ctx.cancelled.Load() == 0:
			// No poll came after the cancel: this goroutine ran too late
			// (others use the CPUs), there is nothing to measure.
			missed++
			continue
		default:
			b.Fatalf("iteration %d: the operation ended with %v, not cancelled", i, err)
		}
		total += took
		worst = max(worst, took)
	}
	if missed == b.N {
		b.Fatalf("every iteration ended before its cancel")
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(missed), "missed")
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N-missed), "ms-to-stop")
	b.ReportMetric(float64(worst.Microseconds())/1e3, "worst-ms-to-stop")
	b.ReportMetric(float64(full.Microseconds())/1e3, "full-ms")
}

// A calibration cut short by a cancelled context is used by the engine that
// made it but not cached: the next run measures again.
func TestCancelledCalibrationIsNotCached(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	calibrate := func(ctx context.Context) {
		e, err := New(WithGPU(&fakeGPU{cpu: cpu.CPU{Threads: 1}}), WithThreads(2))
		require.NoError(t, err)
		defer e.Close()
		e.Calibration(ctx)
	}
	cached := func() []string {
		files, err := filepath.Glob(filepath.Join(cache, "arrowagg", "calibration-*.json"))
		require.NoError(t, err)
		return files
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calibrate(ctx)
	assert.Empty(t, cached(), "a cancelled calibration was cached")
	calibrate(context.Background())
	assert.Len(t, cached(), 1, "a complete calibration is cached")
}
