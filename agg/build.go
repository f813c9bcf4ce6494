package agg

import (
	"bytes"
	"math"

	"github.com/arrowagg/arrowagg/column"
)

// The constructors of partial states: what an update loop (CPU morsel, GPU
// launch), a Parquet page's levels or a row group's statistics know of a run
// of values, as a State to Merge into a column's. They are the only ways,
// besides New, Merge and UnmarshalBinary, in which a State gets its values.
// count is the number of valid values of the run, nulls the number of nulls.
// With count 0 the extremes are the identity's, whatever the arguments say.

// Nulls is the state of a run of n nulls of family f (which knows every
// aggregate: there is no value).
func Nulls(f column.Family, n int64) State {
	s := identity(f)
	s.NullCount = n
	return s
}

// AddNulls counts n more nulls into s.
func (s *State) AddNulls(n int64) { s.NullCount += n }

// Counts is the partial state of a run of which only the counts were taken
// (a state that tracks nothing else: Tracking(Count|NullCount)).
func Counts(f column.Family, count, nulls int64) State {
	s := counted(f, count, nulls)
	s.Tracks = Count | NullCount
	return s
}

// Signed is the partial state of signed integers (and the temporal types
// stored as them): their exact sum and extremes.
func Signed(count, nulls int64, sum Int192, min, max int64) State {
	s := counted(column.FamilySigned, count, nulls)
	if count > 0 {
		s.Sum = sum
		s.Min[0], s.Max[0] = uint64(min), uint64(max)
	}
	return s
}

// Unsigned is the partial state of unsigned integers.
func Unsigned(count, nulls int64, sum Int192, min, max uint64) State {
	s := counted(column.FamilyUnsigned, count, nulls)
	if count > 0 {
		s.Sum = sum
		s.Min[0], s.Max[0] = min, max
	}
	return s
}

// Float is the partial state of floats whose compensated sum is the pair
// (sum, comp), special the plain sum of their non-finite values (0 when none),
// and min and max their extremes without NaN (+Inf and -Inf when every valid
// value is NaN).
func Float(count, nulls int64, sum, comp, special, min, max float64) State {
	s := counted(column.FamilyFloat, count, nulls)
	if count > 0 {
		s.FSum, s.FComp, s.FSpecial = sum, comp, special
		s.Min[0] = math.Float64bits(FloatMin(math.Inf(1), min))
		s.Max[0] = math.Float64bits(FloatMax(math.Inf(-1), max))
	}
	return s
}

// FloatLanes is the partial state of floats summed in lanes: lane k's
// compensated pair (sums[k], comps[k]) is added in lane order with an
// error-free two-sum, then special, the plain sum of the non-finite values.
func FloatLanes(count, nulls int64, sums, comps []float64, special, min, max float64) State {
	s := counted(column.FamilyFloat, count, nulls)
	if count == 0 {
		return s
	}
	for k := range sums {
		s.addFloatPartial(sums[k], comps[k])
	}
	if special != 0 || math.IsNaN(special) {
		s.FSpecial += special
	}
	s.Min[0] = math.Float64bits(FloatMin(math.Inf(1), min))
	s.Max[0] = math.Float64bits(FloatMax(math.Inf(-1), max))
	return s
}

// Decimal is the partial state of decimal128 values (unscaled, extremes as
// {lo, hi} words).
func Decimal(count, nulls int64, sum Int192, min, max [2]uint64) State {
	s := counted(column.FamilyDecimal, count, nulls)
	if count > 0 {
		s.Sum, s.Min, s.Max = sum, min, max
	}
	return s
}

// Bool is the partial state of booleans of which trues are true. It knows
// the statistics too: a boolean's square is itself, and its distinct values
// follow from the counts.
func Bool(count, nulls, trues int64) State {
	s := counted(column.FamilyBool, count, nulls)
	s.Tracks |= Moments | ApproxDistinct
	if count > 0 {
		s.Sum = Int192From(trues)
	}
	return s
}

// SetSquares makes s, the partial state of a run of signed, unsigned or
// decimal values (Signed, Unsigned, Decimal), track variance and stddev,
// with sq the exact sum of the squares of its valid values (unscaled).
func (s *State) SetSquares(sq Uint320) {
	s.Tracks |= Moments
	if s.Count > 0 {
		s.Sq = sq
	}
}

