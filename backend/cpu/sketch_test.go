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

// Dictionary columns: a morsel whose seed keeps every value of its
// dictionary takes the seed as its sketch without counting its indices
// (dictCovered), a morsel whose seed keeps all its hashes takes the seed
// (exactSet.settle), the others fold the values their indices use. Either
// way the column's state is the reference's of its values, byte for byte:
// dictionaries of 1 to 1,025 values (past agg.SketchExact: never covered),
// int64 and string values, a dictionary with a null value, rows whose
// first half uses half the dictionary (so that the second half's morsels
// bring new values after covered ones), in one call or in batches, on one
// thread or three.
func TestSketchDictMatchesReference(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 9))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	const n = 5*MorselSize + 123
	for _, size := range []int{1, 300, agg.SketchExact, agg.SketchExact + 1} {
		for _, str := range []bool{false, true} {
			for _, nullValue := range []bool{false, true} {
				msg := fmt.Sprintf("size=%d strings=%v null value=%v seed=%d", size, str, nullValue, seed)
				var vb array.Builder
				if str {
					vb = array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
				} else {
					vb = array.NewInt64Builder(mem)
				}
				for i := range size {
					switch b := vb.(type) {
					case *array.BinaryBuilder:
						if nullValue && i == size/2 {
							b.AppendNull()
						} else {
							b.Append([]byte(fmt.Sprintf("v%d-%d", i, r.Uint32())))
						}
					case *array.Int64Builder:
						if nullValue && i == size/2 {
							b.AppendNull()
						} else {
							b.Append(int64(r.Uint64()))
						}
					}
				}
				dict := vb.NewArray()
				vb.Release()
				ib := array.NewInt32Builder(mem)
				for i := range n {
					if r.IntN(10) == 0 {
						ib.AppendNull()
						continue
					}
					used := size
					if i < n/2 {
						used = (size + 1) / 2
					}
					ib.Append(int32(r.IntN(used)))
				}
				idx := ib.NewArray()
				ib.Release()
				arr := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: dict.DataType()}, idx, dict)
				idx.Release()
				dict.Release()
				defer arr.Release()
				ref, valid := new(agg.Sketch), 0
				for i := range n {
					if arr.IsNull(i) || arr.Dictionary().IsNull(arr.GetValueIndex(i)) {
						continue
					}
					valid++
					switch d := arr.Dictionary().(type) {
					case *array.Binary:
						ref.Add(agg.HashBytes(d.Value(arr.GetValueIndex(i))))
					case *array.Int64:
						ref.Add(agg.HashInt(uint64(d.Value(arr.GetValueIndex(i)))))
					}
				}
				kind, err := arrow17.KindOf(arr.DataType())
				require.NoError(t, err, msg)
				for _, threads := range []int{1, 3} {
					for _, batches := range []int{1, 4} {
						got := agg.New(kind.Family(), agg.Default|agg.ApproxDistinct)
						c := &CPU{Threads: threads}
						cuts := []int{0, n}
						for range batches - 1 {
							cuts = append(cuts, r.IntN(n+1))
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
						what := fmt.Sprintf("%s: %d threads, %d batches", msg, threads, batches)
						if valid == 0 {
							require.Nil(t, got.Sketch, what)
							continue
						}
						require.NotNil(t, got.Sketch, what)
						require.Equal(t, ref.Registers, got.Sketch.Registers, what)
						require.Equal(t, ref.ExactHashes(), got.Sketch.ExactHashes(), what)
						require.Equal(t, ref.Overflowed(), got.Sketch.Overflowed(), what)
					}
				}
			}
		}
	}
}

// Each column's morsels are tested against their own seed's hashes: a
// column whose values another column's seed keeps, but its own does not,
// gets them in its sketch (settle never answers from a set built for
// another seed).
func TestSketchSeedOfEachColumn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	column64 := func(lo, hi, n int) arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := range n {
			b.Append(int64(lo + i%(hi-lo)))
		}
		return b.NewArray()
	}
	a1, b1 := column64(0, 300, 1000), column64(1000, 1100, 1000)
	a2, b2 := column64(0, 300, 3*MorselSize), column64(0, 100, 3*MorselSize)
	defer func() {
		for _, x := range []arrow.Array{a1, b1, a2, b2} {
			x.Release()
		}
	}()
	for _, l := range append(simdLevels(), simdNone) {
		withSIMD(l, func() {
			c := &CPU{Threads: 1}
			sa, sb := agg.New(column.FamilySigned, agg.Default|agg.ApproxDistinct), agg.New(column.FamilySigned, agg.Default|agg.ApproxDistinct)
			for _, pair := range [][2]arrow.Array{{a1, b1}, {a2, b2}} {
				va, err := arrow17.ViewOf(pair[0])
				require.NoError(t, err)
				vb, err := arrow17.ViewOf(pair[1])
				require.NoError(t, err)
				require.NoError(t, c.Update(ctx, []*column.View{&va, &vb}, []*agg.State{&sa, &sb}))
			}
			ref := new(agg.Sketch)
			for i := 1000; i < 1100; i++ {
				ref.Add(agg.HashInt(uint64(i)))
			}
			for i := 0; i < 100; i++ {
				ref.Add(agg.HashInt(uint64(i)))
			}
			require.Equal(t, ref.ExactHashes(), sb.Sketch.ExactHashes(), "level %s", l)
			require.Equal(t, ref.Registers, sb.Sketch.Registers, "level %s", l)
		})
	}
}
