//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"runtime"
	"unsafe"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/internal/staging"
)

type options struct {
	ordinal     int
	chunkBytes  int64
	streams     int
	copyThreads int
	piece       int
	slots       int
	warn        func(string)
	memLimit    int64
}

// Option configures Open.
type Option func(*options)

// WithOrdinal selects the GPU (default 0).
func WithOrdinal(i int) Option { return func(o *options) { o.ordinal = i } }

// WithChunkBytes sets the size of the chunks that columns in host memory are
// uploaded and aggregated in (default 64 MiB; at least 64 KiB). Each stream
// holds that much page-locked staging and device memory, and a bit more.
func WithChunkBytes(n int) Option { return func(o *options) { o.chunkBytes = int64(n) } }

// WithStreams sets how many chunks are in flight at once, each on its own
// stream with its own buffers (default 3, at least 2: the upload of chunk
// k+1 overlaps the kernel on chunk k).
func WithStreams(n int) Option { return func(o *options) { o.streams = n } }

// WithCopyThreads sets how many goroutines fill the staging (default
// GOMAXPROCS, at most 16).
func WithCopyThreads(n int) Option { return func(o *options) { o.copyThreads = n } }

// WithStaging sets the page-locked staging that uploads from pageable memory
// go through: slots pieces of piece bytes (default 32 of 2 MiB; a piece is
// at most a chunk, WithChunkBytes).
func WithStaging(piece, slots int) Option {
	return func(o *options) { o.piece, o.slots = piece, slots }
}

// WithMemoryLimit caps the device memory the backend allocates (bytes; 0,
// the default, for no cap beyond the device's), for sharing a GPU.
func WithMemoryLimit(n int64) Option { return func(o *options) { o.memLimit = n } }

// WithWarnings sets where warnings go (the backend falling back to the CPU);
// default the standard logger on stderr.
func WithWarnings(f func(msg string)) Option { return func(o *options) { o.warn = f } }

// Backend is the CUDA backend: it implements backend.GPUBackend.
// Columns in host memory are cut into chunks that stream through a
// page-locked staging ring into device buffers on several streams, one fused
// kernel launch per chunk; chunk states are merged on the host with State.Merge, in
// chunk order, so results are the same from run to run. Columns can also be
// kept on the device (Upload) and aggregated many times.
//
// A Backend is safe for concurrent use; calls run one at a time on the
// device's thread.
type Backend struct {
	d    *device
	opts options
	cpu  *cpu.CPU

	// Device-thread state.
	lanes     []lane
	laneBytes int64        // chunk capacity of the lanes' data buffers; 0: not allocated
	up        cudrv.Stream // every upload: copies in issue order, on one copy engine
	ring      *ring        // staging of uploads from pageable memory, with the lanes' buffers
	groupHost []byte       // page-locked: the copy of a grouped launch's states, kept for the next (group.go)
	hout      []byte       // page-locked: the results of in-flight chunks, slotWords each
	columns   map[*DeviceColumn]struct{}
	multi     multiKernel // many small columns in one launch (multi.go)
}

// lane is one chunk of the pipeline in flight: the stream its kernels run
// on and its buffers. Its uploads run on the backend's upload stream (one
// stream: copies on several streams share the link and measured much slower
// from staging), ordered with the lane's stream by two events.
type lane struct {
	stream cudrv.Stream
	copied cudrv.Event // on the upload stream after the lane's uploads: the kernels may start, hvals is free again
	free   cudrv.Event // on the lane's stream after its last use of dvals and dvalid: they may be refilled
	sc     scratch
	dvals  devBuf
	dvalid devBuf
	hvals  []byte // page-locked: packets of small columns are assembled here (multi.go)
	busy   bool   // copied is recorded and not yet waited for on the host
	used   bool   // free is recorded
}

const (
	defaultChunkBytes = 64 << 20
	defaultStreams    = 3
	defaultPiece      = 2 << 20
	defaultSlots      = 32
	minChunkBytes     = 64 << 10
	outSlots          = 1024 // chunk states in flight before the host merges them
)

var (
	_ backend.GPUBackend = (*Backend)(nil)
	_ backend.OrderedGPU = (*Backend)(nil)
	_ backend.Prober     = (*Backend)(nil)
)

