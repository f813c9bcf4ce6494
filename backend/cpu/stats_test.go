package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
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

// The SIMD sketch hashes are agg's, value for value (floats: -0 as +0,
// every NaN as one, float32 widened).
func TestKernelHashes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 1003
	out := make([]uint64, n)
	check := func(name string, got int, want func(i int) uint64) {
		t.Helper()
		if simdLevel < simdAVX512 {
			require.Zero(t, got, name)
			return
		}
		require.Equal(t, n&^7, got, name)
		for i := 0; i < got; i++ {
			require.Equal(t, want(i), out[i], "%s element %d", name, i)
		}
	}
	i64 := make([]int64, n)
	u64 := make([]uint64, n)
	i32 := make([]int32, n)
	u32 := make([]uint32, n)
	f64 := make([]float64, n)
	f32 := make([]float32, n)
	specials := []float64{0, math.Copysign(0, -1), math.NaN(), math.Float64frombits(0xfff0000000000123), math.Inf(1),
		math.Inf(-1), math.SmallestNonzeroFloat64, 1}
	for i := range n {
		x := r.Uint64()
		i64[i], u64[i], i32[i], u32[i] = int64(x), x, int32(x), uint32(x)
		f64[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		if r.IntN(4) == 0 {
			f64[i] = specials[r.IntN(len(specials))]
		}
		f32[i] = float32(f64[i])
	}
	check("int64", kernelHashes(i64, out), func(i int) uint64 { return agg.HashInt(uint64(i64[i])) })
	check("uint64", kernelHashes(u64, out), func(i int) uint64 { return agg.HashInt(u64[i]) })
	check("int32", kernelHashes(i32, out), func(i int) uint64 { return agg.HashInt(uint64(int64(i32[i]))) })
	check("uint32", kernelHashes(u32, out), func(i int) uint64 { return agg.HashInt(uint64(u32[i])) })
	check("float64", kernelHashes(f64, out), func(i int) uint64 { return agg.HashFloat(f64[i]) })
	check("float32", kernelHashes(f32, out), func(i int) uint64 { return agg.HashFloat(float64(f32[i])) })
	require.Zero(t, kernelHashes(make([]int16, 64), out), "no kernel for int16")
	withSIMD(simdNone, func() { require.Zero(t, kernelHashes(i64, out)) })
}

// statsMorselStates folds each morsel of v with the statistics (sums of
// squares and sketch) at SIMD level l.
func statsMorselStates(t *testing.T, l simdKind, v *column.View) [][]byte {
	var out [][]byte
	withSIMD(l, func() {
		var m morselAccs
		m.need = statsNeed{moments: true, sketch: true}
		for lo := 0; lo < v.Len || lo == 0; lo += MorselSize {
			s := newState(v.Kind.Family())
			require.NoError(t, m.updateMorsel(&s, v, lo, min(lo+MorselSize, v.Len)))
			b, err := s.MarshalBinary()
			require.NoError(t, err)
			out = append(out, b)
		}
	})
	return out
}

// TestStatsSIMDMatchesGoLoops: the morsel states with the statistics are the
// same bytes (squares, registers, exact hashes) whatever the SIMD level, on
// the data of TestSIMDMatchesGoLoops.
func TestStatsSIMDMatchesGoLoops(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint32,
		arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32,
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, dt := range types {
		for _, n := range simdSizes {
			nullFrac := []float64{0, 0, 0.1, 0.5, 0.97, 1}[r.IntN(6)]
			profile := r.IntN(5)
			off := []int{0, 1, 3, 8, 13, 64, 67}[r.IntN(7)]
			b := array.NewBuilder(mem, dt)
			for i := 0; i < off+n+r.IntN(20); i++ {
				if nullFrac > 0 && r.Float64() < nullFrac {
					b.AppendNull()
				} else {
					appendSIMDValue(b, r, profile)
				}
			}
			parent := b.NewArray()
			b.Release()
			arr := array.NewSlice(parent, int64(off), int64(off+n))
			msg := fmt.Sprintf("%s n=%d off=%d nulls=%g profile=%d seed=%d", dt, n, off, nullFrac, profile, seed)
			v, err := arrow17.ViewOf(arr)
			require.NoError(t, err, msg)
			want := statsMorselStates(t, simdNone, &v)
			for _, l := range simdLevels() {
				require.Equal(t, want, statsMorselStates(t, l, &v), "%s: %s vs Go loops", msg, l)
			}
			arr.Release()
			parent.Release()
		}
	}
}
