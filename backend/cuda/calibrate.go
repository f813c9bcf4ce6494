//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/internal/pqdev"
	"github.com/arrowagg/arrowagg/kernels"
	"github.com/arrowagg/arrowagg/planner"
)

var (
	_ planner.GPUCalibrator = (*Backend)(nil)
	_ backend.Locator       = (*Backend)(nil)
	_ backend.NameHinter    = (*Backend)(nil)
)

// DeviceName is the GPU's name (the planner keys its calibration cache by
// it); empty when Probe fails. It initializes the driver, not the device.
func (b *Backend) DeviceName() string { return b.Info().Name }

// Locate implements backend.Locator: views in page-locked host memory that
// this package allocated (HostAllocator, staging) are copied by DMA
// directly; other host memory goes through the staging pipeline. It asks no
// driver, so planning costs no round trip to the device's thread; memory
// that others page-locked is planned as ordinary host memory (and still
// copied directly, faster than planned).
func (b *Backend) Locate(v *column.View) planner.Location {
	if ours.holds(v.Values) {
		return planner.Pinned
	}
	return planner.Host
}

// calibrationBytes is the size of the columns CalibrateGPU times: large
// enough for steady rates, small enough to take a few tens of milliseconds.
const calibrationBytes = 128 << 20

// CalibrateGPU implements planner.GPUCalibrator: it measures the copy rates
// from page-locked and pageable memory, the rate of Update on ordinary Go
// memory (the staging pipeline), the kernel's read rate on resident data and
// the cost of a launch with its read-back, each the best of a few runs;
// and the page kernels' rates (calibratePages: where they fail,
// PageError says why).
func (b *Backend) CalibrateGPU(ctx context.Context, cal *planner.Calibration) error {
	host := make([]byte, calibrationBytes)
	for i := range host {
		host[i] = byte(i * 131)
	}
	v := &column.View{Type: column.TypeName("int32"), Kind: column.Int32, Len: calibrationBytes / 4, Values: host}
	tiny := &column.View{Type: column.TypeName("int32"), Kind: column.Int32, Len: 1, Values: host[:4]}
	best := func(runs int, f func() (time.Duration, error)) (time.Duration, error) {
		t := time.Duration(1<<63 - 1)
		for i := 0; i < runs; i++ {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			d, err := f()
			if err != nil {
				return 0, err
			}
			t = min(t, d)
		}
		return t, nil
	}
	rate := func(d time.Duration) float64 { return calibrationBytes / d.Seconds() }

	staged, err := best(3, func() (time.Duration, error) {
		s := agg.New(column.FamilySigned, 0)
		start := time.Now()
		err := b.Update(ctx, []*column.View{v}, []*agg.State{&s})
		return time.Since(start), err
	})
	if err != nil {
		return fmt.Errorf("cuda: calibrating the staged upload: %w", err)
	}
	launch, err := best(5, func() (time.Duration, error) {
		s := agg.New(column.FamilySigned, 0)
		start := time.Now()
		err := b.Update(ctx, []*column.View{tiny}, []*agg.State{&s})
		return time.Since(start), err
	})
	if err != nil {
		return fmt.Errorf("cuda: calibrating a launch: %w", err)
	}
	col, err := b.Upload(ctx, v)
	if err != nil {
		return fmt.Errorf("cuda: calibrating the kernel: %w", err)
	}
	defer col.Free()
	var pinnedRate, pageable, read float64
	err = b.d.do(func() error {
		ln := &b.lanes[0]
		dst, err := b.d.pool.alloc(calibrationBytes)
		if err != nil {
			return err
		}
		defer b.d.pool.release(&dst)
		pin, err := hostAlloc(calibrationBytes)
		if err != nil {
			return err
		}
		defer hostFree(pin) //nolint:errcheck
		t, err := fastest(ln.stream, 3, func() error {
			return cudrv.MemcpyHtoDAsync(dst.ptr, unsafe.Pointer(&pin[0]), calibrationBytes, ln.stream)
		})
		if err != nil {
			return fmt.Errorf("timing a page-locked copy: %w", err)
		}
		pinnedRate = calibrationBytes / t
		if t, err = fastest(ln.stream, 3, func() error {
			return col.launch(ln.stream, &ln.sc, 0, uint64(col.n), passes{}, 0)
		}); err != nil {
			return fmt.Errorf("timing the kernel: %w", err)
		}
		read = calibrationBytes / t
		d, err := best(3, func() (time.Duration, error) {
			start := time.Now()
			err := cudrv.MemcpyHtoDAsync(dst.ptr, unsafe.Pointer(&host[0]), calibrationBytes, ln.stream)
			if err == nil {
				err = ln.stream.Synchronize()
			}
			return time.Since(start), err
		})
		if err != nil {
			return fmt.Errorf("timing a pageable copy: %w", err)
		}
		pageable = rate(d)
		return nil
	})
	if err != nil {
		return fmt.Errorf("cuda: calibrating: %w", err)
	}
	col.Free()
	// The page kernels' failure keeps pages off them, not the GPU's other
	// work (a cut-short measurement is not cached: Calibrate).
	pages, err := b.calibratePages(ctx, calibrationSnappyPages, calibrationPlainBytes)
	cal.PageRates, cal.PageError = pages, ""
	if err != nil {
		cal.PageRates, cal.PageError = planner.PageRates{}, err.Error()
	}
	// The pool would keep the calibration's blocks (about a GB with the
	// sample pages'), of sizes later calls do not ask for.
	if err := b.d.do(b.d.pool.trim); err != nil {
		return fmt.Errorf("cuda: freeing the calibration's device memory: %w", err)
	}
	cal.GPU = b.d.info.Name
	cal.H2DPinned, cal.H2DPageable, cal.HostStaged = pinnedRate, pageable, rate(staged)
	cal.DeviceRead, cal.Launch = read, launch
	return nil
}

