//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/kernels"
)

// Many small columns, one launch.
//
// Through the chunk pipeline every column costs at least one launch, one
// upload of its values and one of its bitmap, one copy of its state back,
// and the driver calls around them on the device thread: for a record batch
// of 500 columns of 1000 rows those calls, not the bytes, set the time.
// Update packs such columns instead: their value and validity bytes are
// copied one after another into a lane's page-locked buffer, behind a table of
// column descriptors and a work list of tiles, all uploaded with one copy;
// one launch of arrowagg_multi (kernels/agg.cu) reduces every tile with the
// per-kind kernels' thread and block layers and merges the tiles of each
// column on the device; one copy brings all the states back. A packet holds
// what fits in a lane's buffer; more columns make more packets, issued on
// the lanes in turn like chunks.
//
// A column is packed when its states do not track the ordered aggregates
// (those take the chunk pipeline's two-kernel path) and its value and
// validity bytes are at most packMaxBytes and a quarter of the chunk size.
// The cut: 1 MiB takes about 40 µs to cross PCIe at 25 GB/s, against some
// 10 µs of launch, copies and events of a column of its own; beyond it the
// per-column overhead fades, and the chunk pipeline's launches, which spread
// a column over the whole device, are as good. So most of a batch of
// narrow columns goes in one launch, and large columns keep their chunks.
//
// Each packed column yields one state, decoded like a chunk's (decode) and
// merged with State.Merge in column order; the states do not depend on the
// timing of the blocks (the device merges a column's tiles in a fixed
// shape), so results are the same from run to run.

const (
	// packMaxBytes is the most value and validity bytes of a packed column.
	packMaxBytes = 1 << 20
	// multiTileIters is the size of a tile in strided iterations of one
	// block (kernelSpec.elemsPerBlockIter): enough work per block to hide
	// the reduction, few enough elements that a column of a few thousand
	// rows is one tile and needs no device-wide merge.
	multiTileIters = 4
	// multiStateBytes is the room of a column's state in a packet and in
	// the results (hout): the widest state.
	multiStateBytes = maxWords * 8
)

// multiColumn is a column descriptor of arrowagg_multi (ColumnDesc in
// kernels/agg.cu, 56 bytes): device addresses and offsets of its values and
// validity, where its state goes, its kind and its tiles in the work list.
type multiColumn struct {
	values, voff, validity, vbit, out uint64
	kind, firstTile, tiles, _         uint32
}

// multiTile is an entry of arrowagg_multi's work list (Tile in
// kernels/agg.cu): elements [lo, lo+n) of column col.
type multiTile struct {
	lo     uint64
	n, col uint32
}

// The descriptor layouts are the kernel's.
var (
	_ [kernels.AggColumnDescBytes - unsafe.Sizeof(multiColumn{})]struct{}
	_ [unsafe.Sizeof(multiColumn{}) - kernels.AggColumnDescBytes]struct{}
	_ [kernels.AggTileBytes - unsafe.Sizeof(multiTile{})]struct{}
	_ [unsafe.Sizeof(multiTile{}) - kernels.AggTileBytes]struct{}
)

// multiKernel is arrowagg_multi, loaded at the first packed update, and the
// switch that turns packing off (benchmarks compare the two paths).
type multiKernel struct {
	fn      cudrv.Function
	maxGrid int // blocks worth launching; 0: not loaded
	off     bool
}

// packedCol is one column of a packet: its host byte spans (bits is empty
// without a bitmap), their offsets in the packet's data, and its tiles.
type packedCol struct {
	view           int
	vals, bits     span
	valsAt, bitsAt int // bitsAt: -1 without a bitmap
	firstTile      int
	tiles          int
	tileElems      int
}

// bytes is the room of c's data in a packet.
func (c *packedCol) bytes() int { return align16(c.vals.hi-c.vals.lo) + align16(c.bits.hi-c.bits.lo) }

