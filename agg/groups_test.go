package agg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
)

// The grouped update loops agree with the one State: group g's state is
// the merge of states of its values one by one.
func TestFoldAgainstStates(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, groups = 5000, 13
	vals := make([]int64, n)
	fvals := make([]float64, n)
	validity := make([]byte, n/8+1)
	rows := make([]int32, n)
	ids := make([]int32, n)
	for i := range n {
		vals[i] = r.Int64() >> uint(r.IntN(64))
		fvals[i] = float64(vals[i]) / 3
		if r.IntN(10) != 0 {
			validity[i/8] |= 1 << (i % 8)
		}
		rows[i] = int32(i)
		ids[i] = int32(r.IntN(groups))
	}
	for _, set := range []Set{Default, Count | Min, Sum, Default | Ordered} {
		gi, err := NewGroups(column.FamilySigned, set)
		require.NoError(t, err)
		gf, err := NewGroups(column.FamilyFloat, set)
		require.NoError(t, err)
		gi.Grow(groups)
		gf.Grow(groups)
		FoldSigned(gi, vals, validity, 0, rows, ids, 100)
		FoldFloat(gf, fvals, validity, 0, rows, ids, 100)
		for g := range int32(groups) {
			wi, wf := New(column.FamilySigned, set), New(column.FamilyFloat, set)
			for i := range n {
				if ids[i] != g {
					continue
				}
				if validity[i/8]>>(i%8)&1 == 0 {
					wi.AddNulls(1)
					wf.AddNulls(1)
					continue
				}
				si := Signed(1, 0, Int192From(vals[i]), vals[i], vals[i])
				sf := Float(1, 0, fvals[i], 0, 0, fvals[i], fvals[i])
				if set.Any(Ordered) {
					si.SetPositions(Positions{First: si.Min, Last: si.Min})
					sf.SetPositions(Positions{First: sf.Min, Last: sf.Min})
				}
				si.ShiftRows(100 + int64(i))
				sf.ShiftRows(100 + int64(i))
				wi.Merge(&si)
				wf.Merge(&sf)
			}
			got, gotf := gi.State(g), gf.State(g)
			checkFinal(t, set, wi.Finalize(set), got.Finalize(set))
			checkFinal(t, set, wf.Finalize(set), gotf.Finalize(set))
		}
	}
}

// checkFinal compares what a Final answers of set.
func checkFinal(t *testing.T, set Set, want, got Final) {
	t.Helper()
	require.Equal(t, want.Count, got.Count)
	require.Equal(t, want.NullCount, got.NullCount)
	if set.Any(Sum | Mean) {
		require.Equal(t, want.Sum, got.Sum)
		require.Equal(t, want.FloatSum, got.FloatSum)
	}
	if set.Any(Min | Max) {
		require.Equal(t, want.Min, got.Min)
		require.Equal(t, want.Max, got.Max)
	}
	if set.Any(Ordered) {
		require.Equal(t, [4]int64{want.FirstRow, want.LastRow, want.ArgMin, want.ArgMax}, [4]int64{got.FirstRow, got.LastRow, got.ArgMin, got.ArgMax})
		require.Equal(t, want.First, got.First)
		require.Equal(t, want.Last, got.Last)
	}
}

// BenchmarkFoldSigned folds int64 values into 10 groups, with no null or
// 5% of them.
func BenchmarkFoldSigned(b *testing.B) {
	for _, nulls := range []int{0, 20} {
		b.Run(fmt.Sprintf("nulls=%d%%", min(nulls, 1)*5), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			validity, rows, ids := foldBenchRows(r, nulls)
			vals := make([]int64, len(rows))
			for i := range vals {
				vals[i] = r.Int64() >> 20
			}
			g, _ := NewGroups(column.FamilySigned, Count|Sum|Min|Max)
			g.Grow(10)
			b.SetBytes(int64(len(rows)) * 8)
			for b.Loop() {
				FoldSigned(g, vals, validity, 0, rows, ids, 0)
			}
		})
	}
}

