package staging

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

// Device enqueues the copies of a Stream, in the order they are issued, and
// tells when each slot's last copy has completed. Its methods are called by
// the thread that drives the Stream, never concurrently.
type Device interface {
	// Copy enqueues the copy of src to device address dst.
	Copy(dst uintptr, src []byte) error
	// Mark records, after the copies enqueued so far, when slot i's bytes
	// have been read.
	Mark(slot int) error
	// Passed reports whether slot i's last mark has been passed.
	Passed(slot int) bool
	// Wait blocks until slot i's last mark has been passed.
	Wait(slot int) error
}

// Transfer is a copy of host bytes Src to device address Dst. A Direct one
// (Src is page-locked) is copied from Src itself, in its turn, with no slot.
type Transfer struct {
	Dst    uintptr
	Src    []byte
	Direct bool
}

// Ring is the staging: slots of page-locked memory, filled by up to Workers
// goroutines. Streams use it one at a time.
type Ring struct {
	// MinPiece: a transfer of less than a piece per worker (a chunk's
	// validity bitmap) is cut into pieces of at least this many bytes (and
	// at most a slot), so that all workers fill it.
	MinPiece int
	// Fill is how the goroutines fill the slots (DefaultFill unless set).
	Fill    Fill
	workers int
	slots   []slot
	next    int          // the slot of the next stream's first piece
	active  atomic.Int32 // fill goroutines still running
	pieces  []piece      // the current stream's, reused
	groups  []group
	open    bool
	stats   ringStats
}

// Stats are a ring's counters since it was made (or ResetStats): what the
// fills cost and how long the device's thread waited for them.
type Stats struct {
	Pieces  int64         // staged pieces filled
	Fill    time.Duration // their fills, summed over the goroutines
	MaxFill time.Duration // the slowest fill
	// WaitFill is the time the device's thread spent polling with nothing
	// to do but wait for the next piece in order to be filled; WaitCopy,
	// for the next slot's copy to complete, so that it may be refilled.
	WaitFill, WaitCopy time.Duration
}

type ringStats struct {
	pieces, fill, maxFill atomic.Int64
	waitFill, waitCopy    time.Duration // device thread only
}

// Stats returns the ring's counters; call it between streams.
func (r *Ring) Stats() Stats {
	return Stats{Pieces: r.stats.pieces.Load(), Fill: time.Duration(r.stats.fill.Load()),
		MaxFill: time.Duration(r.stats.maxFill.Load()), WaitFill: r.stats.waitFill, WaitCopy: r.stats.waitCopy}
}

// ResetStats zeroes the counters; call it between streams.
func (r *Ring) ResetStats() {
	r.stats.pieces.Store(0)
	r.stats.fill.Store(0)
	r.stats.maxFill.Store(0)
	r.stats.waitFill, r.stats.waitCopy = 0, 0
}

