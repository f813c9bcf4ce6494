package agg

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/arrowagg/arrowagg/column"
)

// Groups is the partial state of one column in many groups (GROUP BY): a
// State per group, laid out field by field so that a grouped update loop
// touches only what the aggregates need. It is State's grouped form, not a
// second definition: group g is State(g), a State like any other, and
// MergeState merges with State.Merge. The Add methods fold one value of a
// row into a group as an update loop folds a run of them; rows of one group
// must come in increasing order (the ordered aggregates keep the first
// occurrence), which the engine's partitioned grouping guarantees.
//
// Groups answers the aggregates of Tracking(set) but the statistics
// (stddev, variance, approx_distinct): NewGroups refuses them. It is not
// safe for concurrent use.
type Groups struct {
	fam    column.Family
	tracks Set
	sum    bool // tracks Sum (and Mean)
	ext    bool // tracks Min and Max
	ord    bool // tracks the ordered aggregates

	count, nulls []int64
	isum         []Int192    // signed, unsigned, decimal sums; booleans' trues
	fsum, fcomp  []float64   // floats: compensated sums
	fspec        []float64   // floats: non-finite sums
	min, max     [][2]uint64 // State's Min/Max encoding
	bmin, bmax   [][]byte

	// fnum, for floats with the ordered aggregates: whether the group has
	// seen a number (not NaN), which only the first NaN's rows stand for
	// until then (arg_min and arg_max of NaNs alone are the first NaN).
	fnum []bool

	firstRow, lastRow, minRow, maxRow []int64
	first, last                       [][2]uint64
	bfirst, blast                     [][]byte

	// arena holds the arrays of fixed-size fields once they are large
	// (column.Arena: grown in place); it is freed by Release, or when g
	// is collected.
	arena *column.Arena
}

// GroupsUnsupported are the aggregates that grouped states do not answer.
const GroupsUnsupported = Moments | ApproxDistinct

// NewGroups returns the empty grouped state of family f for the aggregates
// of set (Normalize: the default when empty), with no group.
func NewGroups(f column.Family, set Set) (*Groups, error) {
	set = Normalize(set)
	if set.Any(GroupsUnsupported) {
		return nil, fmt.Errorf("%s: unsupported in grouped aggregation", (set & GroupsUnsupported).String())
	}
	t := Tracking(set) & Answers(f)
	g := &Groups{fam: f, tracks: t, ord: t.Any(Ordered), arena: new(column.Arena)}
	runtime.AddCleanup(g, (*column.Arena).Free, g.arena)
	// Booleans keep their trues whatever is asked: their extremes are read
	// from them (State.BoolExtreme).
	g.sum = (t.Any(Sum) || f == column.FamilyBool) && f != column.FamilyBytes && f != column.FamilyCounts
	g.ext = t.Any(Min|Max) && f != column.FamilyBool && f != column.FamilyCounts
	return g, nil
}

// Family is the family of the column.
func (g *Groups) Family() column.Family { return g.fam }

// Tracks is what the groups' states track (State.Tracks).
func (g *Groups) Tracks() Set { return g.tracks }

// Len is the number of groups.
func (g *Groups) Len() int { return len(g.count) }

// Grow adds n empty groups (the identity state), numbered from Len. Many
// groups at once (a device's grouped table) are filled by several
// goroutines, each its own range: the first writes of fresh pages are most
// of the time, and they fault in parallel.
func (g *Groups) Grow(n int) {
	if n <= 0 {
		return
	}
	g.Reserve(n) // (room for all at once, growing by half)
	l := len(g.count)
	g.resize(l + n)
	inPieces(n, func(lo, hi int) { g.identity(l+lo, l+hi) })
}

// resize sets the length of every array g keeps to n, within their
// capacity (Reserve).
func (g *Groups) resize(n int) {
	g.count, g.nulls = g.count[:n], g.nulls[:n]
	if g.sum && g.fam == column.FamilyFloat {
		g.fsum, g.fcomp, g.fspec = g.fsum[:n], g.fcomp[:n], g.fspec[:n]
	} else if g.sum {
		g.isum = g.isum[:n]
	}
	if g.ext {
		g.min, g.max = g.min[:n], g.max[:n]
		if g.fam == column.FamilyBytes {
			g.bmin, g.bmax = g.bmin[:n], g.bmax[:n]
		}
	}
	if g.ord {
		g.firstRow, g.lastRow, g.minRow, g.maxRow = g.firstRow[:n], g.lastRow[:n], g.minRow[:n], g.maxRow[:n]
		g.first, g.last = g.first[:n], g.last[:n]
		if g.fam == column.FamilyBytes {
			g.bfirst, g.blast = g.bfirst[:n], g.blast[:n]
		}
		if g.fam == column.FamilyFloat {
			g.fnum = g.fnum[:n]
		}
	}
}

