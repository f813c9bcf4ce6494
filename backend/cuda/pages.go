//go:build cuda

package cuda

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"
	"unsafe"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/internal/pqdev"
	"github.com/arrowagg/arrowagg/internal/staging"
	"github.com/arrowagg/arrowagg/internal/startup"
	"github.com/arrowagg/arrowagg/kernels"
)

var _ backend.PageGPU = (*Backend)(nil)

// HandlesPages reports whether the page kernels decode pages of kind k for
// the aggregates of tracks (pqdev.Handles).
func (b *Backend) HandlesPages(k column.Kind, tracks agg.Set) bool { return pqdev.Handles(k, tracks) }

var _ backend.DeviceOpener = (*Backend)(nil)

// DeviceOpen reports whether the device is open (its context and module
// set up), without opening it.
func (b *Backend) DeviceOpen() bool { return b.d.opened() != nil }

// Warm opens the device (its context and module) if it is not open yet:
// a caller that knows it will need the GPU soon starts it meanwhile.
func (b *Backend) Warm() error { return b.d.do(func() error { return nil }) }

// pageBatchBytes bounds the stored bytes of the chunks decoded at once: the
// device holds them, and the snappy pages' bodies decompressed beside them
// (a quarter of WithMemoryLimit's cap, when it is lower).
const pageBatchBytes = 1 << 30

// UpdatePages folds Parquet pages into s on the device (pqdev.Aggregate):
// the chunks are uploaded as stored, snappy bodies decompressed by one
// launch and the pages decoded and aggregated by another (kernels/pq.cuh),
// a batch of chunks at a time. A page whose bytes the kernels find corrupt
// fails the call, naming the page; s is left untouched then. Out of device
// memory (or of WithMemoryLimit's), the batches are halved and the call
// starts again, down to a chunk a batch (pqdev.AggregateFitting); if even
// that does not fit, it warns and fails with an error matching
// backend.ErrDeviceMemory, which the caller may answer by reading the pages
// on the CPU.
func (b *Backend) UpdatePages(ctx context.Context, p *column.Pages, s *agg.State) error {
	batch := int64(pageBatchBytes)
	if b.opts.memLimit > 0 { // (the chunks, their bodies decompressed, the dictionaries: a quarter each at most)
		batch = max(1, min(batch, b.opts.memLimit/4))
	}
	err := pqdev.AggregateFitting(ctx, p, s, batch, func(q *column.Pages, l *pqdev.Layout, words []uint64, status []uint32) error {
		return b.d.do(func() error { return b.decodePages(ctx, q, l, words, status) })
	}, isOOM)
	switch {
	case err == nil:
		return nil
	case isOOM(err):
		b.opts.warn(fmt.Sprintf("GPU %s: too little free device memory for the %s pages of a column chunk, one at a time: %v",
			b.d.info.Name, p.Type, err))
		return fmt.Errorf("cuda: %s pages: %w: %w", p.Type, backend.ErrDeviceMemory, err)
	}
	return fmt.Errorf("cuda: %s pages: %w", p.Type, err)
}

// decodePages runs the page kernels over q as l lays it out, leaving the
// state's words in words and the pages' status in status; device thread.
func (b *Backend) decodePages(ctx context.Context, q *column.Pages, l *pqdev.Layout, words []uint64, status []uint32) (err error) {
	d := b.d
	np := int64(len(q.Pages))
	pb, err := b.uploadPages(ctx, q, l)
	defer pb.release(d) // (after settle: the streams waited for)
	if err != nil {
		return b.settle(err)
	}
	st := b.up
	var kstart time.Time
	if startup.Enabled() { // the kernels' time alone, after the copies
		if err := d.syncStream(st); err != nil {
			return b.settle(fmt.Errorf("waiting for the copies: %w", err))
		}
		kstart = time.Now()
	}
	if err := pb.launch(st); err != nil {
		return b.settle(err)
	}
	if err := pb.readBack(d, st, words, status); err != nil {
		return b.settle(err)
	}
	if startup.Enabled() {
		startup.Trace(fmt.Sprintf("page kernels: %d pages, %d values of %d bytes, %d stored bytes", np, q.Rows,
			q.Kind.Width(), l.DataBytes), kstart, nil)
	}
	return nil
}