func init() {
	// The engine's backend opens nothing here: the driver is initialized
	// when a plan needs the GPU (Probe, DeviceName, CalibrateGPU) and the
	// context and kernels when work first goes to it.
	backend.RegisterGPU(func(cfg backend.GPUConfig) (backend.GPUBackend, error) {
		return newBackend(WithMemoryLimit(cfg.MemoryLimit)), nil
	})
}

// Open initializes GPU 0 (or the one WithOrdinal names): its primary
// context, the kernels (machine code for the device from the kernels'
// fatbin, or its PTX compiled by the driver), the streams and the launch
// scratch. Data buffers are allocated at the first Update.
//
// The backend that engine.New opens (registered with backend.RegisterGPU)
// is set up lazily instead: see Probe.
func Open(opts ...Option) (*Backend, error) {
	b := newBackend(opts...)
	if err := b.d.do(func() error { return nil }); err != nil {
		return nil, fmt.Errorf("cuda: %w", errors.Join(err, b.d.close()))
	}
	return b, nil
}

// newBackend returns a Backend whose device is opened on first use.
func newBackend(opts ...Option) *Backend {
	o := options{chunkBytes: defaultChunkBytes, streams: defaultStreams, copyThreads: min(runtime.GOMAXPROCS(0), 16),
		piece: defaultPiece, slots: defaultSlots}
	for _, f := range opts {
		f(&o)
	}
	o.chunkBytes = max(o.chunkBytes, minChunkBytes)
	o.streams = max(o.streams, 2)
	o.copyThreads = max(o.copyThreads, 1)
	o.piece = max(o.piece, 4096)
	o.slots = max(o.slots, 2)
	if o.warn == nil {
		l := log.New(os.Stderr, "arrowagg: ", 0)
		o.warn = func(m string) { l.Print(m) }
	}
	b := &Backend{opts: o, cpu: &cpu.CPU{Threads: runtime.GOMAXPROCS(0)}, columns: map[*DeviceColumn]struct{}{}}
	b.d = newDevice(o.ordinal, b.setup)
	return b
}

// Probe implements backend.Prober: it initializes the driver (once per
// process) and checks that the backend's GPU exists, without creating a
// context; it returns the same answer every time. The context, the kernels
// and the streams come with the first call that runs on the device.
func (b *Backend) Probe() error {
	if err := b.d.describe(); err != nil {
		return fmt.Errorf("cuda: %w", err)
	}
	return nil
}

// setup creates the lanes' streams, events and scratch; device thread.
func (b *Backend) setup() error {
	d := b.d
	d.pool.limit = b.opts.memLimit
	d.onClose(b.teardown)
	maxGrid := 0
	for k := range specs {
		maxGrid = max(maxGrid, d.maxGrid[k], d.ordMaxGrid[k], d.momMaxGrid[k], d.skMaxGrid[k])
	}
	var err error
	if b.up, err = cudrv.MakeStream(cudrv.NonBlocking); err != nil {
		return fmt.Errorf("creating the upload stream: %w", err)
	}
	b.lanes = make([]lane, b.opts.streams)
	for i := range b.lanes {
		ln := &b.lanes[i]
		var err error
		if ln.stream, err = cudrv.MakeStream(cudrv.NonBlocking); err != nil {
			return fmt.Errorf("creating stream %d: %w", i, err)
		}
		if ln.copied, err = cudrv.MakeEvent(cudrv.DisableTiming); err != nil {
			return fmt.Errorf("creating event %d: %w", i, err)
		}
		if ln.free, err = cudrv.MakeEvent(cudrv.DisableTiming); err != nil {
			return fmt.Errorf("creating event %d: %w", i, err)
		}
		if ln.sc.partials, err = d.pool.alloc(int64(maxGrid) * stateWords * 8); err != nil {
			return fmt.Errorf("allocating the launch scratch: %w", err)
		}
		if ln.sc.ticket, err = d.pool.alloc(4); err != nil {
			return fmt.Errorf("allocating the launch scratch: %w", err)
		}
		// On the lane's own stream: ordered before every launch on it (a
		// non-blocking stream does not wait for the legacy default one).
		if err := cudrv.MemsetD32Async(ln.sc.ticket.ptr, 0, 1, ln.stream); err != nil {
			return fmt.Errorf("zeroing the launch ticket: %w", err)
		}
		if ln.sc.out, err = d.pool.alloc(slotWords * 8); err != nil {
			return fmt.Errorf("allocating the launch scratch: %w", err)
		}
	}
	if b.hout, err = hostAlloc(outSlots * slotWords * 8); err != nil {
		return fmt.Errorf("allocating %d bytes of page-locked memory for results: %w", outSlots*slotWords*8, err)
	}
	return nil
}