// identity sets groups [lo, hi) to the identity state.
func (g *Groups) identity(lo, hi int) {
	clear(g.count[lo:hi])
	clear(g.nulls[lo:hi])
	if g.sum && g.fam == column.FamilyFloat {
		clear(g.fsum[lo:hi])
		clear(g.fcomp[lo:hi])
		clear(g.fspec[lo:hi])
	} else if g.sum {
		clear(g.isum[lo:hi])
	}
	if g.ext {
		idMin, idMax := identityExtremes(g.fam)
		fill(g.min[lo:hi], idMin)
		fill(g.max[lo:hi], idMax)
		if g.fam == column.FamilyBytes {
			clear(g.bmin[lo:hi])
			clear(g.bmax[lo:hi])
		}
	}
	if g.ord {
		fill(g.firstRow[lo:hi], -1)
		fill(g.lastRow[lo:hi], -1)
		fill(g.minRow[lo:hi], -1)
		fill(g.maxRow[lo:hi], -1)
		clear(g.first[lo:hi])
		clear(g.last[lo:hi])
		if g.fam == column.FamilyBytes {
			clear(g.bfirst[lo:hi])
			clear(g.blast[lo:hi])
		}
		if g.fam == column.FamilyFloat {
			clear(g.fnum[lo:hi])
		}
	}
}

// fill sets every element of s to v.
func fill[E any](s []E, v E) {
	for i := range s {
		s[i] = v
	}
}

// Reserve makes room for n more groups, so that the next n added grow no
// array. An array that must grow grows by half at least (append's growth,
// a quarter at a time for large slices, copied the groups of millions of
// groups about five times over; by half, about three times, with at most
// a third of the capacity unused); a large array of fixed-size fields
// grows in place, in g's arena (column.Grow), without a copy.
func (g *Groups) Reserve(n int) {
	a := g.arena
	g.count, g.nulls = column.Grow(a, g.count, n), column.Grow(a, g.nulls, n)
	if g.sum && g.fam == column.FamilyFloat {
		g.fsum, g.fcomp, g.fspec = column.Grow(a, g.fsum, n), column.Grow(a, g.fcomp, n), column.Grow(a, g.fspec, n)
	} else if g.sum {
		g.isum = column.Grow(a, g.isum, n)
	}
	if g.ext {
		g.min, g.max = column.Grow(a, g.min, n), column.Grow(a, g.max, n)
		if g.fam == column.FamilyBytes {
			g.bmin, g.bmax = reserve(g.bmin, n), reserve(g.bmax, n)
		}
	}
	if g.ord {
		g.firstRow, g.lastRow = column.Grow(a, g.firstRow, n), column.Grow(a, g.lastRow, n)
		g.minRow, g.maxRow = column.Grow(a, g.minRow, n), column.Grow(a, g.maxRow, n)
		g.first, g.last = column.Grow(a, g.first, n), column.Grow(a, g.last, n)
		if g.fam == column.FamilyBytes {
			g.bfirst, g.blast = reserve(g.bfirst, n), reserve(g.blast, n)
		}
		if g.fam == column.FamilyFloat {
			g.fnum = column.Grow(a, g.fnum, n)
		}
	}
}

// Release empties g (no group) and frees its arrays now, rather than when
// g is collected. No array of g's may be in use.
func (g *Groups) Release() {
	*g = Groups{fam: g.fam, tracks: g.tracks, sum: g.sum, ext: g.ext, ord: g.ord, arena: g.arena}
	if g.arena != nil {
		g.arena.Free()
	}
}

// reserve is slices.Grow(s, n), growing s to at least one and a half
// times its capacity when it grows: the arrays of byte strings, which an
// arena does not hold.
func reserve[S ~[]E, E any](s S, n int) S {
	if n <= cap(s)-len(s) {
		return s
	}
	return slices.Grow(s, max(n, cap(s)+cap(s)/2-len(s)))
}

// AddNull counts a null of group i.
func (g *Groups) AddNull(i int32) { g.nulls[i]++ }

// AddCount counts a valid value of group i whose value is not read (the
// counts family).
func (g *Groups) AddCount(i int32) { g.count[i]++ }

// seen marks the first and last rows of a valid value of group i; first
// reports whether it is the group's first.
func (g *Groups) seen(i int32, enc [2]uint64, row int64) {
	if g.firstRow[i] < 0 {
		g.firstRow[i], g.first[i] = row, enc
	}
	g.lastRow[i], g.last[i] = row, enc
}

