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
	// Distinct is approx_distinct (when Set has it): the sketch's estimate,
	// at least 1 and at most Count when there are values, 0 without; exact
	// for booleans.
	Distinct int64

	// What Variance and Stddev read: the float sum's compensated pair and
	// special value, the sums of squares.
	fsum, fcomp, fspecial float64
	sq                    Uint320
	fsq, fsqComp, fsqSpec float64
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
	if f.Set.Any(Moments) {
		f.fsum, f.fcomp, f.fspecial = s.FSum, s.FComp, s.FSpecial
		f.sq, f.fsq, f.fsqComp, f.fsqSpec = s.Sq, s.FSq, s.FSqComp, s.FSqSpecial
	}
	if f.Set.Has(ApproxDistinct) {
		f.Distinct = s.distinct()
	}
	return f
}

// distinct is approx_distinct of the state.
func (s *State) distinct() int64 {
	if s.Count == 0 {
		return 0
	}
	if s.Family == column.FamilyBool {
		n := int64(0)
		if trues := int64(s.Sum[0]); trues > 0 {
			n++
		}
		if int64(s.Sum[0]) < s.Count {
			n++
		}
		return n
	}
	e := int64(math.Round(s.Sketch.estimate()))
	return max(1, min(e, s.Count))
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

// Variance is the sample variance of the values (ddof 1, as DuckDB's
// variance and var_samp; pyarrow.compute.variance with ddof=1): with n
// values, S their sum and Q the sum of their squares, (Q - S²/n) / (n - 1),
// computed exactly from the state's sums and rounded once to a float64,
// divided by 10^(2·scale) for a decimal column (scale: its scale; 0
// otherwise). Integer, decimal and boolean sums are exact, so is their
// variance before the rounding; floats' are compensated (README's
// Exactness). A float column with an infinity or a NaN, or whose sum
// overflows, has a NaN variance, one whose squares overflow float64 (values
// beyond about ±1.3e154) an infinite one. ok is false with fewer than two
// values and for strings and binaries.
func (f *Final) Variance(scale int32) (v float64, ok bool) {
	num, den, special, ok := f.moments(scale)
	if !ok || special != 0 || math.IsNaN(special) {
		return special, ok
	}
	v, _ = new(big.Rat).SetFrac(num, den).Float64()
	return v, true
}

// Stddev is the sample standard deviation, the square root of Variance's
// exact value (to 128 bits) rounded to a float64.
func (f *Final) Stddev(scale int32) (sd float64, ok bool) {
	num, den, special, ok := f.moments(scale)
	if !ok || special != 0 || math.IsNaN(special) {
		return math.Sqrt(special), ok
	}
	const prec = 128
	q := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).SetInt(num), new(big.Float).SetPrec(prec).SetInt(den))
	sd, _ = q.Sqrt(q).Float64()
	return sd, true
}

// moments is the exact sample variance as num/den (num >= 0), or, for
// floats with non-finite values or squares, the special variance (NaN or
// +Inf) with num and den nil.
func (f *Final) moments(scale int32) (num, den *big.Int, special float64, ok bool) {
	n := f.Count
	if n < 2 || f.Family == column.FamilyBytes {
		return nil, nil, 0, false
	}
	var s, q *big.Rat
	switch f.Family {
	case column.FamilyFloat:
		switch {
		case f.fspecial != 0 || math.IsNaN(f.fspecial) || math.IsNaN(f.fsqSpec):
			return nil, nil, math.NaN(), true
		case f.fsqSpec != 0:
			return nil, nil, math.Inf(1), true
		}
		s = new(big.Rat).SetFloat64(f.fsum)
		s.Add(s, new(big.Rat).SetFloat64(f.fcomp))
		q = new(big.Rat).SetFloat64(f.fsq)
		q.Add(q, new(big.Rat).SetFloat64(f.fsqComp))
	case column.FamilyBool:
		s = new(big.Rat).SetInt(f.Sum.Big())
		q = s
	default:
		s = new(big.Rat).SetInt(f.Sum.Big())
		q = new(big.Rat).SetInt(f.sq.Big())
	}
	// (n·Q - S²) / (n·(n-1))
	bn := new(big.Rat).SetInt64(n)
	r := new(big.Rat).Mul(bn, q)
	r.Sub(r, new(big.Rat).Mul(s, s))
	if r.Sign() < 0 { // rounding in a float's sums: the variance is 0
		r.SetInt64(0)
	}
	r.Quo(r, new(big.Rat).SetInt64(n))
	r.Quo(r, new(big.Rat).SetInt64(n-1))
	if scale != 0 {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(2*int64(abs32(scale))), nil)
		if scale > 0 {
			r.Quo(r, new(big.Rat).SetInt(p))
		} else {
			r.Mul(r, new(big.Rat).SetInt(p))
		}
	}
	return r.Num(), r.Denom(), 0, true
}

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}
