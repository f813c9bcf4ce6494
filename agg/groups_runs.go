package agg

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sync"
	"unsafe"
)

// The fold loops' fast path for few groups: a run of rows much longer than
// the groups (a morsel pre-aggregated in a table of its own, or a batch of
// few keys) first copies the hot fields of every group into one record per
// group (a run accumulator: a cache line holds a group's count, nulls, sum
// and extremes, where Groups keeps them in five arrays), folds the rows
// there, and copies the records back. Each group sees the same operations
// in the same order as in the loops over Groups' arrays (integer sums are
// exact, so a run's is kept in 128 bits, or in 64 for values of at most 32
// bits, and added to the group's once; a
// float's compensated sum is the group's own, carried through), so the
// states are the same bytes either way (TestFoldRunsSameBytes).

// runFold reports whether rows rows of a Groups of groups groups fold
// through run accumulators: rows at least runRatio times the groups (the
// copies in and out cost a few rows a group), and the records of all groups
// small enough to stay in the first levels of cache.
func runFold(rows, groups int) bool {
	return groups <= runGroupsMax && rows >= runRatio*groups
}

const (
	runRatio     = 4
	runGroupsMax = 1 << 12
)

// intRun is a group's record for the integer folds: count and nulls, the
// run's sum in 128 bits (lo, hi; a run is at most 2^31 rows of values of at
// most 64 bits), and the extremes as order keys (foldIntRuns).
type intRun struct {
	count, nulls int64
	lo           uint64
	hi           uint64
	min, max     uint64
	_            [2]uint64 // (a record a cache line)
}

// floatRun is a group's record for the float fold: count and nulls, the
// compensated sum (sum, comp, spec as Groups keeps them) and the extremes
// as order keys (orderBits).
type floatRun struct {
	count, nulls    int64
	sum, comp, spec float64
	kmin, kmax      int64
	_               uint64
}

// orderBits maps a float's bits to an integer of the same order for every
// number, -0 below +0 (FloatMin and FloatMax's order), and back: it is its
// own inverse.
func orderBits(b uint64) int64 {
	return int64(b ^ uint64(int64(b)>>63)>>1)
}

// contiguous reports whether rows (increasing) are a range of rows.
func contiguous(rows []int32) bool {
	return len(rows) > 0 && int(rows[len(rows)-1])-int(rows[0]) == len(rows)-1
}

// validWord is the validity bits (bit voff+r of validity; every bit when
// validity is nil) of rows rr, at most 64, the bit of rr[k] at k: read as
// one word when the rows are contiguous.
func validWord(validity []byte, voff int, rr []int32, contig bool) uint64 {
	if validity == nil {
		return ^uint64(0)
	}
	if !contig {
		var w uint64
		for k, r := range rr {
			p := voff + int(r)
			w |= uint64(validity[p>>3]>>(p&7)&1) << k
		}
		return w
	}
	p := voff + int(rr[0])
	b, s := p>>3, p&7
	if b+9 <= len(validity) {
		w := binary.LittleEndian.Uint64(validity[b:]) >> s
		if s != 0 {
			w |= uint64(validity[b+8]) << (64 - s)
		}
		return w
	}
	var w uint64
	for k := range rr {
		q := p + k
		w |= uint64(validity[q>>3]>>(q&7)&1) << k
	}
	return w
}

var intRuns = sync.Pool{New: func() any { return new([]intRun) }}
var floatRuns = sync.Pool{New: func() any { return new([]floatRun) }}

// runBlock is the values of a block of at most 64 rows of a run: vals'
// own elements when the rows are contiguous, or else copied into buf.
func runBlock[T any](vals []T, rr []int32, contig bool, buf *[64]T) []T {
	if contig {
		b := int(rr[0])
		return vals[b : b+len(rr)]
	}
	for k, r := range rr {
		buf[k] = vals[r]
	}
	return buf[:len(rr)]
}

// allValid reports whether validity word w has the bits of n rows set.
func allValid(w uint64, n int) bool {
	m := uint64(1)<<n - 1 // (n is 64: all ones)
	return w&m == m
}