// The page kernels' calibration decodes pqdev's sample pages (pyarrow's
// pages of 20,000 int64 values): calibrationSnappyPages snappy pages, about
// as many as a large file's batch gives the kernels (a warp decompresses a
// page, so fewer pages leave more of the multiprocessors idle and run
// slower a byte), their stored bytes shared; and uncompressed pages of
// calibrationPlainBytes, each page's bytes its own, more than the device's
// caches hold (those kernels read the pages where they lie).
const (
	calibrationSnappyPages = 4096
	calibrationPlainBytes  = 256 << 20
)

// timePages uploads q as l lays it out (spread: each page's bytes a copy
// of their own, spreadPages) and times its kernels' launch with CUDA
// events: the best of three after one, in seconds; s is the state they
// give.
func (b *Backend) timePages(ctx context.Context, q *column.Pages, l *pqdev.Layout, spread bool) (s agg.State, t float64, err error) {
	words, status := make([]uint64, pqdev.Words(q.Kind)), make([]uint32, len(q.Pages))
	err = b.d.do(func() error {
		pb, err := b.uploadPages(ctx, q, l)
		defer pb.release(b.d)
		if err == nil && spread {
			err = b.spreadPages(q, l, pb)
		}
		if err == nil {
			t, err = fastest(b.up, 3, func() error { return pb.launch(b.up) })
		}
		if err == nil {
			err = pb.readBack(b.d, b.up, words, status)
		}
		return b.settle(err)
	})
	if err == nil {
		err = pqdev.StatusError(q, status)
	}
	if err != nil {
		return s, 0, err
	}
	return kernels.State(q.Kind, q.Rows, words), t, nil
}

// spreadPages gives each of pb's pages its own copy of its stored bytes in
// a chunk buffer of their own (pqdev.Layout.Spread), so that the kernels
// read them from the device's memory and not from its caches, as they
// would a file's pages; device thread.
func (b *Backend) spreadPages(q *column.Pages, l *pqdev.Layout, pb *devicePages) error {
	d, st := b.d, b.up
	moves, n := l.Spread(q)
	data, err := d.pool.alloc(n)
	if err != nil {
		return err
	}
	old := pb.data
	pb.data = data // (pb's to release from here on)
	// (old goes back to the pool once the copies from it are waited for
	// below; after an error, before the caller's settle waits for them,
	// with nothing allocated in between.)
	defer d.pool.release(&old)
	if err := cudrv.MemsetD8Async(data.ptr, 0, n, st); err != nil {
		return fmt.Errorf("zeroing the chunk buffer: %w", err)
	}
	for _, m := range moves {
		if err := cudrv.MemcpyDtoDAsync(data.ptr+cudrv.DevicePtr(m.To), old.ptr+cudrv.DevicePtr(m.From), m.Len, st); err != nil {
			return fmt.Errorf("copying a page: %w", err)
		}
	}
	if err := d.copyHtoD(pb.table.ptr, unsafe.Pointer(&l.Table[0]), int64(len(l.Table)), st); err != nil {
		return fmt.Errorf("copying the page table: %w", err)
	}
	if err := d.syncStream(st); err != nil {
		return fmt.Errorf("waiting for the pages' copies: %w", err)
	}
	return nil
}

