//go:build cuda

package ladder

import (
	"errors"
	"fmt"
	"regexp"
	"unsafe"

	"github.com/arrowagg/arrowagg/internal/cudadev"
	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/kernels"
)

// ErrClosed is returned by calls on a closed Device.
var ErrClosed = errors.New("ladder: device is closed")

// DeviceInfo describes the GPU a Device runs on.
type DeviceInfo = cudadev.Info

// kernel is one entry point of the module and the most blocks of
// kernels.LadderBlock threads that fit on the device at once.
type kernel struct {
	fn      cudrv.Function
	maxGrid int
}

// Device runs the ladder's kernels on one GPU. It owns a context created for
// it, which is current on one OS thread only: every driver call runs on the
// goroutine locked to that thread, through do.
type Device struct {
	thread *cudadev.Thread

	dev         cudrv.Device
	ctx         cudrv.Context
	hasCtx      bool
	mod         cudrv.Module
	hasMod      bool
	stream      cudrv.Stream
	start, stop cudrv.Event
	fns         map[string]kernel
	info        DeviceInfo
}

// Open creates a context on GPU ordinal and loads the ladder's kernels.
func Open(ordinal int) (*Device, error) {
	d := &Device{}
	t, err := cudadev.Start("ladder", ErrClosed, func() error { return d.init(ordinal) }, d.teardown)
	if err != nil {
		return nil, err
	}
	d.thread = t
	return d, nil
}

// Info describes the device.
func (d *Device) Info() DeviceInfo { return d.info }

// entryPoints lists the kernels of a PTX module (the ladder's PTX names
// those of its fatbin).
var entryPoints = regexp.MustCompile(`(?m)^\.visible \.entry (\w+)\(`)

func (d *Device) init(ordinal int) error {
	var err error
	if d.dev, d.info, err = cudadev.Describe(ordinal); err != nil {
		return err
	}
	if d.ctx, err = d.dev.MakeContext(cudrv.SchedAuto); err != nil {
		return fmt.Errorf("creating a context on CUDA device %d: %w", ordinal, err)
	}
	d.hasCtx = true // cuCtxCreate made it current on this thread
	if d.mod, err = cudrv.LoadData(kernels.LadderFatbin); err != nil {
		return fmt.Errorf("loading the ladder kernels (%s) on %s: %w", kernels.FatbinTargets, d.info, err)
	}
	d.hasMod = true
	d.fns = make(map[string]kernel)
	for _, m := range entryPoints.FindAllStringSubmatch(kernels.LadderPTX, -1) {
		fn, maxGrid, err := cudadev.Kernel(d.mod, m[1], kernels.LadderBlock, d.info.Multiprocessors)
		if err != nil {
			return err
		}
		d.fns[m[1]] = kernel{fn: fn, maxGrid: maxGrid}
	}
	// A blocking stream: ordered after the synchronous copies of the legacy
	// default stream (the uploads and read-backs).
	if d.stream, err = cudrv.MakeStream(cudrv.DefaultStream); err != nil {
		return fmt.Errorf("creating a stream: %w", err)
	}
	if d.start, err = cudrv.MakeEvent(cudrv.DefaultEvent); err != nil {
		return fmt.Errorf("creating an event: %w", err)
	}
	if d.stop, err = cudrv.MakeEvent(cudrv.DefaultEvent); err != nil {
		return fmt.Errorf("creating an event: %w", err)
	}
	return nil
}

// teardown frees what init made; it runs on the device thread.
func (d *Device) teardown() error {
	var errs []error
	var zeroEvent cudrv.Event
	for _, e := range []*cudrv.Event{&d.start, &d.stop} {
		if *e != zeroEvent {
			if err := cudrv.DestroyEvent(e); err != nil {
				errs = append(errs, fmt.Errorf("destroying an event: %w", err))
			}
		}
	}
	var zeroStream cudrv.Stream
	if d.stream != zeroStream {
		if err := d.stream.Destroy(); err != nil {
			errs = append(errs, fmt.Errorf("destroying the stream: %w", err))
		}
	}
	if d.hasMod {
		if err := d.mod.Unload(); err != nil {
			errs = append(errs, fmt.Errorf("unloading the ladder kernels: %w", err))
		}
		d.hasMod = false
	}
	if d.hasCtx {
		if err := d.ctx.Destroy(); err != nil {
			errs = append(errs, fmt.Errorf("destroying the context: %w", err))
		}
		d.hasCtx = false
	}
	return errors.Join(errs...)
}

// do runs f on the device thread and returns its error; a panic in f comes
// back as an error.
func (d *Device) do(f func() error) error { return d.thread.Do(f) }

// Close frees the context and ends the device thread.
func (d *Device) Close() error { return d.thread.Close(d.teardown) }

// kernel returns the entry point called name.
func (d *Device) kernel(name string) (kernel, error) {
	k, ok := d.fns[name]
	if !ok {
		return kernel{}, fmt.Errorf("kernel %s is not in the ladder module", name)
	}
	return k, nil
}

// launch enqueues kernel name on the device's stream; every parameter of the
// ladder's kernels is 64-bit (a pointer, u64 or i64).
func (d *Device) launch(name string, grid, block int, params ...uint64) error {
	k, err := d.kernel(name)
	if err != nil {
		return err
	}
	var args cudrv.Params
	for _, p := range params {
		args.U64(p)
	}
	if err := k.fn.Launch(grid, 1, 1, block, 1, 1, 0, d.stream, &args); err != nil {
		return fmt.Errorf("launching %s (%d blocks of %d threads): %w", name, grid, block, err)
	}
	return nil
}

