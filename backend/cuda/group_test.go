//go:build cuda

package cuda

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/kernels"
)

// keyArray makes n keys of integer type dt in [kmin, kmin+groups) (kmin as
// the kind widens it: int64 bits for signed kinds), about nullFrac of them
// null.
func keyArray(t testing.TB, mem memory.Allocator, r *rand.Rand, dt arrow.DataType, n int, kmin uint64, groups int,
	nullFrac float64) arrow.Array {
	w := kindOf(t, dt).Width()
	vals := memory.NewResizableBuffer(mem)
	defer vals.Release()
	vals.Resize(n * w)
	var x [8]byte
	for i := range n {
		binary.LittleEndian.PutUint64(x[:], kmin+uint64(r.IntN(groups)))
		copy(vals.Bytes()[i*w:], x[:w])
	}
	var validity *memory.Buffer
	nulls := 0
	if nullFrac > 0 {
		validity = memory.NewResizableBuffer(mem)
		defer validity.Release()
		validity.Resize(int(bitutil.BytesForBits(int64(n))))
		vb := validity.Bytes()
		clear(vb)
		for i := range n {
			if r.Float64() >= nullFrac {
				bitutil.SetBit(vb, i)
			}
		}
		nulls = n - bitutil.CountSetBits(vb, 0, n)
	}
	data := array.NewData(dt, n, []*memory.Buffer{validity, vals}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// groupInputs are n keys of type kt in [kmin, kmin+groups) and n random
// values of type vt, about 5% and 10% of them null, as views; release
// frees their arrays.
func groupInputs(t testing.TB, mem memory.Allocator, r *rand.Rand, kt, vt arrow.DataType, n int, kmin uint64,
	groups int) (kv, vv *column.View, release func()) {
	keys := keyArray(t, mem, r, kt, n, kmin, groups, 0.05)
	vals := randomArray(t, mem, r, vt, n, 0.1)
	return viewOf(t, keys), viewOf(t, vals), func() {
		keys.Release()
		vals.Release()
	}
}

// keyOf is row i's key of view k, widened as the kernels widen it.
func keyOf(k *column.View, i int) uint64 {
	switch k.Kind {
	case column.Int8:
		return uint64(column.Values[int8](k)[i])
	case column.Int16:
		return uint64(column.Values[int16](k)[i])
	case column.Int32:
		return uint64(column.Values[int32](k)[i])
	case column.Int64:
		return uint64(column.Values[int64](k)[i])
	case column.Uint8:
		return uint64(column.Values[uint8](k)[i])
	case column.Uint16:
		return uint64(column.Values[uint16](k)[i])
	case column.Uint32:
		return uint64(column.Values[uint32](k)[i])
	}
	return column.Values[uint64](k)[i]
}

// cpuGroups is the CPU's answer: the rows of sel (all when nil) grouped by
// key k (key - kmin; groups for a null key) and folded by agg's grouped
// update loops, row by row in order.
func cpuGroups(t testing.TB, k, sel, v *column.View, kmin uint64, groups int) *agg.Groups {
	g, err := agg.NewGroups(v.Kind.Family(), 0)
	require.NoError(t, err)
	g.Grow(groups + 1)
	var rows, ids []int32
	for i := 0; i < k.Len; i++ {
		if sel != nil && (!sel.Valid(i) || !bitutil.BitIsSet(sel.Values, sel.Offset+i)) {
			continue
		}
		id := int32(groups)
		if k.Valid(i) {
			id = int32(keyOf(k, i) - kmin)
		}
		rows, ids = append(rows, int32(i)), append(ids, id)
	}
	switch v.Kind {
	case column.Int8:
		agg.FoldSigned(g, column.Values[int8](v), v.Validity, v.ValidityOffset, rows, ids, 0)
	case column.Int16:
		agg.FoldSigned(g, column.Values[int16](v), v.Validity, v.ValidityOffset, rows, ids, 0)
	case column.Int32:
		agg.FoldSigned(g, column.Values[int32](v), v.Validity, v.ValidityOffset, rows, ids, 0)
	case column.Int64:
		agg.FoldSigned(g, column.Values[int64](v), v.Validity, v.ValidityOffset, rows, ids, 0)
	case column.Uint8:
		agg.FoldUnsigned(g, column.Values[uint8](v), v.Validity, v.ValidityOffset, rows, ids, 0)
	case column.Uint16:
		agg.FoldUnsigned(g, column.Values[uint16](v), v.Validity, v.ValidityOffset, rows, ids, 0)
	case column.Uint32:
		agg.FoldUnsigned(g, column.Values[uint32](v), v.Validity, v.ValidityOffset, rows, ids, 0)
	case column.Uint64:
		agg.FoldUnsigned(g, column.Values[uint64](v), v.Validity, v.ValidityOffset, rows, ids, 0)
	case column.Float32:
		agg.FoldFloat(g, column.Values[float32](v), v.Validity, v.ValidityOffset, rows, ids, 0)
	case column.Float64:
		agg.FoldFloat(g, column.Values[float64](v), v.Validity, v.ValidityOffset, rows, ids, 0)
	default:
		t.Fatalf("no grouped loop for %s", v.Kind)
	}
	return g
}

// groupAbs is, per group of cpuGroups, the sum of |x| over its valid finite
// float values and how many there are (floatBound's terms).
func groupAbs(k, sel, v *column.View, kmin uint64, groups int) ([]float64, []int) {
	abs, n := make([]float64, groups+1), make([]int, groups+1)
	for i := 0; i < k.Len; i++ {
		if sel != nil && (!sel.Valid(i) || !bitutil.BitIsSet(sel.Values, sel.Offset+i)) || !v.Valid(i) {
			continue
		}
		id := groups
		if k.Valid(i) {
			id = int(keyOf(k, i) - kmin)
		}
		var x float64
		if v.Kind == column.Float32 {
			x = float64(column.Values[float32](v)[i])
		} else {
			x = column.Values[float64](v)[i]
		}
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			abs[id] += math.Abs(x)
			n[id]++
		}
	}
	return abs, n
}

// requireSameGroups checks the GPU's groups against the CPU's: every
// group's state bit for bit, but float sums, which agree within floatBound
// (non-finite ones exactly, NaN as NaN), as requireSame does for one state.
func requireSameGroups(t testing.TB, k, sel, v *column.View, kmin uint64, groups int, cpu, gpu *agg.Groups,
	msg string) {
	t.Helper()
	require.Equal(t, cpu.Len(), gpu.Len(), msg)
	var abs []float64
	var cnt []int
	if v.Kind.Family() == column.FamilyFloat {
		abs, cnt = groupAbs(k, sel, v, kmin, groups)
	}
	for i := range int32(cpu.Len()) {
		cs, gs := cpu.State(i), gpu.State(i)
		where := fmt.Sprintf("%s: group %d", msg, i)
		if v.Kind.Family() != column.FamilyFloat {
			require.Equal(t, cs, gs, where)
			continue
		}
		require.Equal(t, cs.Count, gs.Count, where)
		require.Equal(t, cs.NullCount, gs.NullCount, where)
		require.Equal(t, cs.Min, gs.Min, where) // the sign of zero too
		require.Equal(t, cs.Max, gs.Max, where)
		c, g := cs.FloatSum(), gs.FloatSum()
		if math.IsNaN(c) || math.IsInf(c, 0) {
			require.Equal(t, math.IsNaN(c), math.IsNaN(g), where)
			if !math.IsNaN(c) {
				require.Equal(t, c, g, where)
			}
			continue
		}
		require.InDelta(t, c, g, floatBound(c, abs[i], cnt[i]), where)
	}
}

// TestGroupResident groups resident value columns by resident key columns
// on the GPU and checks every group against the CPU's grouped update loops
// on the same rows: integer, dictionary-index and null keys, domains of 1
// to 4096 keys (several windows of groups for the larger ones) and of the
// wide kernels beyond (integer values, up to 70,000 keys), values of
// integer and float kinds with nulls, selections with nulls, columns that
// start at an offset into their buffers, and row counts that are not
// multiples of a tile. Float groups must come out the same bits on a second
// run.
func TestGroupResident(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(3, 21))
	cases := []struct {
		key, val         arrow.DataType
		kmin             int64
		groups, n        int
		keyNull, valNull float64
		sel              bool
		selNull          float64
	}{
		{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, -5, 10, 100_003, 0.1, 0.2, true, 0.1},
		{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int32, -500, 1000, 70_001, 0.05, 0.1, false, 0},
		{arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Float64, 0, 200, 50_000, 0.1, 0.1, true, 0}, // dictionary indices
		{arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Float64, -2000, 4096, 90_000, 0.02, 0.1, true, 0.05},
		{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, 1 << 40, 4096, 60_000, 0, 0, false, 0},
		{arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Uint64, math.MinInt64 + 5, 1, 3_001, 0.3, 0.3, true, 0},
		{arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Int8, 7, 3, 9_999, 0, 0.5, false, 0},
		{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Float32, -128, 256, 40_000, 0.1, 0, true, 0},
		{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint16, 0, 5, 1, 0, 0, false, 0},
		// Float values of few groups: a table per thread (kernels.PlanGroupLaunch).
		{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, -5, 10, 100_003, 0.1, 0.2, true, 0.1},
		{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float32, 3, 17, 50_000, 0, 0.1, false, 0},
		// Float values of more groups: exact sums (kernels.PlanGroupExact).
		{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, -50, 1000, 200_003, 0.1, 0.05, true, 0.1},
		{arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Float32, 9, 40, 30_000, 0, 0.5, false, 0},
		// The wide kernels: domains beyond kernels.AggGroupMax.
		{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, -5, 5000, 100_003, 0.1, 0.2, true, 0.1},
		{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint32, 1 << 20, 70_000, 300_001, 0.05, 0.1, false, 0},
		{arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Int8, 0, 65_535, 200_000, 0.1, 0, true, 0},
		{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint64, math.MaxInt64 - 9_999, 10_000, 50_001, 0, 0, false, 0},
		{arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int16, -3000, 4097, 20_000, 0.2, 0.2, true, 0},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s by %s in %d groups, %d rows", c.val, c.key, c.groups, c.n)
		t.Run(name, func(t *testing.T) {
			const off = 3 // the columns start at an offset into their buffers
			kmin := uint64(c.kmin)
			keys := keyArray(t, mem, r, c.key, c.n+off, kmin, c.groups, c.keyNull)
			defer keys.Release()
			vals := randomArray(t, mem, r, c.val, c.n+off, c.valNull)
			defer vals.Release()
			ks, vs := array.NewSlice(keys, off, int64(c.n+off)), array.NewSlice(vals, off, int64(c.n+off))
			defer ks.Release()
			defer vs.Release()
			kv, vv := viewOf(t, ks), viewOf(t, vs)
			kc, vc := resident(t, kv), resident(t, vv)
			var sv *column.View
			var sc *DeviceColumn
			var err error
			if c.sel {
				sel := randomArray(t, mem, r, arrow.FixedWidthTypes.Boolean, c.n+off, c.selNull)
				defer sel.Release()
				ss := array.NewSlice(sel, off, int64(c.n+off))
				defer ss.Release()
				sv = viewOf(t, ss)
				sc, err = testBackend.Upload(ctx, sv)
				require.NoError(t, err)
				defer sc.Free()
			}
			key := GroupKey{Column: kc, Min: kmin, Groups: c.groups}
			runs, fallbacks := groupExactRuns.Load(), groupExactFallbacks.Load()
			got, err := testBackend.GroupResident(ctx, key, sc, []*DeviceColumn{vc}, 0)
			require.NoError(t, err)
			require.Len(t, got, 1)
			// Floats past the tables per thread are summed exactly: these
			// values lie within the exact kernels' limbs.
			plan := kernels.PlanGroupLaunch(vv.Kind, c.groups+1, testBackend.d.info.SharedOptin, testBackend.d.info.SharedPerSM)
			require.Equal(t, runs+b2u(plan.Exact), groupExactRuns.Load())
			require.Equal(t, fallbacks, groupExactFallbacks.Load())
			want := cpuGroups(t, kv, sv, vv, kmin, c.groups)
			requireSameGroups(t, kv, sv, vv, kmin, c.groups, want, got[0], name)
			if vv.Kind.Family() == column.FamilyFloat {
				again, err := testBackend.GroupResident(ctx, key, sc, []*DeviceColumn{vc}, 0)
				require.NoError(t, err)
				for i := range int32(want.Len()) {
					requireIdentical(t, got[0].State(i), again[0].State(i), "group %d", i)
				}
			}
		})
	}
}

