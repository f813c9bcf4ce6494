package agg

import (
	"bytes"
	"math"

	"github.com/arrowagg/arrowagg/column"
)

// State is the partial aggregate of one column: the one definition of what the
// aggregates are, whatever drives them. New initializes it (init); a backend's
// update loops fold a run of values into a partial State made by one of the
// constructors of build.go (update), Merge combines two partial states
// (merge), and Finalize reads the results out of it as neutral values
// (Final: finalize), which the front ends turn into Arrow scalars.
//
// The fields are exported to be read; only this package writes them, through
// New, the constructors, Merge, AddNulls, SetPositions, ShiftRows,
// SeedSketch and UnmarshalBinary (a test of this package enforces it across
// the module).
//
// Merge is associative and has New as identity, so partial states of
// chunks, files, devices or machines can be combined in any grouping; the
// engine always merges in a fixed order, which makes float results identical
// from run to run whatever the thread count. A State is a plain value: copy it
// (a copy shares no memory that a method of either writes), serialize it with
// MarshalBinary, merge it later.
type State struct {
	Family    column.Family
	Count     int64 // valid (non-null) values
	NullCount int64

	// Sum is the exact sum of signed, unsigned and decimal values (unscaled) and
	// the number of true values of a boolean column.
	Sum Int192

	// Float sums are compensated: the sum is FSum + FComp, where FComp gathers the
	// rounding errors of every addition (error-free transformations, Neumaier).
	// FSpecial is the plain sum of the non-finite values (infinities, NaN) and of
	// partial sums that overflowed, 0 when there were none.
	FSum, FComp, FSpecial float64

	// Min and Max in the family's encoding: signed int64 bits, unsigned uint64,
	// float64 bits, decimal128 as {lo, hi}; unused for bool and bytes. Floats
	// start at +Inf / -Inf and skip NaN, so Min > Max with Count > 0 means every
	// valid value was NaN.
	Min, Max [2]uint64

	// BMin and BMax are the bytewise extremes of a bytes column (owned copies),
	// meaningful when Count > 0.
	BMin, BMax []byte

	// Tracks are the aggregates the state knows: what its producer was asked
	// for (New), computed (the constructors) or both (Merge keeps what both
	// sides know). Count and NullCount are always known; Sum and Mean go
	// together; the ordered aggregates go together and need Min and Max.
	// Backends read it to skip work: a state tracking only counts reads
	// validity alone.
	Tracks Set

	// The ordered aggregates, when Tracks has them (Ordered): the first and
	// last valid values with their rows, and the rows of the first occurrence
	// of Min and Max. Rows count from the first row of the stream; -1 means
	// none. Whatever order partial states are merged in, the result is the
	// same: the earliest row wins ties.
	FirstRow, LastRow int64
	First, Last       [2]uint64 // in the Min/Max encoding
	BFirst, BLast     []byte    // bytes columns
	MinRow, MaxRow    int64

	// The sums of squares of variance and stddev, when Tracks has them
	// (Moments): Sq is the exact sum of the squares of signed, unsigned and
	// decimal (unscaled) values; floats keep theirs compensated like their
	// sum, FSq + FSqComp, with FSqSpecial the plain sum of the squares that
	// are not finite (of infinities and NaN, and squares or partial sums
	// that overflowed), 0 when there were none. Booleans need none: their
	// squares are their values.
	Sq                       Uint320
	FSq, FSqComp, FSqSpecial float64

	// Sketch is the HyperLogLog sketch of approx_distinct (sketch.go), when
	// Tracks has ApproxDistinct and a value was seen (nil: none); never
	// written in place, so a copy of the State may share it. Booleans need
	// none.
	Sketch *Sketch
}

// New returns the empty state of a family that tracks the aggregates of set
// (Normalize: the default set when empty), with what they need (Tracking),
// that the family answers (Answers). Merged with a partial state, it gives
// that partial state, tracking what both track.
func New(f column.Family, set Set) State {
	s := identity(f)
	s.Tracks = Tracking(set) & Answers(f)
	return s
}

// Answers is what a state of family f can answer: every aggregate, but
// count and null_count alone for column.FamilyCounts, whose values are
// neither ordered nor summed. The others are not known (a front end prints
// them as nulls), whatever is asked.
func Answers(f column.Family) Set {
	if f == column.FamilyCounts {
		return Count | NullCount
	}
	return All
}

// Tracking is what a state must track to answer the aggregates of set
// (Normalize: the default set when empty): set, the counts, Sum with Mean and
// the other way round, all the ordered aggregates with any of them, and Min
// and Max with them, stddev with variance and the other way round, and the
// sum with them.
func Tracking(set Set) Set {
	set = Normalize(set) | Count | NullCount
	if set.Any(Moments) {
		set |= Moments | Sum
	}
	if set.Any(Sum | Mean) {
		set |= Sum | Mean
	}
	if set.Any(Ordered) {
		set |= Ordered | Min | Max
	}
	return set
}

// Ordered reports whether the state tracks the ordered aggregates.
func (s *State) Ordered() bool { return s.Tracks.Any(Ordered) }

