package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// groupKinds are the value kinds with a grouped kernel.
var groupKinds = []column.Kind{column.Int8, column.Int16, column.Int32, column.Int64, column.Uint8, column.Uint16,
	column.Uint32, column.Uint64, column.Float32, column.Float64}

// TestGroupWindow checks that a window of groups is the most whose table
// fits the grouped kernels' shared memory, and that the kinds without a
// grouped kernel have none.
func TestGroupWindow(t *testing.T) {
	for _, k := range groupKinds {
		for _, shared := range []int{0, AggGroupSharedBytes, 100_000, 227 << 10} {
			w, room := GroupWindow(k, shared), max(shared, AggGroupSharedBytes)
			require.LessOrEqual(t, GroupSharedBytes(k, w), room, k)
			require.Greater(t, GroupSharedBytes(k, w+1), room, k)
		}
		require.Equal(t, "arrowagg_group_"+k.String(), GroupKernel(k))
	}
	require.Equal(t, 1177, GroupWindow(column.Int64, 0))
	require.Equal(t, 433, GroupWindow(column.Float64, AggGroupSharedBytes))
	require.Equal(t, 2500, GroupWindow(column.Int32, 100_000))
	// Float windows of few groups have a table per warp and a staged step
	// per warp (group.cuh's FloatWarpTable), within the shared memory.
	warps := AggBlockThreads / AggWarpThreads
	require.Equal(t, warps*10*AggGroupFloatEntryBytes+AggBlockThreads*12, GroupSharedBytes(column.Float64, 10))
	for w := 1; w <= AggGroupFloatWarpGroups; w++ {
		require.LessOrEqual(t, GroupSharedBytes(column.Float32, w), AggGroupSharedBytes, w)
	}
	require.Equal(t, AggGroupFloatStageBytes+(AggGroupFloatWarpGroups+1)*AggGroupFloatEntryBytes,
		GroupSharedBytes(column.Float64, AggGroupFloatWarpGroups+1))
	// Integer tables of few groups have a copy a lane; of many, one.
	require.Equal(t, 32, GroupReplicas(11))
	require.Equal(t, 11*32*AggGroupIntEntryBytes, GroupSharedBytes(column.Int8, 11))
	require.Equal(t, 1, GroupReplicas(1001))
	require.Equal(t, 2, GroupReplicas(500))
	for w := 1; w <= GroupWindow(column.Int64, 0); w++ {
		r := GroupReplicas(w)
		require.LessOrEqual(t, GroupSharedBytes(column.Int64, w), AggGroupSharedBytes, w)
		require.True(t, r == AggWarpThreads || w*2*r*AggGroupIntEntryBytes > AggGroupSharedBytes, w)
	}
	for _, k := range []column.Kind{column.Bool, column.Decimal128, column.Binary} {
		require.Empty(t, GroupKernel(k), k)
		require.Zero(t, GroupWords(k), k)
		require.False(t, GroupKeyKind(k), k)
	}
	require.True(t, GroupKeyKind(column.Uint8))
	require.True(t, GroupKeyKind(column.Int64))
}

// TestGroupState decodes a group's words: the family's state, then the
// group's rows, whose invalid values are the state's nulls.
func TestGroupState(t *testing.T) {
	minus7 := uint64(math.MaxUint64 - 6)
	w := []uint64{minus7, math.MaxUint64, uint64(0xfffffffffffffffb), 1, 3, 5} // sum -7, min -5, max 1, count 3, rows 5
	require.Len(t, w, GroupWords(column.Int64))
	require.Equal(t, agg.Signed(3, 2, agg.Int192From(-7), -5, 1), GroupState(column.Int64, w))

	w = []uint64{10, 1, 2, 40, 2, 2} // 2^64 + 10, count 2, rows 2
	require.Equal(t, agg.Unsigned(2, 0, agg.Int192{10, 1, 0}, 2, 40), GroupState(column.Uint32, w))

	// A group of rows with no valid value: its rows are nulls.
	f := []uint64{0, 0, 0, uint64(0x7ff0000000000000), 0x800fffffffffffff, 0, 4}
	require.Len(t, f, GroupWords(column.Float64))
	got := GroupState(column.Float64, f)
	require.Equal(t, int64(0), got.Count)
	require.Equal(t, int64(4), got.NullCount)
}

