package cpu

import (
	"context"
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

// The SIMD kernels and the Go loops must produce bit-identical States: these
// tests run both on the same morsels and compare every field bit for bit.

// simdLevels returns the kernels' instruction sets this CPU runs, best first.
func simdLevels() []simdKind {
	var ls []simdKind
	for l := simdLevel; l > simdNone; l-- {
		ls = append(ls, l)
	}
	return ls
}

// withSIMD runs f with the update loops set to level l.
func withSIMD(l simdKind, f func()) {
	saved := simdLevel
	simdLevel = l
	defer func() { simdLevel = saved }()
	f()
}

// stateBits is an agg.State with its floats as bits, so that require.Equal
// compares NaN payloads and the sign of zero too.
type stateBits struct {
	Count, NullCount      int64
	Sum                   agg.Int192
	FSum, FComp, FSpecial uint64
	Min, Max              [2]uint64
}

func bitsOf(s *agg.State) stateBits {
	return stateBits{s.Count, s.NullCount, s.Sum,
		math.Float64bits(s.FSum), math.Float64bits(s.FComp), math.Float64bits(s.FSpecial), s.Min, s.Max}
}

// morselStates aggregates every morsel of v separately at SIMD level l.
func morselStates(t *testing.T, l simdKind, v *column.View) []agg.State {
	var out []agg.State
	withSIMD(l, func() {
		var m morselAccs
		for lo := 0; lo < v.Len || lo == 0; lo += MorselSize {
			s := newState(v.Kind.Family())
			require.NoError(t, m.updateMorsel(&s, v, lo, min(lo+MorselSize, v.Len)))
			out = append(out, s)
		}
	})
	return out
}

// simdValue draws a value of the profile: 0 ordinary values, 1 with zeros and
// values of one sign (zero extremes: the careful path), 2 with NaN, ±Inf,
// -0.0 and subnormals, 3 huge values (overflowing lanes), 4 integer extremes.
func simdValue(r *rand.Rand, profile int) float64 {
	switch profile {
	case 1:
		if r.IntN(50) == 0 {
			return math.Copysign(0, float64(r.IntN(2))-0.5)
		}
		return math.Abs(r.NormFloat64()) * 1e3
	case 2:
		switch r.IntN(40) {
		case 0:
			return math.NaN()
		case 1:
			return math.Inf(1)
		case 2:
			return math.Inf(-1)
		case 3:
			return math.Copysign(0, -1)
		case 4:
			return 5e-324 * float64(r.IntN(1000))
		}
	case 3:
		return (r.Float64() - 0.3) * math.MaxFloat64
	}
	return r.NormFloat64() * math.Pow(10, float64(r.IntN(30)-10))
}

func appendSIMDValue(b array.Builder, r *rand.Rand, profile int) {
	x := simdValue(r, profile)
	u := r.Uint64()
	if profile == 4 {
		u = []uint64{0, 1, math.MaxUint64, math.MaxInt64, 1 << 63, math.MaxUint32, 1 << 32}[r.IntN(7)] + uint64(r.IntN(3)) - 1
	} else if profile != 3 {
		u >>= r.IntN(64)
		if r.IntN(2) == 0 {
			u = -u
		}
	}
	switch b := b.(type) {
	case *array.Int64Builder:
		b.Append(int64(u))
	case *array.Uint64Builder:
		b.Append(u)
	case *array.Int32Builder:
		b.Append(int32(u))
	case *array.Uint32Builder:
		b.Append(uint32(u))
	case *array.Int16Builder:
		b.Append(int16(u))
	case *array.Float64Builder:
		b.Append(x)
	case *array.Float32Builder:
		b.Append(float32(x))
	}
}

// simdSizes are lengths around the vector widths (8 and 16 elements, 32 per
// unrolled integer loop, 64 per validity word) and the morsel size.
var simdSizes = []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 40, 47, 48, 63, 64, 65, 127, 128, 129, 1000,
	MorselSize - 1, MorselSize, MorselSize + 1, 2*MorselSize + 37}