// AddSigned folds the signed value x of row row into group i.
func (g *Groups) AddSigned(i int32, x int64, row int64) {
	n := g.count[i]
	g.count[i] = n + 1
	if g.sum {
		g.isum[i] = g.isum[i].Add(Int192From(x))
	}
	if !g.ext {
		return
	}
	if n == 0 || x < int64(g.min[i][0]) {
		g.min[i][0] = uint64(x)
		if g.ord {
			g.minRow[i] = row
		}
	}
	if n == 0 || x > int64(g.max[i][0]) {
		g.max[i][0] = uint64(x)
		if g.ord {
			g.maxRow[i] = row
		}
	}
	if g.ord {
		g.seen(i, [2]uint64{uint64(x)}, row)
	}
}

// AddUnsigned folds the unsigned value x of row row into group i.
func (g *Groups) AddUnsigned(i int32, x uint64, row int64) {
	n := g.count[i]
	g.count[i] = n + 1
	if g.sum {
		g.isum[i] = g.isum[i].Add(Int192FromUint(x))
	}
	if !g.ext {
		return
	}
	if n == 0 || x < g.min[i][0] {
		g.min[i][0] = x
		if g.ord {
			g.minRow[i] = row
		}
	}
	if n == 0 || x > g.max[i][0] {
		g.max[i][0] = x
		if g.ord {
			g.maxRow[i] = row
		}
	}
	if g.ord {
		g.seen(i, [2]uint64{x}, row)
	}
}

// AddFloat folds the float x of row row into group i: a compensated sum
// (the non-finite values apart, as State keeps them), extremes without NaN
// and -0 < +0.
func (g *Groups) AddFloat(i int32, x float64, row int64) {
	g.count[i]++
	if g.sum {
		addPair(&g.fsum[i], &g.fcomp[i], &g.fspec[i], x, 0)
	}
	if !g.ext {
		return
	}
	if g.ord {
		g.floatRows(i, x, row)
		return
	}
	if x == x { // not NaN
		g.min[i][0] = math.Float64bits(FloatMin(math.Float64frombits(g.min[i][0]), x))
		g.max[i][0] = math.Float64bits(FloatMax(math.Float64frombits(g.max[i][0]), x))
	}
}

// floatRows folds the float x of row row into group i's extremes and
// ordered aggregates.
func (g *Groups) floatRows(i int32, x float64, row int64) {
	g.seen(i, [2]uint64{math.Float64bits(x)}, row)
	if x != x {
		if !g.fnum[i] && g.minRow[i] < 0 {
			g.minRow[i], g.maxRow[i] = row, row
		}
		return
	}
	lo, hi := math.Float64frombits(g.min[i][0]), math.Float64frombits(g.max[i][0])
	first := !g.fnum[i]
	g.fnum[i] = true
	if first || x < lo || (x == lo && math.Signbit(x) && !math.Signbit(lo)) {
		g.min[i][0], g.minRow[i] = math.Float64bits(x), row
	}
	if first || x > hi || (x == hi && !math.Signbit(x) && math.Signbit(hi)) {
		g.max[i][0], g.maxRow[i] = math.Float64bits(x), row
	}
}

// AddDecimal folds the decimal128 value {lo, hi} (unscaled) of row row into
// group i.
func (g *Groups) AddDecimal(i int32, lo, hi uint64, row int64) {
	n := g.count[i]
	g.count[i] = n + 1
	if g.sum {
		g.isum[i] = g.isum[i].Add(Int192From128(lo, int64(hi)))
	}
	if !g.ext {
		return
	}
	x := [2]uint64{lo, hi}
	if n == 0 || Decimal128Less(x, g.min[i]) {
		g.min[i] = x
		if g.ord {
			g.minRow[i] = row
		}
	}
	if n == 0 || Decimal128Less(g.max[i], x) {
		g.max[i] = x
		if g.ord {
			g.maxRow[i] = row
		}
	}
	if g.ord {
		g.seen(i, x, row)
	}
}

// AddBool folds the boolean x of row row into group i.
func (g *Groups) AddBool(i int32, x bool, row int64) {
	n := g.count[i]
	g.count[i] = n + 1
	var b uint64
	if x {
		b = 1
	}
	var trues uint64
	if g.sum {
		trues = g.isum[i][0]
		g.isum[i][0] = trues + b
	}
	if g.ord {
		// min is false once a false is seen, max true once a true is: the
		// rows of their first occurrence.
		if n == 0 || (!x && trues == uint64(n)) {
			g.minRow[i] = row
		}
		if n == 0 || (x && trues == 0) {
			g.maxRow[i] = row
		}
		g.seen(i, [2]uint64{b}, row)
	}
}