// resident uploads v to the test backend, freed when the test ends.
func resident(t testing.TB, v *column.View) *DeviceColumn {
	t.Helper()
	c, err := testBackend.Upload(t.Context(), v)
	require.NoError(t, err)
	t.Cleanup(func() { c.Free() })
	return c
}

// b2u is 1 for true.
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// TestGroupExact: float values whose span the exact kernels' limbs hold
// are summed exactly (within the pair's rounding of the exact sum, so
// within the documented bound of the CPU's compensated sums), non-finite
// values included, the same bits call after call; values that span more
// (a millionth beside 1e300) are folded again by the compensated kernels,
// with the same answer as the CPU's.
func TestGroupExact(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(5, 55))
	for _, c := range []struct {
		name     string
		groups   int
		value    func() float64
		fallback bool
	}{
		{"cancelling sums", 300, func() float64 { return float64(r.IntN(2001)-1000) * 0.25 }, false},
		{"wide but within the limbs", 97, func() float64 { return r.NormFloat64() * math.Pow(2, float64(r.IntN(60)-30)) }, false},
		{"non-finite values", 64, func() float64 {
			switch r.IntN(5000) {
			case 0:
				return math.Inf(1)
			case 1:
				return math.Inf(-1)
			case 2:
				return math.NaN()
			}
			return r.NormFloat64()
		}, false},
		{"beyond the limbs", 200, func() float64 { return r.NormFloat64() * math.Pow(10, float64(r.IntN(601)-300)) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			const n = 150_001
			keys := keyArray(t, mem, r, arrow.PrimitiveTypes.Int32, n, 0, c.groups, 0.05)
			defer keys.Release()
			bld := array.NewFloat64Builder(mem)
			defer bld.Release()
			for range n {
				if r.IntN(20) == 0 {
					bld.AppendNull()
				} else {
					bld.Append(c.value())
				}
			}
			vals := bld.NewArray()
			defer vals.Release()
			kv, vv := viewOf(t, keys), viewOf(t, vals)
			kc, vc := resident(t, kv), resident(t, vv)
			key := GroupKey{Column: kc, Groups: c.groups}
			runs, fallbacks, first := groupExactRuns.Load(), groupExactFallbacks.Load(), groupScaleReuses.Load()
			got, err := testBackend.GroupResident(ctx, key, nil, []*DeviceColumn{vc}, 0)
			require.NoError(t, err)
			require.Equal(t, runs+1, groupExactRuns.Load())
			require.Equal(t, fallbacks+b2u(c.fallback), groupExactFallbacks.Load())
			// The first call too: the upload found the column's scale.
			require.Equal(t, first+b2u(!c.fallback), groupScaleReuses.Load())
			want := cpuGroups(t, kv, nil, vv, 0, c.groups)
			requireSameGroups(t, kv, nil, vv, 0, c.groups, want, got[0], c.name)
			// A second call reuses the column's scale (or knows it does not fit).
			reuses := groupScaleReuses.Load()
			again, err := testBackend.GroupResident(ctx, key, nil, []*DeviceColumn{vc}, 0)
			require.NoError(t, err)
			require.Equal(t, reuses+b2u(!c.fallback), groupScaleReuses.Load())
			require.Equal(t, fallbacks+2*b2u(c.fallback), groupExactFallbacks.Load())
			for i := range int32(want.Len()) {
				requireIdentical(t, got[0].State(i), again[0].State(i), "group %d", i)
			}
		})
	}
}

