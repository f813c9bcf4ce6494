//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/cudadev"
	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/internal/startup"
	"github.com/arrowagg/arrowagg/kernels"
)

// ErrClosed is returned by calls on a closed Backend.
var ErrClosed = errors.New("cuda backend is closed")

// DeviceInfo describes the GPU a Backend runs on.
type DeviceInfo = cudadev.Info

// device owns one GPU: its primary context, the kernels and the memory
// pool. Driver contexts are current per OS thread, so every driver call runs
// on one goroutine locked to its thread; do sends it work.
//
// Nothing is set up until it is needed. describe initializes the driver (the
// first time in the process) and reads the device's attributes, without a
// context: enough to know that the GPU exists and to key the planner's
// calibration cache by its name. open starts the device thread and, on it,
// retains the primary context, loads the kernels and runs the backend's
// setup (streams, events, launch scratch); the first do opens. A failure
// of either is kept and returned by every later call.
type device struct {
	ordinal int
	setup   func() error // the backend's, on the device thread after init

	descOnce sync.Once
	descErr  error
	dev      cudrv.Device
	info     DeviceInfo

	mu      sync.Mutex // guards thread, openErr and closed
	thread  *cudadev.Thread
	openErr error
	closed  bool

	// Device-thread state.
	ctx     cudrv.Context
	mod     cudrv.Module
	fns     [len(specs)]cudrv.Function
	maxGrid [len(specs)]int
	// the ordered kernels
	ordFns     [len(specs)]cudrv.Function
	ordMaxGrid [len(specs)]int
	// the moments kernels (none for some kinds)
	momFns     [len(specs)]cudrv.Function
	momMaxGrid [len(specs)]int
	// the sketch kernels (none for some kinds)
	skFns     [len(specs)]cudrv.Function
	skMaxGrid [len(specs)]int
	// the kernels loaded when first used (lazyKernel): the Parquet page
	// kernels, the grouped kernels
	lazyFns map[string]cudrv.Function
	// sharedSet is the dynamic shared memory a lazy kernel has opted in to
	// (optInShared), by name.
	sharedSet map[string]int
	pool      *pool
	retain    bool // the primary context was retained
	cleanup   []func() error
}

// newDevice describes GPU ordinal lazily; setup runs on its thread once it
// is open.
func newDevice(ordinal int, setup func() error) *device {
	return &device{ordinal: ordinal, setup: setup}
}

// describe checks, once, that the GPU exists and reads what Info tells of
// it: the driver's initialization, but no context.
func (d *device) describe() error {
	d.descOnce.Do(func() {
		start := time.Now()
		d.dev, d.info, d.descErr = cudadev.Describe(d.ordinal)
		startup.Trace("describe device", start, d.descErr)
	})
	return d.descErr
}

// open starts the device thread and sets the device up on it, the first
// time; it returns the thread, or the error of that first time.
func (d *device) open() (*cudadev.Thread, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.closed:
		return nil, ErrClosed
	case d.thread != nil || d.openErr != nil:
		return d.thread, d.openErr
	}
	if err := d.describe(); err != nil {
		d.openErr = err
		return nil, err
	}
	t, err := cudadev.Start("cuda backend", ErrClosed, func() error {
		if err := d.init(); err != nil {
			return err
		}
		start := time.Now()
		err := d.setup()
		startup.Trace("stream setup", start, err)
		return err
	}, d.teardown)
	if err != nil {
		d.openErr = err
		return nil, err
	}
	d.thread = t
	return t, nil
}

// opened is the device thread, nil when the device was never opened.
func (d *device) opened() *cudadev.Thread {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.thread
}

// init sets the device up on its thread: the primary context, the kernels,
// the pool.
func (d *device) init() error {
	var err error
	start := time.Now()
	d.ctx, err = d.dev.RetainPrimaryCtx()
	if err == nil {
		d.retain = true
		err = cudrv.SetCurrentContext(d.ctx)
	}
	startup.Trace("primary context", start, err)
	if err != nil {
		return fmt.Errorf("making the primary context of CUDA device %d current: %w", d.ordinal, err)
	}
	start = time.Now()
	d.mod, err = cudrv.LoadData(kernels.AggFatbin)
	startup.Trace("module load", start, err)
	if err != nil {
		return fmt.Errorf("loading the kernels (%s) on %s: %w", kernels.FatbinTargets, d.info, err)
	}
	for k, s := range specs {
		if s.name == "" {
			continue
		}
		if d.fns[k], d.maxGrid[k], err = d.loadKernel(s.name); err != nil {
			return err
		}
		if d.ordFns[k], d.ordMaxGrid[k], err = d.loadKernel(s.ordered); err != nil {
			return err
		}
		if s.moments != "" {
			if d.momFns[k], d.momMaxGrid[k], err = d.loadKernel(s.moments); err != nil {
				return err
			}
		}
		if s.sketch != "" {
			if d.skFns[k], d.skMaxGrid[k], err = d.loadKernel(s.sketch); err != nil {
				return err
			}
		}
	}
	d.pool = newPool()
	return nil
}