// foldBenchRows is the rows of a fold benchmark: 2^16 of them in 10
// groups, one in nulls null (0: none).
func foldBenchRows(r *rand.Rand, nulls int) (validity []byte, rows, ids []int32) {
	const n = 1 << 16
	validity, rows, ids = make([]byte, n/8), make([]int32, n), make([]int32, n)
	for i := range n {
		if nulls == 0 || r.IntN(nulls) != 0 {
			validity[i/8] |= byte(1) << (i % 8)
		}
		rows[i], ids[i] = int32(i), int32(r.IntN(10))
	}
	return validity, rows, ids
}

// The run accumulators (few groups, long runs: runFold) leave the same
// bytes in Groups as the loops over its arrays: short runs take those.
func TestFoldRunsSameBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n, groups = 20000, 37
	ivals := make([]int64, n)
	uvals := make([]uint32, n)
	nvals := make([]int32, n)  // (narrow signed: one word's sum)
	wvals := make([]uint64, n) // (wide unsigned: carries out of the low word)
	fvals := make([]float64, n)
	validity := make([]byte, n/8+1)
	rows := make([]int32, 0, n)
	ids := make([]int32, 0, n)
	special := []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), 0, math.MaxFloat64}
	for i := range n {
		ivals[i] = r.Int64() >> uint(r.IntN(64))
		if r.IntN(2) == 0 { // (some groups' sums negative)
			ivals[i] = -ivals[i]
		}
		uvals[i] = r.Uint32()
		nvals[i] = int32(ivals[i] >> 32)
		if r.IntN(50) == 0 {
			nvals[i] = []int32{math.MinInt32, math.MaxInt32}[r.IntN(2)]
		}
		wvals[i] = r.Uint64()
		fvals[i] = float64(ivals[i]) / 7
		if r.IntN(500) == 0 {
			fvals[i] = special[r.IntN(len(special))]
		}
		if r.IntN(10) != 0 {
			validity[i/8] |= 1 << (i % 8)
		}
		if r.IntN(5) != 0 { // a selection, not every row
			rows = append(rows, int32(i))
			ids = append(ids, int32(r.IntN(groups)))
		}
	}
	// Every row (contiguous rows: the validity read a word at a time),
	// from an unaligned row, and with the validity at a bit offset.
	all := make([]int32, n)
	allIDs := make([]int32, n)
	for i := range all {
		all[i], allIDs[i] = int32(i), int32(r.IntN(groups))
	}
	const voff = 3
	shifted := make([]byte, n/8+2)
	for i := range n {
		if validity[i/8]>>(i%8)&1 != 0 {
			shifted[(i+voff)/8] |= 1 << ((i + voff) % 8)
		}
	}
	cases := []struct {
		name      string
		rows, ids []int32
		validity  []byte
		voff      int
	}{
		{"selection", rows, ids, validity, 0},
		{"all", all, allIDs, validity, 0},
		{"from row 5", all[5:], allIDs[5:], validity, 0},
		{"validity at bit 3", all[9:], allIDs[9:], shifted, voff},
		{"no validity", all, allIDs, nil, 0},
	}
	kinds := []struct {
		name string
		f    column.Family
		fold func(g *Groups, validity []byte, voff int, rows, ids []int32)
	}{
		{"int64", column.FamilySigned, func(g *Groups, v []byte, o int, rs, is []int32) { FoldSigned(g, ivals, v, o, rs, is, 0) }},
		{"int32", column.FamilySigned, func(g *Groups, v []byte, o int, rs, is []int32) { FoldSigned(g, nvals, v, o, rs, is, 0) }},
		{"uint32", column.FamilyUnsigned, func(g *Groups, v []byte, o int, rs, is []int32) { FoldUnsigned(g, uvals, v, o, rs, is, 0) }},
		{"uint64", column.FamilyUnsigned, func(g *Groups, v []byte, o int, rs, is []int32) { FoldUnsigned(g, wvals, v, o, rs, is, 0) }},
		{"float64", column.FamilyFloat, func(g *Groups, v []byte, o int, rs, is []int32) { FoldFloat(g, fvals, v, o, rs, is, 0) }},
	}
	for _, c := range cases {
		require.True(t, runFold(len(c.rows), groups))
		fold := func(k int, set Set, short bool) *Groups {
			f := kinds[k].f
			g, err := NewGroups(f, set)
			require.NoError(t, err)
			g.Grow(groups)
			step := len(c.rows)
			if short {
				step = runRatio*groups - 1
				require.False(t, runFold(step, groups))
			}
			for lo := 0; lo < len(c.rows); lo += step {
				hi := min(lo+step, len(c.rows))
				kinds[k].fold(g, c.validity, c.voff, c.rows[lo:hi], c.ids[lo:hi])
			}
			return g
		}
		for k, kind := range kinds {
			for _, set := range []Set{Default, Count | Min, Sum, Count | Max} {
				runs, loops := fold(k, set, false), fold(k, set, true)
				// Floats by their bits (NaN is no NaN's equal), the rest as
				// they are.
				require.Equal(t, floatBits(loops), floatBits(runs), "%s: %s %v", c.name, kind.name, set)
				loops.fsum, loops.fcomp, loops.fspec = nil, nil, nil
				runs.fsum, runs.fcomp, runs.fspec = nil, nil, nil
				require.Equal(t, loops, runs, "%s: %s %v", c.name, kind.name, set)
			}
		}
	}
}