// SetFloatSquares makes s, the partial state of a run of floats (Float,
// FloatLanes), track variance and stddev: lane k's compensated sum of
// squares (sums[k], comps[k]) is added in lane order as FloatLanes adds
// sums, then special, the plain sum of the squares that are not finite
// (those of infinities and NaN, and squares that overflowed).
func (s *State) SetFloatSquares(sums, comps []float64, special float64) {
	s.Tracks |= Moments
	if s.Count == 0 {
		return
	}
	for k := range sums {
		addPair(&s.FSq, &s.FSqComp, &s.FSqSpecial, sums[k], comps[k])
	}
	if special != 0 || math.IsNaN(special) {
		s.FSqSpecial += special
	}
}

// SetSketch makes s, the partial state of a run of values of any family but
// booleans, track approx_distinct, with k the sketch of its valid values (nil
// for none). s owns k from then on: the caller never writes it again.
func (s *State) SetSketch(k *Sketch) {
	s.Tracks |= ApproxDistinct
	if s.Count > 0 {
		s.Sketch = k
	}
}

// SeedSketch starts the sketch of s, a state fresh from New that tracks
// approx_distinct, as k: the sketch of a partial state that s will be
// merged with (into the same state, in any order). The merge is then the
// same as without the seed, since sketches merge by the larger register and
// the union of hashes, and the backends' loops skip the hashes that k
// already holds (backend/cpu: once k has overflowed its exact hashes, those
// its registers hold; before, a morsel whose hashes k keeps all takes k as
// its sketch). s alone is no longer the partial state of its own values:
// finalize it only merged with k's state. k is shared, never written.
func (s *State) SeedSketch(k *Sketch) {
	if k != nil && s.Tracks.Has(ApproxDistinct) && s.Sketch == nil {
		s.Sketch = k
	}
}

// Bytes is the partial state of strings or binaries whose bytewise extremes
// are min and max (copied: the arguments may be borrowed).
func Bytes(count, nulls int64, min, max []byte) State {
	s := counted(column.FamilyBytes, count, nulls)
	if count > 0 {
		s.BMin, s.BMax = bytes.Clone(min), bytes.Clone(max)
	}
	return s
}

// Extremes is the partial state that a source knows only the counts and
// extremes of (Parquet statistics), in the Min/Max encoding of family f
// (signed, unsigned, float or decimal). Its sum is unknown: it answers count,
// null_count, min and max only.
func Extremes(f column.Family, count, nulls int64, min, max [2]uint64) State {
	s := counted(f, count, nulls)
	s.Tracks = Count | NullCount | Min | Max
	if count > 0 {
		s.Min, s.Max = min, max
	}
	return s
}

// counted is a partial state of counts that knows the unordered aggregates.
func counted(f column.Family, count, nulls int64) State {
	s := identity(f)
	s.Count, s.NullCount = count, nulls
	s.Tracks = Default
	return s
}

// Positions are the ordered aggregates of a run of values: the rows and
// values (Min/Max encoding, or bytes) of its first and last valid values and
// the rows of the first occurrences of its minimum and maximum; -1 for none.
type Positions struct {
	FirstRow, LastRow int64
	First, Last       [2]uint64
	BFirst, BLast     []byte
	MinRow, MaxRow    int64
}

// NoPositions are the positions of a run without valid values.
var NoPositions = Positions{FirstRow: -1, LastRow: -1, MinRow: -1, MaxRow: -1}

// SetPositions makes s, the partial state of a run, track the ordered
// aggregates, with the run's positions p (bytes copied).
func (s *State) SetPositions(p Positions) {
	s.Tracks |= Ordered
	s.FirstRow, s.First, s.BFirst = p.FirstRow, p.First, bytes.Clone(p.BFirst)
	s.LastRow, s.Last, s.BLast = p.LastRow, p.Last, bytes.Clone(p.BLast)
	s.MinRow, s.MaxRow = p.MinRow, p.MaxRow
}

// Identity is the empty state (the identity of Merge) of s's family that
// tracks what s tracks: the start of a partial state to merge into s.
func (s *State) Identity() State {
	e := identity(s.Family)
	e.Tracks = s.Tracks
	return e
}