// TestGroupResidentColumns groups two value columns in one call, each as
// alone.
func TestGroupResidentColumns(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(5, 8))
	const n, groups = 30_000, 17
	keys := keyArray(t, mem, r, arrow.PrimitiveTypes.Int32, n, 100, groups, 0.1)
	defer keys.Release()
	kv := viewOf(t, keys)
	kc, err := testBackend.Upload(ctx, kv)
	require.NoError(t, err)
	defer kc.Free()
	var cols []*DeviceColumn
	var views []*column.View
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64} {
		a := randomArray(t, mem, r, dt, n, 0.1)
		defer a.Release()
		v := viewOf(t, a)
		c, err := testBackend.Upload(ctx, v)
		require.NoError(t, err)
		defer c.Free()
		cols, views = append(cols, c), append(views, v)
	}
	got, err := testBackend.GroupResident(ctx, GroupKey{Column: kc, Min: 100, Groups: groups}, nil, cols, 0)
	require.NoError(t, err)
	require.Len(t, got, 2)
	for i, v := range views {
		requireSameGroups(t, kv, nil, v, 100, groups, cpuGroups(t, kv, nil, v, 100, groups), got[i], v.Type.String())
	}
}

// TestGroupResidentErrors: keys outside the domain the caller gave, keys
// or values of kinds the kernels do not group, and aggregates they do not
// answer are errors, not wrong groups.
func TestGroupResidentErrors(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(9, 9))
	const n = 5_000
	keys := keyArray(t, mem, r, arrow.PrimitiveTypes.Int64, n, 0, 10, 0)
	defer keys.Release()
	kc, err := testBackend.Upload(ctx, viewOf(t, keys))
	require.NoError(t, err)
	defer kc.Free()
	vals := randomArray(t, mem, r, arrow.PrimitiveTypes.Float64, n, 0)
	defer vals.Release()
	vc, err := testBackend.Upload(ctx, viewOf(t, vals))
	require.NoError(t, err)
	defer vc.Free()
	bools := randomArray(t, mem, r, arrow.FixedWidthTypes.Boolean, n, 0)
	defer bools.Release()
	bc, err := testBackend.Upload(ctx, viewOf(t, bools))
	require.NoError(t, err)
	defer bc.Free()

	_, err = testBackend.GroupResident(ctx, GroupKey{Column: kc, Min: 0, Groups: 9}, nil, []*DeviceColumn{vc}, 0)
	require.ErrorContains(t, err, "outside the domain")
	_, err = testBackend.GroupResident(ctx, GroupKey{Column: kc, Min: 1, Groups: 10}, nil, []*DeviceColumn{vc}, 0)
	require.ErrorContains(t, err, "outside the domain")
	_, err = testBackend.GroupResident(ctx, GroupKey{Column: vc, Min: 0, Groups: 10}, nil, []*DeviceColumn{vc}, 0)
	require.ErrorContains(t, err, "unsupported")
	_, err = testBackend.GroupResident(ctx, GroupKey{Column: kc, Min: 0, Groups: 10}, nil, []*DeviceColumn{bc}, 0)
	require.ErrorContains(t, err, "unsupported")
	_, err = testBackend.GroupResident(ctx, GroupKey{Column: kc, Min: 0, Groups: 10}, vc, []*DeviceColumn{vc}, 0)
	require.ErrorContains(t, err, "not boolean")
	_, err = testBackend.GroupResident(ctx, GroupKey{Column: kc, Min: 0, Groups: 5000}, nil, []*DeviceColumn{vc}, 0)
	require.ErrorContains(t, err, "unsupported")
	_, err = testBackend.GroupResident(ctx, GroupKey{Column: kc, Min: 0, Groups: 10}, nil, []*DeviceColumn{vc},
		agg.Default|agg.First)
	require.ErrorContains(t, err, "unsupported")
	got, err := testBackend.GroupResident(ctx, GroupKey{Column: kc, Min: 0, Groups: 10}, bc, []*DeviceColumn{vc}, 0)
	require.NoError(t, err)
	require.Equal(t, 11, got[0].Len())
}

