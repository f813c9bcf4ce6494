package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// kernelRaises writes exactly the hashes of the valid values whose rank
// exceeds their register, in order, on random registers (their floor found
// by sketchFloor) and validity.
func TestKernelRaises(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 3))
	const size = 1003
	i64 := make([]int64, size)
	u64 := make([]uint64, size)
	i32 := make([]int32, size)
	u32 := make([]uint32, size)
	f64 := make([]float64, size)
	f32 := make([]float32, size)
	specials := []float64{0, math.Copysign(0, -1), math.NaN(), math.Float64frombits(0xfff0000000000123), math.Inf(1)}
	for i := range size {
		x := r.Uint64()
		i64[i], u64[i], i32[i], u32[i] = int64(x), x, int32(x), uint32(x)
		f64[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		if r.IntN(4) == 0 {
			f64[i] = specials[r.IntN(len(specials))]
		}
		f32[i] = float32(f64[i])
	}
	out := make([]uint64, size)
	for round := range 20 {
		var regs [agg.SketchRegisters]uint8
		floor := r.IntN(8)
		for i := range regs {
			regs[i] = uint8(floor + r.IntN(3))
		}
		if round%4 == 2 {
			regs[r.IntN(len(regs))] = uint8(floor / 2) // one register lower
		}
		low := slices.Min(regs[:])
		if simdLevel >= simdAVX512 {
			require.Equal(t, low, sketchFloor(&regs))
		} else {
			require.Zero(t, sketchFloor(&regs))
		}
		var valid []byte
		if round%2 == 1 {
			valid = make([]byte, (size+7)/8)
			for i := range valid {
				valid[i] = byte(r.Uint32())
			}
		}
		msg := fmt.Sprintf("round %d floor %d seed %d", round, floor, seed)
		check := func(name string, n, m int, hash func(i int) uint64) {
			t.Helper()
			if simdLevel < simdAVX512 {
				require.Zero(t, n, name)
				return
			}
			require.Equal(t, len(out)&^7, n, name)
			want := []uint64{}
			for i := range n {
				if valid != nil && valid[i/8]>>(i%8)&1 == 0 {
					continue
				}
				h := hash(i)
				if reg, rank := agg.SketchSlot(h); rank > regs[reg] {
					want = append(want, h)
				}
			}
			require.Equal(t, want, out[:m:m], "%s: %s", name, msg)
		}
		n, m := kernelRaises(i64, valid, &regs, low, out)
		check("int64", n, m, func(i int) uint64 { return agg.HashInt(uint64(i64[i])) })
		n, m = kernelRaises(u64, valid, &regs, low, out)
		check("uint64", n, m, func(i int) uint64 { return agg.HashInt(u64[i]) })
		n, m = kernelRaises(i32, valid, &regs, low, out)
		check("int32", n, m, func(i int) uint64 { return agg.HashInt(uint64(int64(i32[i]))) })
		n, m = kernelRaises(u32, valid, &regs, low, out)
		check("uint32", n, m, func(i int) uint64 { return agg.HashInt(uint64(u32[i])) })
		n, m = kernelRaises(f64, valid, &regs, low, out)
		check("float64", n, m, func(i int) uint64 { return agg.HashFloat(f64[i]) })
		n, m = kernelRaises(f32, valid, &regs, low, out)
		check("float32", n, m, func(i int) uint64 { return agg.HashFloat(float64(f32[i])) })
	}
	n16, _ := kernelRaises(make([]int16, 64), nil, new([agg.SketchRegisters]uint8), 0, out)
	require.Zero(t, n16, "no kernel for int16")
	withSIMD(simdNone, func() {
		n, _ := kernelRaises(i64, nil, new([agg.SketchRegisters]uint8), 0, out)
		require.Zero(t, n)
	})
}