// AddBytes folds the byte string x of row row into group i (copied: x may
// be memory of the input).
func (g *Groups) AddBytes(i int32, x []byte, row int64) {
	n := g.count[i]
	g.count[i] = n + 1
	if g.ext {
		if n == 0 || bytes.Compare(x, g.bmin[i]) < 0 {
			g.bmin[i] = append(g.bmin[i][:0], x...)
			if g.ord {
				g.minRow[i] = row
			}
		}
		if n == 0 || bytes.Compare(x, g.bmax[i]) > 0 {
			g.bmax[i] = append(g.bmax[i][:0], x...)
			if g.ord {
				g.maxRow[i] = row
			}
		}
	}
	if g.ord {
		if g.firstRow[i] < 0 {
			g.firstRow[i], g.bfirst[i] = row, bytes.Clone(x)
			if g.bfirst[i] == nil {
				g.bfirst[i] = []byte{}
			}
		}
		g.lastRow[i] = row
		g.blast[i] = append(g.blast[i][:0], x...)
	}
}

// State is group i's partial state (its own copy: it shares no memory with
// g).
func (g *Groups) State(i int32) State {
	s := identity(g.fam)
	s.Tracks = g.tracks
	s.Count, s.NullCount = g.count[i], g.nulls[i]
	if g.sum {
		if g.fam == column.FamilyFloat {
			s.FSum, s.FComp, s.FSpecial = g.fsum[i], g.fcomp[i], g.fspec[i]
		} else {
			s.Sum = g.isum[i]
		}
	}
	if s.Count > 0 {
		if g.ext {
			s.Min, s.Max = g.min[i], g.max[i]
			if g.fam == column.FamilyBytes {
				s.BMin, s.BMax = nonNil(g.bmin[i]), nonNil(g.bmax[i])
			}
		}
		if g.ord {
			s.FirstRow, s.LastRow, s.MinRow, s.MaxRow = g.firstRow[i], g.lastRow[i], g.minRow[i], g.maxRow[i]
			s.First, s.Last = g.first[i], g.last[i]
			if g.fam == column.FamilyBytes {
				s.BFirst, s.BLast = nonNil(g.bfirst[i]), nonNil(g.blast[i])
			}
		}
	}
	return s
}

// GatherStates sets out[j] to the state of group idx[j] of gs[j] for every
// j (gs[j].State(idx[j])): groups of the same family and aggregates, of
// one Groups or several (partitions of one column), in any order. It reads
// one array of them after the other, for all j: a result in key order reads
// its groups at random, and a loop over one array keeps many of those
// reads in flight where State, reading every array of one group in turn,
// waits for each.
func GatherStates(gs []*Groups, idx []int32, out []State) {
	if len(gs) == 0 {
		return
	}
	g0 := gs[0]
	id := identity(g0.fam)
	id.Tracks = g0.tracks
	for j := range out[:len(idx)] {
		out[j] = id
	}
	for j, i := range idx {
		out[j].Count = gs[j].count[i]
	}
	for j, i := range idx {
		out[j].NullCount = gs[j].nulls[i]
	}
	if g0.sum {
		if g0.fam == column.FamilyFloat {
			for j, i := range idx {
				out[j].FSum = gs[j].fsum[i]
			}
			for j, i := range idx {
				out[j].FComp = gs[j].fcomp[i]
			}
			for j, i := range idx {
				out[j].FSpecial = gs[j].fspec[i]
			}
		} else {
			for j, i := range idx {
				out[j].Sum = gs[j].isum[i]
			}
		}
	}
	// The extremes and the ordered aggregates of groups with values (the
	// others keep the identity's, as State leaves them).
	if g0.ext {
		for j, i := range idx {
			if out[j].Count > 0 {
				out[j].Min = gs[j].min[i]
			}
		}
		for j, i := range idx {
			if out[j].Count > 0 {
				out[j].Max = gs[j].max[i]
			}
		}
		if g0.fam == column.FamilyBytes {
			for j, i := range idx {
				if out[j].Count > 0 {
					out[j].BMin, out[j].BMax = nonNil(gs[j].bmin[i]), nonNil(gs[j].bmax[i])
				}
			}
		}
	}
	if g0.ord {
		for j, i := range idx {
			if out[j].Count > 0 {
				g := gs[j]
				out[j].FirstRow, out[j].LastRow, out[j].MinRow, out[j].MaxRow = g.firstRow[i], g.lastRow[i], g.minRow[i], g.maxRow[i]
				out[j].First, out[j].Last = g.first[i], g.last[i]
				if g0.fam == column.FamilyBytes {
					out[j].BFirst, out[j].BLast = nonNil(g.bfirst[i]), nonNil(g.blast[i])
				}
			}
		}
	}
}