// TestGroupWideSets: the wide kernels fold only the fields the aggregates
// need (count alone, sums, extremes), and those agree with the CPU's.
func TestGroupWideSets(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(6, 1))
	const n, groups, kmin = 80_000, 9_000, 1000
	kv, vv, release := groupInputs(t, mem, r, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, n, kmin, groups)
	defer release()
	kc, err := testBackend.Upload(ctx, kv)
	require.NoError(t, err)
	defer kc.Free()
	vc, err := testBackend.Upload(ctx, vv)
	require.NoError(t, err)
	defer vc.Free()
	want := cpuGroups(t, kv, nil, vv, kmin, groups)
	for _, set := range []agg.Set{agg.Count, agg.Sum, agg.Min | agg.Max, agg.Mean | agg.Max, agg.Default} {
		got, err := testBackend.GroupResident(ctx, GroupKey{Column: kc, Min: kmin, Groups: groups}, nil, []*DeviceColumn{vc}, set)
		require.NoError(t, err, set.String())
		require.Equal(t, groups+1, got[0].Len())
		tracks := agg.Tracking(set)
		for i := range int32(groups + 1) {
			w, g := want.State(i), got[0].State(i)
			where := fmt.Sprintf("%s: group %d", set, i)
			require.Equal(t, w.Count, g.Count, where)
			require.Equal(t, w.NullCount, g.NullCount, where)
			if tracks.Any(agg.Sum) {
				require.Equal(t, w.Sum, g.Sum, where)
			}
			if tracks.Any(agg.Min|agg.Max) && w.Count > 0 {
				require.Equal(t, w.Min, g.Min, where)
				require.Equal(t, w.Max, g.Max, where)
			}
		}
	}
}

