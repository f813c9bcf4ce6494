package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/planner"
)

// lazyGPU is a GPU backend that sets its device up lazily (backend.Prober),
// like the CUDA backend that engine.New opens: it counts the probes and the
// calibrations, and its probe fails with err when set.
type lazyGPU struct {
	fakeGPU
	err     error
	probes  atomic.Int64
	names   atomic.Int64 // DeviceName calls: the planner's calibration
	devName string
}

func (g *lazyGPU) Probe() error { g.probes.Add(1); return g.err }
func (g *lazyGPU) DeviceName() string {
	g.names.Add(1)
	return g.devName
}

var _ backend.Prober = (*lazyGPU)(nil)

func lazyRecord(t *testing.T, n int) arrow.Record {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range n {
		b.Append(int64(i))
	}
	arr := b.NewArray()
	defer arr.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return array.NewRecord(schema, []arrow.Array{arr}, int64(n))
}

// TestTinyInputTouchesNoGPU: under DeviceAuto a batch whose columns are all
// tiny (planner.TinyBytes) is planned without a calibration, so a lazily
// opened backend is neither probed nor asked for its name (the driver is
// never initialized); the CPU aggregates it, the plan says why.
func TestTinyInputTouchesNoGPU(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	g := &lazyGPU{devName: "lazy"}
	e, err := New(WithGPU(g), WithThreads(2))
	require.NoError(t, err)
	defer e.Close()
	rec := lazyRecord(t, 3)
	defer rec.Release()
	acc, err := e.NewAccumulator(rec.Schema(), Request{})
	require.NoError(t, err)
	require.NoError(t, acc.Add(context.Background(), rec))
	res := acc.Results()
	require.NoError(t, res[0].Err)
	assert.Equal(t, int64(3), res[0].Count)
	p := acc.Plan()[0]
	assert.Equal(t, "cpu", p.BackendName())
	assert.Contains(t, p.Reason, "done before any GPU launch returns")

	v := &column.View{Type: arrow.PrimitiveTypes.Int64, Kind: column.Int64, Len: 2, Values: make([]byte, 16)}
	s := agg.New(column.FamilySigned, 0)
	require.NoError(t, e.UpdateView(context.Background(), v, &s))
	assert.Zero(t, g.probes.Load(), "probed for a tiny input")
	assert.Zero(t, g.names.Load(), "calibrated for a tiny input")
	assert.Zero(t, g.calls.Load(), "the GPU aggregated a tiny input")
	assert.True(t, e.HasGPU())
}