// TestGroupLaunchWindow: the windows of a domain's launches, on a device
// that lets kernels opt in to more shared memory (an H100's 227 KiB a block
// and 228 KiB a multiprocessor) and on one that does not.
func TestGroupLaunchWindow(t *testing.T) {
	const optin, perSM = 227 << 10, 228 << 10
	for _, c := range []struct {
		k                    column.Kind
		domain, optin, perSM int
		want                 int
	}{
		{column.Float64, 1001, optin, perSM, 1001}, // one launch where 47 KiB took three
		{column.Float64, 1001, 48 << 10, 64 << 10, 334},
		{column.Float64, 4097, optin, perSM, 1366}, // three even launches of at most 1752
		{column.Float32, 11, optin, perSM, 11},
		{column.Int64, 4097, optin, perSM, 2049},
		{column.Int64, 4097, 48 << 10, 96 << 10, 1025},
		{column.Uint8, 257, optin, perSM, 257},
	} {
		w := GroupLaunchWindow(c.k, c.domain, c.optin, c.perSM)
		require.Equal(t, c.want, w, "%s, %d groups, %d and %d bytes", c.k, c.domain, c.optin, c.perSM)
		require.LessOrEqual(t, GroupSharedBytes(c.k, w), max(AggGroupSharedBytes, min(c.optin, c.perSM/2-groupBlockReserve)))
	}
}

// TestPlanGroupLaunch: float values of a domain whose tables per thread fit
// two blocks of the multiprocessor are one launch of the kernel with a
// table per thread; others, and every integer kind, are GroupLaunchWindow's.
func TestPlanGroupLaunch(t *testing.T) {
	const optin, perSM = 227 << 10, 228 << 10
	require.Equal(t, 25, GroupThreadsWindow(perSM/2-groupBlockReserve))
	for _, c := range []struct {
		k                    column.Kind
		domain, optin, perSM int
		threads              bool
	}{
		{column.Float64, 11, optin, perSM, true},
		{column.Float32, 1, optin, perSM, true},
		{column.Float64, 25, optin, perSM, true},
		{column.Float64, 26, optin, perSM, false},
		{column.Float64, 1001, optin, perSM, false},
		{column.Float32, 4097, optin, perSM, false},
		{column.Float64, 11, 48 << 10, 64 << 10, false}, // 48 KiB of tables per thread: too many for two blocks of that device
		{column.Float64, 4, 48 << 10, 64 << 10, true},
		{column.Float64, 700, 48 << 10, 64 << 10, false},
		{column.Int64, 11, optin, perSM, false},
	} {
		l := PlanGroupLaunch(c.k, c.domain, c.optin, c.perSM)
		require.Equal(t, c.threads, l.Threads, "%s, %d groups", c.k, c.domain)
		// Floats other than the threads' are the exact kernels', in the
		// fewest windows of equal size whose tables leave two blocks a
		// multiprocessor (one copy past AggGroupSharedBytes).
		require.Equal(t, !c.threads && c.k.Family() == column.FamilyFloat, l.Exact, "%s, %d groups", c.k, c.domain)
		if l.Exact {
			shared := min(c.optin, c.perSM/2-groupBlockReserve)
			require.Equal(t, "arrowagg_group_exact_"+c.k.String(), l.Kernel)
			require.Equal(t, "arrowagg_float_scale_"+c.k.String(), l.Scale)
			require.LessOrEqual(t, l.Window*(AggGroupExactEntryBytes+8)+8, shared, "one copy of the table fits")
			require.LessOrEqual(t, l.SharedBytes(l.Window), max(shared, AggGroupSharedBytes), "so do its copies")
			launches := (c.domain + l.Window - 1) / l.Window
			require.Less(t, GroupExactWindow(shared)*(launches-1), c.domain, "fewer launches would do")
			require.Less(t, c.domain-launches*l.Window, 1, "the windows cover the domain")
			require.Less(t, launches*l.Window-c.domain, launches, "the windows are even")
			if l.Window*AggGroupExactEntryBytes+8*l.Window+8 > AggGroupSharedBytes {
				require.Equal(t, 1, GroupExactReplicas(l.Window))
			}
			continue
		}
		if c.threads {
			require.Equal(t, "arrowagg_group_threads_"+c.k.String(), l.Kernel)
			require.Equal(t, c.domain, l.Window)
			require.Equal(t, c.domain*(AggBlockThreads*AggGroupFloatThreadEntryBytes+8+AggGroupFloatThreadCopies*AggGroupFloatThreadSharedBytes),
				l.SharedBytes(c.domain))
			require.LessOrEqual(t, l.SharedBytes(l.Window), min(c.optin, c.perSM/2-groupBlockReserve))
			continue
		}
		require.Equal(t, GroupKernel(c.k), l.Kernel)
		require.Equal(t, GroupLaunchWindow(c.k, c.domain, c.optin, c.perSM), l.Window)
		require.Equal(t, GroupSharedBytes(c.k, l.Window), l.SharedBytes(l.Window))
	}
}

