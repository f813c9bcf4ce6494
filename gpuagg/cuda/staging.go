//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"gorgonia.org/cu"
)

// ring is the page-locked staging of copies from pageable host memory to the
// device: slots of piece bytes each (WithStaging). Fill goroutines copy the
// source into slots, one goroutine per piece and several pieces at once; the
// device thread issues each piece's DMA, in order, as soon as its slot is
// full, and a slot is refilled once the event recorded after its DMA has
// completed. The copy engine starts on the first piece of a chunk, not once
// the whole chunk is staged, and a slow goroutine holds up one piece, not
// the chunk. On the H100 host this moved 45–48 GB/s from Go memory where
// staging whole 64 MiB chunks with all goroutines at once moved 33 GB/s in
// the same run (the pinned copy's ceiling: 55); BENCHMARKS.md has the sweep.
type ring struct {
	piece    int
	minPiece int // a copy of less than piece per worker is cut into pieces of at least this
	workers  int
	slots    []ringSlot
	next     int          // the slot of the next call's first piece
	pieces   []transfer   // the current call's pieces, reused
	active   atomic.Int32 // fill goroutines of the current copy still running
}

type ringSlot struct {
	buf    []byte   // page-locked
	done   cu.Event // recorded after the DMA that reads buf
	busy   bool     // done is recorded and not yet waited for
	filled atomic.Bool
}

type fillJob struct {
	dst, src []byte
	filled   *atomic.Bool
}

// newRing allocates slots×piece bytes of page-locked memory for copies
// filled by up to workers goroutines; device thread. free releases it.
func (b *Backend) newRing(piece, slots, workers int) (*ring, error) {
	r := &ring{piece: piece, minPiece: min(piece, defaultMinPiece), workers: workers, slots: make([]ringSlot, slots)}
	for i := range r.slots {
		s := &r.slots[i]
		var err error
		if s.buf, err = b.stagingAlloc(piece); err != nil {
			return nil, errors.Join(err, r.free())
		}
		if s.done, err = cu.MakeEvent(cu.DisableTiming); err != nil {
			return nil, errors.Join(fmt.Errorf("creating a staging event: %w", err), r.free())
		}
	}
	return r, nil
}

// free frees the slots; device thread, with no copy in flight (the streams
// drained).
func (r *ring) free() error {
	var first error
	for i := range r.slots {
		s := &r.slots[i]
		var ze cu.Event
		if s.done != ze {
			if err := cu.DestroyEvent(&s.done); err != nil && first == nil {
				first = err
			}
		}
		if s.buf != nil {
			if err := hostFree(s.buf); err != nil && first == nil {
				first = err
			}
			s.buf = nil
		}
	}
	return first
}

// transfer is a copy of host bytes src to device memory at dst (a ring
// cuts it into pieces, transfers of their own).
type transfer struct {
	dst cu.DevicePtr
	src []byte
}

// copy enqueues on st the copies of ts through the ring, one pipeline of
// pieces for them all; device thread. It returns when every piece is filled
// and its DMA issued (not done: a slot's event says when); on an error no
// fill is still running. The thread hands out fills into free slots and
// issues the DMAs of filled pieces in order, whichever is ready, and blocks
// only when it holds nothing to wait for but the oldest slot's copy.
func (r *ring) copy(ctx context.Context, d *device, st cu.Stream, ts ...transfer) (err error) {
	pieces := r.pieces[:0]
	for _, t := range ts {
		// A copy of less than a piece per fill goroutine (a chunk's validity
		// bitmap) is cut finer, so that all of them fill it.
		size := min(r.piece, max(r.minPiece, (len(t.src)/r.workers+r.minPiece-1)/r.minPiece*r.minPiece))
		for lo := 0; lo < len(t.src); lo += size {
			hi := min(lo+size, len(t.src))
			pieces = append(pieces, transfer{t.dst + cu.DevicePtr(lo), t.src[lo:hi]})
		}
	}
	r.pieces = pieces
	n := len(pieces)
	slot := func(i int) *ringSlot { return &r.slots[(r.next+i)%len(r.slots)] }
	// The fill goroutines live for one copy: none stays parked while the
	// backend idles, and none outlives it.
	jobs := make(chan fillJob, len(r.slots))
	for range min(r.workers, n) {
		r.active.Add(1)
		go func() {
			defer r.active.Add(-1)
			for j := range jobs {
				copy(j.dst, j.src)
				j.filled.Store(true)
			}
		}()
	}
	defer func() {
		r.next = (r.next + n) % len(r.slots)
		clear(r.pieces) // drop references to the caller's memory
		// No goroutine may write a slot or read a source after we return.
		close(jobs)
		for r.active.Load() > 0 {
			runtime.Gosched()
		}
	}()
	fill, dma := 0, 0
	for dma < n {
		progressed := false
		for fill < n && fill < dma+len(r.slots) {
			s := slot(fill)
			if s.busy {
				if !eventDone(s.done) {
					break
				}
				s.busy = false
			}
			if fill%64 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			p := pieces[fill]
			s.filled.Store(false)
			jobs <- fillJob{dst: s.buf[:len(p.src)], src: p.src, filled: &s.filled}
			fill++
			progressed = true
		}
		for ; dma < fill && slot(dma).filled.Load(); dma++ {
			s, p := slot(dma), pieces[dma]
			if err := d.copyHtoD(p.dst, unsafe.Pointer(&s.buf[0]), int64(len(p.src)), st); err != nil {
				return fmt.Errorf("copying %d bytes to the device: %w", len(p.src), err)
			}
			if err := s.done.Record(st); err != nil {
				return fmt.Errorf("recording a staged copy: %w", err)
			}
			s.busy = true
			progressed = true
		}
		if !progressed && dma == fill {
			s := slot(fill)
			if err := d.syncEvent(s.done); err != nil {
				return fmt.Errorf("waiting for a staged copy: %w", err)
			}
			s.busy = false
		}
	}
	return nil
}

// defaultMinPiece is the smallest piece a copy is cut into (a chunk's
// bitmap: 1 or 2 MiB). Against 1 MiB, run by run in turn on the H100 host:
// 41.6 against 38.8 GB/s on an int32 column with nulls (BenchmarkStaging,
// update/nulls10).
const defaultMinPiece = 64 << 10

// eventDone reports whether ev has completed (cuEventQuery).
func eventDone(ev cu.Event) bool { return ev.Query() == nil }
