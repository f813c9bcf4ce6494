//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/arrowagg/arrowagg/internal/cudrv"
)

// Driver failures.
//
// The driver calls of the data path that can fail go through a few places:
// pool.driverAlloc (device memory), Backend.stagingAlloc (page-locked
// staging), device.launch, and the wrappers below for copies and
// synchronization. Tests make each of them fail (faults); outside tests the
// injector is nil, one predictable branch per call. What the backend
// guarantees when they fail:
//
//   - Out of memory at any allocation of the stream buffers: Update halves
//     its chunks until they fit, then warns and aggregates on the CPU; the
//     result is the same. Out of memory for a batch of Parquet pages:
//     UpdatePages halves its batches down to a chunk, then warns and fails
//     with an error matching backend.ErrDeviceMemory, the state untouched. Upload fails with an error matching
//     ErrOutOfMemory and keeps no memory.
//   - A failed launch, copy or synchronization: Update and DeviceColumn.Update
//     return the driver's error (errors.Is matches the cu error code),
//     wrapped with what failed, and leave the states untouched; Upload
//     returns it and keeps no memory. They do not recompute on the CPU:
//     these errors mean a faulty device or driver (most are sticky: the
//     context stays unusable), which an answer computed elsewhere would hide;
//     the caller decides.
//   - Before the device thread takes the next call, a failed call's streams
//     are drained and the launch tickets zeroed again (settle), so that the
//     next call on a working device is right; and no device or page-locked
//     memory is held beyond the stream buffers and the pool's cache, which
//     Trim frees.

// faultPoint is a kind of driver call that tests can make fail.
type faultPoint uint8

const (
	faultDeviceAlloc faultPoint = iota // cuMemAlloc (pool.driverAlloc)
	faultHostAlloc                     // cuMemHostAlloc of staging buffers
	faultLaunch                        // cuLaunchKernel (device.launch)
	faultCopyHtoD                      // cuMemcpyHtoDAsync
	faultCopyDtoH                      // cuMemcpyDtoHAsync
	faultSync                          // cuStreamSynchronize, cuEventSynchronize
	numFaultPoints
)

var faultNames = [numFaultPoints]string{"device alloc", "host alloc", "launch", "copy HtoD", "copy DtoH", "sync"}

func (p faultPoint) String() string { return faultNames[p] }

// faultErrs are the errors injected at each point: what the driver returns
// there (out of memory from an allocation; a launch failure, or a bad
// address reported by a copy).
var faultErrs = [numFaultPoints]error{
	faultDeviceAlloc: cudrv.OutOfMemory,
	faultHostAlloc:   cudrv.OutOfMemory,
	faultLaunch:      cudrv.LaunchFailed,
	faultCopyHtoD:    cudrv.IllegalAddress,
	faultCopyDtoH:    cudrv.IllegalAddress,
	faultSync:        cudrv.LaunchFailed,
}

// faults makes driver calls fail, for tests: the nth call at point (counted
// from 1 since it was installed), and with sticky every later one there too.
// It counts the calls at every point. It lives in the device's pool
// (pool.faults) and is used on the device thread only.
type faults struct {
	point    faultPoint
	nth      int // 0: count calls, fail none
	sticky   bool
	calls    [numFaultPoints]int
	injected int
}

// hit counts a call at p and returns the error to fail it with, or nil.
func (f *faults) hit(p faultPoint) error {
	f.calls[p]++
	if f.nth == 0 || p != f.point {
		return nil
	}
	if n := f.calls[p]; n == f.nth || f.sticky && n > f.nth {
		f.injected++
		return faultErrs[p]
	}
	return nil
}

// copyHtoD enqueues the copy of n bytes from host src to device dst on st.
func (d *device) copyHtoD(dst cudrv.DevicePtr, src unsafe.Pointer, n int64, st cudrv.Stream) error {
	if f := d.pool.faults; f != nil {
		if err := f.hit(faultCopyHtoD); err != nil {
			return err
		}
	}
	return cudrv.MemcpyHtoDAsync(dst, src, n, st)
}

