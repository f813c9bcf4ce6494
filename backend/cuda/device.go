//go:build cuda

package cuda

import (
	"errors"
	"fmt"

	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/cudadev"
	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/kernels"
)

// ErrClosed is returned by calls on a closed Backend.
var ErrClosed = errors.New("cuda backend is closed")

// DeviceInfo describes the GPU a Backend runs on.
type DeviceInfo = cudadev.Info

// device owns one GPU: its primary context, the kernels and the memory
// pool. Driver contexts are current per OS thread, so every driver call runs
// on one goroutine locked to its thread; do sends it work.
type device struct {
	thread *cudadev.Thread

	dev     cudrv.Device
	ctx     cudrv.Context
	mod     cudrv.Module
	fns     [len(specs)]cudrv.Function
	maxGrid [len(specs)]int
	// the ordered kernels
	ordFns     [len(specs)]cudrv.Function
	ordMaxGrid [len(specs)]int
	info       DeviceInfo
	pool       *pool
	retain     bool // the primary context was retained
	cleanup    []func() error
}

// openDevice starts the device thread and initializes GPU ordinal on it.
func openDevice(ordinal int) (*device, error) {
	d := &device{}
	t, err := cudadev.Start("cuda backend", ErrClosed, func() error { return d.init(ordinal) }, d.teardown)
	if err != nil {
		return nil, err
	}
	d.thread = t
	return d, nil
}

func (d *device) init(ordinal int) error {
	var err error
	if d.dev, d.info, err = cudadev.Describe(ordinal); err != nil {
		return err
	}
	if d.ctx, err = d.dev.RetainPrimaryCtx(); err != nil {
		return fmt.Errorf("retaining the primary context of CUDA device %d: %w", ordinal, err)
	}
	d.retain = true
	if err := cudrv.SetCurrentContext(d.ctx); err != nil {
		return fmt.Errorf("making the primary context of CUDA device %d current: %w", ordinal, err)
	}
	if d.mod, err = cudrv.LoadData(kernels.AggPTX); err != nil {
		return fmt.Errorf("loading the kernels (PTX for compute_60) on %s: %w", d.info.Name, err)
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
func (d *device) loadKernel(name string) (cudrv.Function, int, error) {
	return cudadev.Kernel(d.mod, name, blockThreads, d.info.Multiprocessors)
}

// do runs f on the device thread and returns its error. A panic in f is
// returned as an error rather than crashing the process.
func (d *device) do(f func() error) error { return d.thread.Do(f) }

// onClose registers a function that close runs on the device thread, before
// the pool and the context go (last registered, first run).
func (d *device) onClose(f func() error) { d.cleanup = append(d.cleanup, f) }

// close frees everything and stops the device thread.
func (d *device) close() error { return d.thread.Close(d.teardown) }

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