// nonNil copies b, an empty slice for an empty b (a valid empty string is
// a value, not nil).
func nonNil(b []byte) []byte {
	if len(b) == 0 {
		return []byte{}
	}
	return bytes.Clone(b)
}

// MergeState merges the partial state s (of the same family) into group i,
// with State.Merge; what i then tracks stays g's.
func (g *Groups) MergeState(i int32, s *State) error {
	if s.Family != g.fam {
		return fmt.Errorf("merging a %s state into groups of %s", s.Family, g.fam)
	}
	if missing := g.tracks &^ s.Tracks; missing != 0 {
		return fmt.Errorf("merging a state that does not track %s", missing)
	}
	st := g.State(i)
	st.Merge(s)
	g.count[i], g.nulls[i] = st.Count, st.NullCount
	if g.sum {
		if g.fam == column.FamilyFloat {
			g.fsum[i], g.fcomp[i], g.fspec[i] = st.FSum, st.FComp, st.FSpecial
		} else {
			g.isum[i] = st.Sum
		}
	}
	if st.Count > 0 {
		if g.ext {
			g.min[i], g.max[i] = st.Min, st.Max
			if g.fam == column.FamilyBytes {
				g.bmin[i], g.bmax[i] = st.BMin, st.BMax
			}
		}
		if g.ord {
			g.firstRow[i], g.lastRow[i], g.minRow[i], g.maxRow[i] = st.FirstRow, st.LastRow, st.MinRow, st.MaxRow
			g.first[i], g.last[i] = st.First, st.Last
			if g.fam == column.FamilyBytes {
				g.bfirst[i], g.blast[i] = st.BFirst, st.BLast
			}
			if g.fam == column.FamilyFloat {
				g.fnum[i] = !(math.Float64frombits(st.Min[0]) > math.Float64frombits(st.Max[0]))
			}
		}
	}
	return nil
}

// MergeGroup merges group j of o, grouped states of the same family that
// track what g does, into group i of g: MergeState(i, o.State(j)), field
// by field for the families whose states are words (integers, booleans and
// floats without the ordered aggregates).
func (g *Groups) MergeGroup(i int32, o *Groups, j int32) error {
	if o.fam != g.fam || g.tracks&^o.tracks != 0 || g.ord || o.ord ||
		(g.fam != column.FamilySigned && g.fam != column.FamilyUnsigned && g.fam != column.FamilyFloat && g.fam != column.FamilyBool) {
		st := o.State(j)
		return g.MergeState(i, &st)
	}
	if g.fam == column.FamilyFloat {
		g.count[i] += o.count[j]
		g.nulls[i] += o.nulls[j]
		if g.sum {
			addPair(&g.fsum[i], &g.fcomp[i], &g.fspec[i], o.fsum[j], o.fcomp[j])
			g.fspec[i] += o.fspec[j]
		}
		if g.ext {
			a, b := &g.min[i][0], &g.max[i][0]
			*a = math.Float64bits(FloatMin(math.Float64frombits(*a), math.Float64frombits(o.min[j][0])))
			*b = math.Float64bits(FloatMax(math.Float64frombits(*b), math.Float64frombits(o.max[j][0])))
		}
		return nil
	}
	var sum Int192
	if o.sum {
		sum = o.isum[j]
	}
	var lo, hi uint64
	if o.ext {
		lo, hi = o.min[j][0], o.max[j][0]
	}
	g.mergeWords(i, o.count[j], o.nulls[j], sum, lo, hi)
	return nil
}

// WordsBlock is the most groups a fill of MergeIntegers or MergeFloats
// writes at once.
const WordsBlock = 256

// FloatWords are the partial states of a block of groups of floats
// (MergeFloats): entry i is a group's count of values and of nulls, its
// sum, compensation and special sum (the compensated sum's three words)
// and its extremes (read only when its count is not 0).
type FloatWords struct {
	Count, Nulls              [WordsBlock]int64
	Sum, Comp, Spec, Min, Max [WordsBlock]float64
}

// IntegerWords are the partial states of a block of groups of integers or
// booleans (MergeIntegers): entry i is a group's count of values and of
// nulls, its sum (0 when its count is 0) and its extremes in State's
// Min[0] and Max[0] encoding (read only when its count is not 0).
type IntegerWords struct {
	Count, Nulls [WordsBlock]int64
	Sum          [WordsBlock]Int192
	Min, Max     [WordsBlock]uint64
}

