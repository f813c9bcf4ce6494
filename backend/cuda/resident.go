//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/kernels"
)

var _ backend.DeviceColumn = (*DeviceColumn)(nil)

// DeviceColumn is a column chunk resident in device memory, the CUDA
// backend's backend.DeviceColumn: uploaded once by Upload, aggregated any
// number of times by Aggregate or Update, each time one kernel launch (two
// with the ordered aggregates) and no host transfer but the state's few
// words. Free returns its memory to the backend's pool; Close of the backend
// frees it too.
type DeviceColumn struct {
	b        *Backend
	typ      column.Type
	kind     column.Kind
	n        int
	row      int64 // row of element 0 (column.View.Row)
	bytes    int64
	values   devBuf
	validity devBuf
	voff     uint64 // element (bool: bit) offset of element 0 in values
	vbit     uint64 // bit offset of element 0 in validity
	valid    bool   // has a validity bitmap
	// scale is the exact float kernels' scale words of the column
	// (group.cuh's ExactScale), found as a float32 or float64 column is
	// uploaded (uploadScale), or else by its first grouped call (nil
	// before; device thread): a resident column's values do not change,
	// so its grouped calls launch no scale kernel.
	scale *[2]uint32
}

// Upload copies the buffers of v to the device. It fails (errors.Is
// ErrOutOfMemory) when the device has too little free memory.
func (b *Backend) Upload(ctx context.Context, v *column.View) (*DeviceColumn, error) {
	if !b.Handles(v) {
		return nil, fmt.Errorf("cuda: the GPU backend does not aggregate %s columns", v.Type)
	}
	c := &DeviceColumn{b: b, typ: v.Type, kind: v.Kind, n: v.Len, row: v.Row, bytes: v.ByteSize()}
	err := b.d.do(func() error {
		if v.Len == 0 {
			b.columns[c] = struct{}{}
			return nil
		}
		vs := valueSpan(v, specs[v.Kind], 0, v.Len)
		c.voff = vs.off
		if err := c.copyIn(ctx, &c.values, v.Values[vs.lo:vs.hi]); err != nil {
			return err
		}
		if v.Validity != nil {
			bs := bitSpan(v.ValidityOffset, 0, v.Len)
			c.vbit, c.valid = bs.off, true
			if err := c.copyIn(ctx, &c.validity, v.Validity[bs.lo:bs.hi]); err != nil {
				c.freeLocked()
				return err
			}
		}
		if err := b.uploadScale(c); err != nil {
			c.freeLocked()
			return err
		}
		b.columns[c] = struct{}{}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: uploading a %s column of %d values: %w", v.Type, v.Len, err)
	}
	return c, nil
}

// uploadScale finds the scale of float32 or float64 column c as it is
// uploaded: a pass of the scale kernel over the values just copied (about
// 0.2 ms for 800 MB of float64 values on an H200, whose copy from Go
// memory takes about 20 ms), so that the column's first grouped call
// folds with the exact float kernels at once, as the calls after it do.
// Other kinds have no scale. Device thread.
func (b *Backend) uploadScale(c *DeviceColumn) (err error) {
	if c.kind != column.Float32 && c.kind != column.Float64 {
		return nil
	}
	d, st := b.d, b.lanes[0].stream
	words, err := d.pool.alloc(8)
	if err != nil {
		return fmt.Errorf("allocating the scale's words: %w", err)
	}
	defer d.pool.release(&words)
	defer func() {
		if err != nil {
			// A launch may still run: the words go back to the pool (the
			// deferred release, run after this) once it is over.
			st.Synchronize() //nolint:errcheck // err says what failed
		}
	}()
	if err := cudrv.MemsetD32Async(words.ptr, 0, 2, st); err != nil {
		return fmt.Errorf("zeroing the scale's words: %w", err)
	}
	if err := b.groupScale(c, kernels.ExactScaleKernel(c.kind), words.ptr); err != nil {
		return err
	}
	var w [2]uint32
	if err := d.copyDtoH(unsafe.Pointer(&w[0]), words.ptr, 8, st); err != nil {
		return fmt.Errorf("copying the scale's words to the host: %w", err)
	}
	if err := d.syncStream(st); err != nil {
		return fmt.Errorf("running %s: %w", kernels.ExactScaleKernel(c.kind), err)
	}
	c.scale = &w
	return nil
}

// stageFrom is the size from which uploads of pageable memory go through the
// staging buffers: smaller ones cost the driver's own staging little.
const stageFrom = 4 << 20

// stageable says whether n bytes of pageable memory go to the device through
// the staging ring: from stageFrom bytes on, when the ring (with the lanes'
// buffers) can be had; without room for it they are copied directly.
// Device thread.
func (b *Backend) stageable(n int64) (bool, error) {
	if n < stageFrom {
		return false, nil
	}
	switch err := b.ensureLanes(); {
	case err == nil:
		return true, nil
	case !isOOM(err):
		return false, err
	}
	return false, nil
}

// copyIn allocates dst and copies src into it, checking ctx between
// pieces, and waits for the copies; device thread. Page-locked src is copied
// directly; other host memory from stageFrom bytes on goes through the
// staging ring (the driver's own copies from pageable memory run at a
// fraction of the link's rate). Without room for staging it copies directly.
func (c *DeviceColumn) copyIn(ctx context.Context, dst *devBuf, src []byte) (err error) {
	b := c.b
	if *dst, err = b.d.pool.alloc(int64(len(src)) + 64); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = b.settle(err)
			b.d.pool.release(dst)
		}
	}()
	st := b.up
	staged := false
	if !pinned(src) {
		if staged, err = b.stageable(int64(len(src))); err != nil {
			return err
		}
	}
	if staged {
		if err := b.ring.copy(ctx, b.d, st, toDevice(dst.ptr, src)); err != nil {
			return err
		}
	} else {
		const piece = 256 << 20
		for i := 0; i < len(src); i += piece {
			if err := ctx.Err(); err != nil {
				return err
			}
			j := min(i+piece, len(src))
			if err := b.d.copyHtoD(dst.ptr+cudrv.DevicePtr(i), unsafe.Pointer(&src[i]), int64(j-i), st); err != nil {
				return fmt.Errorf("copying %d bytes to the device: %w", j-i, err)
			}
		}
	}
	if err := b.d.syncStream(st); err != nil {
		return fmt.Errorf("waiting for the copy to the device: %w", err)
	}
	return nil
}