// packedColOf describes view vi (v) as a packet column.
func packedColOf(v *column.View, vi int) (packedCol, bool) {
	s, ok := specOf(v.Kind)
	if !ok {
		return packedCol{}, false
	}
	c := packedCol{view: vi, vals: valueSpan(v, s, 0, v.Len), bitsAt: -1}
	if v.Validity != nil {
		c.bits = bitSpan(v.ValidityOffset, 0, v.Len)
	}
	c.tileElems = multiTileIters * int(s.elemsPerBlockIter())
	c.tiles = (v.Len + c.tileElems - 1) / c.tileElems
	return c, true
}

// packetLayout is the layout of a packet's buffer, the same in a lane's
// staging (hvals) and device buffer (dvals), in bytes from its start:
//
//	0           column descriptors (multiColumn)
//	tileAt      the work list (multiTile)
//	ticketAt    one zero 32-bit ticket per column
//	dataAt      the columns' values and bitmaps, each from a 16-byte boundary
//	stateAt     the columns' states, multiStateBytes each (kernel output)
//	partialsAt  the tiles' partial states, multiStateBytes each (kernel scratch)
//	size        the end
//
// Everything before stateAt is uploaded.
type packetLayout struct {
	tileAt, ticketAt, dataAt, stateAt, partialsAt, size int
}

// layoutFor is the layout of a packet of cols columns, tiles tiles and data
// bytes of column data.
func layoutFor(cols, tiles, data int) packetLayout {
	var l packetLayout
	l.tileAt = align16(cols * int(unsafe.Sizeof(multiColumn{})))
	l.ticketAt = l.tileAt + tiles*int(unsafe.Sizeof(multiTile{}))
	l.dataAt = align16(l.ticketAt + 4*cols)
	l.stateAt = l.dataAt + data
	l.partialsAt = l.stateAt + cols*multiStateBytes
	l.size = l.partialsAt + tiles*multiStateBytes
	return l
}

func align16(n int) int { return (n + 15) &^ 15 }

// packet is the columns of one arrowagg_multi launch.
type packet struct {
	packetLayout
	cols        []packedCol
	tiles, data int // tiles, bytes of column data
}

// fits reports whether p can take c within capacity bytes and maxCols
// columns.
func (p *packet) fits(c *packedCol, capacity int64, maxCols int) bool {
	l := layoutFor(len(p.cols)+1, p.tiles+c.tiles, p.data+c.bytes())
	return int64(l.size) <= capacity && len(p.cols)+1 <= maxCols
}

// add appends c to p, its bytes after the others'.
func (p *packet) add(c packedCol) {
	c.firstTile = p.tiles
	c.valsAt = p.data
	if c.bits.hi > c.bits.lo {
		c.bitsAt = p.data + align16(c.vals.hi-c.vals.lo)
	}
	p.data += c.bytes()
	p.tiles += c.tiles
	p.cols = append(p.cols, c)
	p.packetLayout = layoutFor(len(p.cols), p.tiles, p.data)
}

// packable reports, for each view, whether Update packs it; device thread,
// after ensureLanes.
func (b *Backend) packable(views []*column.View, states []*agg.State) []bool {
	packed := make([]bool, len(views))
	if b.multi.off {
		return packed
	}
	limit := min(packMaxBytes, int(b.laneBytes/4))
	var empty packet
	for i, v := range views {
		if p := passesOf(v.Kind, states[i]); p.ordered || p.moments || p.sketch || v.Len == 0 {
			continue
		}
		c, ok := packedColOf(v, i)
		packed[i] = ok && c.bytes() <= limit && empty.fits(&c, b.laneBytes, b.packetCols())
	}
	return packed
}

// packetCols is the most columns of a window of packets: the states that
// hout holds.
func (b *Backend) packetCols() int { return len(b.hout) / multiStateBytes }