// filled records one fill of d.
func (st *ringStats) filled(d time.Duration) {
	st.pieces.Add(1)
	st.fill.Add(int64(d))
	for {
		m := st.maxFill.Load()
		if int64(d) <= m || st.maxFill.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

type slot struct {
	buf    []byte
	busy   bool // marked and not yet seen passed
	filled atomic.Bool
}

type piece struct {
	dst  uintptr
	src  []byte
	slot int // -1: direct
}

type group struct {
	start, end    int // pieces
	before, after func() error
}

type fillJob struct {
	dst, src []byte
	filled   *atomic.Bool
	how      Fill
}

// DefaultMinPiece is Ring.MinPiece unless set (or the slot, if smaller). A
// piece takes a slot and a copy whatever its size, and the copies bound the
// ring: an int32 column with 10% nulls in 64 MiB chunks (2 MiB bitmaps)
// moved 46.4 GB/s with bitmaps in pieces of at least 1 MiB against 35.8
// with 64 KiB, round by round on the H100 host (BENCHMARKS.md).
const DefaultMinPiece = 1 << 20

// DefaultFill is Ring.Fill unless set. On the H100 host (Emerald Rapids,
// PCIe 5), round by round with a ring for each way, Update from Go memory
// moved 47.5 GB/s filled with FillDemote against 45.3 with Go's copy (ahead
// in 13 of 17 rounds), and 47.2 against 44.7 with 10% nulls: the copy
// engine, not the fills, bounds the ring, and it reads lines from the
// shared cache faster than from a core's own (BENCHMARKS.md).
const DefaultFill = FillDemote

// New makes a ring of the given slots (page-locked buffers of one size)
// filled by up to workers goroutines.
func New(bufs [][]byte, workers int) *Ring {
	r := &Ring{workers: max(workers, 1), slots: make([]slot, len(bufs))}
	for i, b := range bufs {
		r.slots[i].buf = b
	}
	r.MinPiece = min(r.piece(), DefaultMinPiece)
	r.Fill = DefaultFill
	return r
}

// piece is the size of a slot.
func (r *Ring) piece() int {
	if len(r.slots) == 0 {
		return 0
	}
	return len(r.slots[0].buf)
}

// Active is the number of fill goroutines running (none once a Stream is
// closed).
func (r *Ring) Active() int { return int(r.active.Load()) }

// Copy enqueues the copies of ts on dev and returns when every piece is
// filled and its copy enqueued (not completed: the Device says when).
func (r *Ring) Copy(ctx context.Context, dev Device, ts ...Transfer) error {
	s, err := r.Begin(ctx, dev)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Add(nil, nil, ts...); err != nil {
		return err
	}
	return s.Finish()
}

// Stream is one call's copies through a Ring; the thread that drives the
// device calls its methods.
type Stream struct {
	r              *Ring
	ctx            context.Context
	dev            Device
	jobs           chan fillJob
	spawned        int
	fill, dma      int // pieces handed out to fill, pieces whose copy is enqueued
	handed, issued int // staged pieces handed out, staged pieces enqueued: the slot sequence
	gb, ga         int // the first group whose before, after has not run
	err            error
}

// Begin starts a stream on the ring; Close ends it.
func (r *Ring) Begin(ctx context.Context, dev Device) (*Stream, error) {
	if r.open {
		return nil, fmt.Errorf("staging: a stream is already open on this ring")
	}
	if r.piece() == 0 {
		return nil, fmt.Errorf("staging: a ring with no slots, or empty ones")
	}
	r.open = true
	r.pieces, r.groups = r.pieces[:0], r.groups[:0]
	return &Stream{r: r, ctx: ctx, dev: dev}, nil
}

// Add appends a group: before runs when its first copy is next to be
// enqueued (after every copy and the after of earlier groups), after once
// its last copy is enqueued; either may be nil, and a group may have no
// bytes. Add returns when every piece of the group is handed out to be
// filled, having enqueued what was ready; the group's copies and after may
// still be to come (Finish). After an error the stream only fails.
func (s *Stream) Add(before, after func() error, ts ...Transfer) error {
	if s.err != nil {
		return s.err
	}
	r := s.r
	g := group{start: len(r.pieces), before: before, after: after}
	for _, t := range ts {
		if len(t.Src) == 0 {
			continue
		}
		if t.Direct {
			r.pieces = append(r.pieces, piece{t.Dst, t.Src, -1})
			continue
		}
		m := max(r.MinPiece, 1)
		size := min(r.piece(), max(m, ceilTo(len(t.Src)/r.workers, m)))
		for lo := 0; lo < len(t.Src); lo += size {
			hi := min(lo+size, len(t.Src))
			r.pieces = append(r.pieces, piece{t.Dst + uintptr(lo), t.Src[lo:hi], 0})
		}
	}
	g.end = len(r.pieces)
	r.groups = append(r.groups, g)
	s.err = s.pump(false)
	return s.err
}

// Finish enqueues the remaining copies and runs the remaining groups' work.
func (s *Stream) Finish() error {
	if s.err == nil {
		s.err = s.pump(true)
	}
	return s.err
}

// Close ends the stream: no fill goroutine runs and no source is read after
// it returns. Copies already enqueued may still be in flight (the Device
// says when).
func (s *Stream) Close() {
	r := s.r
	if !r.open {
		return
	}
	if s.jobs != nil {
		close(s.jobs)
		for r.active.Load() > 0 {
			runtime.Gosched()
		}
	}
	r.next = (r.next + s.handed) % len(r.slots)
	clear(r.pieces) // drop references to the caller's memory and work
	clear(r.groups)
	r.open = false
	if s.err == nil {
		s.err = fmt.Errorf("staging: the stream is closed")
	}
}

// pump hands out fills and enqueues copies until every piece is handed out
// or, with all, until every copy is enqueued and every group's work has
// run. It blocks only when it holds nothing to wait for but the next slot's
// copy; otherwise it polls (the device's thread is locked to its OS thread,
// and a parked one wakes slowly).
func (s *Stream) pump(all bool) error {
	r := s.r
	n := len(r.slots)
	var waitStart time.Time // polling since, with nothing else to do
	waitingCopy := false    // for a slot's copy (else for a fill)
	for {
		progressed := false
		blockedOnCopy := false
		for s.fill < len(r.pieces) {
			p := &r.pieces[s.fill]
			if p.slot < 0 {
				s.fill++
				progressed = true
				continue
			}
			if s.handed >= s.issued+n {
				break
			}
			i := (r.next + s.handed) % n
			sl := &r.slots[i]
			if sl.busy {
				if !s.dev.Passed(i) {
					blockedOnCopy = true
					break
				}
				sl.busy = false
			}
			if s.handed%64 == 0 {
				if err := s.ctx.Err(); err != nil {
					return err
				}
			}
			s.spawn()
			sl.filled.Store(false)
			p.slot = i
			s.jobs <- fillJob{dst: sl.buf[:len(p.src)], src: p.src, filled: &sl.filled, how: r.Fill}
			s.handed++
			s.fill++
			progressed = true
		}
		for {
			if err := s.runGroups(); err != nil {
				return err
			}
			if s.dma == s.fill {
				break
			}
			p := &r.pieces[s.dma]
			src := p.src
			if p.slot >= 0 {
				sl := &r.slots[p.slot]
				if !sl.filled.Load() {
					break
				}
				src = sl.buf[:len(p.src)]
			}
			if err := s.dev.Copy(p.dst, src); err != nil {
				return fmt.Errorf("copying %d bytes to the device: %w", len(src), err)
			}
			if p.slot >= 0 {
				if err := s.dev.Mark(p.slot); err != nil {
					return fmt.Errorf("marking a staged copy: %w", err)
				}
				r.slots[p.slot].busy = true
				s.issued++
			}
			s.dma++
			progressed = true
		}
		if all {
			if s.dma == len(r.pieces) && s.ga == len(r.groups) {
				return nil
			}
		} else if s.fill == len(r.pieces) {
			return nil
		}
		// The time spent polling, and for what: a change of reason
		// counts as the end of one wait and the start of another.
		waiting := !progressed && s.dma < s.fill
		if !waitStart.IsZero() && (!waiting || blockedOnCopy != waitingCopy) {
			if waitingCopy {
				r.stats.waitCopy += time.Since(waitStart)
			} else {
				r.stats.waitFill += time.Since(waitStart)
			}
			waitStart = time.Time{}
		}
		if waiting && waitStart.IsZero() {
			waitStart, waitingCopy = time.Now(), blockedOnCopy
		}
		if !progressed && s.dma == s.fill {
			// Every handed-out piece is enqueued: the next piece waits for
			// its slot's copy to complete.
			i := (r.next + s.handed) % n
			if err := s.dev.Wait(i); err != nil {
				return fmt.Errorf("waiting for a staged copy: %w", err)
			}
			r.slots[i].busy = false
		}
	}
}

// runGroups runs the before and after of the groups that the enqueued
// copies have reached, in order.
func (s *Stream) runGroups() error {
	r := s.r
	for s.ga < len(r.groups) {
		g := &r.groups[s.ga]
		if s.gb == s.ga {
			if g.start > s.dma {
				return nil
			}
			s.gb++
			if err := call(g.before); err != nil {
				return err
			}
		}
		if g.end > s.dma {
			return nil
		}
		s.ga++
		if err := call(g.after); err != nil {
			return err
		}
	}
	return nil
}

// call runs f, if there is one.
func call(f func() error) error {
	if f == nil {
		return nil
	}
	return f()
}

// spawn starts one more fill goroutine, up to the ring's workers: a stream
// of one piece starts one.
func (s *Stream) spawn() {
	r := s.r
	if s.jobs == nil {
		s.jobs = make(chan fillJob, len(r.slots))
	}
	if s.spawned >= r.workers {
		return
	}
	s.spawned++
	r.active.Add(1)
	go func(jobs <-chan fillJob) {
		defer r.active.Add(-1)
		for j := range jobs {
			start := time.Now()
			fill(j.how, j.dst, j.src)
			r.stats.filled(time.Since(start))
			j.filled.Store(true)
		}
	}(s.jobs)
}

// ceilTo rounds n up to a multiple of m.
func ceilTo(n, m int) int { return (n + m - 1) / m * m }
