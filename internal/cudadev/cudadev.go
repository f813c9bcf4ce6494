//go:build cuda

package cudadev

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/arrowagg/arrowagg/internal/cudrv"
)

// Info describes a GPU.
type Info struct {
	Ordinal           int
	Name              string
	ComputeCapability [2]int
	Multiprocessors   int
	Memory            int64 // bytes of device memory
	// SharedOptin is the most shared memory of a block whose kernel opts
	// in, SharedPerSM a multiprocessor's (bytes).
	SharedOptin, SharedPerSM int
	DriverVersion            int // CUDA version of the driver, e.g. 13000 for 13.0
}

func (i Info) String() string {
	return fmt.Sprintf("%s (sm_%d%d, %d SMs, %.1f GiB, driver CUDA %d.%d)", i.Name, i.ComputeCapability[0],
		i.ComputeCapability[1], i.Multiprocessors, float64(i.Memory)/(1<<30), i.DriverVersion/1000,
		i.DriverVersion%1000/10)
}

// Describe checks that GPU ordinal exists and describes it.
func Describe(ordinal int) (cudrv.Device, Info, error) {
	n, err := cudrv.NumDevices()
	if err != nil {
		return 0, Info{}, fmt.Errorf("counting CUDA devices: %w", err)
	}
	if ordinal < 0 || ordinal >= n {
		return 0, Info{}, fmt.Errorf("CUDA device %d does not exist (%d visible)", ordinal, n)
	}
	dev, err := cudrv.GetDevice(ordinal)
	if err != nil {
		return 0, Info{}, fmt.Errorf("getting CUDA device %d: %w", ordinal, err)
	}
	info := Info{Ordinal: ordinal, DriverVersion: cudrv.Version()}
	if info.Name, err = dev.Name(); err != nil {
		return 0, Info{}, fmt.Errorf("reading the name of CUDA device %d: %w", ordinal, err)
	}
	if info.ComputeCapability[0], info.ComputeCapability[1], err = dev.ComputeCapability(); err != nil {
		return 0, Info{}, fmt.Errorf("reading the compute capability of CUDA device %d: %w", ordinal, err)
	}
	if info.Multiprocessors, err = dev.Attribute(cudrv.MultiprocessorCount); err != nil {
		return 0, Info{}, fmt.Errorf("reading the multiprocessor count of CUDA device %d: %w", ordinal, err)
	}
	if info.SharedOptin, err = dev.Attribute(cudrv.SharedPerBlockOptin); err != nil {
		return 0, Info{}, fmt.Errorf("reading the shared memory of a block of CUDA device %d: %w", ordinal, err)
	}
	if info.SharedPerSM, err = dev.Attribute(cudrv.SharedPerMultiprocessor); err != nil {
		return 0, Info{}, fmt.Errorf("reading the shared memory of a multiprocessor of CUDA device %d: %w", ordinal, err)
	}
	if info.Memory, err = dev.TotalMem(); err != nil {
		return 0, Info{}, fmt.Errorf("reading the memory size of CUDA device %d: %w", ordinal, err)
	}
	return dev, info, nil
}

// Kernel finds kernel name in mod and the most blocks of block threads
// worth launching on a GPU of multiprocessors: its occupancy times them.
func Kernel(mod cudrv.Module, name string, block, multiprocessors int) (cudrv.Function, int, error) {
	fn, err := mod.Function(name)
	if err != nil {
		return fn, 0, fmt.Errorf("finding kernel %s: %w", name, err)
	}
	occ, err := fn.MaxActiveBlocksPerMultiProcessor(block, 0)
	if err != nil {
		return fn, 0, fmt.Errorf("reading the occupancy of kernel %s: %w", name, err)
	}
	return fn, max(1, occ) * multiprocessors, nil
}

// Thread runs functions on one goroutine locked to its OS thread: a driver
// context is current per thread, so every call on a context runs there.
type Thread struct {
	mu        sync.RWMutex // Do holds it shared, Close exclusively
	closed    bool
	work      chan func()
	name      string // in errors: "cuda backend", "ladder"
	errClosed error
}

// Start starts a thread and runs init on it; when init fails, teardown
// runs there too and the thread ends. Do returns errClosed after Close.
func Start(name string, errClosed error, init, teardown func() error) (*Thread, error) {
	t := &Thread{work: make(chan func()), name: name, errClosed: errClosed}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: when the goroutine returns, the runtime ends the
		// thread, and the context binding with it.
		runtime.LockOSThread()
		if err := init(); err != nil {
			started <- errors.Join(err, teardown())
			return
		}
		started <- nil
		for f := range t.work {
			f()
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return t, nil
}

// Do runs f on the thread and returns its error; a panic in f comes back as
// an error rather than ending the process.
func (t *Thread) Do(f func() error) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		return t.errClosed
	}
	done := make(chan error, 1)
	t.work <- func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("%s: internal error: %v", t.name, r)
			}
		}()
		done <- f()
	}
	return <-done
}

// Close runs teardown on the thread and ends it; later calls do nothing.
func (t *Thread) Close(teardown func() error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	done := make(chan error, 1)
	t.work <- func() { done <- teardown() }
	err := <-done
	close(t.work)
	return err
}
