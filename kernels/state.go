package kernels

import (
	"fmt"
	"math"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// State turns the state words of a launch over n elements of kind k (of
// agg.cu's per-kind, many-column or page kernels) into a partial state: the
// word layouts are documented in agg.cu. Decimal32 and Decimal64 values
// (decimals stored as int32 or int64, as Parquet pages hold them) are folded
// by the int32 and int64 kernels: their words are those of the signed
// integers, their unscaled values, and give a decimal state.
func State(k column.Kind, n int64, w []uint64) agg.State {
	if k == column.Decimal32 || k == column.Decimal64 {
		s := State(column.Int64, n, w)
		mn, mx := int64(s.Min[0]), int64(s.Max[0])
		return agg.Decimal(s.Count, s.NullCount, s.Sum, [2]uint64{uint64(mn), uint64(mn >> 63)},
			[2]uint64{uint64(mx), uint64(mx >> 63)})
	}
	switch k.Family() {
	case column.FamilySigned:
		count := int64(w[4])
		return agg.Signed(count, n-count, agg.Int192From128(w[0], int64(w[1])), int64(w[2]), int64(w[3]))
	case column.FamilyUnsigned:
		count := int64(w[4])
		return agg.Unsigned(count, n-count, agg.Int192{w[0], w[1], 0}, w[2], w[3])
	case column.FamilyFloat:
		count := int64(w[5])
		return agg.Float(count, n-count, math.Float64frombits(w[0]), math.Float64frombits(w[1]),
			math.Float64frombits(w[2]), math.Float64frombits(Unkey(w[3])), math.Float64frombits(Unkey(w[4])))
	case column.FamilyDecimal:
		count := int64(w[7])
		return agg.Decimal(count, n-count, agg.Int192{w[0], w[1], w[2]}, [2]uint64{w[3], w[4]}, [2]uint64{w[5], w[6]})
	case column.FamilyBool:
		count := int64(w[1])
		return agg.Bool(count, n-count, int64(w[0]))
	}
	return agg.Nulls(k.Family(), n)
}

// Unkey turns a float order key of the kernels back into float64 bits.
func Unkey(k uint64) uint64 {
	return k ^ uint64(int64(k)>>63)&math.MaxInt64
}

// GroupWords is the number of words of one group's result in the output of
// a grouped kernel (arrowagg_group_<kind>, group.cuh) over values of kind k:
// the family's state words, then the group's rows. It is 0 for a kind with
// no grouped kernel (GroupKernel).
func GroupWords(k column.Kind) int {
	switch {
	case GroupKernel(k) == "":
		return 0
	case k.Family() == column.FamilyFloat:
		return AggFloatWords + 1
	}
	return AggIntegerWords + 1
}

// GroupKernel is the name of the grouped kernel of values of kind k (the
// integers and floats), "" when there is none.
func GroupKernel(k column.Kind) string {
	switch k {
	case column.Int8, column.Int16, column.Int32, column.Int64, column.Uint8, column.Uint16, column.Uint32,
		column.Uint64, column.Float32, column.Float64:
		return "arrowagg_group_" + k.String()
	}
	return ""
}

// GroupKeyKind reports whether the grouped kernels read keys of kind k (the
// integers: a dictionary's indices are uint8, uint16, uint32 or int32).
func GroupKeyKind(k column.Kind) bool {
	return k.Family() == column.FamilySigned || k.Family() == column.FamilyUnsigned
}

// GroupWindow is the most groups one launch of the grouped kernel of value
// kind k folds when its blocks have shared bytes of dynamic shared memory
// (at least AggGroupSharedBytes, which every device gives a kernel without
// its opting in): its block's table (and the floats' staged tile) within
// them. A larger domain is folded in windows of groups, a launch each.
func GroupWindow(k column.Kind, shared int) int {
	shared = max(shared, AggGroupSharedBytes)
	if k.Family() == column.FamilyFloat {
		return (shared - AggGroupFloatStageBytes) / AggGroupFloatEntryBytes
	}
	return shared / AggGroupIntEntryBytes // (past AggGroupSharedBytes, one copy: GroupReplicas)
}

// groupBlockReserve is the shared memory a block of sm_80 and later
// reserves beside its own.
const groupBlockReserve = 1024

// GroupLaunchWindow is the window of groups of each launch of the grouped
// kernel of value kind k over a domain of domain groups, on a device whose
// kernels may opt in to optin bytes of shared memory a block, of perSM a
// multiprocessor: the fewest launches whose tables leave room for two
// blocks a multiprocessor (a block alone would leave its warps' latencies
// unhidden), the domain split evenly among them (the smaller tables, the
// more blocks). Every launch reads every row, so a domain of a thousand
// float groups, three launches in 47 KiB, is one in 77 KiB.
func GroupLaunchWindow(k column.Kind, domain, optin, perSM int) int {
	most := GroupWindow(k, min(optin, perSM/2-groupBlockReserve))
	launches := (domain + most - 1) / most
	return (domain + launches - 1) / launches
}

// GroupLaunch is how the grouped kernels fold a domain of groups of one
// value kind: the kernel, the groups of each launch (the domain is folded in
// windows of Window groups, a launch each) and whether its blocks keep a
// table per thread.
type GroupLaunch struct {
	Kernel  string
	Window  int
	Threads bool // float values, a table per thread (group.cuh's FloatThreadTable)
	// Exact: float values summed exactly in fixed point (group.cuh's
	// FloatExactTable), after a launch of Scale over the value column; a
	// launch whose values span more than the limbs folds nothing and
	// raises its lost word, and the domain is then folded by
	// PlanGroupCompensated's launches.
	Exact bool
	Scale string // the scale kernel (Exact)
	kind  column.Kind
}

// PlanGroupLaunch is the grouped kernels' launches over a domain of domain
// groups of values of kind k (GroupKernel's kinds) on a device whose kernels
// may opt in to optin bytes of shared memory a block, of perSM a
// multiprocessor. Float values whose domain's tables per thread leave room
// for two blocks a multiprocessor are one launch of the kernel with a table
// per thread (arrowagg_group_threads_<kind>: no lanes matched, no rows
// staged; a block alone has too few warps to hide their latencies); other
// float domains are launches of the exact kernels
// (arrowagg_group_exact_<kind>: sums in fixed point, by integer atomics)
// in the fewest windows whose tables leave room for two blocks a
// multiprocessor; integer domains are PlanGroupCompensated's launches.
func PlanGroupLaunch(k column.Kind, domain, optin, perSM int) GroupLaunch {
	shared := min(optin, perSM/2-groupBlockReserve)
	if k.Family() == column.FamilyFloat && domain <= GroupThreadsWindow(shared) {
		return GroupLaunch{Kernel: "arrowagg_group_threads_" + k.String(), Window: domain, Threads: true, kind: k}
	}
	if k.Family() == column.FamilyFloat {
		return PlanGroupExact(k, domain, optin, perSM)
	}
	return PlanGroupCompensated(k, domain, optin, perSM)
}

// PlanGroupExact is the exact float kernels' launches over a domain of
// domain groups of float values of kind k: the fewest windows whose
// tables leave room for two blocks a multiprocessor, the domain split
// evenly among them.
func PlanGroupExact(k column.Kind, domain, optin, perSM int) GroupLaunch {
	most := max(1, GroupExactWindow(min(optin, perSM/2-groupBlockReserve)))
	launches := (domain + most - 1) / most
	return GroupLaunch{Kernel: "arrowagg_group_exact_" + k.String(), Window: (domain + launches - 1) / launches,
		Exact: true, Scale: ExactScaleKernel(k), kind: k}
}

// ExactScaleKernel is the scale kernel of float values of kind k: the pass
// that finds the scale words (group.cuh's ExactScale) of the exact float
// kernels.
func ExactScaleKernel(k column.Kind) string { return "arrowagg_float_scale_" + k.String() }

// PlanGroupCompensated is GroupKernel's launches over a domain of domain
// groups in GroupLaunchWindow's windows: for floats, compensated sums in
// an order fixed by the grid (group.cuh's FloatWarpTable and FloatTable),
// whatever the values' span.
func PlanGroupCompensated(k column.Kind, domain, optin, perSM int) GroupLaunch {
	return GroupLaunch{Kernel: GroupKernel(k), Window: GroupLaunchWindow(k, domain, optin, perSM), kind: k}
}

// ExactScaleFits reports whether the exact float kernels sum the values of
// a column of scale words hi and lo exactly (group.cuh's ExactScale): its
// values' lowest set bits at or above the lowest limb's weight.
func ExactScaleFits(hi, lo uint32) bool {
	base := int(max(hi, 1)) - 1022 - 32*AggGroupExactLimbs
	return lo == 0 || 1100-int(lo) >= base
}

// GroupExactWindow is the most groups of the exact float kernels in shared
// bytes of shared memory a block (one copy of the table).
func GroupExactWindow(shared int) int {
	return max(0, shared-exactBeside(0)) / (AggGroupExactEntryBytes + exactBeside(1) - exactBeside(0))
}

// exactBeside is the shared memory of an exact float table of a window of
// groups beside its copies' entries (group.cuh's FloatExactTable): each
// group's special word, and the block's lost word.
func exactBeside(window int) int { return 8*window + 8 }

// GroupExactReplicas is the number of copies of a block's exact float
// table of a window of groups (group.cuh's exact_replicas).
func GroupExactReplicas(window int) int {
	return replicas(window, AggGroupExactEntryBytes, exactBeside(window))
}

// SharedBytes is the dynamic shared memory of a launch over a window of p
// groups.
func (l GroupLaunch) SharedBytes(p int) int {
	if l.Threads {
		return p * groupThreadsEntryBytes
	}
	if l.Exact {
		return p*GroupExactReplicas(p)*AggGroupExactEntryBytes + exactBeside(p)
	}
	return GroupSharedBytes(l.kind, p)
}

// groupThreadsEntryBytes is the shared memory of a group in a block of
// float groups with a table per thread (group.cuh's FloatThreadTable): the
// threads' sums, the group's special, the copies of the block's fields
// whose updates commute.
const groupThreadsEntryBytes = AggBlockThreads*AggGroupFloatThreadEntryBytes + 8 + AggGroupFloatThreadCopies*AggGroupFloatThreadSharedBytes

// GroupThreadsWindow is the most groups of the float kernels with a table
// per thread in shared bytes of shared memory a block.
func GroupThreadsWindow(shared int) int {
	return max(0, shared) / groupThreadsEntryBytes
}

// GroupSharedBytes is the dynamic shared memory of a launch of the grouped
// kernel of value kind k over a window of groups.
func GroupSharedBytes(k column.Kind, window int) int {
	if k.Family() == column.FamilyFloat && window <= AggGroupFloatWarpGroups {
		// A table per warp, then a staged step per warp (group.cuh's
		// FloatWarpTable).
		warps := AggBlockThreads / AggWarpThreads
		return (warps*window*AggGroupFloatEntryBytes+7)/8*8 + AggBlockThreads*12
	}
	if k.Family() == column.FamilyFloat {
		return AggGroupFloatStageBytes + window*AggGroupFloatEntryBytes
	}
	return window * GroupReplicas(window) * AggGroupIntEntryBytes
}

// GroupReplicas is the number of copies of a block's integer table of a
// window of groups in the grouped kernels (group.cuh's group_replicas): the
// most, a power of two up to a warp's lanes, that fit AggGroupSharedBytes.
func GroupReplicas(window int) int {
	return replicas(window, AggGroupIntEntryBytes, 0)
}

// replicas is the most copies, a power of two up to a warp's lanes, of a
// table of window groups of entry bytes a copy whose copies and beside
// bytes fit AggGroupSharedBytes (one when none do).
func replicas(window, entry, beside int) int {
	r := AggWarpThreads
	for r > 1 && window*r*entry+beside > AggGroupSharedBytes {
		r >>= 1
	}
	return r
}

// GroupState turns one group's words of a grouped kernel's output over
// values of kind k (GroupWords of them: the family's state, then the
// group's rows) into the group's partial state: its rows are its count and
// its nulls.
func GroupState(k column.Kind, w []uint64) agg.State {
	rows := w[len(w)-1]
	return State(k, int64(rows), w[:len(w)-1])
}

// MergeGroupWords merges the output of a grouped kernel's launch over the
// window of groups first ... first+p-1 (GroupWords words a group, then the
// launch's own word) of values of kind k into those groups of g: integers
// word by word (Groups.MergeIntegers, what GroupState and MergeState would
// leave, without a State a group: a thousand of those took 0.2 ms), floats
// likewise (Groups.MergeFloats), other kinds by GroupState.
func MergeGroupWords(k column.Kind, first, p int, w []uint64, g *agg.Groups) error {
	words := GroupWords(k)
	switch {
	case words == 0 || p < 0 || len(w) < words*p:
		return fmt.Errorf("%d words of grouped states of %s for %d groups", len(w), k, p)
	case first < 0 || first+p > g.Len():
		return fmt.Errorf("merging groups %d to %d into %d", first, first+p-1, g.Len())
	}
	switch f := k.Family(); f {
	case column.FamilyFloat:
		if g.Tracks().Any(agg.Ordered) {
			break
		}
		return g.MergeFloats(first, p, func(j, k int, o *agg.FloatWords) {
			f := math.Float64frombits
			for i := range k {
				v := w[(j+i)*words : (j+i+1)*words]
				count := int64(v[5])
				o.Count[i], o.Nulls[i] = count, int64(v[words-1])-count
				o.Sum[i], o.Comp[i], o.Spec[i], o.Min[i], o.Max[i] = f(v[0]), f(v[1]), f(v[2]), f(Unkey(v[3])), f(Unkey(v[4]))
			}
		})
	case column.FamilySigned, column.FamilyUnsigned:
		return g.MergeIntegers(first, p, func(j, k int, o *agg.IntegerWords) {
			for i := range k {
				v := w[(j+i)*words : (j+i+1)*words]
				count := int64(v[4])
				var sum agg.Int192
				switch {
				case count == 0: // (no sum, as State's)
				case f == column.FamilySigned:
					sum = agg.Int192From128(v[0], int64(v[1]))
				default:
					sum = agg.Int192{v[0], v[1], 0}
				}
				o.Count[i], o.Nulls[i], o.Sum[i], o.Min[i], o.Max[i] = count, int64(v[words-1])-count, sum, v[2], v[3]
			}
		})
	}
	for j := range p {
		s := GroupState(k, w[j*words:(j+1)*words])
		if err := g.MergeState(int32(first+j), &s); err != nil {
			return err
		}
	}
	return nil
}

// GroupDomain is the largest dense key domain of the grouped kernels over
// values of kind k: AggGroupWideMax for integers (the wide kernels beyond
// AggGroupMax keys), AggGroupMax for floats, 0 for a kind with no grouped
// kernel.
func GroupDomain(k column.Kind) int {
	switch {
	case GroupKernel(k) == "":
		return 0
	case GroupWideKernel(k) != "":
		return AggGroupWideMax
	}
	return AggGroupMax
}

// GroupWideKernel is the name of the wide grouped kernel of values of kind
// k (arrowagg_group_wide_<kind>, group.cuh: the integers), "" when there
// is none.
func GroupWideKernel(k column.Kind) string {
	if f := k.Family(); GroupKernel(k) == "" || f != column.FamilySigned && f != column.FamilyUnsigned {
		return ""
	}
	return "arrowagg_group_wide_" + k.String()
}

// GroupWideWords is the size in 64-bit words of a wide grouped kernel's
// table over a domain of groups keys: AggGroupWideEntryBytes for each of
// the groups + 1 groups (the null key's last), then the count of keys
// outside the domain.
func GroupWideWords(groups int) int { return (groups+1)*AggGroupWideEntryBytes/8 + 1 }

// The flags of a wide grouped kernel's launch (group.cuh's kWideSum and
// kWideExtremes).
const (
	GroupWideSum      = 1
	GroupWideExtremes = 2
)

// GroupWideFlags is the flags of a wide launch for groups that track set:
// the fields of the table it must fold.
func GroupWideFlags(set agg.Set) uint64 {
	var f uint64
	if set.Any(agg.Sum) {
		f |= GroupWideSum
	}
	if set.Any(agg.Min | agg.Max) {
		f |= GroupWideExtremes
	}
	return f
}

// MergeWide merges the table t (GroupWideWords(groups) words) of a wide
// grouped kernel's launch over values of kind k into groups 0 ... groups
// of g (group groups: the null key's); allValid says the values had no
// validity bitmap (the table then keeps no counts: a group's count is its
// rows), made first (Grow) when g has none. The merge is
// Groups.MergeIntegers, on several goroutines for a large domain. It
// returns the rows whose key lay outside the domain.
func MergeWide(k column.Kind, groups int, t []uint64, allValid bool, g *agg.Groups) (uint64, error) {
	d := groups + 1
	if len(t) != GroupWideWords(groups) {
		return 0, fmt.Errorf("a wide table of %d words for %d groups", len(t), groups)
	}
	if g.Len() != 0 && g.Len() < d {
		return 0, fmt.Errorf("merging a wide table of %d groups into %d groups", d, g.Len())
	}
	signed := k.Family() == column.FamilySigned
	var sb uint64
	if signed {
		sb = 1 << 63
	}
	// The table's fields (group.cuh): the sums of the values modulo 2^64,
	// 2^32 rows + the sums' wraps (signed, less the negative values), the
	// extremes as order keys {~min, max}, then the valid values, 32 bits
	// each (two a word, the first in the low half).
	lo, hi, ext, counts := t[:d], t[d:2*d], t[2*d:4*d], t[4*d:5*d]
	if g.Len() == 0 {
		g.Grow(d)
	}
	return t[5*d], g.MergeIntegers(0, d, func(j, k int, o *agg.IntegerWords) {
		for i := range k {
			e := j + i
			wraps := int64(int32(uint32(hi[e])))
			r := int64((hi[e] - uint64(wraps)) >> 32)
			if r == 0 {
				o.Count[i], o.Nulls[i], o.Sum[i] = 0, 0, agg.Int192{}
				continue
			}
			c := r
			if !allValid {
				c = int64(counts[e>>1] >> (32 * (e & 1)) & math.MaxUint32)
			}
			// lo + 2^64 wraps in 192 bits.
			o.Count[i], o.Nulls[i], o.Sum[i] = c, r-c, agg.Int192From128(lo[e], wraps)
			o.Min[i], o.Max[i] = ^ext[2*e]^sb, ext[2*e+1]^sb
		}
	})
}
