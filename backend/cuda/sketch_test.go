//go:build cuda

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/kernels"
)

// TestSketchMatchesCPU compares the sketch kernels (approx_distinct in the
// same launch as the other aggregates) with the CPU backend on every type
// that has them × distinct values (few: the exact hashes; many: the
// registers alone) × null density × offset × size, through the default
// pipeline, 64 KiB chunks (many launches raising one device sketch) and
// resident columns, with and without stddev and variance: integer states
// are the same bytes serialized (the sketch's registers and exact hashes
// included); float states are within the sums' bound, their sketches the
// same registers and estimate.
func TestSketchMatchesCPU(t *testing.T) {
	small, hows := gpuPaths(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(9, 11))
	sizes := []int{0, 1, 33, 4097, 200_003}
	maxLen := sizes[len(sizes)-1] + testOffsets[len(testOffsets)-1]
	for _, dt := range gpuTypes {
		k := kindOf(t, dt)
		if !testBackend.SupportsStats(k, agg.ApproxDistinct) {
			require.Equal(t, column.Decimal128, k, "only decimals' sketches stay on the CPU")
			continue
		}
		for _, pool := range []int{5, 1000, 3000, 0} { // 0: any value
			for _, nf := range []float64{0, 0.3} {
				base := randomArray(t, mem, r, dt, maxLen, nf)
				if pool > 0 && k != column.Bool {
					drawFromPool(base, k.Width(), pool, r)
				}
				for _, off := range testOffsets {
					for _, n := range sizes {
						set := agg.Default | agg.ApproxDistinct
						if n%2 == 1 {
							set |= agg.Moments
						}
						arr := array.NewSlice(base, int64(off), int64(off+n))
						v := viewOf(t, arr)
						want := agg.New(v.Kind.Family(), set)
						c := &cpu.CPU{Threads: 4}
						require.NoError(t, c.Update(t.Context(), []*column.View{v}, []*agg.State{&want}))
						name := fmt.Sprintf("%s pool=%d nulls=%v offset=%d len=%d aggs=%s", dt, pool, nf, off, n, set)
						check := func(got agg.State, how string) {
							t.Helper()
							require.True(t, got.Tracks.Has(agg.ApproxDistinct), "%s (%s)", name, how)
							if v.Kind.Family() != column.FamilyFloat {
								wb, err := want.MarshalBinary()
								require.NoError(t, err)
								gb, err := got.MarshalBinary()
								require.NoError(t, err)
								require.Equal(t, wb, gb, "%s (%s)", name, how)
								return
							}
							requireSame(t, v, want, got, "%s (%s)", name, how)
							require.Equal(t, want.Sketch == nil, got.Sketch == nil, "%s (%s)", name, how)
							if want.Sketch != nil {
								require.Equal(t, want.Sketch.Registers, got.Sketch.Registers, "%s (%s)", name, how)
								require.Equal(t, want.Sketch.Overflowed(), got.Sketch.Overflowed(), "%s (%s)", name, how)
							}
							require.Equal(t, want.Finalize(set).Distinct, got.Finalize(set).Distinct, "%s (%s)", name, how)
						}
						for _, how := range hows {
							check(gpuStateVia(t, small, how, v, set), how)
						}
						arr.Release()
					}
				}
				base.Release()
			}
		}
	}
}

// drawFromPool rewrites the values of arr (of width bytes each) as copies
// of its first pool values: a column of at most pool distinct values.
func drawFromPool(arr arrow.Array, width, pool int, r *rand.Rand) {
	b := arr.Data().Buffers()[1].Bytes()
	n := arr.Len()
	for i := pool; i < n; i++ {
		j := r.IntN(pool)
		copy(b[i*width:(i+1)*width], b[j*width:(j+1)*width])
	}
}

// TestSketchSpecials: -0 and +0 are one value, every NaN is one value, on
// the GPU as on the CPU (the hashes of agg.HashFloat).
func TestSketchSpecials(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	nan2 := math.Float64frombits(0x7ff8000000000001)
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64} {
		arr := floatArray(mem, dt, []float64{0, math.Copysign(0, -1), math.NaN(), nan2, 1, math.Inf(1), 1}, nil)
		v := viewOf(t, arr)
		s := agg.New(column.FamilyFloat, agg.ApproxDistinct)
		require.NoError(t, testBackend.Update(t.Context(), []*column.View{v}, []*agg.State{&s}))
		require.Equal(t, int64(4), s.Finalize(agg.ApproxDistinct).Distinct, "%s: 0, NaN, 1, +Inf", dt)
		arr.Release()
	}
}

// TestDecodeSketch: a device sketch's bytes decode to the registers and
// hashes they hold; a rank beyond the largest or a count that does not
// match the hashes kept is an error.
func TestDecodeSketch(t *testing.T) {
	le := binary.LittleEndian
	b := make([]byte, kernels.AggSketchBytes)
	b[7] = 3
	le.PutUint64(b[sketchRegsBytes+8*5:], 12345)
	tail := b[sketchRegsBytes+sketchSlotsBytes:]
	le.PutUint32(tail, 2)     // count
	le.PutUint32(tail[8:], 1) // zero
	k, err := decodeSketch(b)
	require.NoError(t, err)
	require.Equal(t, uint8(3), k.Registers[7])
	require.False(t, k.Overflowed())

	le.PutUint32(tail, 3)
	_, err = decodeSketch(b)
	require.ErrorContains(t, err, "2 distinct hashes kept, counted 3")

	le.PutUint32(tail[4:], 1) // overflow: the hashes do not count
	k, err = decodeSketch(b)
	require.NoError(t, err)
	require.True(t, k.Overflowed())

	b[9] = agg.SketchMaxRank + 1
	_, err = decodeSketch(b)
	require.ErrorContains(t, err, "register 9 holds rank 52")
}

// TestSketchLongColumns runs the sketch kernels over columns of 24M values,
// every block of the grid folding many of them and every register raised
// many times, with and without nulls, from an unaligned start: the states
// are the CPU's (integers the same bytes, floats within the sums' bound),
// the registers and the estimate the same.
func TestSketchLongColumns(t *testing.T) {
	small, hows := gpuPaths(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(13, 17))
	const n = 24 << 20
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64} {
		for _, nf := range []float64{0, 0.3} {
			arr := randomArray(t, mem, r, dt, n+3, nf)
			part := array.NewSlice(arr, 3, int64(n+3)) // (an unaligned start)
			v := viewOf(t, part)
			set := agg.Default | agg.Moments | agg.ApproxDistinct
			want := agg.New(v.Kind.Family(), set)
			c := &cpu.CPU{Threads: 4}
			require.NoError(t, c.Update(t.Context(), []*column.View{v}, []*agg.State{&want}))
			require.NotNil(t, want.Sketch)
			require.True(t, want.Sketch.Overflowed())
			for _, how := range hows {
				name := fmt.Sprintf("%s nulls=%v (%s)", dt, nf, how)
				got := gpuStateVia(t, small, how, v, set)
				require.NotNil(t, got.Sketch, name)
				require.Equal(t, want.Sketch.Registers, got.Sketch.Registers, name)
				require.Equal(t, want.Finalize(set).Distinct, got.Finalize(set).Distinct, name)
				if v.Kind.Family() == column.FamilyFloat {
					requireSame(t, v, want, got, name)
					continue
				}
				wb, err := want.MarshalBinary()
				require.NoError(t, err)
				gb, err := got.MarshalBinary()
				require.NoError(t, err)
				require.Equal(t, wb, gb, name)
			}
			part.Release()
			arr.Release()
		}
	}
}