// TestSmallJobTouchesNoGPU: under DeviceAuto, work marked as a job smaller
// than the GPU's start (WithSmallJob) is planned on the CPU without a
// calibration, whatever its views' sizes: a lazily opened backend is
// neither probed nor asked for its name. Once the engine has a calibration
// the mark changes nothing, and DeviceGPU ignores it.
func TestSmallJobTouchesNoGPU(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	small := WithSmallJob(context.Background())
	g := &lazyGPU{devName: "lazy"}
	e, err := New(WithGPU(g), WithThreads(2))
	require.NoError(t, err)
	defer e.Close()
	assert.True(t, e.WantsJobSize(), "a GPU under DeviceAuto, not calibrated")
	rec := lazyRecord(t, 100_000) // 800 kB: worth planning but for the mark
	defer rec.Release()
	acc, err := e.NewAccumulator(rec.Schema(), Request{})
	require.NoError(t, err)
	require.NoError(t, acc.Add(small, rec))
	assert.Equal(t, int64(100_000), acc.Results()[0].Count)
	p := acc.Plan()[0]
	assert.Equal(t, "cpu", p.BackendName())
	assert.Contains(t, p.Reason, "less on the cpu than the gpu's start")

	v := &column.View{Type: arrow.PrimitiveTypes.Int64, Kind: column.Int64, Len: 100_000, Values: make([]byte, 800_000)}
	s := agg.New(column.FamilySigned, 0)
	require.NoError(t, e.UpdateView(small, v, &s))
	assert.Equal(t, int64(100_000), s.Count)
	assert.Zero(t, g.probes.Load(), "probed for a small job")
	assert.Zero(t, g.names.Load(), "calibrated for a small job")
	assert.Zero(t, g.calls.Load(), "the GPU aggregated a small job")

	// Unmarked, the same view is planned: the engine calibrates. Then the
	// mark no longer decides.
	require.NoError(t, e.UpdateView(context.Background(), v, &s))
	assert.EqualValues(t, 1, g.names.Load(), "no calibration for a view of 800 kB")
	assert.False(t, e.WantsJobSize(), "calibrated")
	acc, err = e.NewAccumulator(rec.Schema(), Request{})
	require.NoError(t, err)
	require.NoError(t, acc.Add(small, rec))
	assert.NotContains(t, acc.Plan()[0].Reason, "gpu's start")

	// DeviceGPU (a backend that calibrates as a GPU): the mark is no
	// reason to keep work off the GPU.
	g2 := &calibratingGPU{lazyGPU: lazyGPU{devName: "calibrating"}}
	e2, err := New(WithGPU(g2), WithThreads(2), WithDevice(DeviceGPU))
	require.NoError(t, err)
	defer e2.Close()
	assert.False(t, e2.WantsJobSize(), "DeviceGPU")
	s2 := agg.New(column.FamilySigned, 0)
	require.NoError(t, e2.UpdateView(small, v, &s2))
	assert.EqualValues(t, 1, g2.calls.Load())
	assert.Equal(t, int64(100_000), s2.Count)

	// The page kernels: a small job's pages stay on the CPU uncalibrated,
	// even where the columns' work alone would be worth asking.
	g3 := &lazyPagesGPU{lazyGPU: lazyGPU{devName: "pages"}}
	e3, err := New(WithGPU(g3), WithThreads(2))
	require.NoError(t, err)
	defer e3.Close()
	big := []PageColumn{{Kind: column.Int64, Chunks: []planner.PageWork{{Stored: 1 << 37, Decoded: 1 << 40}}}}
	route := e3.PagesOnGPU(small, big)[0]
	assert.False(t, route.OnGPU())
	assert.Contains(t, route.CPUWhy[0], "less there than the gpu's start")
	assert.Zero(t, g3.names.Load(), "calibrated for a small job's pages")
	_ = e3.PagesOnGPU(context.Background(), big)
	assert.EqualValues(t, 1, g3.names.Load(), "no calibration for a terabyte of pages")
}

// lazyPagesGPU is a lazyGPU with page kernels (backend.PageGPU) that
// decode nothing.
type lazyPagesGPU struct{ lazyGPU }

func (g *lazyPagesGPU) HandlesPages(column.Kind, agg.Set) bool { return true }
func (g *lazyPagesGPU) Warm() error                            { return nil }
func (g *lazyPagesGPU) UpdatePages(context.Context, *column.Pages, *agg.State) error {
	return errors.New("lazyPagesGPU decodes no pages")
}

// calibratingGPU is a lazyGPU that measures GPU figures (splitCalibration's)
// when the planner calibrates.
type calibratingGPU struct{ lazyGPU }

func (g *calibratingGPU) CalibrateGPU(ctx context.Context, cal *planner.Calibration) error {
	c := splitCalibration()
	cal.GPU, cal.H2DPinned, cal.H2DPageable, cal.HostStaged, cal.DeviceRead, cal.Launch = c.GPU, c.H2DPinned, c.H2DPageable, c.HostStaged, c.DeviceRead, c.Launch
	return nil
}

// TestLazyGPUWithoutDevice: a lazily opened backend whose device is missing
// fails DeviceGPU at New (wrapping ErrNoGPU), and under DeviceAuto makes
// the engine plan on the CPU alone once it needs the device.
func TestLazyGPUWithoutDevice(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	noDevice := errors.New("no CUDA-capable device is detected")
	_, err := New(WithGPU(&lazyGPU{err: noDevice}), WithDevice(DeviceGPU))
	require.ErrorIs(t, err, backend.ErrNoGPU)
	require.ErrorIs(t, err, noDevice)

	g := &lazyGPU{err: noDevice}
	e, err := New(WithGPU(g), WithThreads(2))
	require.NoError(t, err)
	defer e.Close()
	rec := lazyRecord(t, 100_000) // 800 kB: worth planning
	defer rec.Release()
	acc, err := e.NewAccumulator(rec.Schema(), Request{})
	require.NoError(t, err)
	require.NoError(t, acc.Add(context.Background(), rec))
	assert.Equal(t, int64(100_000), acc.Results()[0].Count)
	assert.Equal(t, "cpu: no GPU", acc.Plan()[0].Reason)
	assert.EqualValues(t, 1, g.probes.Load())
	assert.Zero(t, g.names.Load(), "calibrated without a device")
	assert.Zero(t, g.calls.Load())
	assert.False(t, e.HasGPU())
	assert.Equal(t, planner.Defaults(2), e.Calibration(context.Background()))
	files, _ := filepath.Glob(filepath.Join(cache, "arrowagg", "*"))
	assert.Empty(t, files, "a calibration without a device was cached")
	_, err = e.NewResidency(1 << 20)
	require.ErrorIs(t, err, backend.ErrNoGPU)
}

