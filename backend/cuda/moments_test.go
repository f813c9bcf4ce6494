//go:build cuda

package cuda

import (
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
)

// TestMomentsMatchCPU compares the moments kernels (stddev and variance:
// the sums of squares in the same launch) with the CPU backend on every
// type that has them × null density × offset × size, through the default
// pipeline, 64 KiB chunks and resident columns, with and without the
// ordered aggregates: integer states bit for bit (their squares are
// exact), float states within the sums' bound and their variances within
// twice the documented bound of the exact one.
func TestMomentsMatchCPU(t *testing.T) {
	small, hows := gpuPaths(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(5, 7))
	maxLen := testSizes[len(testSizes)-1] + testOffsets[len(testOffsets)-1]
	for _, dt := range gpuTypes {
		k := kindOf(t, dt)
		if !testBackend.SupportsStats(k, agg.Moments) {
			require.Equal(t, column.Decimal128, k, "only decimals' moments stay on the CPU")
			continue
		}
		for _, nf := range testNullFracs {
			base := randomArray(t, mem, r, dt, maxLen, nf)
			for _, off := range testOffsets {
				for _, n := range testSizes {
					for _, set := range []agg.Set{agg.Default | agg.Moments, agg.Default | agg.Moments | agg.Ordered} {
						arr := array.NewSlice(base, int64(off), int64(off+n))
						v := viewOf(t, arr)
						want := agg.New(v.Kind.Family(), set)
						c := &cpu.CPU{Threads: 4}
						require.NoError(t, c.Update(t.Context(), []*column.View{v}, []*agg.State{&want}))
						name := fmt.Sprintf("%s nulls=%v offset=%d len=%d aggs=%s", dt, nf, off, n, set)
						check := func(got agg.State, how string) {
							t.Helper()
							require.True(t, got.Tracks.Has(agg.Moments), "%s (%s)", name, how)
							if v.Kind.Family() != column.FamilyFloat {
								require.Equal(t, want, got, "%s (%s)", name, how)
								return
							}
							requireSame(t, v, want, got, "%s (%s)", name, how)
							if set.Has(agg.Ordered) {
								requireSameOrdered(t, want, got, "%s (%s)", name, how)
							}
							requireVarianceClose(t, v, want, got, "%s (%s)", name, how)
						}
						for _, how := range hows {
							check(gpuStateVia(t, small, how, v, set), how)
						}
						arr.Release()
					}
				}
			}
			base.Release()
		}
	}
}

// requireVarianceClose checks the GPU's float variance against the CPU's:
// each within 2^-52·|v| + 2^-70·Σx²/(n-1) (+ n·2^-1070) of the exact
// variance (README's Exactness), NaN and infinities alike.
func requireVarianceClose(t testing.TB, v *column.View, cpu, gpu agg.State, msgAndArgs ...any) {
	t.Helper()
	cf, gf := cpu.Finalize(agg.Variance), gpu.Finalize(agg.Variance)
	cv, cok := cf.Variance(0)
	gv, gok := gf.Variance(0)
	require.Equal(t, cok, gok, msgAndArgs...)
	if math.IsNaN(cv) || math.IsInf(cv, 0) {
		require.Equal(t, math.IsNaN(cv), math.IsNaN(gv), msgAndArgs...)
		if !math.IsNaN(cv) {
			require.Equal(t, cv, gv, msgAndArgs...)
		}
		return
	}
	var sq float64
	for i := 0; i < v.Len; i++ {
		if !v.Valid(i) {
			continue
		}
		var x float64
		if v.Kind == column.Float32 {
			x = float64(column.Values[float32](v)[i])
		} else {
			x = column.Values[float64](v)[i]
		}
		sq += x * x
	}
	n := float64(cpu.Count)
	bound := math.Ldexp(math.Abs(cv), -52) + math.Ldexp(sq, -70)/(n-1) + n*math.Ldexp(1, -1070)
	require.InDelta(t, cv, gv, 2*bound, msgAndArgs...)
}

// TestMomentsSpecials: non-finite values make the variance NaN on the GPU
// as on the CPU, squares past float64 +Inf, and a large mean keeps its
// small spread.
func TestMomentsSpecials(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, c := range []struct {
		vals []float64
		want float64
	}{
		{[]float64{1, math.Inf(1), 3}, math.NaN()},
		{[]float64{1, math.NaN(), 3}, math.NaN()},
		{[]float64{1e200, 1e200, 2}, math.Inf(1)},
		{[]float64{1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4}, 5.0 / 3},
	} {
		for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Float64} {
			arr := floatArray(mem, dt, c.vals, nil)
			v := viewOf(t, arr)
			s := agg.New(column.FamilyFloat, agg.Variance)
			require.NoError(t, testBackend.Update(t.Context(), []*column.View{v}, []*agg.State{&s}))
			f := s.Finalize(agg.Variance)
			got, ok := f.Variance(0)
			require.True(t, ok)
			if math.IsNaN(c.want) {
				require.True(t, math.IsNaN(got), "%v: %v", c.vals, got)
			} else {
				require.Equal(t, c.want, got, "%v", c.vals)
			}
			arr.Release()
		}
	}
}