// foldIntRuns is FoldSigned's and FoldUnsigned's loop through run
// records (signed: T is signed). Values are taken as 64-bit words, sign
// extended for signed kinds; the extremes as order keys (the words with
// the sign bit flipped for signed kinds, so that both compare unsigned).
// The rows fold 64 at a time (a validity word), through one of two loops
// that fold every field, those not tracked left out when the records are
// copied back: few registers and stores a row (the loops with a branch
// per field spilled to the stack); a value of at most 32 bits summed in
// one word (2^31 of them cannot carry out of it).
func foldIntRuns[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](g *Groups, vals []T, validity []byte, voff int, rows, ids []int32, signed bool) {
	p := intRuns.Get().(*[]intRun)
	defer intRuns.Put(p)
	n := len(g.count)
	if cap(*p) < n {
		*p = make([]intRun, n)
	}
	t := (*p)[:n]
	var flip, ext uint64 // (signed: the sign bit flipped; the sign extended)
	if signed {
		flip, ext = 1<<63, ^uint64(0)
	}
	for i := range t {
		t[i] = intRun{count: g.count[i], nulls: g.nulls[i]}
		if g.ext {
			t[i].min, t[i].max = g.min[i][0]^flip, g.max[i][0]^flip
		}
	}
	narrow := unsafe.Sizeof(vals[0]) <= 4
	contig := contiguous(rows)
	var buf [64]T
	for at := 0; at < len(rows); at += 64 {
		rr := rows[at:min(at+64, len(rows))]
		vv := runBlock(vals, rr, contig, &buf)
		w := validWord(validity, voff, rr, contig)
		if narrow {
			foldNarrowBlock(t, vv, ids[at:at+len(rr)], w, flip)
		} else {
			foldWideBlock(t, vv, ids[at:at+len(rr)], w, flip, ext)
		}
	}
	for i, r := range t {
		g.count[i], g.nulls[i] = r.count, r.nulls
		if g.sum {
			if narrow { // (the sum in lo alone, sign and all)
				r.hi = uint64(int64(r.lo) >> 63)
			}
			s := &g.isum[i]
			var c uint64
			s[0], c = bits.Add64(s[0], r.lo, 0)
			s[1], c = bits.Add64(s[1], r.hi, c)
			s[2] += uint64(int64(r.hi)>>63)&ext + c
		}
		if g.ext {
			g.min[i][0], g.max[i][0] = r.min^flip, r.max^flip
		}
	}
}

// foldWideBlock folds values vv of groups ii (validity bits w) into their
// records: the sum in 128 bits (ext: the sign extended), the extremes as
// order keys (flip). Rows without a null take a loop without the test
// (15% of a row on the 2-core machine).
func foldWideBlock[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](t []intRun, vv []T, ii []int32, w, flip, ext uint64) {
	ii = ii[:len(vv)]
	if allValid(w, len(vv)) {
		for k, v := range vv {
			t[ii[k]].addWide(uint64(v), flip, ext) // (sign extended for signed T)
		}
		return
	}
	for k, v := range vv {
		if w>>(k&63)&1 == 0 {
			t[ii[k]].nulls++
		} else {
			t[ii[k]].addWide(uint64(v), flip, ext)
		}
	}
}

// foldNarrowBlock is foldWideBlock for values of at most 32 bits: the
// run's sum in lo alone, as a signed word (foldIntRuns).
func foldNarrowBlock[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](t []intRun, vv []T, ii []int32, w, flip uint64) {
	ii = ii[:len(vv)]
	if allValid(w, len(vv)) {
		for k, v := range vv {
			t[ii[k]].addNarrow(uint64(v), flip)
		}
		return
	}
	for k, v := range vv {
		if w>>(k&63)&1 == 0 {
			t[ii[k]].nulls++
		} else {
			t[ii[k]].addNarrow(uint64(v), flip)
		}
	}
}

// addWide folds value x (a 64-bit word, sign extended: ext all ones for
// a signed kind) into the record: its count, its sum in 128 bits and its
// extremes as order keys (x^flip).
func (a *intRun) addWide(x, flip, ext uint64) {
	a.count++
	var c uint64
	a.lo, c = bits.Add64(a.lo, x, 0)
	a.hi += uint64(int64(x)>>63)&ext + c
	a.extremes(x ^ flip)
}