// identity is the empty state of a family that tracks everything the family
// answers: the identity of Merge.
func identity(f column.Family) State {
	s := State{Family: f, Tracks: Answers(f), FirstRow: -1, LastRow: -1, MinRow: -1, MaxRow: -1}
	s.Min, s.Max = identityExtremes(f)
	return s
}

// identityExtremes are the Min and Max of family f's empty state: the
// largest and the smallest value, which any value replaces.
func identityExtremes(f column.Family) (lo, hi [2]uint64) {
	switch f {
	case column.FamilySigned:
		return [2]uint64{math.MaxInt64}, [2]uint64{1 << 63}
	case column.FamilyUnsigned:
		return [2]uint64{math.MaxUint64}, [2]uint64{}
	case column.FamilyFloat:
		return [2]uint64{math.Float64bits(math.Inf(1))}, [2]uint64{math.Float64bits(math.Inf(-1))}
	case column.FamilyDecimal:
		// max decimal128: 2^127-1; min: -2^127
		return [2]uint64{math.MaxUint64, math.MaxInt64}, [2]uint64{0, 1 << 63}
	}
	return
}

// Merge folds o into s. Both must be of the same family.
func (s *State) Merge(o *State) {
	if s.Ordered() && o.Ordered() {
		s.mergeOrdered(o)
	}
	s.Tracks &= o.Tracks
	wasEmpty := s.Count == 0
	s.Count += o.Count
	s.NullCount += o.NullCount
	switch s.Family {
	case column.FamilySigned:
		s.Sum = s.Sum.Add(o.Sum)
		s.Min[0] = uint64(min(int64(s.Min[0]), int64(o.Min[0])))
		s.Max[0] = uint64(max(int64(s.Max[0]), int64(o.Max[0])))
	case column.FamilyUnsigned:
		s.Sum = s.Sum.Add(o.Sum)
		s.Min[0] = min(s.Min[0], o.Min[0])
		s.Max[0] = max(s.Max[0], o.Max[0])
	case column.FamilyBool:
		s.Sum = s.Sum.Add(o.Sum)
	case column.FamilyDecimal:
		s.Sum = s.Sum.Add(o.Sum)
		if Decimal128Less(o.Min, s.Min) {
			s.Min = o.Min
		}
		if Decimal128Less(s.Max, o.Max) {
			s.Max = o.Max
		}
	case column.FamilyFloat:
		s.addFloatPartial(o.FSum, o.FComp)
		s.FSpecial += o.FSpecial
		s.Min[0] = math.Float64bits(FloatMin(math.Float64frombits(s.Min[0]), math.Float64frombits(o.Min[0])))
		s.Max[0] = math.Float64bits(FloatMax(math.Float64frombits(s.Max[0]), math.Float64frombits(o.Max[0])))
	case column.FamilyBytes:
		if o.Count > 0 {
			// Replaced, never written in place: a copy of s may share
			// the old bytes.
			if wasEmpty || bytes.Compare(o.BMin, s.BMin) < 0 {
				s.BMin = bytes.Clone(o.BMin)
			}
			if wasEmpty || bytes.Compare(o.BMax, s.BMax) > 0 {
				s.BMax = bytes.Clone(o.BMax)
			}
		}
	}
	s.mergeStats(o)
}

// addFloatPartial adds the compensated pair (sum, comp) with an error-free
// two-sum: the rounding error of sum+FSum goes into FComp.
func (s *State) addFloatPartial(sum, comp float64) {
	addPair(&s.FSum, &s.FComp, &s.FSpecial, sum, comp)
}

// addPair adds the compensated pair (x, xc) to the compensated sum (*sum,
// *comp) with an error-free two-sum, a non-finite result to *special.
func addPair(sum, comp, special *float64, x, xc float64) {
	t := *sum + x
	if math.IsInf(t, 0) || math.IsNaN(t) {
		// An infinity, a NaN or an overflow: the result is non-finite whatever
		// the finite rest is, so only the special value is kept.
		*special += t
		*sum = 0
		*comp += xc
		return
	}
	z := t - *sum
	*comp += (*sum - (t - z)) + (x - z) + xc
	*sum = t
}

// mergeStats merges the sums of squares and the sketch of o into s, those
// that s still tracks once merged (s.Tracks: what both track).
func (s *State) mergeStats(o *State) {
	if s.Tracks.Any(Moments) {
		switch s.Family {
		case column.FamilySigned, column.FamilyUnsigned, column.FamilyDecimal:
			s.Sq = s.Sq.Add(o.Sq)
		case column.FamilyFloat:
			addPair(&s.FSq, &s.FSqComp, &s.FSqSpecial, o.FSq, o.FSqComp)
			s.FSqSpecial += o.FSqSpecial
		}
	} else {
		s.Sq, s.FSq, s.FSqComp, s.FSqSpecial = Uint320{}, 0, 0, 0
	}
	if s.Tracks.Has(ApproxDistinct) {
		s.Sketch = mergeSketches(s.Sketch, o.Sketch)
	} else {
		s.Sketch = nil
	}
}

