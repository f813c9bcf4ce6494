//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/kernels"
)

// The launch geometry of kernels/agg.cu.
const (
	blockThreads = kernels.AggBlockThreads
	unroll       = kernels.AggUnroll       // 16-byte vectors a thread loads per iteration
	maxWords     = kernels.AggMaxWords     // the widest state of the many-column kernel (decimal)
	stateWords   = kernels.AggStateWords   // the widest state of a per-kind kernel (floats' moments)
	orderedWords = kernels.AggOrderedWords // the state of the ordered kernels
	// slotWords is the room of one launch's results: the state, then the
	// ordered state when the ordered aggregates are asked for.
	slotWords = stateWords + orderedWords
)

// noRow is the ordered kernels' "none" (kNoRow): -1 as int64.
const noRow = kernels.AggNoRow

// kernelSpec describes the kernels of one storage kind.
type kernelSpec struct {
	name    string // the fused kernel
	ordered string // the ordered kernel, run after it on its state
	words   int    // 64-bit words of its state
	bits    int    // bits per element (1 for bool)
	code    uint32 // the kind's KindCode in arrowagg_multi's column descriptors
	// moments is the fused kernel with the sums of squares (stddev,
	// variance), "" where there is none (decimals; booleans need none), and
	// momentWords the words of its state.
	moments     string
	momentWords int
	// sketch is the moments kernel with the approx_distinct sketch (its
	// state is the moments kernel's), "" where there is none.
	sketch string
}

// specs is indexed by column.Kind; kinds with no kernel have an empty name.
// The kinds are listed in the order of agg.cu's ARROWAGG_KINDS, which
// numbers their KindCode.
var specs = func() (s [column.LargeBinary + 1]kernelSpec) {
	for i, k := range []struct {
		kind column.Kind
		name string
	}{
		{column.Int8, "int8"}, {column.Int16, "int16"}, {column.Int32, "int32"}, {column.Int64, "int64"},
		{column.Uint8, "uint8"}, {column.Uint16, "uint16"}, {column.Uint32, "uint32"}, {column.Uint64, "uint64"},
		{column.Float32, "float32"}, {column.Float64, "float64"}, {column.Decimal128, "decimal128"},
		{column.Bool, "bool"},
	} {
		w := 0
		switch k.kind.Family() {
		case column.FamilySigned, column.FamilyUnsigned:
			w = kernels.AggIntegerWords
		case column.FamilyFloat:
			w = kernels.AggFloatWords
		case column.FamilyDecimal:
			w = kernels.AggDecimalWords
		case column.FamilyBool:
			w = kernels.AggBoolWords
		}
		b := 8 * k.kind.Width()
		if k.kind == column.Bool {
			b = 1
		}
		s[k.kind] = kernelSpec{name: "arrowagg_" + k.name, ordered: "arrowagg_ordered_" + k.name, words: w, bits: b,
			code: uint32(i)}
		switch k.kind.Family() {
		case column.FamilySigned, column.FamilyUnsigned:
			s[k.kind].moments, s[k.kind].momentWords = "arrowagg_moments_"+k.name, kernels.AggIntegerMomentWords
			s[k.kind].sketch = "arrowagg_sketch_" + k.name
		case column.FamilyFloat:
			s[k.kind].moments, s[k.kind].momentWords = "arrowagg_moments_"+k.name, kernels.AggFloatMomentWords
			s[k.kind].sketch = "arrowagg_sketch_" + k.name
		}
	}
	return s
}()

// specOf returns the kernel of kind k, if there is one.
func specOf(k column.Kind) (kernelSpec, bool) {
	if int(k) >= len(specs) || specs[k].name == "" {
		return kernelSpec{}, false
	}
	return specs[k], true
}

// elemsPerBlockIter is how many elements one block consumes per grid-stride
// iteration: a block is worth launching only for that many.
func (s kernelSpec) elemsPerBlockIter() int64 {
	if s.bits == 1 {
		return blockThreads * 32
	}
	return blockThreads * unroll * int64(128/s.bits)
}

// scratch is the per-stream memory of a launch: the blocks' partial states,
// the last-block ticket (kept zero between launches) and the launch's
// results (slotWords: the state, then the ordered state).
type scratch struct {
	partials devBuf
	ticket   devBuf
	out      devBuf
}