// teardown frees what setup and Update allocated, and the resident columns
// left; device thread.
func (b *Backend) teardown() error {
	var errs []error
	for c := range b.columns {
		c.freeLocked()
	}
	b.freeLaneBuffers()
	for i := range b.lanes {
		ln := &b.lanes[i]
		var zs cudrv.Stream
		if ln.stream != zs {
			errs = append(errs, ln.stream.Destroy())
		}
		var ze cudrv.Event
		if ln.copied != ze {
			errs = append(errs, cudrv.DestroyEvent(&ln.copied))
		}
		if ln.free != ze {
			errs = append(errs, cudrv.DestroyEvent(&ln.free))
		}
		b.d.pool.release(&ln.sc.partials)
		b.d.pool.release(&ln.sc.ticket)
		b.d.pool.release(&ln.sc.out)
	}
	var zs cudrv.Stream
	if b.up != zs {
		errs = append(errs, b.up.Destroy())
	}
	errs = append(errs, hostFree(b.hout))
	b.hout = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("freeing the stream buffers: %w", err)
	}
	return nil
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return "gpu" }

// Info describes the device (the zero DeviceInfo when Probe fails).
func (b *Backend) Info() DeviceInfo {
	b.d.describe() //nolint:errcheck // the zero Info
	return b.d.info
}

// Handles implements backend.GPUBackend: every fixed-width kind (integers,
// temporal types, floats, booleans, decimal128); strings, binaries and
// dictionary arrays stay on the CPU.
func (b *Backend) Handles(v *column.View) bool {
	_, ok := specOf(v.Kind)
	return ok && !v.IsDict()
}

// SupportsOrdered implements backend.OrderedGPU: the ordered aggregates
// (first, last, arg_min, arg_max) of every kind the backend handles are
// computed on the device, identical to the CPU backend's.
func (b *Backend) SupportsOrdered() bool { return true }

// SupportsStats implements backend.StatsGPU: stddev and variance of
// integers and floats run on the device (the moments kernels, in the same
// launch as the other aggregates), and so does approx_distinct (the sketch
// kernels: the moments kernels with the HyperLogLog sketch); those of
// booleans too (their counts answer them). Decimals' stay on the CPU.
func (b *Backend) SupportsStats(k column.Kind, tracks agg.Set) bool {
	if k == column.Bool {
		return true
	}
	s, ok := specOf(k)
	if tracks.Has(agg.ApproxDistinct) && !(ok && s.sketch != "") {
		return false
	}
	return !tracks.Any(agg.Moments) || ok && s.moments != ""
}

// Close frees the device memory (resident columns included) and the context.
func (b *Backend) Close() error {
	if err := b.d.close(); err != nil {
		return fmt.Errorf("cuda: closing %s: %w", b.d.info.Name, err)
	}
	return nil
}

// MemoryInUse is the number of bytes of device memory the backend holds for
// buffers in use (resident columns, stream buffers, scratch), not counting
// freed blocks it caches for reuse.
func (b *Backend) MemoryInUse() int64 {
	var n int64
	b.d.doIfOpen(func() error { n = b.d.pool.inUse; return nil }) //nolint:errcheck // 0 when closed
	return n
}

// Trim frees the device memory the backend caches for reuse, and the stream
// buffers (allocated again by the next Update).
func (b *Backend) Trim() error {
	return b.d.doIfOpen(func() error {
		b.freeLaneBuffers()
		return b.d.pool.trim()
	})
}

// ensureLanes allocates the lanes' data buffers, halving the chunk size when
// memory runs out; device thread.
func (b *Backend) ensureLanes() error {
	if b.laneBytes > 0 {
		return nil
	}
	var err error
	for c := b.opts.chunkBytes; c >= minChunkBytes; c /= 2 {
		if err = b.allocLaneBuffers(c); err == nil {
			b.laneBytes = c
			return nil
		}
		b.freeLaneBuffers()
		if !isOOM(err) {
			return err
		}
	}
	return err
}