// BenchmarkGroupResident: sum, min, max and count of 100M int64 or float64
// values grouped by 100M int64 keys (no nulls) in 10, 1000 and (int64, the
// wide kernel) 1,000,000 groups, both
// columns already in device memory; wall time of a GroupResident call (the
// launch and the groups' states read back), bytes of keys and values read
// per second. The first call is checked against the CPU.
func BenchmarkGroupResident(b *testing.B) {
	const n = 100_000_000
	ctx := context.Background()
	for _, c := range []struct {
		typ    string
		groups int
		nulls  bool   // 5% of the values null
		plan   string // "exact" or "compensated": that plan of float groups, not kernels.PlanGroupLaunch's; "cold": each call finds the scale anew (the pass Upload makes); "small": values in [0, 1000)
	}{{"int64", 10, false, ""}, {"int64", 1000, false, ""}, {"int32", 10, false, ""}, {"int32", 1000, false, ""},
		{"int32", 1000, true, ""}, {"int32", 1_000_000, false, ""}, {"float64", 10, false, ""}, {"float64", 16, false, ""},
		{"float64", 50, false, ""}, {"float64", 1000, false, ""}, {"int64", 1_000_000, false, ""}, {"int64", 10, true, ""},
		{"float64", 10, true, ""}, {"float64", 1000, true, ""},
		{"float64", 10, false, "exact"}, {"float64", 16, false, "exact"}, {"float64", 50, false, "compensated"},
		{"float64", 1000, false, "compensated"}, {"float64", 1000, true, "compensated"}, {"float64", 1000, false, "cold"},
		{"int64", 1_000_000, false, "small"}} {
		groups := c.groups
		name := fmt.Sprintf("%s/groups=%d", c.typ, groups)
		if c.nulls {
			name = fmt.Sprintf("%s/nulls5/groups=%d", c.typ, groups)
		}
		if c.plan != "" {
			name = fmt.Sprintf("%s/%s", name, c.plan)
		}
		b.Run(name, func(b *testing.B) {
			switch c.plan {
			case "exact":
				planGroup = kernels.PlanGroupExact
			case "compensated":
				planGroup = kernels.PlanGroupCompensated
			}
			defer func() { planGroup = kernels.PlanGroupLaunch }()
			typ := c.typ
			if c.plan == "small" {
				typ += "-small"
			}
			keys, vals := benchGroupColumns(b, n, groups, typ, c.nulls)
			defer keys.Release()
			defer vals.Release()
			kv, vv := viewOf(b, keys), viewOf(b, vals)
			kc, err := testBackend.Upload(ctx, kv)
			if err != nil {
				b.Fatal(err)
			}
			defer kc.Free()
			vc, err := testBackend.Upload(ctx, vv)
			if err != nil {
				b.Fatal(err)
			}
			defer vc.Free()
			key := GroupKey{Column: kc, Groups: groups}
			got, err := testBackend.GroupResident(ctx, key, nil, []*DeviceColumn{vc}, 0)
			if err != nil {
				b.Fatal(err)
			}
			requireSameGroups(b, kv, nil, vv, 0, groups, cpuGroups(b, kv, nil, vv, 0, groups), got[0], "bench")
			b.SetBytes(kc.ByteSize() + vc.ByteSize())
			b.ResetTimer()
			for range b.N {
				if c.plan == "cold" {
					vc.scale = nil
				}
				if _, err := testBackend.GroupResident(ctx, key, nil, []*DeviceColumn{vc}, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchGroupColumns makes n int64 keys in [0, groups) and n values of typ:
// int64 (uniform over all 64 bits), int64-small (int64 uniform in [0,
// 1000)), int32 (uniform over all 32 bits) or float64 (normal, a standard
// deviation of 1000), filled in parallel, 5% of
// the values null when nulls is set (no nulls otherwise).
func benchGroupColumns(b *testing.B, n, groups int, typ string, nulls bool) (keys, vals arrow.Array) {
	kb, vb := memory.NewResizableBuffer(memory.DefaultAllocator), memory.NewResizableBuffer(memory.DefaultAllocator)
	defer kb.Release()
	defer vb.Release()
	width := 8
	if typ == "int32" {
		width = 4
	}
	kb.Resize(n * 8)
	vb.Resize(n * width)
	ks := column.Slice[int64](kb.Bytes())
	parts := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(p), 17))
			for i := n * p / parts; i < n*(p+1)/parts; i++ {
				ks[i] = int64(r.IntN(groups))
				switch typ {
				case "int64-small":
					column.Slice[uint64](vb.Bytes())[i] = uint64(r.IntN(1000))
				case "int32":
					column.Slice[uint32](vb.Bytes())[i] = r.Uint32()
				case "float64":
					column.Slice[float64](vb.Bytes())[i] = r.NormFloat64() * 1e3
				default:
					column.Slice[uint64](vb.Bytes())[i] = r.Uint64()
				}
			}
		}()
	}
	wg.Wait()
	kd := array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, kb}, nil, 0, 0)
	defer kd.Release()
	vt := map[string]arrow.DataType{"int64": arrow.PrimitiveTypes.Int64, "int64-small": arrow.PrimitiveTypes.Int64,
		"int32": arrow.PrimitiveTypes.Int32, "float64": arrow.PrimitiveTypes.Float64}[typ]
	var valid *memory.Buffer
	nullCount := 0
	if nulls {
		valid = memory.NewResizableBuffer(memory.DefaultAllocator)
		defer valid.Release()
		valid.Resize((n + 7) / 8)
		bits := valid.Bytes()
		clear(bits)
		r := rand.New(rand.NewPCG(5, 5))
		for i := range n {
			if r.IntN(20) == 0 {
				nullCount++
			} else {
				bits[i/8] |= 1 << (i % 8)
			}
		}
	}
	vd := array.NewData(vt, n, []*memory.Buffer{valid, vb}, nil, nullCount, 0)
	defer vd.Release()
	return array.MakeFromData(kd), array.MakeFromData(vd)
}