// launchArgs are the kernel's parameters (all 64-bit: pointers and unsigned
// long long, in agg.cu's order, with the scratch's).
type launchArgs struct {
	values   cudrv.DevicePtr
	voff     uint64 // element offset (bool: bit offset) into values
	validity cudrv.DevicePtr
	vbit     uint64 // bit offset into validity
	n        uint64
	// sketch is the column's device sketch (deviceSketch), raised by the
	// sketch kernel; 0 when the launch has no sketch pass.
	sketch cudrv.DevicePtr
}

// grid is the number of blocks for n elements of kind k: enough to fill the
// device (maxGrid, from its multiprocessor count and the kernel's
// occupancy), fewer for small chunks.
func (d *device) grid(k column.Kind, n uint64, maxGrid int) int {
	per := uint64(specs[k].elemsPerBlockIter())
	g := (n + per - 1) / per
	return int(max(1, min(g, uint64(maxGrid))))
}

// maxLaunch is the most elements one launch of kind k takes: 2^31 a thread
// of the smallest grid among the kind's kernels (the six's, the ordered,
// moments and sketch kernels'), so that whichever runs, a thread's 64-bit
// sums of narrow integers and its 96-bit sums of squares (the kernels'
// IntSqAcc) see at most 2^31 + 2 elements and stay exact.
func (d *device) maxLaunch(k column.Kind) uint64 {
	g := d.maxGrid[k]
	for _, o := range []int{d.ordMaxGrid[k], d.momMaxGrid[k], d.skMaxGrid[k]} {
		if o > 0 {
			g = min(g, o)
		}
	}
	return uint64(g) * blockThreads << 31
}

// passes are the kernels a launch runs: the fused kernel (with the sums of
// squares when moments, and the approx_distinct sketch too when sketch),
// then the ordered kernel when ordered.
type passes struct {
	ordered, moments, sketch bool
}

// passesOf are the passes of kind k for a state like s: the moments kernel
// where s tracks stddev or variance and the kind has one (booleans' counts
// answer them), the sketch kernel where s tracks approx_distinct and the
// kind has one.
func passesOf(k column.Kind, s *agg.State) passes {
	return passes{ordered: s.Ordered(), moments: s.Tracks.Any(agg.Moments) && specs[k].moments != "",
		sketch: s.Tracks.Has(agg.ApproxDistinct) && specs[k].sketch != ""}
}

// launch enqueues the fused kernel of kind k (its moments kernel with
// p.moments, its sketch kernel, raising a.sketch, with p.sketch) on stream
// st; its state lands in sc.out. With p.ordered, the
// ordered kernel follows on the same stream, reads that state on the device
// (the moments kernels' states begin like the plain ones) and writes the
// ordered state after it.
func (d *device) launch(k column.Kind, st cudrv.Stream, sc *scratch, a launchArgs, p passes) error {
	var args cudrv.Params
	args.Ptr(a.values).U64(a.voff).Ptr(a.validity).U64(a.vbit).U64(a.n).
		Ptr(sc.partials.ptr).Ptr(sc.ticket.ptr).Ptr(sc.out.ptr)
	name, fn, g := specs[k].name, d.fns[k], d.grid(k, a.n, d.maxGrid[k])
	switch {
	case p.sketch:
		if a.sketch == 0 {
			return fmt.Errorf("launching %s: no device sketch", specs[k].sketch)
		}
		args.Ptr(a.sketch)
		name, fn, g = specs[k].sketch, d.skFns[k], d.grid(k, a.n, d.skMaxGrid[k])
	case p.moments:
		name, fn, g = specs[k].moments, d.momFns[k], d.grid(k, a.n, d.momMaxGrid[k])
	}
	if d.pool.faults != nil {
		if err := d.launchFault(st, sc); err != nil {
			return fmt.Errorf("launching %s on %d elements (%d blocks): %w", name, a.n, g, err)
		}
	}
	if err := fn.Launch(g, 1, 1, blockThreads, 1, 1, 0, st, &args); err != nil {
		return fmt.Errorf("launching %s on %d elements (%d blocks): %w", name, a.n, g, err)
	}
	launches.Add(1)
	if !p.ordered {
		return nil
	}
	var oargs cudrv.Params
	oargs.Ptr(a.values).U64(a.voff).Ptr(a.validity).U64(a.vbit).U64(a.n).Ptr(sc.out.ptr).
		Ptr(sc.partials.ptr).Ptr(sc.ticket.ptr).Ptr(sc.out.ptr + stateWords*8)
	g = d.grid(k, a.n, d.ordMaxGrid[k])
	if d.pool.faults != nil {
		if err := d.launchFault(st, sc); err != nil {
			return fmt.Errorf("launching %s on %d elements (%d blocks): %w", specs[k].ordered, a.n, g, err)
		}
	}
	if err := d.ordFns[k].Launch(g, 1, 1, blockThreads, 1, 1, 0, st, &oargs); err != nil {
		return fmt.Errorf("launching %s on %d elements (%d blocks): %w", specs[k].ordered, a.n, g, err)
	}
	launches.Add(1)
	return nil
}