func (b *Backend) allocLaneBuffers(c int64) error {
	for i := range b.lanes {
		ln := &b.lanes[i]
		var err error
		if ln.dvals, err = b.d.pool.alloc(c + 64); err != nil {
			return err
		}
		if ln.dvalid, err = b.d.pool.alloc(c/8 + 64); err != nil {
			return err
		}
		if ln.hvals, err = b.stagingAlloc(int(c + 64)); err != nil {
			return err
		}
	}
	var err error
	b.ring, err = b.newRing(min(b.opts.piece, int(c)), b.opts.slots, b.opts.copyThreads)
	return err
}

func (b *Backend) stagingAlloc(n int) ([]byte, error) {
	if f := b.d.pool.faults; f != nil {
		if err := f.hit(faultHostAlloc); err != nil {
			return nil, fmt.Errorf("allocating %d bytes of page-locked staging: %w", n, err)
		}
	}
	buf, err := hostAlloc(n)
	if err != nil {
		return nil, fmt.Errorf("allocating %d bytes of page-locked staging: %w", n, err)
	}
	return buf, nil
}

func (b *Backend) freeLaneBuffers() {
	for i := range b.lanes {
		ln := &b.lanes[i]
		b.d.pool.release(&ln.dvals)
		b.d.pool.release(&ln.dvalid)
		hostFree(ln.hvals) //nolint:errcheck // nothing to do about it
		ln.hvals = nil
	}
	if b.ring != nil {
		b.ring.free() //nolint:errcheck
		b.ring = nil
	}
	hostFree(b.groupHost) //nolint:errcheck // nothing to do about it
	b.groupHost = nil
	b.laneBytes = 0
}

// Update implements backend.Backend: it folds every view into its state, with
// the ordered aggregates (a second kernel per chunk) for states that have
// Ordered set. The states are left untouched when it fails. When the device has too little
// memory for even small chunks it warns and aggregates on the CPU. A failed
// launch, copy or synchronization is returned (wrapping the driver's error),
// not recomputed on the CPU; the backend stays usable (faults.go).
func (b *Backend) Update(ctx context.Context, views []*column.View, states []*agg.State) error {
	if len(views) != len(states) {
		return fmt.Errorf("cuda: %d views but %d states", len(views), len(states))
	}
	for _, v := range views {
		if !b.Handles(v) {
			return fmt.Errorf("cuda: the GPU backend does not aggregate %s columns", v.Type)
		}
	}
	fallback := false
	err := b.d.do(func() error {
		if err := b.ensureLanes(); err != nil {
			if isOOM(err) {
				fallback = true
				return nil
			}
			return err
		}
		return b.update(ctx, views, states)
	})
	if err != nil {
		return fmt.Errorf("cuda: %w", err)
	}
	if fallback {
		b.opts.warn(fmt.Sprintf("GPU %s: too little free device or page-locked memory for %d KiB chunks: aggregating %d columns on the CPU",
			b.d.info.Name, minChunkBytes>>10, len(views)))
		return b.cpu.Update(ctx, views, states)
	}
	return nil
}

// chunk is elements [lo, hi) of views[view], and the passes it needs
// (with p.sketch, sketch is the view's device sketch).
type chunk struct {
	view, lo, hi int
	passes
	sketch cudrv.DevicePtr
}