// TestSIMDMatchesGoLoops runs every kernel and the Go loops on the same
// morsels: every kind with a kernel (and one without), lengths around the
// vector widths, null densities, element and bit offsets, and values from
// ordinary to NaN/±Inf/-0.0/subnormal, huge and integer extremes.
func TestSIMDMatchesGoLoops(t *testing.T) {
	levels := simdLevels()
	t.Logf("SIMD levels on this CPU: %v", levels)
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
			want := morselStates(t, simdNone, &v)
			var count, nulls int64
			for i := range want {
				count += want[i].Count
				nulls += want[i].NullCount
			}
			require.Equal(t, int64(arr.Len()-arr.NullN()), count, msg)
			require.Equal(t, int64(arr.NullN()), nulls, msg)
			for _, l := range levels {
				got := morselStates(t, l, &v)
				require.Len(t, got, len(want), msg)
				for i := range want {
					require.Equal(t, bitsOf(&want[i]), bitsOf(&got[i]), "%s: morsel %d, %s vs Go loops", msg, i, l)
				}
			}
			arr.Release()
			parent.Release()
		}
	}
}

// TestSIMDFloatLanes compares the canonical float lanes themselves (each
// lane's sum and compensation, signs of zero included), not only the States
// they flush into, on finite data (non-finite lanes go to the careful path,
// which re-reads the morsel without them).
func TestSIMDFloatLanes(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	type lanes struct {
		s, c     [floatLaneCount]uint64
		min, max uint64
		count    int64
	}
	fold := func(l simdKind, v *column.View, lo, hi int) lanes {
		var out lanes
		withSIMD(l, func() {
			var m morselAccs
			a, err := m.valueAcc(v)
			require.NoError(t, err)
			out.count = m.fold(a, v, lo, hi)
			var fl *floatLanes
			var mn, mx float64
			switch a := a.(type) {
			case *floatAcc[float64]:
				fl, mn, mx = &a.l, a.min, a.max
			case *floatAcc[float32]:
				fl, mn, mx = &a.l, a.min, a.max
			}
			// A zero extreme sends the morsel to the careful path, which settles
			// its sign: the fast paths need not agree on it.
			out.min, out.max = math.Float64bits(mn+0), math.Float64bits(mx+0)
			for k := range fl.s {
				out.s[k], out.c[k] = math.Float64bits(fl.s[k]), math.Float64bits(fl.c[k])
			}
		})
		return out
	}
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32} {
		for _, n := range simdSizes {
			profile := []int{0, 1}[r.IntN(2)]
			nullFrac := []float64{0, 0.1, 0.6}[r.IntN(3)]
			off := []int{0, 5, 8, 64}[r.IntN(4)]
			b := array.NewBuilder(mem, dt)
			for i := 0; i < off+n; i++ {
				if nullFrac > 0 && r.Float64() < nullFrac {
					b.AppendNull()
				} else {
					appendSIMDValue(b, r, profile)
				}
			}
			parent := b.NewArray()
			b.Release()
			arr := array.NewSlice(parent, int64(off), int64(off+n))
			v, err := arrow17.ViewOf(arr)
			require.NoError(t, err)
			for lo := 0; lo < n; lo += MorselSize {
				hi := min(lo+MorselSize, n)
				want := fold(simdNone, &v, lo, hi)
				for _, l := range simdLevels() {
					require.Equal(t, want, fold(l, &v, lo, hi), "%s n=%d off=%d nulls=%g profile=%d lo=%d %s seed=%d", dt, n, off, nullFrac, profile, lo, l, seed)
				}
			}
			arr.Release()
			parent.Release()
		}
	}
}