// launches counts the kernel launches enqueued in this process, by every
// backend (tests and benchmarks read it).
var launches atomic.Uint64

// resultBytes is how many bytes of a launch's results to copy back.
func resultBytes(k column.Kind, p passes) int64 {
	if p.ordered {
		return slotWords * 8
	}
	return int64(specs[k].stateWords(p)) * 8
}

// stateWords is the number of words of the fused kernel's state (the
// sketch kernels' is the moments kernels').
func (s kernelSpec) stateWords(p passes) int {
	if p.moments || p.sketch {
		return s.momentWords
	}
	return s.words
}

// decodeLaunch turns the words of a launch's state over n elements of kind k
// into a partial state, with the sums of squares of a moments kernel.
func decodeLaunch(k column.Kind, n int64, w []uint64, p passes) agg.State {
	s := kernels.State(k, n, w[:specs[k].words])
	if !p.moments {
		return s
	}
	q := w[specs[k].words:specs[k].momentWords]
	if k.Family() == column.FamilyFloat {
		s.SetFloatSquares([]float64{math.Float64frombits(q[0])}, []float64{math.Float64frombits(q[1])},
			math.Float64frombits(q[2]))
	} else {
		s.SetSquares(agg.Uint320{q[0], q[1], q[2]})
	}
	return s
}

// decodeOrdered fills the ordered aggregates of s, the state of a launch
// whose element 0 is row row0, from the ordered kernel's words: element
// indices (noRow for none) of the first and last valid values, of the first
// minimum and maximum, then the storage bits of the first and last values.
func decodeOrdered(s *agg.State, k column.Kind, row0 int64, w []uint64) error {
	found := func(i uint64) bool { return i != noRow }
	if found(w[0]) != (s.Count > 0) || found(w[1]) != (s.Count > 0) || found(w[2]) != (s.Count > 0) ||
		found(w[3]) != (s.Count > 0) {
		return fmt.Errorf("ordered kernel %s: rows %d, %d, %d, %d for %d valid values", specs[k].ordered,
			int64(w[0]), int64(w[1]), int64(w[2]), int64(w[3]), s.Count)
	}
	p := agg.NoPositions
	if s.Count > 0 {
		p = agg.Positions{
			FirstRow: row0 + int64(w[0]), First: encodeRaw(k, w[4], w[5]),
			LastRow: row0 + int64(w[1]), Last: encodeRaw(k, w[6], w[7]),
			MinRow: row0 + int64(w[2]), MaxRow: row0 + int64(w[3]),
		}
	}
	s.SetPositions(p)
	return nil
}

// encodeRaw turns the zero-extended storage bits of a value of kind k into
// the State encoding (Min/Max): signed values sign-extended, float32 widened
// by Go's own conversion (NaN payloads as the CPU backend has them).
func encodeRaw(k column.Kind, lo, hi uint64) [2]uint64 {
	switch {
	case k == column.Float32:
		return [2]uint64{math.Float64bits(float64(math.Float32frombits(uint32(lo))))}
	case k == column.Decimal128:
		return [2]uint64{lo, hi}
	case k.Family() == column.FamilySigned:
		sh := 64 - 8*k.Width()
		return [2]uint64{uint64(int64(lo<<sh) >> sh)}
	}
	return [2]uint64{lo}
}