// MergeFloats merges into groups first ... first+n-1 of g, grouped states
// of floats without the ordered aggregates, the partial states of Float's
// fields that fill gives (a device's grouped table): fill(j, k, w) writes
// into entries 0 ... k-1 of w (k at most WordsBlock) the words of groups
// first+j ... first+j+k-1, the fields g tracks at least. The merge is what
// Float's states and MergeState would leave, without a State a group, a
// block of groups a field at a time. Many groups at once are merged by
// several goroutines, each its own range and its own w: fill must be safe
// for concurrent use.
func (g *Groups) MergeFloats(first, n int, fill func(j, k int, w *FloatWords)) error {
	if g.ord || g.fam != column.FamilyFloat {
		return fmt.Errorf("merging float words into groups of %s that track %s", g.fam, g.tracks)
	}
	if first < 0 || n < 0 || first+n > g.Len() {
		return fmt.Errorf("merging groups %d to %d into %d", first, first+n-1, g.Len())
	}
	mergeBlocks(first, n, fill, g.mergeFloatWords)
	return nil
}

// mergeFloatWords merges entries 0 ... k-1 of w into groups at ... at+k-1
// (MergeFloats): State.Merge's operations, a field at a time; an entry of
// no value is Float's state of none (zero sums, the identity's extremes).
func (g *Groups) mergeFloatWords(at, k int, w *FloatWords) {
	cs := w.Count[:k]
	g.mergeCounts(at, cs, w.Nulls[:k])
	if g.sum {
		sum, comp, spec := g.fsum[at:at+k], g.fcomp[at:at+k], g.fspec[at:at+k]
		for i, c := range cs {
			x, xc, xs := w.Sum[i], w.Comp[i], w.Spec[i]
			if c == 0 {
				x, xc, xs = 0, 0, 0
			}
			addPair(&sum[i], &comp[i], &spec[i], x, xc)
			spec[i] += xs
		}
	}
	if g.ext {
		mn, mx := g.min[at:at+k], g.max[at:at+k]
		for i, c := range cs {
			lo, hi := math.Inf(1), math.Inf(-1)
			if c != 0 {
				lo, hi = FloatMin(lo, w.Min[i]), FloatMax(hi, w.Max[i])
			}
			mn[i][0] = math.Float64bits(FloatMin(math.Float64frombits(mn[i][0]), lo))
			mx[i][0] = math.Float64bits(FloatMax(math.Float64frombits(mx[i][0]), hi))
		}
	}
}

// MergeInteger merges into group i of g, grouped states of signed or
// unsigned integers or booleans without the ordered aggregates, the partial
// state of count values and nulls nulls whose sum is sum and whose
// extremes are min and max (State's Min[0] and Max[0] encoding; read only
// when count > 0 and g tracks them): State.Merge field by field, for
// states that come as words (a device's grouped table) rather than as
// States.
func (g *Groups) MergeInteger(i int32, count, nulls int64, sum Int192, min, max uint64) error {
	if err := g.integerWords(); err != nil {
		return err
	}
	g.mergeInteger(i, count, nulls, sum, min, max)
	return nil
}

// MergeIntegers is MergeInteger of groups first ... first+n-1 of g, their
// words those fill gives: fill(j, k, w) writes into entries 0 ... k-1 of
// w (k at most WordsBlock) the words of groups first+j ... first+j+k-1,
// the fields g tracks at least. The merge runs a block of groups a field
// at a time (calls a group took most of a million groups' merge). Many
// groups at once are merged by several goroutines, each its own range
// and its own w: fill must be safe for concurrent use.
func (g *Groups) MergeIntegers(first, n int, fill func(j, k int, w *IntegerWords)) error {
	if err := g.integerWords(); err != nil {
		return err
	}
	if first < 0 || n < 0 || first+n > g.Len() {
		return fmt.Errorf("merging groups %d to %d into %d", first, first+n-1, g.Len())
	}
	mergeBlocks(first, n, fill, g.mergeIntegerWords)
	return nil
}

// mergeBlocks merges the words fill gives into groups first ...
// first+n-1 a block of WordsBlock groups at a time (fill(j, k, w), then
// merge(first+j, k, w)), on several goroutines for many groups
// (inPieces), each with its own words.
func mergeBlocks[W any](first, n int, fill func(j, k int, w *W), merge func(at, k int, w *W)) {
	inPieces(n, func(lo, hi int) {
		w := new(W)
		for j := lo; j < hi; j += WordsBlock {
			k := min(WordsBlock, hi-j)
			fill(j, k, w)
			merge(first+j, k, w)
		}
	})
}

// mergeCounts adds the counts of values and of nulls of a block into
// groups at ... at+len(counts)-1.
func (g *Groups) mergeCounts(at int, counts, nulls []int64) {
	count, null := g.count[at:at+len(counts)], g.nulls[at:at+len(counts)]
	for i, c := range counts {
		count[i] += c
		null[i] += nulls[i]
	}
}