// plan cuts the packed views into packets that fit a lane's buffers, in
// view order.
func (b *Backend) plan(views []*column.View, packed []bool) []packet {
	var out []packet
	var cur packet
	for vi, v := range views {
		if !packed[vi] {
			continue
		}
		c, _ := packedColOf(v, vi)
		if len(cur.cols) > 0 && !cur.fits(&c, b.laneBytes, b.packetCols()) {
			out = append(out, cur)
			cur = packet{}
		}
		cur.add(c)
	}
	if len(cur.cols) > 0 {
		out = append(out, cur)
	}
	return out
}

// updatePacked aggregates the packed views (packed[i]) into local[i]: their
// packets, in windows of as many as the results buffer holds, each window's
// packets issued on the lanes in turn, then waited for and decoded; device
// thread.
func (b *Backend) updatePacked(ctx context.Context, views []*column.View, packed []bool, local []agg.State) error {
	packets := b.plan(views, packed)
	if len(packets) == 0 {
		return nil
	}
	if err := b.loadMulti(); err != nil {
		return err
	}
	maxCols := b.packetCols()
	for w := 0; w < len(packets); {
		// The window: packets whose states fit in hout together.
		end, cols := w, 0
		for end < len(packets) && cols+len(packets[end].cols) <= maxCols {
			cols += len(packets[end].cols)
			end++
		}
		slot := 0
		for i := w; i < end; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			p := &packets[i]
			if err := b.issuePacket(views, p, &b.lanes[(i-w)%len(b.lanes)], slot); err != nil {
				return fmt.Errorf("aggregating %d packed columns (%d tiles): %w", len(p.cols), p.tiles, err)
			}
			slot += len(p.cols)
		}
		if err := b.drain(); err != nil {
			return err
		}
		slot = 0
		for i := w; i < end; i++ {
			for _, c := range packets[i].cols {
				v := views[c.view]
				words := unsafe.Slice((*uint64)(unsafe.Pointer(&b.hout[slot*multiStateBytes])), maxWords)
				s := kernels.State(v.Kind, int64(v.Len), words[:specs[v.Kind].words])
				local[c.view].Merge(&s)
				slot++
			}
		}
		w = end
	}
	return nil
}

// loadMulti finds arrowagg_multi in the module and its grid size the
// first time; device thread.
func (b *Backend) loadMulti() error {
	if b.multi.maxGrid > 0 {
		return nil
	}
	fn, g, err := b.d.loadKernel("arrowagg_multi")
	if err != nil {
		return err
	}
	b.multi.fn, b.multi.maxGrid = fn, g
	return nil
}

// issuePacket enqueues, on a lane, the upload of packet p (filled into the
// lane's staging), the launch, and the copy of its states into hout from
// state slot slot on; device thread.
func (b *Backend) issuePacket(views []*column.View, p *packet, ln *lane, slot int) error {
	if err := b.claim(ln); err != nil {
		return err
	}
	buf := ln.hvals[:p.stateAt]
	dev := uint64(ln.dvals.ptr)
	descs := unsafe.Slice((*multiColumn)(unsafe.Pointer(&buf[0])), len(p.cols))
	tiles := unsafe.Slice((*multiTile)(unsafe.Pointer(&buf[p.tileAt])), p.tiles)
	clear(buf[p.ticketAt:p.dataAt])
	jobs := make([]copyJob, 0, 2*len(p.cols))
	for i, c := range p.cols {
		v := views[c.view]
		at := p.dataAt + c.valsAt
		d := multiColumn{
			values: dev + uint64(at), voff: c.vals.off,
			out:  dev + uint64(p.stateAt+i*multiStateBytes),
			kind: specs[v.Kind].code, firstTile: uint32(c.firstTile), tiles: uint32(c.tiles),
		}
		jobs = append(jobs, copyJob{at, v.Values[c.vals.lo:c.vals.hi]})
		if c.bitsAt >= 0 {
			at = p.dataAt + c.bitsAt
			d.validity, d.vbit = dev+uint64(at), c.bits.off
			jobs = append(jobs, copyJob{at, v.Validity[c.bits.lo:c.bits.hi]})
		}
		descs[i] = d
		for t := range c.tiles {
			lo := t * c.tileElems
			tiles[c.firstTile+t] = multiTile{lo: uint64(lo), n: uint32(min(c.tileElems, v.Len-lo)), col: uint32(i)}
		}
	}
	b.copyAll(buf, jobs)
	// One copy up: the staging is page-locked, so upload copies it directly.
	// (Uploading it in pieces, each filled while the copy engine takes the
	// one before, measured no faster on an H100 for 4 MB batches.)
	if err := b.ring.copy(context.Background(), b.d, b.up, toDevice(ln.dvals.ptr, buf)); err != nil {
		return err
	}
	if err := b.handOver(ln); err != nil {
		return err
	}
	if err := b.launchMulti(ln, p); err != nil {
		return err
	}
	dst := unsafe.Pointer(&b.hout[slot*multiStateBytes])
	if err := b.d.copyDtoH(dst, ln.dvals.ptr+cudrv.DevicePtr(p.stateAt), int64(len(p.cols)*multiStateBytes), ln.stream); err != nil {
		return fmt.Errorf("copying the column states to the host: %w", err)
	}
	return b.release(ln)
}