// FloatSum returns the compensated float sum: NaN or ±Inf when non-finite values
// were seen, else FSum + FComp rounded once.
func (s *State) FloatSum() float64 {
	if s.FSpecial != 0 || math.IsNaN(s.FSpecial) {
		return s.FSpecial
	}
	return s.FSum + s.FComp
}

// FloatMin is min with -0 < +0; NaN never wins against a number (the update
// loops never store NaN; the identity is +Inf).
func FloatMin(a, b float64) float64 {
	if b < a || (b == a && math.Signbit(b)) {
		return b
	}
	return a
}

// FloatMax is max with +0 > -0.
func FloatMax(a, b float64) float64 {
	if b > a || (b == a && !math.Signbit(b)) {
		return b
	}
	return a
}

// Decimal128Less reports whether the decimal128 a ({lo, hi} words) is less
// than b.
func Decimal128Less(a, b [2]uint64) bool {
	if int64(a[1]) != int64(b[1]) {
		return int64(a[1]) < int64(b[1])
	}
	return a[0] < b[0]
}

// mergeOrdered merges the ordered aggregates of o into s; it runs before the
// extremes are merged, so it can compare them.
func (s *State) mergeOrdered(o *State) {
	if o.FirstRow >= 0 && (s.FirstRow < 0 || o.FirstRow < s.FirstRow) {
		s.FirstRow, s.First, s.BFirst = o.FirstRow, o.First, bytes.Clone(o.BFirst)
	}
	if o.LastRow > s.LastRow {
		s.LastRow, s.Last, s.BLast = o.LastRow, o.Last, bytes.Clone(o.BLast)
	}
	if o.Count == 0 {
		return
	}
	if s.Count == 0 {
		s.MinRow, s.MaxRow = o.MinRow, o.MaxRow
		return
	}
	switch c := s.compareExtreme(o, false); {
	case c > 0:
		s.MinRow = o.MinRow
	case c == 0:
		s.MinRow = earliest(s.MinRow, o.MinRow)
	}
	switch c := s.compareExtreme(o, true); {
	case c < 0:
		s.MaxRow = o.MaxRow
	case c == 0:
		s.MaxRow = earliest(s.MaxRow, o.MaxRow)
	}
}

func earliest(a, b int64) int64 {
	if a < 0 || (b >= 0 && b < a) {
		return b
	}
	return a
}

// compareExtreme compares s's Min (or Max) with o's in the family's order
// (-0 < +0 for floats; NaN, reported only when every value is NaN, counts as
// the largest for min and the smallest for max, so that a number wins).
func (s *State) compareExtreme(o *State, isMax bool) int {
	a, b := s.Min, o.Min
	ab, bb := s.BMin, o.BMin
	if isMax {
		a, b, ab, bb = s.Max, o.Max, s.BMax, o.BMax
	}
	switch s.Family {
	case column.FamilySigned:
		return cmp3(int64(a[0]), int64(b[0]))
	case column.FamilyUnsigned:
		return cmp3(a[0], b[0])
	case column.FamilyDecimal:
		if Decimal128Less(a, b) {
			return -1
		}
		if Decimal128Less(b, a) {
			return 1
		}
		return 0
	case column.FamilyBool:
		// min is true only when every value is true; max true when any is.
		am, bm := s.BoolExtreme(isMax), o.BoolExtreme(isMax)
		return cmp3(am, bm)
	case column.FamilyBytes:
		return bytes.Compare(ab, bb)
	case column.FamilyFloat:
		fa, fb := s.FloatExtreme(isMax), o.FloatExtreme(isMax)
		return cmp3(floatKey(fa, isMax), floatKey(fb, isMax))
	}
	return 0
}

func cmp3[T int64 | uint64](a, b T) int { // like cmp.Compare, without NaN
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// BoolExtreme is the min (isMax false) or max of a bool state as 0 or 1.
func (s *State) BoolExtreme(isMax bool) uint64 {
	trues := s.Sum[0]
	if isMax {
		if trues > 0 {
			return 1
		}
		return 0
	}
	if int64(trues) == s.Count {
		return 1
	}
	return 0
}

// FloatExtreme is the reported min or max of a float state (NaN when every
// value is NaN).
func (s *State) FloatExtreme(isMax bool) float64 {
	if math.Float64frombits(s.Min[0]) > math.Float64frombits(s.Max[0]) {
		return math.NaN()
	}
	if isMax {
		return math.Float64frombits(s.Max[0])
	}
	return math.Float64frombits(s.Min[0])
}

// floatKey maps a float to an order-preserving unsigned key with -0 < +0;
// NaN maps past the end that makes it lose (largest for min, smallest for
// max).
func floatKey(f float64, isMax bool) uint64 {
	if math.IsNaN(f) {
		if isMax {
			return 0
		}
		return math.MaxUint64
	}
	u := math.Float64bits(f)
	if u>>63 == 1 {
		return ^u
	}
	return u | 1<<63
}

// ShiftRows moves the state's rows by n: for a partial state of a part of a
// stream that starts at row n.
func (s *State) ShiftRows(n int64) {
	for _, r := range []*int64{&s.FirstRow, &s.LastRow, &s.MinRow, &s.MaxRow} {
		if *r >= 0 {
			*r += n
		}
	}
}
