//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/internal/staging"
)

// ring is the page-locked staging of copies from pageable host memory to the
// device: slots of piece bytes each (WithStaging), each with an event
// recorded after the copy that reads it. internal/staging schedules it:
// goroutines fill the slots, several pieces at once, and the device thread
// enqueues each piece's copy, in order, as soon as it is full; an Update's
// chunks form one stream, so the fills of one chunk run on while the
// previous chunk's last pieces are copied. On the H100 host a ring of
// 2 MiB slots moved 45–48 GB/s from Go memory where staging whole 64 MiB
// chunks with all goroutines at once moved 33 GB/s in the same run (the
// pinned copy's ceiling: 55); BENCHMARKS.md has the sweep.
type ring struct {
	*staging.Ring
	bufs   [][]byte // page-locked
	events []cudrv.Event
}

// newRing allocates slots×piece bytes of page-locked memory for copies
// filled by up to workers goroutines; device thread. free releases it.
func (b *Backend) newRing(piece, slots, workers int) (*ring, error) {
	r := &ring{bufs: make([][]byte, slots), events: make([]cudrv.Event, slots)}
	for i := range r.bufs {
		var err error
		if r.bufs[i], err = b.stagingAlloc(piece); err != nil {
			return nil, errors.Join(err, r.free())
		}
		if r.events[i], err = cudrv.MakeEvent(cudrv.DisableTiming); err != nil {
			return nil, errors.Join(fmt.Errorf("creating a staging event: %w", err), r.free())
		}
	}
	r.Ring = staging.New(r.bufs, workers)
	return r, nil
}

// free frees the slots; device thread, with no copy in flight (the streams
// drained).
func (r *ring) free() error {
	var first error
	for i := range r.bufs {
		var ze cudrv.Event
		if r.events[i] != ze {
			if err := cudrv.DestroyEvent(&r.events[i]); err != nil && first == nil {
				first = err
			}
		}
		if r.bufs[i] != nil {
			if err := hostFree(r.bufs[i]); err != nil && first == nil {
				first = err
			}
			r.bufs[i] = nil
		}
	}
	return first
}

// begin starts a stream of copies through the ring on st; device thread.
func (r *ring) begin(ctx context.Context, d *device, st cudrv.Stream) (*staging.Stream, error) {
	return r.Begin(ctx, ringDevice{d, st, r.events})
}

// copy enqueues the copies of ts on st through the ring and returns when
// all are enqueued (not done: st says when); device thread.
func (r *ring) copy(ctx context.Context, d *device, st cudrv.Stream, ts ...staging.Transfer) error {
	return r.Copy(ctx, ringDevice{d, st, r.events}, ts...)
}

// ringDevice is a staging.Device: copies on one stream, a slot's mark an
// event; device thread.
type ringDevice struct {
	d      *device
	st     cudrv.Stream
	events []cudrv.Event
}

func (x ringDevice) Copy(dst uintptr, src []byte) error {
	return x.d.copyHtoD(cudrv.DevicePtr(dst), unsafe.Pointer(&src[0]), int64(len(src)), x.st)
}

func (x ringDevice) Mark(slot int) error  { return x.events[slot].Record(x.st) }
func (x ringDevice) Passed(slot int) bool { return x.events[slot].Query() == nil }
func (x ringDevice) Wait(slot int) error  { return x.d.syncEvent(x.events[slot]) }

// toDevice is the transfer of src to dst: direct when src is page-locked,
// through the ring otherwise; device thread.
func toDevice(dst cudrv.DevicePtr, src []byte) staging.Transfer {
	return staging.Transfer{Dst: uintptr(dst), Src: src, Direct: pinned(src)}
}