// TestGroupDevice groups through backend.GroupGPU, as the engine does:
// columns uploaded by UploadView, no selection, the key as its own value
// column for the groups' rows; and checks which kinds and aggregates the
// backend says it groups.
func TestGroupDevice(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(4, 4))
	var gg backend.GroupGPU = testBackend
	require.Equal(t, 4096, gg.GroupDomain(column.Float64, 1<<30))
	require.Equal(t, 4096, gg.GroupDomain(column.Int64, 1000))
	require.Equal(t, 1<<20, gg.GroupDomain(column.Int32, 1<<22))
	require.Equal(t, kernels.AggGroupWideMax, gg.GroupDomain(column.Uint64, 1<<40))
	require.Zero(t, gg.GroupDomain(column.Decimal128, 1<<20))
	require.True(t, gg.HandlesGroup(column.Uint8, column.Float64, agg.Default))
	require.True(t, gg.HandlesGroup(column.Int64, column.Int64, agg.Count))
	require.False(t, gg.HandlesGroup(column.Float64, column.Int64, agg.Default))
	require.False(t, gg.HandlesGroup(column.Int64, column.Decimal128, agg.Default))
	require.False(t, gg.HandlesGroup(column.Int64, column.Int64, agg.Default|agg.ArgMin))
	require.False(t, gg.HandlesGroup(column.Int64, column.Int64, agg.Stddev))

	const n, groups = 20_000, 300
	kv, vv, release := groupInputs(t, mem, r, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Float64, n, 0, groups)
	defer release()
	kc, err := gg.UploadView(ctx, kv)
	require.NoError(t, err)
	defer kc.Free()
	vc, err := gg.UploadView(ctx, vv)
	require.NoError(t, err)
	defer vc.Free()
	got, err := gg.GroupDevice(ctx, kc, 0, groups, nil, []backend.DeviceColumn{vc, kc}, agg.Default)
	require.NoError(t, err)
	require.Len(t, got, 2)
	requireSameGroups(t, kv, nil, vv, 0, groups, cpuGroups(t, kv, nil, vv, 0, groups), got[0], "values")
	requireSameGroups(t, kv, nil, kv, 0, groups, cpuGroups(t, kv, nil, kv, 0, groups), got[1], "keys")
}