// Len is the number of elements.
func (c *DeviceColumn) Len() int { return c.n }

// Type is the column's type, as its view names it.
func (c *DeviceColumn) Type() column.Type { return c.typ }

// ByteSize is the number of bytes an aggregation reads: values and validity
// bitmap (column.View.ByteSize).
func (c *DeviceColumn) ByteSize() int64 { return c.bytes }

// Aggregate folds the column into a fresh state (without the ordered
// aggregates; Update computes them): one launch (more only for columns
// beyond maxLaunch elements), merged with State.Merge.
func (c *DeviceColumn) Aggregate(ctx context.Context) (agg.State, error) {
	s := agg.New(c.kind.Family(), 0)
	if err := c.update(ctx, &s); err != nil {
		var none agg.State
		return none, err
	}
	return s, nil
}

// Update implements backend.DeviceColumn: it folds the column into s, like
// Backend.Update for its view, with the ordered aggregates when s.Ordered()
// is set, the column's first element being row row (the view's Row, or another
// row when the same data is aggregated at another place in a stream). s is
// left untouched when it fails.
func (c *DeviceColumn) Update(ctx context.Context, s *agg.State, row int64) error {
	if row == c.row || !s.Ordered() {
		return c.update(ctx, s)
	}
	// The rows of a state of its own are moved: the same result as an
	// upload of the view with that row.
	part := agg.New(c.kind.Family(), s.Tracks)
	if err := c.update(ctx, &part); err != nil {
		return err
	}
	part.ShiftRows(row - c.row)
	s.Merge(&part)
	return nil
}