// ExactScaleFits is group.cuh's ExactScale: a column's values fit the
// exact kernels' limbs when their lowest set bits are at most 160 - 1
// binary places below the power of two above the largest.
func TestExactScaleFits(t *testing.T) {
	code := func(lowest int) uint32 { return uint32(1100 - lowest) }
	require.True(t, ExactScaleFits(0, 0))                   // no nonzero value
	require.True(t, ExactScaleFits(1023, code(0)))          // 1: below 2^1
	require.True(t, ExactScaleFits(1023, code(1-160)))      // 1 beside 2^-159
	require.False(t, ExactScaleFits(1023, code(1-161)))     // 1 beside 2^-160
	require.True(t, ExactScaleFits(2046, code(1024-160)))   // the largest doubles
	require.False(t, ExactScaleFits(2046, code(0)))         // 1e308 beside 1
	require.True(t, ExactScaleFits(0, code(-1074)))         // subnormals only: below 2^-1022
	require.True(t, ExactScaleFits(1, code(-1074)))         // the smallest normals beside them
	require.False(t, ExactScaleFits(1023+120, code(-1074))) // 2^120 beside the smallest subnormal
}

// TestMergeGroupWords: a grouped kernel's words of a window of groups
// merge into the groups as GroupState and MergeState merge them, for every
// family of the grouped kernels, with groups of no valid value and no rows.
func TestMergeGroupWords(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const groups, first, p = 40, 7, 30
	for _, k := range []column.Kind{column.Int64, column.Int8, column.Uint64, column.Uint16, column.Float64} {
		words := GroupWords(k)
		w := make([]uint64, words*p+1)
		for j := range p {
			v := w[j*words : (j+1)*words]
			for i := range v {
				v[i] = r.Uint64()
			}
			rows := r.Uint64N(1000)
			count := rows - min(rows, r.Uint64N(5))
			switch r.IntN(4) {
			case 0:
				rows, count = 0, 0
			case 1:
				count = 0
			}
			if k.Family() == column.FamilyFloat {
				v[0], v[1], v[2] = math.Float64bits(r.NormFloat64()), math.Float64bits(r.NormFloat64()*1e-20), 0
				switch r.IntN(6) { // the special sum of non-finite values
				case 0:
					v[2] = math.Float64bits(math.Inf(1))
				case 1:
					v[2] = math.Float64bits(math.Inf(-1))
				}
			} else {
				v[2], v[3] = min(v[2], v[3]), max(v[2], v[3])
			}
			if count == 0 {
				for i := range v[:words-1] {
					v[i] = 0
				}
			}
			v[words-2], v[words-1] = count, rows
		}
		set := agg.Count | agg.Sum | agg.Min | agg.Max
		want, err := agg.NewGroups(k.Family(), set)
		require.NoError(t, err)
		want.Grow(groups)
		got, err := agg.NewGroups(k.Family(), set)
		require.NoError(t, err)
		got.Grow(groups)
		for range 2 { // (onto states already merged once)
			for j := range p {
				s := GroupState(k, w[j*words:(j+1)*words])
				require.NoError(t, want.MergeState(int32(first+j), &s))
			}
			require.NoError(t, MergeGroupWords(k, first, p, w, got))
		}
		for j := range int32(groups) {
			require.Equal(t, want.State(j), got.State(j), "%s group %d", k, j)
		}
		require.Error(t, MergeGroupWords(k, groups-p+1, p, w, got))
		require.Error(t, MergeGroupWords(k, first, p, w[:words*p-1], got))
	}
}