// floatBits is the bits of g's float sums.
func floatBits(g *Groups) [][]uint64 {
	var out [][]uint64
	for _, xs := range [][]float64{g.fsum, g.fcomp, g.fspec} {
		b := make([]uint64, len(xs))
		for i, x := range xs {
			b[i] = math.Float64bits(x)
		}
		out = append(out, b)
	}
	return out
}

func BenchmarkFoldFloat(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	validity, rows, ids := foldBenchRows(r, 20)
	vals := make([]float64, len(rows))
	for i := range vals {
		vals[i] = r.NormFloat64() * 1e6
	}
	g, _ := NewGroups(column.FamilyFloat, Count|Sum|Min|Max)
	g.Grow(10)
	b.SetBytes(int64(len(rows)) * 8)
	for b.Loop() {
		FoldFloat(g, vals, validity, 0, rows, ids, 0)
	}
}

// MergeGroup leaves the same bytes as MergeState of the other's State.
func TestMergeGroupAsMergeState(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n, groups = 3000, 11
	for _, f := range []column.Family{column.FamilySigned, column.FamilyUnsigned, column.FamilyFloat, column.FamilyBool} {
		for _, set := range []Set{Default, Count | Min, Sum, Default | Ordered} {
			fill := func() *Groups { return fillGroups(t, r, f, set, n, groups) }
			a, o := fill(), fill()
			b := fill()
			*b = *a
			for _, p := range []*[]int64{&b.count, &b.nulls, &b.firstRow, &b.lastRow, &b.minRow, &b.maxRow} {
				*p = slices.Clone(*p)
			}
			b.isum, b.fsum, b.fcomp, b.fspec = slices.Clone(a.isum), slices.Clone(a.fsum), slices.Clone(a.fcomp), slices.Clone(a.fspec)
			b.min, b.max, b.first, b.last, b.fnum = slices.Clone(a.min), slices.Clone(a.max), slices.Clone(a.first), slices.Clone(a.last), slices.Clone(a.fnum)
			for k := range int32(groups) {
				j := (k * 7) % groups
				require.NoError(t, a.MergeGroup(k, o, j))
				st := o.State(j)
				require.NoError(t, b.MergeState(k, &st))
			}
			require.Equal(t, floatBits(b), floatBits(a), "%v %v", f, set)
			a.fsum, a.fcomp, a.fspec, b.fsum, b.fcomp, b.fspec = nil, nil, nil, nil, nil, nil
			require.Equal(t, b, a, "%v %v", f, set)
		}
	}
}

