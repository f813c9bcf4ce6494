//go:build cuda

package ladder

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/kernels"
)

// Variant is one rung of the ladder: a way to reduce the input on the GPU.
type Variant struct {
	ID   string // "1" to "13"; "5u" the unsafe form of 5; "12m", "12f" kernel 12 with other operators
	Name string
	// Unsafe marks a variant whose result may be wrong by design (5u).
	Unsafe bool

	op op // what the result is checked against
	// enqueue puts one reduction of ws's input on the device's stream and
	// returns the number of kernel launches and the function that reads
	// the result once the stream is done. On the device thread.
	enqueue func(d *Device, ws *workspace) (launches int, read func() ([]byte, error), err error)
}

// Variants lists the ladder in order; with unsafe, the classic unrolled
// last warp without __syncwarp follows variant 5.
func Variants(unsafe bool) []Variant {
	vs := []Variant{
		recursive("1", "interleaved addressing, tid % (2s): divergent warps", "ladder_v1", kernels.LadderBlock, 1, false),
		recursive("2", "interleaved addressing, strided index: bank conflicts", "ladder_v2", kernels.LadderBlock, 1, false),
		recursive("3", "sequential addressing", "ladder_v3", kernels.LadderBlock, 1, false),
		recursive("4", "first add during the global load", "ladder_v4", kernels.LadderBlock, 2, false),
		recursive("5", "last warp unrolled (volatile + __syncwarp)", "ladder_v5", kernels.LadderBlock, 2, false),
	}
	if unsafe {
		v := recursive("5u", "last warp unrolled, volatile only (unsafe since Volta)", "ladder_v5u", kernels.LadderBlock, 2,
			false)
		v.Unsafe = true
		vs = append(vs, v)
	}
	return append(vs,
		v6(kernels.LadderBlock),
		recursive("7", "several elements per thread (grid-stride loop)", "ladder_v7", kernels.LadderBlock, 2, true),
		recursive("8", "warp-shuffle reduction", "ladder_v8", kernels.LadderBlock, 2, true),
		Variant{ID: "9", Name: "16-byte vector loads, one atomicAdd per block", op: sumOp, enqueue: atomicPerBlock},
		Variant{ID: "10", Name: "two kernels: block partials, then one block", op: sumOp, enqueue: twoKernels},
		Variant{ID: "11", Name: "one kernel, last-block guard (arrowagg's design)", op: sumOp, enqueue: lastBlock},
		ordered("12", sumOp),
		ordered("12m", mat2Op),
		ordered("12f", firstLastOp),
		Variant{ID: "13", Name: "window cascade (C++ AMP), last partials on the host", op: sumOp, enqueue: windowCascade},
	)
}

// v6 is variant 6 compiled for blocks of b threads (64, 128, 256 or 512).
func v6(b int) Variant {
	return recursive("6", "complete unrolling (template over the block size)", fmt.Sprintf("ladder_v6_b%d", b), b, 2,
		false)
}

// recursive is a variant of kernels 1 to 8: each launch leaves one partial
// per block, and the same kernel runs again over the partials (its _i64
// form) until one block is left. A block covers perThread*block elements;
// fill caps the grid at what fits on the device (the kernel loops).
func recursive(id, name, base string, block int, perThread uint64, fill bool) Variant {
	return Variant{ID: id, Name: name, op: sumOp,
		enqueue: func(d *Device, ws *workspace) (int, func() ([]byte, error), error) {
			src, n, suffix := ws.in.ptr, ws.n, "_i32"
			for pass := 0; ; pass++ {
				fn := base + suffix
				g, err := d.grid(fn, n, perThread*uint64(block), fill)
				if err != nil {
					return pass, nil, err
				}
				dst := ws.scratch[pass%2].ptr
				if err := d.launch(fn, g, block, uint64(src), n, uint64(dst)); err != nil {
					return pass, nil, err
				}
				if g == 1 {
					return pass + 1, func() ([]byte, error) { return d.readBack(dst, 8) }, nil
				}
				src, n, suffix = dst, uint64(g), "_i64"
			}
		}}
}