// calibratePages measures the page kernels' rate on each class of pages
// (planner.PageClass), in bytes of decompressed pages a second: pqdev's
// sample pages (snappy: snappyPages of them; uncompressed: plainBytes of
// them) resident on the device, their kernels' launches timed with CUDA
// events (the best of three after one), the answers checked (every page's
// status clear, every row counted). Under WithMemoryLimit they are fewer:
// their bytes decompressed a quarter of the cap at most.
func (b *Backend) calibratePages(ctx context.Context, snappyPages int, plainBytes int64) (planner.PageRates, error) {
	var rates planner.PageRates
	for c := range planner.NumPageClasses {
		c := planner.PageClass(c)
		body := int64(pqdev.SampleBody(c.Dictionary()))
		pages := int64(snappyPages)
		if !c.Snappy() {
			pages = plainBytes / body
		}
		if b.opts.memLimit > 0 {
			pages = min(pages, b.opts.memLimit/4/body)
		}
		pages = max(pages, 8)
		q, err := pqdev.Sample(c.Snappy(), c.Dictionary(), int(pages), int(min(4, pages)))
		if err != nil {
			return rates, err
		}
		l, err := pqdev.Plan(q)
		if err != nil {
			return rates, err
		}
		s, t, err := b.timePages(ctx, q, &l, !c.Snappy())
		if err == nil && s.Count != q.Rows {
			err = fmt.Errorf("%d values counted of %d", s.Count, q.Rows)
		}
		if err != nil {
			return rates, fmt.Errorf("%v pages: %w", c, err)
		}
		rates[c] = float64(body*pages) / t
	}
	return rates, nil
}

// eventTimes runs op warm+runs times on stream st, each timed with CUDA
// events, and returns the seconds of the last runs; device thread.
func eventTimes(st cudrv.Stream, warm, runs int, op func() error) ([]float64, error) {
	start, err := cudrv.MakeEvent(cudrv.DefaultEvent)
	if err != nil {
		return nil, fmt.Errorf("creating an event: %w", err)
	}
	defer cudrv.DestroyEvent(&start) //nolint:errcheck
	stop, err := cudrv.MakeEvent(cudrv.DefaultEvent)
	if err != nil {
		return nil, fmt.Errorf("creating an event: %w", err)
	}
	defer cudrv.DestroyEvent(&stop) //nolint:errcheck
	out := make([]float64, 0, runs)
	for i := 0; i < warm+runs; i++ {
		if err := start.Record(st); err != nil {
			return nil, err
		}
		if err := op(); err != nil {
			return nil, err
		}
		if err := stop.Record(st); err != nil {
			return nil, err
		}
		if err := stop.Synchronize(); err != nil {
			return nil, err
		}
		ms, err := start.Elapsed(stop)
		if err != nil {
			return nil, err
		}
		if i >= warm {
			out = append(out, ms/1e3)
		}
	}
	return out, nil
}

// fastest runs op on st like eventTimes and returns the shortest time.
func fastest(st cudrv.Stream, runs int, op func() error) (float64, error) {
	t, err := eventTimes(st, 1, runs, op)
	if err != nil {
		return 0, err
	}
	return slices.Min(t), nil
}

// gpuRecords is where the NVIDIA driver describes each GPU on Linux, one
// folder a device with an "information" file ("Model: NVIDIA H100 ...").
var gpuRecords = "/proc/driver/nvidia/gpus"

// NameHint implements backend.NameHinter: the model name the driver's
// records give, when every GPU of the host is of that one model and no
// CUDA_VISIBLE_DEVICES selection is in force (then the device this backend
// opens is of that model whatever the driver's order). It reads files only:
// the driver is not initialized. The name is the one cuDeviceGetName gives,
// which keys the calibration cache; a name that differs only misses the
// cache, and the engine then probes as before.
func (b *Backend) NameHint() (string, bool) {
	if _, set := os.LookupEnv("CUDA_VISIBLE_DEVICES"); set {
		return "", false
	}
	dirs, err := os.ReadDir(gpuRecords)
	if err != nil || len(dirs) == 0 {
		return "", false
	}
	model := ""
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(gpuRecords, d.Name(), "information"))
		if err != nil {
			return "", false
		}
		m := ""
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "Model" {
				m = strings.TrimSpace(v)
			}
		}
		if m == "" || (model != "" && m != model) {
			return "", false
		}
		model = m
	}
	return model, true
}