// devicePages is a batch of pages on the device, as uploadPages lays it
// out: the chunks, the scratch of the snappy bodies, the page table, the
// dictionaries, the pages' status, the blocks' partial states, the launch's
// ticket and its state; and the kernels that decode it.
type devicePages struct {
	data, scratch, table, dict, stat, partials, ticket, out devBuf
	fn, unsnap                                              cudrv.Function // (unsnap: zero when no page is snappy)
	name                                                    string
	np                                                      int64
	maxdef                                                  uint64
}

func (pb *devicePages) bufs() []*devBuf {
	return []*devBuf{&pb.data, &pb.scratch, &pb.table, &pb.dict, &pb.stat, &pb.partials, &pb.ticket, &pb.out}
}

// readBack copies the state's words and the pages' status of pb's launch
// (on st) into words and status and waits for them; device thread.
func (pb *devicePages) readBack(d *device, st cudrv.Stream, words []uint64, status []uint32) error {
	np := pb.np
	hw := make([]byte, stateWords*8+4*np)
	if err := d.copyDtoH(unsafe.Pointer(&hw[0]), pb.out.ptr, stateWords*8, st); err != nil {
		return fmt.Errorf("copying the state back: %w", err)
	}
	if err := d.copyDtoH(unsafe.Pointer(&hw[stateWords*8]), pb.stat.ptr, 4*np, st); err != nil {
		return fmt.Errorf("copying the pages' status back: %w", err)
	}
	if err := d.syncStream(st); err != nil {
		return fmt.Errorf("waiting for the page kernels: %w", err)
	}
	for i := range words {
		words[i] = binary.LittleEndian.Uint64(hw[8*i:])
	}
	for i := range status {
		status[i] = binary.LittleEndian.Uint32(hw[stateWords*8+4*i:])
	}
	return nil
}

// release gives pb's buffers back to d's pool; device thread.
func (pb *devicePages) release(d *device) {
	for _, x := range pb.bufs() {
		if x.ptr != 0 {
			d.pool.release(x)
		}
	}
}

// uploadPages allocates the device's buffers of q as l lays it out and
// copies its chunks, dictionaries and page table there, on the upload
// stream; device thread. The caller releases what it returns, an error or
// not, once the streams are waited for (settle).
func (b *Backend) uploadPages(ctx context.Context, q *column.Pages, l *pqdev.Layout) (_ *devicePages, err error) {
	d := b.d
	pb := &devicePages{name: pqdev.Kernel(q.Kind), np: int64(len(q.Pages))}
	if q.Nullable {
		pb.maxdef = 1
	}
	if pb.fn, _, err = d.lazyKernel(pb.name); err != nil {
		return pb, err
	}
	if l.Snappy > 0 {
		if pb.unsnap, _, err = d.lazyKernel("arrowagg_pq_unsnap"); err != nil {
			return pb, err
		}
	}
	np := pb.np
	sizes := []int64{l.DataBytes, l.ScratchBytes, int64(len(l.Table)), l.DictBytes + 16, 4 * np,
		np * stateWords * 8, 4, stateWords * 8}
	for i, x := range pb.bufs() {
		if *x, err = d.pool.alloc(sizes[i]); err != nil {
			return pb, err
		}
	}
	st := b.up
	if err := cudrv.MemsetD8Async(pb.data.ptr, 0, l.DataBytes, st); err != nil {
		return pb, fmt.Errorf("zeroing the chunk buffer: %w", err)
	}
	if err := b.copyChunks(ctx, q, l, pb.data.ptr, pb.dict.ptr, st); err != nil {
		return pb, err
	}
	if err := d.copyHtoD(pb.table.ptr, unsafe.Pointer(&l.Table[0]), int64(len(l.Table)), st); err != nil {
		return pb, fmt.Errorf("copying the page table: %w", err)
	}
	return pb, nil
}