// hintedGPU also names its device without initializing a driver
// (backend.NameHinter), as the CUDA backend does from the driver's records.
type hintedGPU struct {
	lazyGPU
	hint string
}

func (g *hintedGPU) NameHint() (string, bool) { return g.hint, g.hint != "" }

// TestCachedCalibrationByName: under DeviceAuto, with a calibration cached
// for the GPU the backend names without its driver, a column larger than
// planner.TinyBytes is planned from the cache: no probe, no DeviceName, and
// the CPU aggregates it where the calibration says the CPU wins. Without a
// hint (or without a cache entry) the engine probes as before.
func TestCachedCalibrationByName(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	host, _ := os.Hostname()
	path, err := planner.CachePath(host, "hinted")
	require.NoError(t, err)
	cal := planner.Defaults(2) // no GPU figures: the CPU wins everything
	cal.Host = host
	require.NoError(t, planner.Save(path, cal))
	_, ok := planner.Cached(2, "hinted")
	require.True(t, ok)

	rec := lazyRecord(t, 100_000)
	defer rec.Release()
	run := func(g *hintedGPU) {
		e, err := New(WithGPU(g), WithThreads(2))
		require.NoError(t, err)
		defer e.Close()
		res, err := e.AggregateRecord(context.Background(), rec, Request{})
		require.NoError(t, err)
		require.Equal(t, int64(100_000), res[0].Count)
	}
	g := &hintedGPU{lazyGPU: lazyGPU{devName: "hinted"}, hint: "hinted"}
	run(g)
	assert.Zero(t, g.probes.Load(), "probed although the cache had the calibration")
	assert.Zero(t, g.names.Load())
	assert.Zero(t, g.calls.Load(), "the GPU aggregated what the calibration gives the CPU")

	other := &hintedGPU{lazyGPU: lazyGPU{devName: "hinted"}, hint: "other model"}
	run(other)
	assert.Equal(t, int64(1), other.probes.Load(), "no cache for the hinted name: probe as before")
	none := &hintedGPU{lazyGPU: lazyGPU{devName: "hinted"}}
	run(none)
	assert.Equal(t, int64(1), none.probes.Load(), "no hint: probe as before")
}

// openPagesGPU has page kernels, measures GPU figures and reports whether
// its device is open (backend.DeviceOpener).
type openPagesGPU struct {
	lazyPagesGPU
	open bool
}

func (g *openPagesGPU) CalibrateGPU(ctx context.Context, cal *planner.Calibration) error {
	return (&calibratingGPU{}).CalibrateGPU(ctx, cal)
}
func (g *openPagesGPU) DeviceOpen() bool { return g.open }

// snappyChunks is a column of 16 chunks of 64 MiB each holding 64 MiB
// times ratio of snappy pages.
func snappyChunks(ratio int64) PageColumn {
	col := PageColumn{Kind: column.Int64}
	for range 16 {
		var w planner.PageWork
		w.AddKernel(planner.PagesSnappy, 1<<26, ratio<<26)
		col.Chunks = append(col.Chunks, w)
	}
	return col
}

