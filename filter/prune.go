package filter

import (
	"bytes"
	"math"
	"slices"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// MayMatch reports whether a row group may hold a row for which the
// predicate is TRUE, from stats[i], a partial aggregate state of input i's
// column over the row group (nil: nothing known). It returns false only when
// no row can: a comparison whose range misses the column's [Min, Max], an
// IS NULL of a column without nulls, any comparison or IS NOT NULL of a
// column without valid values, ... It reads Count and NullCount (always
// known), Min and Max when the state Tracks them (a float state whose Min >
// Max with Count > 0 holds NaN alone; the extremes of a bool state follow
// from its Sum, the true values; BMin and BMax for the binary kinds). Since
// the extremes of floats skip NaN, which satisfies !=, NOT IN and negated
// comparisons, those never prune a float column that has valid values. A
// state of another family than its input's counts as unknown, as do
// stats of another length than the inputs.
func (p *Program) MayMatch(stats []*agg.State) bool {
	if len(stats) != len(p.in) {
		return true
	}
	return p.may(p.root, stats)
}

func (p *Program) may(n *node, stats []*agg.State) bool {
	switch n.kind {
	case nAnd:
		for _, k := range n.kids {
			if !p.may(k, stats) {
				return false
			}
		}
		return true
	case nOr:
		return slices.ContainsFunc(n.kids, func(k *node) bool { return p.may(k, stats) })
	}
	return mayLeaf(n.leaf, p.in[n.leaf.col], stats[n.leaf.col])
}

func mayLeaf(l *leaf, in Input, st *agg.State) bool {
	if l.op == lConst && l.cval == l.neg {
		return false // FALSE or UNKNOWN for every row, whatever the data
	}
	fam := in.Kind.Family()
	if st == nil || st.Family != fam {
		return true
	}
	if l.op == lNull {
		if l.neg {
			return st.Count > 0
		}
		return st.NullCount > 0
	}
	if st.Count <= 0 {
		return false // every row null: UNKNOWN
	}
	if l.op == lConst {
		return true
	}
	if !st.Tracks.Has(agg.Min | agg.Max) {
		return true
	}
	switch fam {
	case column.FamilyFloat:
		if l.neg {
			return true
		}
		mn, mx := math.Float64frombits(st.Min[0]), math.Float64frombits(st.Max[0])
		if mn > mx {
			return false // NaN alone: no = nor range holds
		}
		if l.op == lSet {
			return slices.ContainsFunc(l.fset, func(f float64) bool { return mn <= f && f <= mx })
		}
		return mx >= l.flo && mn <= l.fhi
	case column.FamilyBytes:
		return mayBytes(l, st.BMin, st.BMax)
	case column.FamilyBool:
		if !st.Tracks.Has(agg.Sum) {
			return true
		}
		return mayKeys(l, key{0, st.BoolExtreme(false)}, key{0, st.BoolExtreme(true)})
	case column.FamilySigned:
		return mayKeys(l, signedKey(int64(st.Min[0])), signedKey(int64(st.Max[0])))
	case column.FamilyUnsigned:
		return mayKeys(l, key{0, st.Min[0]}, key{0, st.Max[0]})
	case column.FamilyDecimal:
		return mayKeys(l, decimalKey(st.Min), decimalKey(st.Max))
	}
	return true
}

// key is a value of an integer domain (signed, unsigned, decimal, bool) in
// an unsigned 128-bit order: {hi, lo}, compared hi first.
type key struct{ hi, lo uint64 }

func (a key) less(b key) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }

func signedKey(v int64) key { return key{1 << 63, uint64(v) ^ 1<<63} }

func decimalKey(w [2]uint64) key { return key{w[1] ^ 1<<63, w[0]} }

func unsignedKey(v uint64) key { return key{0, v} }

// leafKeys are the range bounds and set values of an integer-domain leaf
// as keys.
func leafKeys(l *leaf) (lo, hi key, set []key) {
	switch {
	case l.kind == column.Decimal128:
		lo, hi = decimalKey(l.dlo), decimalKey(l.dhi)
		for _, d := range l.dset {
			set = append(set, decimalKey(d))
		}
	case l.kind.Family() == column.FamilyDecimal:
		// decimal32 and decimal64: int64 bounds, sign-extended to 128 bits
		ext := func(v int64) key { return decimalKey([2]uint64{uint64(v), uint64(v >> 63)}) }
		lo, hi = ext(l.ilo), ext(l.ihi)
		for _, v := range l.iset {
			set = append(set, ext(v))
		}
	case l.kind.Family() == column.FamilySigned:
		lo, hi = signedKey(l.ilo), signedKey(l.ihi)
		for _, v := range l.iset {
			set = append(set, signedKey(v))
		}
	default:
		lo, hi = unsignedKey(l.ulo), unsignedKey(l.uhi)
		for _, v := range l.uset {
			set = append(set, unsignedKey(v))
		}
	}
	return lo, hi, set
}

// mayKeys decides a range or set leaf against a column's extremes [mn, mx]
// in an integer domain (no NaN: negation is exact).
func mayKeys(l *leaf, mn, mx key) bool {
	lo, hi, set := leafKeys(l)
	if l.op == lSet {
		if l.neg {
			// some value outside the set: unless every value is one of it
			return mn != mx || !slices.Contains(set, mn)
		}
		return slices.ContainsFunc(set, func(k key) bool { return !k.less(mn) && !mx.less(k) })
	}
	if l.neg {
		// some value outside [lo, hi]
		return mn.less(lo) || hi.less(mx)
	}
	return !mx.less(lo) && !hi.less(mn)
}

// mayBytes decides a bytes leaf against a column's extremes [mn, mx].
func mayBytes(l *leaf, mn, mx []byte) bool {
	if l.op == lSet {
		if l.neg {
			return !bytes.Equal(mn, mx) || !slices.Contains(l.sset, string(mn))
		}
		return slices.ContainsFunc(l.sset, func(s string) bool {
			return bytes.Compare(mn, []byte(s)) <= 0 && bytes.Compare([]byte(s), mx) <= 0
		})
	}
	mask := l.mask
	if l.neg {
		mask ^= 7
	}
	lit := l.lit
	return mask&1 != 0 && bytes.Compare(mn, lit) < 0 ||
		mask&2 != 0 && bytes.Compare(mn, lit) <= 0 && bytes.Compare(lit, mx) <= 0 ||
		mask&4 != 0 && bytes.Compare(mx, lit) > 0
}