// sketchWarmup is how many leading elements of a resident column of n
// elements a sketch launch over all of them first folds alone, to warm the
// device sketch (0: none): 1/64 of a column of at least 2^16 elements, at
// most 2^22 of them (the launch reads at most 1.6% more).
func sketchWarmup(n uint64) uint64 {
	if n < 1<<16 {
		return 0
	}
	return min(n/64, 1<<22)
}

// update folds the column into s, rows counted from the uploaded view's Row.
func (c *DeviceColumn) update(ctx context.Context, s *agg.State) error {
	local := s.Identity()
	err := c.b.d.do(func() (err error) {
		defer func() { err = c.b.settle(err) }()
		if !c.live() {
			return fmt.Errorf("aggregating a freed column")
		}
		ln := &c.b.lanes[0]
		step := c.b.d.maxLaunch(c.kind)
		p := passesOf(c.kind, s)
		var sk devBuf // the column's device sketch, with p.sketch
		defer c.b.d.pool.release(&sk)
		if p.sketch && c.n > 0 {
			if sk, err = c.b.d.newSketch(); err != nil {
				return err
			}
		}
		if p.sketch {
			// Warm the device sketch first over a prefix, state dropped: the
			// blocks of the launches below then start from registers whose
			// floor lets most hashes by without a look at shared memory
			// (kernels/agg.cu, BlockSketch). Folding the prefix again
			// changes nothing of a sketch.
			if w := sketchWarmup(uint64(c.n)); w > 0 {
				wp := p
				wp.ordered = false
				if err := c.launch(ln.stream, &ln.sc, 0, w, wp, sk.ptr); err != nil {
					return err
				}
			}
		}
		for lo := uint64(0); lo < uint64(c.n); lo += step {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := min(step, uint64(c.n)-lo)
			if err := c.launch(ln.stream, &ln.sc, lo, n, p, sk.ptr); err != nil {
				return err
			}
			w := unsafe.Slice((*uint64)(unsafe.Pointer(&c.b.hout[0])), slotWords)
			if err := c.b.d.copyDtoH(unsafe.Pointer(&w[0]), ln.sc.out.ptr, resultBytes(c.kind, p), ln.stream); err != nil {
				return fmt.Errorf("copying the state to the host: %w", err)
			}
			if err := c.b.d.syncStream(ln.stream); err != nil {
				return fmt.Errorf("running %s: %w", specs[c.kind].name, err)
			}
			part := decodeLaunch(c.kind, int64(n), w, p)
			if p.ordered {
				if err := decodeOrdered(&part, c.kind, c.row+int64(lo), w[stateWords:]); err != nil {
					return err
				}
			}
			local.Merge(&part)
		}
		if sk.ptr != 0 {
			k, err := c.b.d.readSketch(sk, ln.stream)
			if err != nil {
				return err
			}
			local.SetSketch(k) // the launches' states carry none: the device's is all of them
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cuda: aggregating a resident %s column: %w", c.typ, err)
	}
	s.Merge(&local)
	return nil
}

// launch enqueues the kernels over elements [lo, lo+n) on st, raising
// device sketch sk with p.sketch; device thread.
func (c *DeviceColumn) launch(st cudrv.Stream, sc *scratch, lo, n uint64, p passes, sk cudrv.DevicePtr) error {
	a := launchArgs{values: c.values.ptr, voff: c.voff + lo, n: n, sketch: sk}
	if c.valid {
		a.validity, a.vbit = c.validity.ptr, c.vbit+lo
	}
	return c.b.d.launch(c.kind, st, sc, a, p)
}

func (c *DeviceColumn) live() bool {
	_, ok := c.b.columns[c]
	return ok
}

// Free returns the column's device memory to the backend. It is a no-op on
// a freed column or a closed backend.
func (c *DeviceColumn) Free() {
	c.b.d.doIfOpen(func() error { c.freeLocked(); return nil }) //nolint:errcheck // ErrClosed: Close freed it
}

func (c *DeviceColumn) freeLocked() {
	c.b.d.pool.release(&c.values)
	c.b.d.pool.release(&c.validity)
	delete(c.b.columns, c)
}