// TestSIMDValidityWindows sweeps every bit offset of the validity bitmap (the
// aligned and the shifted paths of alignedBits) and short lengths, where the
// kernels' tails and masked vectors meet.
func TestSIMDValidityWindows(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32} {
		b := array.NewBuilder(mem, dt)
		for i := 0; i < 300; i++ {
			if r.IntN(3) == 0 {
				b.AppendNull()
			} else {
				appendSIMDValue(b, r, 0)
			}
		}
		parent := b.NewArray()
		b.Release()
		for off := 0; off <= 70; off++ {
			for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 33, 64, 65, 200} {
				arr := array.NewSlice(parent, int64(off), int64(off+n))
				v, err := arrow17.ViewOf(arr)
				require.NoError(t, err)
				want := morselStates(t, simdNone, &v)
				require.Equal(t, int64(arr.Len()-arr.NullN()), want[0].Count)
				for _, l := range simdLevels() {
					got := morselStates(t, l, &v)
					require.Equal(t, bitsOf(&want[0]), bitsOf(&got[0]), "%s off=%d n=%d %s seed=%d", dt, off, n, l, seed)
				}
				arr.Release()
			}
		}
		parent.Release()
	}
}

// TestAlignedBits checks the byte-aligned validity windows the kernels read
// and the count of their valid bits.
func TestAlignedBits(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	bitmap := make([]byte, 100)
	for i := range bitmap {
		bitmap[i] = byte(r.Uint32())
	}
	var scratch []byte
	for bitOff := 0; bitOff < 20; bitOff++ {
		for lo := 0; lo < 70; lo += 1 + r.IntN(9) {
			for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 200, 700} {
				if bitOff+lo+n > 8*len(bitmap) {
					continue
				}
				got := alignedBits(bitmap, bitOff, lo, lo+n, &scratch)
				require.Len(t, got, (n+7)/8)
				var count int64
				for i := 0; i < n; i++ {
					bit := bitmap[(bitOff+lo+i)/8]>>((bitOff+lo+i)%8)&1 != 0
					require.Equal(t, bit, got[i/8]>>(i%8)&1 != 0, "bitOff=%d lo=%d n=%d i=%d seed=%d", bitOff, lo, n, i, seed)
					if bit {
						count++
					}
				}
				require.Equal(t, count, countBits(got, n), "bitOff=%d lo=%d n=%d seed=%d", bitOff, lo, n, seed)
			}
		}
	}
}

// TestSIMDAdversarialSum checks the canonical lanes keep the compensated sum
// exact on [1e16, 1, -1e16] repeated, on every path.
func TestSIMDAdversarialSum(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewFloat64Builder(mem)
	for i := 0; i < 300001; i++ {
		b.AppendValues([]float64{1e16, 1, -1e16}, nil)
	}
	arr := b.NewFloat64Array()
	b.Release()
	defer arr.Release()
	v, err := arrow17.ViewOf(arr)
	require.NoError(t, err)
	for _, l := range append(simdLevels(), simdNone) {
		withSIMD(l, func() {
			s := newState(column.FamilyFloat)
			require.NoError(t, (&CPU{Threads: 2}).Update(context.Background(), []*column.View{&v}, []*agg.State{&s}))
			require.Equal(t, 300001.0, s.FloatSum(), "%s", l)
		})
	}
}

// TestUpdateAllocatesNothing checks that a worker's morsel loop (kernels,
// validity windows, flush) allocates nothing once its scratch exists.
func TestUpdateAllocatesNothing(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint64,
		arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32} {
		b := array.NewBuilder(mem, dt)
		for i := 0; i < 3*MorselSize+5; i++ {
			if r.IntN(10) == 0 {
				b.AppendNull()
			} else {
				appendSIMDValue(b, r, 0)
			}
		}
		full := b.NewArray()
		b.Release()
		arr := array.NewSlice(full, 3, int64(full.Len())) // validity shifted by 3 bits
		full.Release()
		v, err := arrow17.ViewOf(arr)
		require.NoError(t, err)
		var m morselAccs
		states := make([]agg.State, (v.Len+MorselSize-1)/MorselSize) // as the CPU backend's scratch
		run := func() {
			for i := range states {
				states[i] = newState(v.Kind.Family())
				lo := i * MorselSize
				if err := m.updateMorsel(&states[i], &v, lo, min(lo+MorselSize, v.Len)); err != nil {
					t.Fatal(err)
				}
			}
		}
		run()
		require.Zero(t, testing.AllocsPerRun(10, run), "%s", dt)
		arr.Release()
	}
}