// MergeInteger, given a group's words, merges as MergeState does its State;
// it refuses families and sets whose states are not those words.
func TestMergeIntegerAsMergeState(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const n, groups = 3000, 11
	for _, f := range []column.Family{column.FamilySigned, column.FamilyUnsigned, column.FamilyBool} {
		for _, set := range []Set{Default, Count | Min, Sum, Count} {
			a, o := fillGroups(t, r, f, set, n, groups), fillGroups(t, r, f, set, n, groups)
			b := fillGroups(t, r, f, set, 0, groups)
			c := fillGroups(t, r, f, set, 0, groups)
			for k := range int32(groups) {
				st := a.State(k)
				require.NoError(t, b.MergeState(k, &st))
				require.NoError(t, c.MergeState(k, &st))
			}
			for k := range int32(groups) {
				j := (k * 7) % groups
				st := o.State(j)
				require.NoError(t, b.MergeState(k, &st))
				require.NoError(t, c.MergeInteger(k, st.Count, st.NullCount, st.Sum, st.Min[0], st.Max[0]))
			}
			require.Equal(t, b, c, "%v %v", f, set)
		}
	}
	for _, f := range []column.Family{column.FamilyFloat, column.FamilyDecimal} {
		g := fillGroups(t, r, f, Default, 0, 2)
		require.Error(t, g.MergeInteger(0, 1, 0, Int192{1}, 1, 1), f.String())
	}
	g := fillGroups(t, r, column.FamilySigned, Default|Ordered, 0, 2)
	require.Error(t, g.MergeInteger(0, 1, 0, Int192{1}, 1, 1))
}

// MergeIntegers merges the words that fill gives as MergeInteger merges
// them group by group, the extremes of an empty state left out, on one
// goroutine and on several (more than a piece of 2^16 groups).
func TestMergeIntegers(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 1000, 200_000} {
		for _, f := range []column.Family{column.FamilySigned, column.FamilyUnsigned} {
			words := make([][5]uint64, n)
			for j := range words {
				if r.IntN(4) != 0 { // (else an empty group)
					words[j] = [5]uint64{r.Uint64N(100), r.Uint64N(10), r.Uint64(), r.Uint64(), r.Uint64()}
				}
			}
			at := func(j int) (int64, int64, Int192, uint64, uint64) {
				w := words[j]
				return int64(w[0]), int64(w[1]), Int192{w[2], w[3] & 1}, min(w[3], w[4]), max(w[3], w[4])
			}
			seed := r.Uint64()
			b := fillGroups(t, rand.New(rand.NewPCG(seed, 2)), f, Default, 300, n+1)
			for j := range n {
				c, nl, sum, lo, hi := at(j)
				require.NoError(t, b.MergeInteger(int32(j), c, nl, sum, lo, hi))
			}
			fill := func(j, k int, w *IntegerWords) {
				require.LessOrEqual(t, k, WordsBlock)
				for i := range k {
					w.Count[i], w.Nulls[i], w.Sum[i], w.Min[i], w.Max[i] = at(j + i)
					if w.Count[i] == 0 { // (extremes a device leaves: any)
						w.Min[i], w.Max[i] = 1<<63, 1<<63-1
					}
				}
			}
			m := fillGroups(t, rand.New(rand.NewPCG(seed, 2)), f, Default, 300, n+1)
			require.NoError(t, m.MergeIntegers(0, n, fill))
			for j := range int32(n + 1) {
				require.Equal(t, b.State(j), m.State(j), "%v n=%d group %d", f, n, j)
			}
			require.Error(t, m.MergeIntegers(0, n+2, fill))
			require.Error(t, m.MergeIntegers(2, n, fill))
		}
	}
	g := fillGroups(t, r, column.FamilyFloat, Default, 0, 1)
	require.Error(t, g.MergeIntegers(0, 1, func(int, int, *IntegerWords) {}))
}