// lazyKernel is kernel name (a Parquet page kernel, a grouped kernel),
// loaded when first asked for; device thread.
func (d *device) lazyKernel(name string) (cudrv.Function, int, error) {
	if f, ok := d.lazyFns[name]; ok {
		return f, 0, nil
	}
	f, g, err := d.loadKernel(name)
	if err != nil {
		return f, g, err
	}
	if d.lazyFns == nil {
		d.lazyFns = make(map[string]cudrv.Function)
	}
	d.lazyFns[name] = f
	return f, g, nil
}

// optInShared lets launches of kernel fn (name) have n bytes of dynamic
// shared memory: past the 48 KiB every kernel may have, it opts in
// (once for each size it grows to); device thread.
func (d *device) optInShared(fn cudrv.Function, name string, n int) error {
	if n <= kernels.AggGroupSharedBytes || n <= d.sharedSet[name] {
		return nil
	}
	if err := fn.SetMaxDynamicShared(n); err != nil {
		return fmt.Errorf("letting %s have %d bytes of shared memory: %w", name, n, err)
	}
	if d.sharedSet == nil {
		d.sharedSet = make(map[string]int)
	}
	d.sharedSet[name] = n
	return nil
}

// loadKernel finds a kernel of the module and the most blocks worth
// launching: its occupancy times the multiprocessors.
func (d *device) loadKernel(name string) (cudrv.Function, int, error) {
	return cudadev.Kernel(d.mod, name, blockThreads, d.info.Multiprocessors)
}

// do runs f on the device thread, opening the device first if it is not
// yet, and returns its error. A panic in f is returned as an error rather
// than crashing the process.
func (d *device) do(f func() error) error {
	t, err := d.open()
	if err != nil {
		return err
	}
	return t.Do(f)
}

// doIfOpen runs f like do when the device is open, and does nothing
// otherwise: for calls that have nothing to do on a device never used.
func (d *device) doIfOpen(f func() error) error {
	t := d.opened()
	if t == nil {
		return nil
	}
	return t.Do(f)
}

// onClose registers a function that close runs on the device thread, before
// the pool and the context go (last registered, first run).
func (d *device) onClose(f func() error) { d.cleanup = append(d.cleanup, f) }

// close frees everything and stops the device thread; calls afterwards
// fail with ErrClosed.
func (d *device) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.thread == nil {
		return nil
	}
	return d.thread.Close(d.teardown)
}

// teardown runs on the device thread.
func (d *device) teardown() error {
	var errs []error
	for i := len(d.cleanup) - 1; i >= 0; i-- {
		errs = append(errs, d.cleanup[i]())
	}
	d.cleanup = nil
	if d.pool != nil {
		if d.pool.inUse != 0 {
			errs = append(errs, fmt.Errorf("closing with %d bytes of device memory still in use (resident columns not freed)", d.pool.inUse))
		}
		errs = append(errs, d.pool.trim())
	}
	var zero cudrv.Module
	if d.mod != zero {
		if err := d.mod.Unload(); err != nil {
			errs = append(errs, fmt.Errorf("unloading the kernels: %w", err))
		}
		d.mod = zero
	}
	if d.retain {
		if err := d.dev.ReleasePrimaryCtx(); err != nil {
			errs = append(errs, fmt.Errorf("releasing the primary context: %w", err))
		}
		d.retain = false
	}
	return errors.Join(errs...)
}

// kernelFor returns the spec of kind k and checks that its kernel is loaded.
func (d *device) kernelFor(k column.Kind) (kernelSpec, error) {
	s, ok := specOf(k)
	if !ok {
		return kernelSpec{}, fmt.Errorf("no GPU kernel for %s values", k)
	}
	return s, nil
}