// update runs the upload pipeline; device thread.
func (b *Backend) update(ctx context.Context, views []*column.View, states []*agg.State) (err error) {
	defer func() {
		// A failure waits for the streams before the views go and leaves the
		// lanes idle (settle). Success has drained them (runWindow) before
		// merging into the states: nothing after the merge may fail.
		err = b.settle(err)
		runtime.KeepAlive(views)
	}()
	packed := b.packable(views, states) // small columns: one launch for many (multi.go)
	var chunks []chunk
	sketches := make([]devBuf, len(views)) // the device sketches of the views with a sketch pass
	defer func() {
		for i := range sketches {
			b.d.pool.release(&sketches[i])
		}
	}()
	for vi, v := range views {
		if packed[vi] {
			continue
		}
		spec, err := b.d.kernelFor(v.Kind)
		if err != nil {
			return err
		}
		p := passesOf(v.Kind, states[vi])
		if p.sketch && v.Len > 0 {
			if sketches[vi], err = b.d.newSketch(); err != nil {
				return err
			}
		}
		per := b.chunkElems(spec)
		for lo := 0; lo < v.Len; {
			hi := chunkEnd(v, spec, lo, per)
			chunks = append(chunks, chunk{vi, lo, hi, p, sketches[vi].ptr})
			lo = hi
		}
	}
	local := make([]agg.State, len(views))
	for i := range views {
		local[i] = states[i].Identity()
	}
	if err := b.updatePacked(ctx, views, packed, local); err != nil {
		return err
	}
	for w := 0; w < len(chunks); w += outSlots {
		win := chunks[w:min(w+outSlots, len(chunks))]
		if err := b.runWindow(ctx, views, win); err != nil {
			return err
		}
		// Chunk states merge in chunk order: results do not depend on timing.
		for i, c := range win {
			v := views[c.view]
			words := unsafe.Slice((*uint64)(unsafe.Pointer(&b.hout[i*slotWords*8])), slotWords)
			s := decodeLaunch(v.Kind, int64(c.hi-c.lo), words, c.passes)
			if c.ordered {
				if err := decodeOrdered(&s, v.Kind, v.Row+int64(c.lo), words[stateWords:]); err != nil {
					return err
				}
			}
			local[c.view].Merge(&s)
		}
	}
	for vi := range views {
		if sketches[vi].ptr == 0 {
			continue
		}
		k, err := b.d.readSketch(sketches[vi], b.lanes[0].stream)
		if err != nil {
			return fmt.Errorf("aggregating a %s column: %w", views[vi].Type, err)
		}
		// The chunks' states carry no sketch: the device's is all of them.
		local[vi].SetSketch(k)
	}
	for i := range states {
		states[i].Merge(&local[i])
	}
	return nil
}

// runWindow uploads and aggregates the chunks of win, the state of win[i]
// landing in result slot i, and waits for them; device thread. The chunks'
// uploads are one stream through the staging ring.
func (b *Backend) runWindow(ctx context.Context, views []*column.View, win []chunk) error {
	s, err := b.ring.begin(ctx, b.d, b.up)
	if err != nil {
		return err
	}
	defer s.Close()
	for i, c := range win {
		if err := ctx.Err(); err != nil {
			return err
		}
		v := views[c.view]
		if err := b.issue(s, v, specs[v.Kind], c, &b.lanes[i%len(b.lanes)], i); err != nil {
			return err
		}
	}
	if err := s.Finish(); err != nil {
		return err
	}
	return b.drain()
}

// chunkElems is the number of elements of a chunk of the lanes' size.
func (b *Backend) chunkElems(s kernelSpec) int {
	return int(b.laneBytes * 8 / int64(max(s.bits, 8)))
}

// pageSize is the granularity of host memory registration.
var pageSize = os.Getpagesize()

// chunkEnd returns the end of the chunk of v that starts at element lo and
// holds at most per elements: moved down to a page boundary of the values'
// address when that leaves it non-empty, so that consecutive chunks share no
// page.
func chunkEnd(v *column.View, s kernelSpec, lo, per int) int {
	hi := lo + per
	if hi >= v.Len {
		return v.Len
	}
	base := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(v.Values))))
	pageBits := uint64(pageSize) * 8
	abs := base*8 + uint64(v.Offset+hi)*uint64(s.bits)
	if back := int(abs % pageBits / uint64(s.bits)); hi-back > lo {
		hi -= back
	}
	return hi
}

// span is the host byte range of a chunk's buffer and the element (or bit)
// offset of its first element in it.
type span struct {
	lo, hi int
	off    uint64
}

// valueSpan is the byte range of v.Values that elements [lo, hi) occupy,
// starting at a 16-byte boundary (4 for bitmaps) of the buffer, so that the
// device copy keeps the vector alignment of the host data.
func valueSpan(v *column.View, s kernelSpec, lo, hi int) span {
	if s.bits == 1 {
		return bitSpan(v.Offset, lo, hi)
	}
	w := s.bits / 8
	start := (v.Offset + lo) * w
	b0 := start &^ 15
	return span{b0, (v.Offset + hi) * w, uint64((start - b0) / w)}
}