func atomicPerBlock(d *Device, ws *workspace) (int, func() ([]byte, error), error) {
	const fn = "ladder_v9"
	g, err := d.grid(fn, ws.n, 4*kernels.LadderBlock, true)
	if err != nil {
		return 0, nil, err
	}
	if err := cudrv.MemsetD32Async(ws.out.ptr, 0, 2, d.stream); err != nil {
		return 0, nil, fmt.Errorf("zeroing the sum: %w", err)
	}
	if err := d.launch(fn, g, kernels.LadderBlock, uint64(ws.in.ptr), ws.n, uint64(ws.out.ptr)); err != nil {
		return 0, nil, err
	}
	return 1, func() ([]byte, error) { return d.readBack(ws.out.ptr, 8) }, nil
}

func twoKernels(d *Device, ws *workspace) (int, func() ([]byte, error), error) {
	const fn = "ladder_v10_partials"
	g, err := d.grid(fn, ws.n, 4*kernels.LadderBlock, true)
	if err != nil {
		return 0, nil, err
	}
	parts := ws.scratch[0].ptr
	if err := d.launch(fn, g, kernels.LadderBlock, uint64(ws.in.ptr), ws.n, uint64(parts)); err != nil {
		return 0, nil, err
	}
	if err := d.launch("ladder_v10_final", 1, kernels.LadderBlock, uint64(parts), uint64(g), uint64(ws.out.ptr)); err != nil {
		return 1, nil, err
	}
	return 2, func() ([]byte, error) { return d.readBack(ws.out.ptr, 8) }, nil
}

func lastBlock(d *Device, ws *workspace) (int, func() ([]byte, error), error) {
	const fn = "ladder_v11"
	g, err := d.grid(fn, ws.n, 4*kernels.LadderBlock, true)
	if err != nil {
		return 0, nil, err
	}
	if err := d.launch(fn, g, kernels.LadderBlock, uint64(ws.in.ptr), ws.n, uint64(ws.scratch[0].ptr),
		uint64(ws.ticket.ptr), uint64(ws.out.ptr)); err != nil {
		return 0, nil, err
	}
	return 1, func() ([]byte, error) { return d.readBack(ws.out.ptr, 8) }, nil
}

// ordered is kernel 12 with operator o; its id is "12" for the sum.
func ordered(id string, o op) Variant {
	return Variant{ID: id, Name: "order-preserving (left with right only), " + o.label(), op: o,
		enqueue: func(d *Device, ws *workspace) (int, func() ([]byte, error), error) {
			fn := o.kernel12()
			g, err := d.grid(fn, ws.n, 4*kernels.LadderBlock, true)
			if err != nil {
				return 0, nil, err
			}
			if err := d.launch(fn, g, kernels.LadderBlock, uint64(ws.in.ptr), ws.n, uint64(ws.scratch[0].ptr),
				uint64(ws.ticket.ptr), uint64(ws.out.ptr)); err != nil {
				return 0, nil, err
			}
			return 1, func() ([]byte, error) { return d.readBack(ws.out.ptr, o.stateBytes()) }, nil
		}}
}

// windowCascade is variant 13: passes of ceil(m/kernels.LadderWindow)
// threads until at most kernels.LadderWindow partials are left, which are
// copied back (inside the timed region: the copy is part of the design) and
// added on the host.
func windowCascade(d *Device, ws *workspace) (int, func() ([]byte, error), error) {
	m, src, fn := ws.n, ws.in.ptr, "ladder_v13_i32"
	launches := 0
	for {
		s := ceilDiv(m, kernels.LadderWindow)
		g, err := d.grid(fn, s, kernels.LadderBlock, false)
		if err != nil {
			return launches, nil, err
		}
		if err := d.launch(fn, g, kernels.LadderBlock, uint64(src), m, s, uint64(ws.window.ptr)); err != nil {
			return launches, nil, err
		}
		launches++
		m, src, fn = s, ws.window.ptr, "ladder_v13_i64"
		if m <= kernels.LadderWindow {
			break
		}
	}
	host := make([]int64, m)
	// Into pageable memory: the call returns once the copy is done.
	if err := cudrv.MemcpyDtoHAsync(unsafe.Pointer(&host[0]), ws.window.ptr, int64(m*8), d.stream); err != nil {
		return launches, nil, fmt.Errorf("copying the last %d partials back: %w", m, err)
	}
	return launches, func() ([]byte, error) {
		if err := d.stream.Synchronize(); err != nil {
			return nil, fmt.Errorf("waiting for the kernels: %w", err)
		}
		var sum int64
		for _, x := range host {
			sum += x
		}
		return binary.LittleEndian.AppendUint64(nil, uint64(sum)), nil
	}, nil
}