// sketchCase is a column of n values drawn from card distinct ones (each
// of them once first, when n allows), about nullFrac of the others null
// (all of them when nullFrac is 1).
func sketchCase(mem memory.Allocator, r *rand.Rand, dt arrow.DataType, n, card int, nullFrac float64) arrow.Array {
	// Distinct by construction: an odd multiple of i plus an offset, kept
	// to the bits that every type holds exactly (float32: 24).
	pool := make([]uint64, card)
	mul, off := r.Uint64()|1, r.Uint64()
	for i := range pool {
		pool[i] = uint64(i)*mul + off
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for i := range n {
		if nullFrac == 1 || i >= card && r.Float64() < nullFrac {
			b.AppendNull()
			continue
		}
		x := pool[r.IntN(card)]
		if i < card {
			x = pool[i]
		}
		switch b := b.(type) {
		case *array.Int64Builder:
			b.Append(int64(x))
		case *array.Int32Builder:
			b.Append(int32(x))
		case *array.Uint32Builder:
			b.Append(uint32(x))
		case *array.Float64Builder:
			b.Append(float64(int64(x<<11)>>11) / 1024)
		case *array.Float32Builder:
			b.Append(float32(int32(x<<8)>>8) / 64)
		}
	}
	return b.NewArray()
}

// refSketch is the sketch of arr's valid values, hash by hash through
// agg.Sketch.Add: the definition the backend's loops must match.
func refSketch(arr arrow.Array) *agg.Sketch {
	k := new(agg.Sketch)
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			continue
		}
		switch a := arr.(type) {
		case *array.Int64:
			k.Add(agg.HashInt(uint64(a.Value(i))))
		case *array.Int32:
			k.Add(agg.HashInt(uint64(int64(a.Value(i)))))
		case *array.Uint32:
			k.Add(agg.HashInt(uint64(a.Value(i))))
		case *array.Float64:
			k.Add(agg.HashFloat(a.Value(i)))
		case *array.Float32:
			k.Add(agg.HashFloat(float64(a.Value(i))))
		}
	}
	return k
}

// The sketch the backend folds (SIMD or Go loops, one thread or several,
// the column in one call or in batches, which seed their morsels with the
// state's sketch) is the reference sketch, byte for byte (registers, and
// the exact hashes while there are at most agg.SketchExact), for columns of
// 0, 1, 1024, 1025 and 10^6 distinct values, with and without nulls.
func TestSketchMatchesReference(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 5))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint32,
		arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32}
	cases := []struct{ n, card int }{{1000, 1}, {5000, 1024}, {5000, 1025}, {3 * MorselSize, 50_000}, {1_100_000, 1_000_000}}
	levels := append(simdLevels(), simdNone)
	for ci, c := range cases {
		// The largest case for one type alone (any, in turn), to keep the
		// test fast.
		for ti, dt := range types {
			if c.card == 1_000_000 && ti != int(seed%uint64(len(types))) {
				continue
			}
			for _, nullFrac := range []float64{0, 0.1, 1} {
				if nullFrac == 1 && ci > 0 {
					continue // 0 distinct values: once
				}
				arr := sketchCase(mem, r, dt, c.n, c.card, nullFrac)
				defer arr.Release()
				ref := refSketch(arr)
				msg := fmt.Sprintf("%s n=%d card=%d nulls=%g seed=%d", dt, c.n, c.card, nullFrac, seed)
				kind, err := arrow17.KindOf(dt)
				require.NoError(t, err, msg)
				for _, l := range levels {
					for _, threads := range []int{1, 3} {
						// The column whole, then in batches (cut at random).
						for _, batches := range []int{1, 4} {
							var got agg.State
							withSIMD(l, func() {
								got = agg.New(kind.Family(), agg.Default|agg.ApproxDistinct)
								c := &CPU{Threads: threads}
								cuts := []int{0, arr.Len()}
								for range batches - 1 {
									cuts = append(cuts, r.IntN(arr.Len()+1))
								}
								slices.Sort(cuts)
								for k := 0; k+1 < len(cuts); k++ {
									sl := array.NewSlice(arr, int64(cuts[k]), int64(cuts[k+1]))
									part, err := arrow17.ViewOf(sl)
									require.NoError(t, err, msg)
									views, states := [1]*column.View{&part}, [1]*agg.State{&got}
									require.NoError(t, c.Update(ctx, views[:], states[:]), msg)
									sl.Release()
								}
							})
							what := fmt.Sprintf("%s: level %s, %d threads, %d batches", msg, l, threads, batches)
							if nullFrac == 1 {
								require.Nil(t, got.Sketch, what)
								continue
							}
							require.NotNil(t, got.Sketch, what)
							require.Equal(t, ref.Registers, got.Sketch.Registers, what)
							require.Equal(t, ref.Overflowed(), got.Sketch.Overflowed(), what)
							require.Equal(t, c.card > agg.SketchExact, got.Sketch.Overflowed(), what)
							want := got
							want.Sketch = ref
							wb, err := want.MarshalBinary()
							require.NoError(t, err)
							gb, err := got.MarshalBinary()
							require.NoError(t, err)
							require.Equal(t, wb, gb, "%s: the state's bytes", what)
						}
					}
				}
			}
		}
	}
}