// bitSpan is the byte range of a bitmap whose element 0 is bit off, for
// elements [lo, hi), from a 4-byte boundary (the kernels read 32-bit words).
func bitSpan(off, lo, hi int) span {
	p := off + lo
	b0 := (p >> 3) &^ 3
	return span{b0, (off + hi + 7) >> 3, uint64(p - 8*b0)}
}

// issue adds to s, for a lane, the upload of chunk c of v and, once it is
// enqueued, the kernels and the copy of the results into result slot slot;
// device thread.
func (b *Backend) issue(s *staging.Stream, v *column.View, spec kernelSpec, c chunk, ln *lane, slot int) error {
	vs := valueSpan(v, spec, c.lo, c.hi)
	args := launchArgs{values: ln.dvals.ptr, voff: vs.off, n: uint64(c.hi - c.lo), sketch: c.sketch}
	ts := [2]staging.Transfer{toDevice(ln.dvals.ptr, v.Values[vs.lo:vs.hi])}
	if v.Validity != nil {
		bs := bitSpan(v.ValidityOffset, c.lo, c.hi)
		ts[1] = toDevice(ln.dvalid.ptr, v.Validity[bs.lo:bs.hi])
		args.validity, args.vbit = ln.dvalid.ptr, bs.off
	}
	where := func(err error) error {
		if err == nil {
			return nil
		}
		return fmt.Errorf("aggregating elements [%d, %d) of a %s column: %w", c.lo, c.hi, v.Type, err)
	}
	before := func() error { return where(b.claim(ln)) }
	after := func() error {
		if err := b.handOver(ln); err != nil {
			return where(err)
		}
		if err := b.d.launch(v.Kind, ln.stream, &ln.sc, args, c.passes); err != nil {
			return where(err)
		}
		if err := b.release(ln); err != nil {
			return where(err)
		}
		dst := unsafe.Pointer(&b.hout[slot*slotWords*8])
		if err := b.d.copyDtoH(dst, ln.sc.out.ptr, resultBytes(v.Kind, c.passes), ln.stream); err != nil {
			return where(fmt.Errorf("copying the chunk state to the host: %w", err))
		}
		return nil
	}
	return s.Add(before, after, ts[:]...)
}

// claim readies a lane for new uploads: its page-locked buffer is free on
// the host, and the upload stream waits for the lane's last use of its
// device buffers; device thread.
func (b *Backend) claim(ln *lane) error {
	if err := b.await(ln); err != nil {
		return err
	}
	if ln.used {
		if err := b.up.Wait(ln.free, 0); err != nil {
			return fmt.Errorf("ordering an upload after the kernels: %w", err)
		}
	}
	return nil
}

// handOver makes the lane's stream wait for the uploads enqueued since
// claim; device thread.
func (b *Backend) handOver(ln *lane) error {
	if err := ln.copied.Record(b.up); err != nil {
		return fmt.Errorf("recording the upload event: %w", err)
	}
	ln.busy = true
	if err := ln.stream.Wait(ln.copied, 0); err != nil {
		return fmt.Errorf("ordering the kernels after the upload: %w", err)
	}
	return nil
}

// release marks, on the lane's stream, the end of its use of its device
// buffers (after the kernels and copies that read them); device thread.
func (b *Backend) release(ln *lane) error {
	if err := ln.free.Record(ln.stream); err != nil {
		return fmt.Errorf("recording the kernel event: %w", err)
	}
	ln.used = true
	return nil
}

// await waits until the lane's previous uploads are done, so that its
// staging may be refilled.
func (b *Backend) await(ln *lane) error {
	if !ln.busy {
		return nil
	}
	ln.busy = false
	if err := b.d.syncEvent(ln.copied); err != nil {
		return fmt.Errorf("waiting for an upload: %w", err)
	}
	return nil
}

// drain waits for all lanes' work and the uploads; device thread.
func (b *Backend) drain() error {
	var first error
	if err := b.d.syncStream(b.up); err != nil {
		first = fmt.Errorf("waiting for the uploads: %w", err)
	}
	for i := range b.lanes {
		ln := &b.lanes[i]
		if err := b.await(ln); err != nil && first == nil {
			first = err
		}
		if err := b.d.syncStream(ln.stream); err != nil && first == nil {
			first = fmt.Errorf("waiting for stream %d: %w", i, err)
		}
	}
	return first
}