// MergeFloats merges the partial states that fill gives as MergeState
// merges the same states, bit for bit: empty ones, infinities, NaN, signed
// zeros; on one goroutine and on several.
func TestMergeFloats(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	special := []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), 0, 1e308}
	value := func() float64 {
		if r.IntN(8) == 0 {
			return special[r.IntN(len(special))]
		}
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10))
	}
	for _, n := range []int{1, 1000, 200_000} {
		states := make([]State, n)
		for j := range states {
			s := New(column.FamilyFloat, Default)
			if r.IntN(4) != 0 { // (else an empty group)
				s.Count, s.NullCount = 1+r.Int64N(100), r.Int64N(10)
				s.FSum, s.FComp = value(), value()*1e-17
				if r.IntN(10) == 0 {
					s.FSpecial = special[r.IntN(3)]
				}
				lo, hi := value(), value()
				s.Min[0], s.Max[0] = math.Float64bits(min(lo, hi)), math.Float64bits(max(lo, hi))
			} else {
				s.NullCount = r.Int64N(3)
			}
			states[j] = s
		}
		seed := r.Uint64()
		b := fillGroups(t, rand.New(rand.NewPCG(seed, 1)), column.FamilyFloat, Default, 200, n+1)
		m := fillGroups(t, rand.New(rand.NewPCG(seed, 1)), column.FamilyFloat, Default, 200, n+1)
		for j := range int32(n) {
			require.NoError(t, b.MergeState(j, &states[j]))
		}
		fill := func(j, k int, w *FloatWords) {
			require.LessOrEqual(t, k, WordsBlock)
			for i := range k {
				s := &states[j+i]
				w.Count[i], w.Nulls[i], w.Sum[i], w.Comp[i], w.Spec[i] = s.Count, s.NullCount, s.FSum, s.FComp, s.FSpecial
				w.Min[i], w.Max[i] = math.Float64frombits(s.Min[0]), math.Float64frombits(s.Max[0])
				if s.Count == 0 { // (words a device leaves: any)
					w.Sum[i], w.Min[i], w.Max[i] = 7, -3, 3
				}
			}
		}
		require.NoError(t, m.MergeFloats(0, n, fill))
		for j := range int32(n + 1) {
			want, got := b.State(j), m.State(j)
			require.Equal(t, math.Float64bits(want.FSum), math.Float64bits(got.FSum), "n=%d group %d", n, j)
			require.Equal(t, math.Float64bits(want.FComp), math.Float64bits(got.FComp), "n=%d group %d", n, j)
			require.Equal(t, math.Float64bits(want.FSpecial), math.Float64bits(got.FSpecial), "n=%d group %d", n, j)
			require.Equal(t, want.Min, got.Min, "n=%d group %d", n, j)
			require.Equal(t, want.Max, got.Max, "n=%d group %d", n, j)
			require.Equal(t, [2]int64{want.Count, want.NullCount}, [2]int64{got.Count, got.NullCount}, "n=%d group %d", n, j)
		}
		require.Error(t, m.MergeFloats(0, n+2, fill))
	}
	g := fillGroups(t, r, column.FamilySigned, Default, 0, 1)
	require.Error(t, g.MergeFloats(0, 1, func(int, int, *FloatWords) {}))
}

// fillGroups is grouped states of family f for set, of groups groups (the
// last one empty), with n random values or nulls folded in row order:
// floats with an infinity, NaN or zero now and then, decimals of both
// signs, byte strings empty or not.
func fillGroups(t *testing.T, r *rand.Rand, f column.Family, set Set, n, groups int) *Groups {
	special := []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), 0}
	g, err := NewGroups(f, set)
	require.NoError(t, err)
	g.Grow(groups)
	for i := range n {
		id := int32(r.IntN(groups - 1)) // (the last group stays empty)
		if r.IntN(8) == 0 {
			g.AddNull(id)
			continue
		}
		x := r.Int64() >> uint(r.IntN(64))
		switch f {
		case column.FamilySigned:
			g.AddSigned(id, -x, int64(i))
		case column.FamilyUnsigned:
			g.AddUnsigned(id, uint64(x), int64(i))
		case column.FamilyFloat:
			v := float64(x) / 3
			if r.IntN(200) == 0 {
				v = special[r.IntN(len(special))]
			}
			g.AddFloat(id, v, int64(i))
		case column.FamilyDecimal:
			g.AddDecimal(id, uint64(x), uint64(-(x & 1)), int64(i))
		case column.FamilyBytes:
			g.AddBytes(id, []byte("v")[:r.IntN(2)], int64(i)) // (empty strings too)
		default:
			g.AddBool(id, x&1 == 1, int64(i))
		}
	}
	return g
}

