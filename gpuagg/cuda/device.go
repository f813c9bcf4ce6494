//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"gorgonia.org/cu"

	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/kernels"
)

// ErrClosed is returned by calls on a closed Backend.
var ErrClosed = errors.New("cuda backend is closed")

// DeviceInfo describes the GPU a Backend runs on.
type DeviceInfo struct {
	Ordinal           int
	Name              string
	ComputeCapability [2]int
	Multiprocessors   int
	Memory            int64 // bytes of device memory
	DriverVersion     int   // e.g. 13000 for CUDA 13.0
}

func (i DeviceInfo) String() string {
	return fmt.Sprintf("%s (sm_%d%d, %d SMs, %.1f GiB, driver CUDA %d.%d)", i.Name, i.ComputeCapability[0],
		i.ComputeCapability[1], i.Multiprocessors, float64(i.Memory)/(1<<30), i.DriverVersion/1000, i.DriverVersion%1000/10)
}

// device owns one GPU: its primary context, the kernels and the memory
// pool. Driver contexts are current per OS thread, so every driver call runs
// on one goroutine locked to its thread; do sends it work.
type device struct {
	mu     sync.RWMutex // do holds it shared, close exclusively
	closed bool
	work   chan func()

	dev     cu.Device
	ctx     cu.CUContext
	mod     cu.Module
	fns     [len(specs)]cu.Function
	maxGrid [len(specs)]int
	// the ordered kernels
	ordFns     [len(specs)]cu.Function
	ordMaxGrid [len(specs)]int
	info       DeviceInfo
	pool       *pool
	retain     bool // the primary context was retained
	cleanup    []func() error
}

// openDevice starts the device thread and initializes GPU ordinal on it.
func openDevice(ordinal int) (*device, error) {
	d := &device{work: make(chan func())}
	started := make(chan error, 1)
	go d.loop(ordinal, started)
	if err := <-started; err != nil {
		return nil, err
	}
	return d, nil
}

func (d *device) loop(ordinal int, started chan<- error) {
	// The thread stays locked: when the goroutine returns, the runtime ends
	// the thread, and the context binding with it.
	runtime.LockOSThread()
	if err := d.init(ordinal); err != nil {
		d.teardown() //nolint:errcheck // the init error is the one to report
		started <- err
		return
	}
	started <- nil
	for f := range d.work {
		f()
	}
}

func (d *device) init(ordinal int) error {
	n, err := cu.NumDevices()
	if err != nil {
		return fmt.Errorf("counting CUDA devices: %w", err)
	}
	if ordinal < 0 || ordinal >= n {
		return fmt.Errorf("CUDA device %d does not exist (%d visible)", ordinal, n)
	}
	if d.dev, err = cu.GetDevice(ordinal); err != nil {
		return fmt.Errorf("getting CUDA device %d: %w", ordinal, err)
	}
	if d.ctx, err = d.dev.RetainPrimaryCtx(); err != nil {
		return fmt.Errorf("retaining the primary context of CUDA device %d: %w", ordinal, err)
	}
	d.retain = true
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		return fmt.Errorf("making the primary context of CUDA device %d current: %w", ordinal, err)
	}
	info := DeviceInfo{Ordinal: ordinal, DriverVersion: cu.Version()}
	if info.Name, err = d.dev.Name(); err != nil {
		return fmt.Errorf("reading the name of CUDA device %d: %w", ordinal, err)
	}
	if info.ComputeCapability[0], info.ComputeCapability[1], err = d.dev.ComputeCapability(); err != nil {
		return fmt.Errorf("reading the compute capability of CUDA device %d: %w", ordinal, err)
	}
	if info.Multiprocessors, err = d.dev.Attribute(cu.MultiprocessorCount); err != nil {
		return fmt.Errorf("reading the multiprocessor count of CUDA device %d: %w", ordinal, err)
	}
	if info.Memory, err = d.dev.TotalMem(); err != nil {
		return fmt.Errorf("reading the memory size of CUDA device %d: %w", ordinal, err)
	}
	d.info = info
	if d.mod, err = cu.LoadData(kernels.AggPTX); err != nil {
		return fmt.Errorf("loading the kernels (PTX for compute_60) on %s: %w", info.Name, err)
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
	}
	d.pool = newPool()
	return nil
}

// loadKernel finds a kernel of the module and the most blocks worth
// launching: its occupancy times the multiprocessors.
func (d *device) loadKernel(name string) (cu.Function, int, error) {
	fn, err := d.mod.Function(name)
	if err != nil {
		return fn, 0, fmt.Errorf("finding kernel %s: %w", name, err)
	}
	occ, err := fn.MaxActiveBlocksPerMultiProcessor(blockThreads, 0)
	if err != nil {
		return fn, 0, fmt.Errorf("reading the occupancy of kernel %s: %w", name, err)
	}
	return fn, max(1, occ) * d.info.Multiprocessors, nil
}

// do runs f on the device thread and returns its error. A panic in f is
// returned as an error rather than crashing the process.
func (d *device) do(f func() error) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return ErrClosed
	}
	done := make(chan error, 1)
	d.work <- func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("cuda backend: internal error: %v", r)
			}
		}()
		done <- f()
	}
	return <-done
}

// onClose registers a function that close runs on the device thread, before
// the pool and the context go (last registered, first run).
func (d *device) onClose(f func() error) { d.cleanup = append(d.cleanup, f) }

// close frees everything and stops the device thread.
func (d *device) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	done := make(chan error, 1)
	d.work <- func() { done <- d.teardown() }
	err := <-done
	close(d.work)
	return err
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
	var zero cu.Module
	if d.mod != zero {
		if err := d.mod.Unload(); err != nil {
			errs = append(errs, fmt.Errorf("unloading the kernels: %w", err))
		}
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