// launchMulti enqueues arrowagg_multi over packet p, uploaded to the lane's
// device buffer, on the lane's stream.
func (b *Backend) launchMulti(ln *lane, p *packet) error {
	dev := ln.dvals.ptr
	var args cudrv.Params
	args.Ptr(dev).Ptr(dev + cudrv.DevicePtr(p.tileAt)).U64(uint64(p.tiles)).Ptr(dev + cudrv.DevicePtr(p.partialsAt)).
		Ptr(dev + cudrv.DevicePtr(p.ticketAt))
	g := min(p.tiles, b.multi.maxGrid)
	if b.d.pool.faults != nil {
		if err := b.d.launchFault(ln.stream, &ln.sc); err != nil {
			return fmt.Errorf("launching arrowagg_multi on %d tiles (%d blocks): %w", p.tiles, g, err)
		}
	}
	if err := b.multi.fn.Launch(g, 1, 1, blockThreads, 1, 1, 0, ln.stream, &args); err != nil {
		return fmt.Errorf("launching arrowagg_multi on %d tiles (%d blocks): %w", p.tiles, g, err)
	}
	launches.Add(1)
	return nil
}

// copyJob is one copy of copyAll: src to offset at of the destination.
type copyJob struct {
	at  int
	src []byte
}

// copyAll copies the src of each job to offset at of dst, with up to
// copyThreads goroutines, each taking consecutive jobs of about the same
// number of bytes, the calling one (the device thread) included, which
// spins until the others are done rather than sleeping and waiting to be
// woken (a locked thread wakes slowly).
func (b *Backend) copyAll(dst []byte, jobs []copyJob) {
	const minShare = 1 << 20 // smaller shares measured slower
	total := 0
	for _, j := range jobs {
		total += len(j.src)
	}
	workers := min(b.opts.copyThreads, total/minShare)
	if workers <= 1 {
		copyJobs(dst, jobs)
		return
	}
	share := (total + workers - 1) / workers
	var groups [][]copyJob
	start, acc := 0, 0
	for i, j := range jobs {
		acc += len(j.src)
		if acc >= share || i == len(jobs)-1 {
			groups = append(groups, jobs[start:i+1])
			start, acc = i+1, 0
		}
	}
	var pending atomic.Int32
	pending.Add(int32(len(groups) - 1))
	for _, g := range groups[1:] {
		go func() {
			copyJobs(dst, g)
			pending.Add(-1)
		}()
	}
	copyJobs(dst, groups[0])
	for pending.Load() > 0 {
	}
}

func copyJobs(dst []byte, jobs []copyJob) {
	for _, j := range jobs {
		copy(dst[j.at:], j.src)
	}
}