// TestMergeWide: a wide kernel's table (group.cuh's layout, filled here as
// the kernel fills it: sums of 32-bit halves, extremes as order keys, rows
// and counts as 32-bit words) merges into the states the CPU's grouped
// loops give the same rows; small domains on one goroutine, large ones on
// several.
func TestMergeWide(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 3))
	for _, c := range []struct {
		kind     column.Kind
		groups   int
		allValid bool
	}{{column.Int64, 5000, false}, {column.Uint64, 5000, true}, {column.Int32, 70_000, false}, {column.Uint8, 70_000, true}} {
		d := c.groups + 1
		tab := make([]uint64, GroupWideWords(c.groups))
		require.Len(t, tab, 5*d+1)
		add32 := func(i int) { tab[4*d+i/2] += 1 << (32 * (i % 2)) }
		// add is the kernel's fold of word u of a value (neg: negative)
		// into group g's sum and rows (group.cuh's WideTable).
		add := func(g int, u uint64, neg bool) {
			row := uint64(1) << 32
			old := tab[g]
			tab[g] += u
			if tab[g] < old {
				row++
			}
			if neg {
				row--
			}
			tab[d+g] += row
		}
		want, err := agg.NewGroups(c.kind.Family(), agg.Default)
		require.NoError(t, err)
		want.Grow(d)
		signed := c.kind.Family() == column.FamilySigned
		for row := range 4 * d {
			g := r.IntN(d)
			if r.IntN(5) == 0 {
				g = r.IntN(20) // some groups of many rows
			}
			if !c.allValid && r.IntN(10) == 0 {
				tab[d+g] += 1 << 32
				want.AddNull(int32(g))
				continue
			}
			if !c.allValid {
				add32(g)
			}
			u := r.Uint64()
			switch c.kind {
			case column.Int32:
				u = uint64(int64(int32(u)))
			case column.Uint8:
				u &= 0xff
			}
			add(g, u, signed && int64(u) < 0)
			key := u
			if signed {
				key ^= 1 << 63
				want.AddSigned(int32(g), int64(u), int64(row))
			} else {
				want.AddUnsigned(int32(g), u, int64(row))
			}
			tab[2*d+2*g] = max(tab[2*d+2*g], ^key)
			tab[2*d+2*g+1] = max(tab[2*d+2*g+1], key)
		}
		tab[5*d] = 3
		for _, grown := range []bool{false, true} { // groups added by the merge, or there before
			got, err := agg.NewGroups(c.kind.Family(), agg.Default)
			require.NoError(t, err)
			if grown {
				got.Grow(d)
			}
			bad, err := MergeWide(c.kind, c.groups, tab, c.allValid, got)
			require.NoError(t, err)
			require.Equal(t, uint64(3), bad)
			require.Equal(t, d, got.Len())
			for i := range int32(d) {
				require.Equal(t, want.State(i), got.State(i), "%s group %d", c.kind, i)
			}
			_, err = MergeWide(c.kind, c.groups+1, tab, c.allValid, got)
			require.Error(t, err)
		}
	}
	require.Equal(t, "", GroupWideKernel(column.Float64))
	require.Equal(t, AggGroupMax, GroupDomain(column.Float32))
	require.Equal(t, AggGroupWideMax, GroupDomain(column.Int16))
	require.Equal(t, uint64(GroupWideSum|GroupWideExtremes), GroupWideFlags(agg.Tracking(agg.Default)))
	require.Equal(t, uint64(0), GroupWideFlags(agg.Tracking(agg.Count)))
}

// BenchmarkMergeWide merges a wide kernel's table of a million int64 groups
// (every group with rows) into groups grown before the timer, as the CUDA
// backend's groupWide does once the kernel is done (it grows them while the
// kernel runs).
func BenchmarkMergeWide(b *testing.B) {
	const groups = 1_000_000
	d := groups + 1
	r := rand.New(rand.NewPCG(4, 5))
	tab := make([]uint64, GroupWideWords(groups))
	for g := range d {
		rows := uint64(1 + r.IntN(200))
		tab[4*d+g/2] += rows << (32 * (g % 2))
		tab[g] = rows * uint64(r.Uint32())
		tab[d+g] = uint64(r.IntN(1 << 20))
		tab[2*d+2*g], tab[2*d+2*g+1] = r.Uint64(), r.Uint64()
	}
	b.SetBytes(int64(len(tab)) * 8)
	for range b.N {
		b.StopTimer()
		g, err := agg.NewGroups(column.Int64.Family(), agg.Default)
		if err != nil {
			b.Fatal(err)
		}
		g.Grow(d)
		b.StartTimer()
		if _, err := MergeWide(column.Int64, groups, tab, true, g); err != nil {
			b.Fatal(err)
		}
	}
}