// addNarrow is addWide for a value of at most 32 bits: the sum in lo.
func (a *intRun) addNarrow(x, flip uint64) {
	a.count++
	a.lo += x
	a.extremes(x ^ flip)
}

// extremes moves the record's extremes to order key y, written only when
// they change (rarely, once a run is under way).
func (a *intRun) extremes(y uint64) {
	if y < a.min {
		a.min = y
	}
	if y > a.max {
		a.max = y
	}
}

// foldFloatRuns is FoldFloat's loop through run records; false (and g
// untouched) when a group's extreme is NaN, which FloatMin and FloatMax
// keep and order keys would not.
func foldFloatRuns[T float32 | float64](g *Groups, vals []T, validity []byte, voff int, rows, ids []int32) bool {
	p := floatRuns.Get().(*[]floatRun)
	defer floatRuns.Put(p)
	n := len(g.count)
	if cap(*p) < n {
		*p = make([]floatRun, n)
	}
	t := (*p)[:n]
	for i := range t {
		t[i] = floatRun{count: g.count[i], nulls: g.nulls[i]}
		if g.sum {
			t[i].sum, t[i].comp, t[i].spec = g.fsum[i], g.fcomp[i], g.fspec[i]
		}
		if g.ext {
			lo, hi := math.Float64frombits(g.min[i][0]), math.Float64frombits(g.max[i][0])
			if lo != lo || hi != hi {
				return false
			}
			t[i].kmin, t[i].kmax = orderBits(g.min[i][0]), orderBits(g.max[i][0])
		}
	}
	contig := contiguous(rows)
	var buf [64]T
	for at := 0; at < len(rows); at += 64 {
		rr := rows[at:min(at+64, len(rows))]
		foldFloatBlock(t, runBlock(vals, rr, contig, &buf), ids[at:at+len(rr)], validWord(validity, voff, rr, contig))
	}
	for i, r := range t {
		g.count[i], g.nulls[i] = r.count, r.nulls
		if g.sum {
			g.fsum[i], g.fcomp[i], g.fspec[i] = r.sum, r.comp, r.spec
		}
		if g.ext {
			g.min[i][0], g.max[i][0] = uint64(orderBits(uint64(r.kmin))), uint64(orderBits(uint64(r.kmax)))
		}
	}
	return true
}

// foldFloatBlock folds values vv of groups ii (validity bits w) into their
// records, every field (foldFloatRuns copies back those tracked): the
// compensated sum (addPair, inline), the extremes as order keys, written
// only when they change. A value whose sum is not finite (a non-finite
// value, or an overflow: t-t is not 0) takes addPair itself, out of line
// (floatRunSpecial); the others are finite numbers.
func foldFloatBlock[T float32 | float64](t []floatRun, vv []T, ii []int32, w uint64) {
	ii = ii[:len(vv)]
	all := allValid(w, len(vv))
	for k, v := range vv {
		a := &t[ii[k]]
		if !all && w>>(k&63)&1 == 0 {
			a.nulls++
			continue
		}
		x := float64(v)
		a.count++
		s := a.sum
		u := s + x
		if u-u != 0 {
			floatRunSpecial(a, x)
			continue
		}
		z := u - s
		a.comp += (s - (u - z)) + (x - z)
		a.sum = u
		if k := orderBits(math.Float64bits(x)); k < a.kmin {
			a.kmin = k
		}
		if k := orderBits(math.Float64bits(x)); k > a.kmax {
			a.kmax = k
		}
	}
}

// floatRunSpecial folds value x, whose sum with a's is not finite, into
// record a (foldFloatBlock): addPair's special case, and the extremes of a
// number.
//
//go:noinline
func floatRunSpecial(a *floatRun, x float64) {
	addPair(&a.sum, &a.comp, &a.spec, x, 0)
	if x == x {
		k := orderBits(math.Float64bits(x))
		a.kmin, a.kmax = min(a.kmin, k), max(a.kmax, k)
	}
}