// copyDtoH enqueues the copy of n bytes from device src to host dst on st.
func (d *device) copyDtoH(dst unsafe.Pointer, src cudrv.DevicePtr, n int64, st cudrv.Stream) error {
	if f := d.pool.faults; f != nil {
		if err := f.hit(faultCopyDtoH); err != nil {
			return err
		}
	}
	return cudrv.MemcpyDtoHAsync(dst, src, n, st)
}

// syncStream waits for the work queued on st. An injected failure comes
// after the wait, as the driver's do (they report a failure of the work).
func (d *device) syncStream(st cudrv.Stream) error {
	err := st.Synchronize()
	if f := d.pool.faults; f != nil {
		if ferr := f.hit(faultSync); ferr != nil && err == nil {
			err = ferr
		}
	}
	return err
}

// syncEvent waits for ev, like syncStream.
func (d *device) syncEvent(ev cudrv.Event) error {
	err := ev.Synchronize()
	if f := d.pool.faults; f != nil {
		if ferr := f.hit(faultSync); ferr != nil && err == nil {
			err = ferr
		}
	}
	return err
}

// groupLaunch launches fn (a grouped kernel or the scale kernel) on grid
// blocks with shared bytes of dynamic shared memory on st, after asking
// the fault injector (when one is set): those launches have their own
// tickets and tables, made for the call, so an injected failure leaves
// nothing behind to spoil. Device thread.
func (d *device) groupLaunch(fn cudrv.Function, grid, shared int, st cudrv.Stream, args *cudrv.Params) error {
	if d.pool.faults != nil {
		if err := d.pool.faults.hit(faultLaunch); err != nil {
			return err
		}
	}
	if err := fn.Launch(grid, 1, 1, blockThreads, 1, 1, shared, st, args); err != nil {
		return err
	}
	launches.Add(1)
	return nil
}

// launchFault is the injected failure of a launch on st with scratch sc, or
// nil; d.pool.faults is set. A failed launch leaves behind the worst that a
// launch dying part-way could: blocks that took their tickets (the ticket
// set beyond any grid, so that no block of the next launch is last) and a
// garbage state, so that a later launch on sc is right only once settle has
// cleaned up.
func (d *device) launchFault(st cudrv.Stream, sc *scratch) error {
	err := d.pool.faults.hit(faultLaunch)
	if err == nil {
		return nil
	}
	if perr := cudrv.MemsetD32Async(sc.ticket.ptr, 1<<30, 1, st); perr != nil {
		return errors.Join(err, perr)
	}
	if perr := cudrv.MemsetD8Async(sc.out.ptr, 0xff, slotWords*8, st); perr != nil {
		return errors.Join(err, perr)
	}
	return err
}

// settle cleans up after a failed call (err != nil; nil passes through):
// it waits for the work left on every lane's stream and zeroes the launch
// tickets again (a launch that died part-way may leave one counting), so
// that the next call starts on idle lanes; device thread. Its own failures
// (a context that a sticky error broke) are joined to err.
func (b *Backend) settle(err error) error {
	if err == nil {
		return nil
	}
	var errs []error
	if serr := b.up.Synchronize(); serr != nil {
		errs = append(errs, fmt.Errorf("waiting for the upload stream: %w", serr))
	}
	for i := range b.lanes {
		ln := &b.lanes[i]
		ln.busy = false
		if ln.sc.ticket.ptr != 0 {
			// Queued after the work left on the stream, waited for below.
			if merr := cudrv.MemsetD32Async(ln.sc.ticket.ptr, 0, 1, ln.stream); merr != nil {
				errs = append(errs, fmt.Errorf("zeroing the launch ticket of stream %d: %w", i, merr))
			}
		}
		if serr := ln.stream.Synchronize(); serr != nil {
			errs = append(errs, fmt.Errorf("waiting for stream %d: %w", i, serr))
		}
	}
	if len(errs) > 0 {
		return errors.Join(err, fmt.Errorf("resetting the streams after the failure: %w", errors.Join(errs...)))
	}
	return err
}