// mergeIntegerWords merges entries 0 ... k-1 of w into groups at ...
// at+k-1 (MergeIntegers): mergeWords' operations, a field at a time; the
// extremes of an entry of no value are left out (the identity's).
func (g *Groups) mergeIntegerWords(at, k int, w *IntegerWords) {
	cs := w.Count[:k]
	g.mergeCounts(at, cs, w.Nulls[:k])
	if g.sum {
		sum := g.isum[at : at+k]
		for i := range sum {
			sum[i] = sum[i].Add(w.Sum[i])
		}
	}
	if !g.ext {
		return
	}
	mn, mx := g.min[at:at+k], g.max[at:at+k]
	if g.fam == column.FamilySigned {
		for i, c := range cs {
			if c != 0 {
				mn[i][0] = uint64(min(int64(mn[i][0]), int64(w.Min[i])))
				mx[i][0] = uint64(max(int64(mx[i][0]), int64(w.Max[i])))
			}
		}
		return
	}
	for i, c := range cs {
		if c != 0 {
			mn[i][0], mx[i][0] = min(mn[i][0], w.Min[i]), max(mx[i][0], w.Max[i])
		}
	}
}

// integerWords says whether g's states merge as integer words
// (MergeInteger): signed or unsigned integers or booleans without the
// ordered aggregates.
func (g *Groups) integerWords() error {
	if g.ord || (g.fam != column.FamilySigned && g.fam != column.FamilyUnsigned && g.fam != column.FamilyBool) {
		return fmt.Errorf("merging integer words into groups of %s that track %s", g.fam, g.tracks)
	}
	return nil
}

// mergeInteger is MergeInteger once checked: the extremes of a state of no
// value are the identity's, whatever its words say.
func (g *Groups) mergeInteger(i int32, count, nulls int64, sum Int192, min, max uint64) {
	if count == 0 {
		lo, hi := identityExtremes(g.fam)
		min, max = lo[0], hi[0]
	}
	g.mergeWords(i, count, nulls, sum, min, max)
}

// inPieces runs do over [0, n) in pieces of 2^16, on several goroutines
// when there is more than one piece.
func inPieces(n int, do func(lo, hi int)) {
	const piece = 1 << 16
	if n <= piece {
		do(0, n)
		return
	}
	pieces := (n + piece - 1) / piece
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(pieces, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := int(next.Add(1) - 1); p < pieces; p = int(next.Add(1) - 1) {
				do(p*piece, min(n, (p+1)*piece))
			}
		}()
	}
	wg.Wait()
}

// mergeWords is MergeGroup's and MergeInteger's merge of an integer or
// boolean state's words into group i (extremes: the identity's when the
// state has no value).
func (g *Groups) mergeWords(i int32, count, nulls int64, sum Int192, lo, hi uint64) {
	g.count[i] += count
	g.nulls[i] += nulls
	if g.sum {
		g.isum[i] = g.isum[i].Add(sum)
	}
	if g.ext {
		a, b := &g.min[i][0], &g.max[i][0]
		if g.fam == column.FamilySigned {
			*a, *b = uint64(min(int64(*a), int64(lo))), uint64(max(int64(*b), int64(hi)))
		} else {
			*a, *b = min(*a, lo), max(*b, hi)
		}
	}
}

// Bytes is about the memory the groups hold.
func (g *Groups) Bytes() int64 {
	n := int64(cap(g.count)+cap(g.nulls))*8 + int64(cap(g.isum))*24 + int64(cap(g.fsum)+cap(g.fcomp)+cap(g.fspec))*8 +
		int64(cap(g.min)+cap(g.max)+cap(g.first)+cap(g.last))*16 + int64(cap(g.firstRow)+cap(g.lastRow)+cap(g.minRow)+cap(g.maxRow))*8 +
		int64(cap(g.fnum))
	for _, bs := range [][][]byte{g.bmin, g.bmax, g.bfirst, g.blast} {
		n += int64(cap(bs)) * 24
		for _, b := range bs {
			n += int64(cap(b))
		}
	}
	return n
}

// AnySum reports whether the exact sum of some group with a valid value
// (signed, unsigned, decimal and boolean families) satisfies pred.
func (g *Groups) AnySum(pred func(Int192) bool) bool {
	if len(g.isum) == 0 {
		return false
	}
	for i, s := range g.isum {
		if g.count[i] > 0 && pred(s) {
			return true
		}
	}
	return false
}