// TestPagesOnGPUDeviceOpen: the page route pays the device's start only
// when the device is not open yet. 1 GiB of chunks holding 7 GiB of snappy
// pages, 16 chunks on 16 threads: the CPU 0.47 s, and the device's start
// 0.45 s. Not open, with no calibration cached, the route is weighed at
// the default rates, which keep it on the CPU: no calibration is measured;
// one given decides the same. Open, the GPU decodes 11 of the chunks while
// the CPU reads the other 5 (a chunk's segments on every thread): 0.20 s.
func TestPagesOnGPUDeviceOpen(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	col := snappyChunks(7)
	const cpuWhy = "parquet pages decoded on the cpu: 470ms estimated, 651ms on the gpu"
	for _, open := range []bool{false, true} {
		g := &openPagesGPU{lazyPagesGPU: lazyPagesGPU{lazyGPU{devName: fmt.Sprint("pages-", open)}}, open: open}
		e, err := New(WithGPU(g), WithThreads(16))
		require.NoError(t, err)
		route := e.PagesOnGPU(context.Background(), []PageColumn{col})[0]
		onGPU := 0
		for i := range route.GPU {
			if !open {
				assert.False(t, route.GPU[i], "chunk %d", i)
				assert.Equal(t, cpuWhy+"; at the default rates, with no calibration yet", route.CPUWhy[i])
				continue
			}
			if route.GPU[i] {
				onGPU++
				assert.Empty(t, route.CPUWhy[i])
			} else {
				assert.Equal(t, "parquet pages decoded on the cpu, the gpu decoding the other chunks at once: 197ms estimated, 470ms on the cpu alone", route.CPUWhy[i])
			}
		}
		if open {
			assert.Equal(t, 11, onGPU)
			assert.Equal(t, "parquet pages decoded on the gpu, the cpu reading the other chunks at once: 197ms estimated, 470ms on 16 cpu threads alone", route.Plan.Reason)
			assert.EqualValues(t, 1, g.names.Load(), "calibrated")
		} else {
			assert.Zero(t, g.names.Load(), "calibrated for pages the default rates keep on the CPU")
		}
		require.NoError(t, e.Close())
	}
	cal := planner.PageStandIn(16)
	cal.GPU = "given"
	g := &openPagesGPU{lazyPagesGPU: lazyPagesGPU{lazyGPU{devName: "pages-given"}}}
	e, err := New(WithGPU(g), WithThreads(16), WithCalibration(cal))
	require.NoError(t, err)
	defer e.Close()
	route := e.PagesOnGPU(context.Background(), []PageColumn{col})[0]
	assert.False(t, route.OnGPU())
	assert.Equal(t, cpuWhy, route.CPUWhy[0])
}

// TestPagesOnGPUStandIn: with no calibration, pages that the default rates
// give the GPU (9 GiB that compress ninefold on 2 threads: 4.8 s on the
// CPU) have a calibration measured, which decides.
func TestPagesOnGPUStandIn(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	col := snappyChunks(9)
	g := &openPagesGPU{lazyPagesGPU: lazyPagesGPU{lazyGPU{devName: "pages-standin"}}}
	e, err := New(WithGPU(g), WithThreads(2))
	require.NoError(t, err)
	defer e.Close()
	route := e.PagesOnGPU(context.Background(), []PageColumn{col})[0]
	assert.EqualValues(t, 1, g.names.Load(), "a calibration measured")
	assert.True(t, route.OnGPU(), route.Plan.Reason)
	assert.NotContains(t, route.Plan.Reason, "default rates")
}

// TestPagesOnGPUMemoryLimit: under a GPU memory limit, the chunks whose
// pages alone need more device memory than it stay on the CPU, the others
// go to the GPU (--device gpu); with no limit all go.
func TestPagesOnGPUMemoryLimit(t *testing.T) {
	col := PageColumn{Kind: column.Int64}
	for _, stored := range []int64{1 << 20, 8 << 20, 1 << 20} { // (as many bytes decompressed: 2.5, 20 and 2.5 MiB with the pool's quarter)
		var w planner.PageWork
		w.AddKernel(planner.PagesSnappy, stored, stored)
		col.Chunks = append(col.Chunks, w)
	}
	for _, limit := range []int64{0, 4 << 20} {
		g := &openPagesGPU{lazyPagesGPU: lazyPagesGPU{lazyGPU{devName: fmt.Sprint("limit-", limit)}}, open: true}
		e, err := New(WithGPU(g), WithDevice(DeviceGPU), WithGPUMemoryLimit(limit))
		require.NoError(t, err)
		route := e.PagesOnGPU(context.Background(), []PageColumn{col})[0]
		assert.Equal(t, []bool{true, limit == 0, true}, route.GPU, "limit %d", limit)
		if limit > 0 {
			assert.Equal(t, "parquet pages decoded on the cpu: their chunk needs more device memory than the GPU's limit (4.0 MiB)", route.CPUWhy[1])
		}
		require.NoError(t, e.Close())
	}
}