// GatherStates gives each group's State, for groups of several Groups in
// any order, every family and aggregate set (empty groups among them).
func TestGatherStates(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, f := range []column.Family{column.FamilySigned, column.FamilyUnsigned, column.FamilyFloat, column.FamilyDecimal, column.FamilyBytes, column.FamilyBool} {
		for _, set := range []Set{Default, Count | Min, Sum, Count, Default | Ordered} {
			parts := []*Groups{fillGroups(t, r, f, set, 500, 17), fillGroups(t, r, f, set, 300, 9), fillGroups(t, r, f, set, 0, 3)}
			var gs []*Groups
			var idx []int32
			for range 200 {
				p := parts[r.IntN(len(parts))]
				gs = append(gs, p)
				idx = append(idx, int32(r.IntN(p.Len())))
			}
			out := make([]State, len(idx))
			GatherStates(gs, idx, out)
			for j := range idx {
				// (as printed: NaN sums compare equal, -0 and 0 do not)
				require.Equal(t, fmt.Sprintf("%#v", gs[j].State(idx[j])), fmt.Sprintf("%#v", out[j]), "%s %s: group %d", f, set, idx[j])
			}
		}
	}
}

// TestGroupsLarge grows groups past column.ArenaMinBytes (their arrays then
// in mappings, grown in place) a batch at a time, folding values as they
// come: every group's state is what its values make, Release empties the
// groups, and they grow again.
func TestGroupsLarge(t *testing.T) {
	const groups = 3 * column.ArenaMinBytes / 16 // (the extremes' arrays: 16 bytes a group)
	for _, fam := range []column.Family{column.FamilySigned, column.FamilyFloat} {
		g, err := NewGroups(fam, Default|Ordered)
		require.NoError(t, err)
		for round := range 2 {
			for lo := 0; lo < groups; {
				n := min(groups-lo, 1+lo/3)
				g.Grow(n)
				vals := make([]int64, 2*n)
				fvals := make([]float64, 2*n)
				rows := make([]int32, 2*n)
				ids := make([]int32, 2*n)
				for k := range 2 * n {
					id := lo + k/2
					vals[k] = int64(id)*int64(1+k%2) - 7
					fvals[k] = float64(vals[k]) / 4
					rows[k], ids[k] = int32(k), int32(id)
				}
				if fam == column.FamilyFloat {
					FoldFloat(g, fvals, nil, 0, rows, ids, int64(2*lo))
				} else {
					FoldSigned(g, vals, nil, 0, rows, ids, int64(2*lo))
				}
				lo += n
			}
			require.Equal(t, groups, g.Len())
			for _, id := range []int{0, 1, groups / 3, groups - 1} {
				x, y := int64(id)-7, 2*int64(id)-7
				want := New(fam, Default|Ordered)
				for k, v := range []int64{x, y} {
					one := Signed(1, 0, Int192From(v), v, v)
					if fam == column.FamilyFloat {
						f := float64(v) / 4
						one = Float(1, 0, f, 0, 0, f, f)
					}
					one.SetPositions(Positions{First: one.Min, Last: one.Min})
					one.ShiftRows(int64(2*id + k))
					want.Merge(&one)
				}
				got := g.State(int32(id))
				require.Equal(t, int64(2), got.Count, "%s round %d group %d", fam, round, id)
				checkFinal(t, Default|Ordered, want.Finalize(Default|Ordered), got.Finalize(Default|Ordered))
			}
			require.Positive(t, g.Bytes())
			g.Release()
			require.Zero(t, g.Len())
		}
	}
}