// The update loops of the groups: value vals[rows[k]] (valid where the
// validity bitmap says so, from bit voff; nil: all valid), of row
// base+rows[k], folds into group ids[k]. One pass per run of rows, each
// aggregate a predictable branch; with the ordered aggregates, a value at
// a time through the Add methods.

// valid reports whether bit voff+r of validity is set (nil: every bit).
func valid(validity []byte, voff int, r int32) bool {
	if validity == nil {
		return true
	}
	p := voff + int(r)
	return validity[p>>3]>>(p&7)&1 != 0
}

// FoldSigned folds signed integers.
func FoldSigned[T int8 | int16 | int32 | int64](g *Groups, vals []T, validity []byte, voff int, rows, ids []int32, base int64) {
	ids = ids[:len(rows)]
	if g.ord {
		for k, r := range rows {
			if valid(validity, voff, r) {
				g.AddSigned(ids[k], int64(vals[r]), base+int64(r))
			} else {
				g.nulls[ids[k]]++
			}
		}
		return
	}
	if runFold(len(rows), len(g.count)) {
		foldIntRuns(g, vals, validity, voff, rows, ids, true)
		return
	}
	count, nulls, sum, lo, hi := g.count, g.nulls, g.isum, g.min, g.max
	doSum, doExt := g.sum, g.ext // (locals: the stores below may not alias them)
	for k, r := range rows {
		i := ids[k]
		if !valid(validity, voff, r) {
			nulls[i]++
			continue
		}
		x := int64(vals[r])
		count[i]++
		if doSum { // (Int192.Add in place: a copy of the sum stalls the loop)
			sw, sx := &sum[i], uint64(x>>63)
			var c uint64
			sw[0], c = bits.Add64(sw[0], uint64(x), 0)
			sw[1], c = bits.Add64(sw[1], sx, c)
			sw[2] += sx + c
		}
		if doExt {
			if x < int64(lo[i][0]) {
				lo[i][0] = uint64(x)
			}
			if x > int64(hi[i][0]) {
				hi[i][0] = uint64(x)
			}
		}
	}
}

// FoldUnsigned folds unsigned integers.
func FoldUnsigned[T uint8 | uint16 | uint32 | uint64](g *Groups, vals []T, validity []byte, voff int, rows, ids []int32, base int64) {
	ids = ids[:len(rows)]
	if g.ord {
		for k, r := range rows {
			if valid(validity, voff, r) {
				g.AddUnsigned(ids[k], uint64(vals[r]), base+int64(r))
			} else {
				g.nulls[ids[k]]++
			}
		}
		return
	}
	if runFold(len(rows), len(g.count)) {
		foldIntRuns(g, vals, validity, voff, rows, ids, false)
		return
	}
	count, nulls, sum, lo, hi := g.count, g.nulls, g.isum, g.min, g.max
	doSum, doExt := g.sum, g.ext
	for k, r := range rows {
		i := ids[k]
		if !valid(validity, voff, r) {
			nulls[i]++
			continue
		}
		x := uint64(vals[r])
		count[i]++
		if doSum {
			sw := &sum[i]
			var c uint64
			sw[0], c = bits.Add64(sw[0], x, 0)
			sw[1], c = bits.Add64(sw[1], 0, c)
			sw[2] += c
		}
		if doExt {
			lo[i][0] = min(lo[i][0], x)
			hi[i][0] = max(hi[i][0], x)
		}
	}
}

// FoldFloat folds floats: compensated sums, extremes without NaN (-0
// below +0).
func FoldFloat[T float32 | float64](g *Groups, vals []T, validity []byte, voff int, rows, ids []int32, base int64) {
	ids = ids[:len(rows)]
	if g.ord {
		for k, r := range rows {
			if valid(validity, voff, r) {
				g.AddFloat(ids[k], float64(vals[r]), base+int64(r))
			} else {
				g.nulls[ids[k]]++
			}
		}
		return
	}
	if runFold(len(rows), len(g.count)) && foldFloatRuns(g, vals, validity, voff, rows, ids) {
		return
	}
	count, nulls, fsum, fcomp, fspec, lo, hi := g.count, g.nulls, g.fsum, g.fcomp, g.fspec, g.min, g.max
	doSum, doExt := g.sum, g.ext
	for k, r := range rows {
		i := ids[k]
		if !valid(validity, voff, r) {
			nulls[i]++
			continue
		}
		x := float64(vals[r])
		count[i]++
		if doSum {
			addPair(&fsum[i], &fcomp[i], &fspec[i], x, 0)
		}
		if doExt {
			lo[i][0] = math.Float64bits(FloatMin(math.Float64frombits(lo[i][0]), x))
			hi[i][0] = math.Float64bits(FloatMax(math.Float64frombits(hi[i][0]), x))
		}
	}
}