// launch zeroes pb's status and ticket and launches its kernels on st: the
// snappy bodies' decompression (when there are any), then the pages'
// decoding and aggregation into pb.out; device thread.
func (pb *devicePages) launch(st cudrv.Stream) error {
	np := pb.np
	if err := cudrv.MemsetD32Async(pb.stat.ptr, 0, np, st); err != nil {
		return fmt.Errorf("zeroing the pages' status: %w", err)
	}
	if err := cudrv.MemsetD32Async(pb.ticket.ptr, 0, 1, st); err != nil {
		return fmt.Errorf("zeroing the launch ticket: %w", err)
	}
	chunk, scr := pb.data.ptr+pqdev.Pad, pb.scratch.ptr+pqdev.Pad
	if pb.unsnap != (cudrv.Function{}) {
		var args cudrv.Params
		args.Ptr(chunk).Ptr(scr).Ptr(pb.table.ptr).U64(uint64(np)).Ptr(pb.stat.ptr)
		// A block a page (one warp): the pages spread over the
		// multiprocessors more evenly than in blocks of eight warps.
		if err := pb.unsnap.Launch(int(np), 1, 1, kernels.AggWarpThreads, 1, 1, 0, st, &args); err != nil {
			return fmt.Errorf("launching arrowagg_pq_unsnap on %d pages: %w", np, err)
		}
		launches.Add(1)
	}
	var args cudrv.Params
	args.Ptr(chunk).Ptr(scr).Ptr(pb.table.ptr).Ptr(pb.dict.ptr).U64(pb.maxdef).Ptr(pb.partials.ptr).Ptr(pb.ticket.ptr).
		Ptr(pb.out.ptr).Ptr(pb.stat.ptr)
	if err := pb.fn.Launch(int(np), 1, 1, blockThreads, 1, 1, 0, st, &args); err != nil {
		return fmt.Errorf("launching %s on %d pages: %w", pb.name, np, err)
	}
	launches.Add(1)
	return nil
}

// copyChunks copies the chunks of q to the chunk buffer at data where l puts
// them, and its dictionaries to dict: through the staging ring when the ring
// can be had, else directly; device thread.
func (b *Backend) copyChunks(ctx context.Context, q *column.Pages, l *pqdev.Layout, data, dict cudrv.DevicePtr, st cudrv.Stream) error {
	total := l.DictBytes
	for _, c := range q.Chunks {
		total += c.Len
	}
	staged, err := b.stageable(total)
	if err != nil {
		return err
	}
	// One stream of copies for all the chunks (each a few MiB): the ring's
	// fills run ahead across them.
	var ts []staging.Transfer
	srcs, dsts := make([][]byte, 0, 2*len(q.Chunks)), make([]cudrv.DevicePtr, 0, 2*len(q.Chunks))
	for i, c := range q.Chunks {
		srcs, dsts = append(srcs, q.Data[c.Off:c.Off+c.Len]), append(dsts, data+cudrv.DevicePtr(l.ChunkAt[i]))
		srcs, dsts = append(srcs, q.Dicts[i]), append(dsts, dict+cudrv.DevicePtr(l.DictAt[i]))
	}
	for i, src := range srcs {
		dst := dsts[i]
		if len(src) == 0 {
			continue
		}
		if staged && !pinned(src) {
			ts = append(ts, toDevice(dst, src))
			continue
		}
		if err := b.d.copyHtoD(dst, unsafe.Pointer(&src[0]), int64(len(src)), st); err != nil {
			return fmt.Errorf("copying %d bytes to the device: %w", len(src), err)
		}
	}
	if len(ts) > 0 {
		return b.ring.copy(ctx, b.d, st, ts...)
	}
	return nil
}