// grid is the number of blocks for n items, perBlock a block, capped by
// the most blocks of kernel name that fit on the device when fill is set.
func (d *Device) grid(name string, n, perBlock uint64, fill bool) (int, error) {
	g := ceilDiv(n, perBlock)
	if fill {
		k, err := d.kernel(name)
		if err != nil {
			return 0, err
		}
		g = min(g, uint64(k.maxGrid))
	}
	if g > 1<<31-1 {
		return 0, fmt.Errorf("%s: %d elements need %d blocks, over the grid limit", name, n, g)
	}
	return int(max(g, 1)), nil
}

// maxGrid is the largest grid of any kernel that is sized to fill the
// device.
func (d *Device) maxGrid() int {
	g := 1
	for _, k := range d.fns {
		g = max(g, k.maxGrid)
	}
	return g
}

func ceilDiv(a, b uint64) uint64 { return (a + b - 1) / b }

// devAlloc is one device allocation.
type devAlloc struct {
	ptr  cudrv.DevicePtr
	size int64
}

// workspace is an input of n int32 on the device and the scratch memory
// every variant needs to reduce it.
type workspace struct {
	n       uint64
	in      devAlloc
	scratch [2]devAlloc // block partials, ping-pong between passes
	window  devAlloc    // kernel 13's partials
	ticket  devAlloc    // the last-block counter, kept zero between launches
	out     devAlloc    // a launch's result (up to 16 bytes)
	copyDst devAlloc    // the copy's destination, when measured
}

// newWorkspace uploads data and allocates the scratch memory; withCopy also
// allocates a destination for a device-to-device copy of the input. On the
// device thread.
func (d *Device) newWorkspace(data []int32, withCopy bool) (ws *workspace, err error) {
	n := uint64(len(data))
	if n == 0 || n >= 1<<32 {
		return nil, fmt.Errorf("%d elements: the ladder sums 1 to 2^32-1 int32 values", n)
	}
	ws = &workspace{n: n}
	defer func() {
		if err != nil {
			err = errors.Join(err, ws.free())
			ws = nil
		}
	}()
	alloc := func(a *devAlloc, size uint64, what string) error {
		size = max(16, (size+15)&^15)
		p, err := cudrv.MemAlloc(int64(size))
		if err != nil {
			return fmt.Errorf("allocating %d bytes of device memory for %s: %w", size, what, err)
		}
		*a = devAlloc{ptr: p, size: int64(size)}
		return nil
	}
	partials := max(ceilDiv(n, kernels.LadderMinBlock)*8, uint64(d.maxGrid())*kernels.LadderMaxStateBytes)
	for _, s := range []struct {
		a    *devAlloc
		size uint64
		what string
	}{
		{&ws.in, n * 4, "the input"},
		{&ws.scratch[0], partials, "block partials"},
		{&ws.scratch[1], partials, "block partials"},
		{&ws.window, ceilDiv(n, kernels.LadderWindow) * 8, "the window cascade"},
		{&ws.ticket, 8, "the ticket"},
		{&ws.out, kernels.LadderMaxStateBytes, "the result"},
	} {
		if err := alloc(s.a, s.size, s.what); err != nil {
			return nil, err
		}
	}
	if withCopy {
		if err := alloc(&ws.copyDst, n*4, "the copy's destination"); err != nil {
			return nil, err
		}
	}
	if err := cudrv.MemcpyHtoD(ws.in.ptr, unsafe.Pointer(&data[0]), int64(n*4)); err != nil {
		return nil, fmt.Errorf("copying %d bytes of input to the device: %w", n*4, err)
	}
	if err := cudrv.MemsetD32(ws.ticket.ptr, 0, 2); err != nil {
		return nil, fmt.Errorf("zeroing the ticket: %w", err)
	}
	if err := cudrv.Synchronize(); err != nil {
		return nil, fmt.Errorf("uploading the input: %w", err)
	}
	return ws, nil
}

// free releases the workspace's device memory. On the device thread.
func (ws *workspace) free() error {
	var errs []error
	for _, a := range []*devAlloc{&ws.in, &ws.scratch[0], &ws.scratch[1], &ws.window, &ws.ticket, &ws.out,
		&ws.copyDst} {
		if a.ptr != 0 {
			if err := cudrv.MemFree(a.ptr); err != nil {
				errs = append(errs, fmt.Errorf("freeing %d bytes of device memory: %w", a.size, err))
			}
			*a = devAlloc{}
		}
	}
	return errors.Join(errs...)
}

// readBack copies size bytes at p to the host once the stream is done.
func (d *Device) readBack(p cudrv.DevicePtr, size int) ([]byte, error) {
	if err := d.stream.Synchronize(); err != nil {
		return nil, fmt.Errorf("waiting for the kernels: %w", err)
	}
	b := make([]byte, size)
	if err := cudrv.MemcpyDtoH(unsafe.Pointer(&b[0]), p, int64(size)); err != nil {
		return nil, fmt.Errorf("reading the result back: %w", err)
	}
	return b, nil
}
