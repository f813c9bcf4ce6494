package agg

import (
	"math"
	"math/big"

	"github.com/arrowagg/arrowagg/column"
)

// Final is a state finalized: each aggregate as a neutral Go value, for a
// front end to turn into its own types (package engine makes Arrow scalars
// of it). Nothing in it depends on an Arrow version.
type Final struct {
	Family column.Family
	// Set is what the Final answers: the aggregates asked for that the state
	// tracks (State.Tracks); the others are not known.
	Set              Set
	Count, NullCount int64

	// The values below are meaningful when Valid (Count > 0).

	// Sum is the exact sum of signed, unsigned and decimal (unscaled) values
	// and the number of true values of booleans; FloatSum the compensated
	// sum of floats (NaN or ±Inf when non-finite values were seen).
	Sum      Int192
	FloatSum float64
	// Min and Max are the extremes; for floats NaN when every valid value
	// was NaN.
	Min, Max Value
	// The ordered aggregates (when Set has them): the first and last valid
	// values with their rows, and the rows of the first minimum and maximum;
	// -1 for none.
	First, Last       Value
	FirstRow, LastRow int64
	ArgMin, ArgMax    int64
}

// Value is one value of a column, by family: Bits in the State's Min/Max
// encoding (signed as int64 bits, unsigned, decimal128 as {lo, hi}), Float
// for floats, Bool for booleans, Bytes for strings and binaries.
type Value struct {
	Bits  [2]uint64
	Float float64
	Bool  bool
	Bytes []byte
}

// Valid reports whether there was a valid value.
func (f *Final) Valid() bool { return f.Count > 0 }

// Finalize reads the aggregates of set (Normalize: the default when empty)
// that the state tracks out of it.
func (s *State) Finalize(set Set) Final {
	f := Final{Family: s.Family, Set: Normalize(set) & (s.Tracks | Count | NullCount), Count: s.Count, NullCount: s.NullCount,
		Sum: s.Sum, FirstRow: -1, LastRow: -1, ArgMin: -1, ArgMax: -1}
	if s.Family == column.FamilyFloat {
		f.FloatSum = s.FloatSum()
	}
	f.Min, f.Max = s.extreme(false), s.extreme(true)
	if f.Set.Any(Ordered) && s.Ordered() {
		f.FirstRow, f.LastRow, f.ArgMin, f.ArgMax = s.FirstRow, s.LastRow, s.MinRow, s.MaxRow
		f.First, f.Last = s.value(s.First, s.BFirst), s.value(s.Last, s.BLast)
	}
	return f
}

// extreme is the min (isMax false) or max of the state as a Value.
func (s *State) extreme(isMax bool) Value {
	switch s.Family {
	case column.FamilyFloat:
		return Value{Float: s.FloatExtreme(isMax)}
	case column.FamilyBool:
		return Value{Bool: s.BoolExtreme(isMax) == 1}
	case column.FamilyBytes:
		if isMax {
			return Value{Bytes: s.BMax}
		}
		return Value{Bytes: s.BMin}
	}
	if isMax {
		return Value{Bits: s.Max}
	}
	return Value{Bits: s.Min}
}

// value is one value in the Min/Max encoding (or bytes) as a Value: the
// extremes' NaN rule does not apply to one value.
func (s *State) value(enc [2]uint64, b []byte) Value {
	switch s.Family {
	case column.FamilyFloat:
		return Value{Float: math.Float64frombits(enc[0])}
	case column.FamilyBool:
		return Value{Bool: enc[0] == 1}
	case column.FamilyBytes:
		return Value{Bytes: b}
	}
	return Value{Bits: enc}
}

// Mean is the mean of the values, rounded once to a float64: the
// compensated float sum over the count, or the exact sum over count·10^scale
// (scale: a decimal column's; 0 otherwise). ok is false without valid values
// and for strings and binaries.
func (f *Final) Mean(scale int32) (mean float64, ok bool) {
	if !f.Valid() || f.Family == column.FamilyBytes {
		return 0, false
	}
	if f.Family == column.FamilyFloat {
		return f.FloatSum / float64(f.Count), true
	}
	num, den := f.Sum.Big(), big.NewInt(f.Count)
	if scale != 0 {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
		if scale > 0 {
			den.Mul(den, p)
		} else {
			num.Mul(num, p.Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
		}
	}
	m, _ := new(big.Rat).SetFrac(num, den).Float64()
	return m, true
}
