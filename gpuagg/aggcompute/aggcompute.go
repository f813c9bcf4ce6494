// Package aggcompute plugs arrowagg's aggregates into Arrow Go's compute
// function registry, which in Arrow Go v17 has none of them:
//
//	aggcompute.Register(compute.GetFunctionRegistry(), engine)
//	out, err := compute.CallFunction(ctx, "sum", nil, compute.NewDatum(arr))
//
// Register adds eleven meta functions of one argument, with the names,
// options and result types of Arrow C++'s:
//
//   - sum, mean, min, max and min_max (a struct {min, max}), with
//     ScalarAggregateOptions;
//   - count, with CountOptions;
//   - the ordered first, last and first_last (a struct {first, last}), and
//     arg_min and arg_max (arrowagg's own: the int64 row of the first minimum
//     or maximum), with ScalarAggregateOptions.
//
// The argument is an array, a chunked array or a scalar. Results are Arrow
// scalars with Arrow C++'s types: sum is int64 for signed integers, uint64
// for unsigned ones and booleans, float64 for floats, decimal128(38, scale)
// for decimals; mean is float64, and for decimal128(p, s) a decimal128(p, s),
// the exact mean rounded half away from zero; min, max, first and last are of
// the input's type (a dictionary's value type); count is int64.
//
// Nulls and empty inputs follow Arrow C++. The zero ScalarAggregateOptions
// (and nil options) are Arrow's defaults: nulls skipped, and a null result
// without a valid value. With MinCount 0 the sum of an input without valid
// values is 0 and the mean NaN (null for decimals); min, max, first, last,
// arg_min and arg_max are null without a valid value whatever the options.
//
// Errors: a type an aggregate does not apply to (the sum of a string) or that
// arrowagg does not read (a list; the null type, except for count) is an
// error wrapping arrow.ErrNotImplemented; count accepts every type. An
// integer sum that does not fit int64 / uint64 is an error wrapping
// ErrOverflow that gives the exact value (engine.Result.SumWide has it too);
// it never wraps around.
package aggcompute

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/compute"
	"github.com/apache/arrow/go/v17/arrow/compute/exec"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/scalar"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/engine"
)

// ScalarAggregateOptions are the options of every function but count:
// Arrow C++'s ScalarAggregateOptions, whose zero value is Arrow's defaults
// (skip_nulls = true, min_count = 1).
type ScalarAggregateOptions struct {
	// KeepNulls is Arrow's skip_nulls = false: any null in the input makes
	// the result null. The zero value skips nulls.
	KeepNulls bool
	// MinCount is Arrow's min_count: with fewer valid values than
	// *MinCount the result is null. Nil means Arrow's default, 1. With 0,
	// the sum of an input without valid values is 0 and its mean NaN
	// (Arrow C++'s); min, max, first, last, arg_min, arg_max and the mean
	// of decimals are null without a valid value whatever MinCount is.
	MinCount *uint32
}

// TypeName implements compute.FunctionOptions.
func (ScalarAggregateOptions) TypeName() string { return "ScalarAggregateOptions" }

// DefaultScalarAggregateOptions are Arrow's defaults, skip nulls and
// min_count 1: the zero ScalarAggregateOptions.
func DefaultScalarAggregateOptions() ScalarAggregateOptions { return ScalarAggregateOptions{} }

// minCount is *o.MinCount, or Arrow's default.
func (o ScalarAggregateOptions) minCount() int64 {
	if o.MinCount == nil {
		return 1
	}
	return int64(*o.MinCount)
}

// CountMode selects what count counts.
type CountMode uint8

// The count modes, as Arrow C++'s CountOptions.
const (
	CountOnlyValid CountMode = iota
	CountOnlyNull
	CountAll
)

// CountOptions are the options of count; the zero value counts the valid
// values, Arrow's default.
type CountOptions struct{ Mode CountMode }

// TypeName implements compute.FunctionOptions.
func (CountOptions) TypeName() string { return "CountOptions" }

// ErrOverflow is wrapped by the error of a sum that does not fit its type.
var ErrOverflow = errors.New("sum overflows its result type")

// ErrRegistered is wrapped by Register's error when the registry already has
// a function of one of its names.
var ErrRegistered = errors.New("function name already registered")

// function is one function Register adds.
type function struct {
	name, summary, opts string
	impl                func(e *engine.Engine) compute.MetaFunctionImpl
}

// functions are the functions Register adds, in the order of the package
// documentation.
var functions = []function{
	{"sum", "Compute the sum of a numeric array", "ScalarAggregateOptions", scalarAgg(agg.Sum, sumOf)},
	{"mean", "Compute the mean of a numeric array", "ScalarAggregateOptions", scalarAgg(agg.Mean, meanOf)},
	{"min", "Compute the minimum value of an array", "ScalarAggregateOptions", scalarAgg(agg.Min, pick("min", func(r engine.Result) scalar.Scalar { return r.Min }))},
	{"max", "Compute the maximum value of an array", "ScalarAggregateOptions", scalarAgg(agg.Max, pick("max", func(r engine.Result) scalar.Scalar { return r.Max }))},
	{"min_max", "Compute the minimum and maximum values of an array", "ScalarAggregateOptions", scalarAgg(agg.Min|agg.Max, minMaxOf)},
	{"count", "Count the number of null / non-null values", "CountOptions", countImpl},
	{"first", "Compute the first non-null value in row order", "ScalarAggregateOptions", scalarAgg(agg.First, pick("first", func(r engine.Result) scalar.Scalar { return r.First }))},
	{"last", "Compute the last non-null value in row order", "ScalarAggregateOptions", scalarAgg(agg.Last, pick("last", func(r engine.Result) scalar.Scalar { return r.Last }))},
	{"first_last", "Compute the first and last non-null values in row order", "ScalarAggregateOptions", scalarAgg(agg.First|agg.Last, firstLastOf)},
	{"arg_min", "Compute the index of the first minimum", "ScalarAggregateOptions", scalarAgg(agg.ArgMin, pick("arg_min", func(r engine.Result) scalar.Scalar { return r.ArgMin }))},
	{"arg_max", "Compute the index of the first maximum", "ScalarAggregateOptions", scalarAgg(agg.ArgMax, pick("arg_max", func(r engine.Result) scalar.Scalar { return r.ArgMax }))},
}

// Register adds the eleven functions of the package to reg: sum, mean, min,
// max, min_max, count, first, last, first_last, arg_min and arg_max,
// computed by e (a nil e means a CPU engine with default options).
//
// It adds all of them or none: if reg already has a function of one of these
// names (a second Register, say), it adds nothing and returns an error
// wrapping ErrRegistered that names them. (A function of one of these names
// that another goroutine adds to reg while Register runs can still leave
// some added: the registry has no transaction.)
func Register(reg compute.FunctionRegistry, e *engine.Engine) error {
	var taken []string
	for _, f := range functions {
		if _, ok := reg.GetFunction(f.name); ok {
			taken = append(taken, strconv.Quote(f.name))
		}
	}
	if len(taken) > 0 {
		return fmt.Errorf("aggcompute: %w: the registry has %s; nothing was added", ErrRegistered, strings.Join(taken, ", "))
	}
	if e == nil {
		var err error
		if e, err = engine.New(engine.WithDevice(engine.DeviceCPU)); err != nil {
			return err
		}
	}
	for _, f := range functions {
		fn := compute.NewMetaFunction(f.name, compute.Unary(), compute.FunctionDoc{
			Summary: f.summary, ArgNames: []string{"array"}, OptionsType: f.opts,
		}, f.impl(e))
		if !reg.AddFunction(fn, false) {
			return fmt.Errorf("aggcompute: %w: %q, added while Register ran", ErrRegistered, f.name)
		}
	}
	return nil
}

// aggregate runs the engine over a datum (array, chunked array or scalar).
func aggregate(ctx context.Context, e *engine.Engine, aggs agg.Set, arg compute.Datum) (engine.Result, error) {
	switch d := arg.(type) {
	case *compute.ArrayDatum:
		arr := d.MakeArray()
		defer arr.Release()
		return e.AggregateArray(ctx, arr, aggs)
	case *compute.ChunkedDatum:
		return e.AggregateChunked(ctx, d.Value, aggs)
	case *compute.ScalarDatum:
		arr, err := scalar.MakeArrayFromScalar(d.Value, 1, exec.GetAllocator(ctx))
		if err != nil {
			return engine.Result{}, fmt.Errorf("%w: %w", arrow.ErrInvalid, err)
		}
		defer arr.Release()
		return e.AggregateArray(ctx, arr, aggs)
	}
	return engine.Result{}, fmt.Errorf("%w: aggregates take an array, chunked array or scalar, not %s", arrow.ErrInvalid, arg.Kind())
}

// finish picks one aggregate of a result for an input of type dt; null says
// the options make the result null.
type finish func(r engine.Result, dt arrow.DataType, null bool) (scalar.Scalar, error)

// scalarOptions are opts as ScalarAggregateOptions (nil: the defaults).
func scalarOptions(opts compute.FunctionOptions) (ScalarAggregateOptions, error) {
	switch v := opts.(type) {
	case nil:
	case ScalarAggregateOptions:
		return v, nil
	case *ScalarAggregateOptions:
		if v != nil {
			return *v, nil
		}
	default:
		return ScalarAggregateOptions{}, fmt.Errorf("%w: want ScalarAggregateOptions, got %s", arrow.ErrInvalid, opts.TypeName())
	}
	return ScalarAggregateOptions{}, nil
}

// scalarAgg is the implementation of a function of ScalarAggregateOptions
// that aggregates aggs and finishes with fin.
func scalarAgg(aggs agg.Set, fin finish) func(e *engine.Engine) compute.MetaFunctionImpl {
	return func(e *engine.Engine) compute.MetaFunctionImpl {
		return func(ctx context.Context, opts compute.FunctionOptions, args ...compute.Datum) (compute.Datum, error) {
			o, err := scalarOptions(opts)
			if err != nil {
				return nil, err
			}
			r, err := aggregate(ctx, e, aggs|agg.Count|agg.NullCount, args[0])
			if err != nil {
				return nil, err
			}
			null := (o.KeepNulls && r.NullCount > 0) || r.Count < o.minCount()
			s, err := fin(r, args[0].(compute.ArrayLikeDatum).Type(), null)
			if err != nil {
				return nil, err
			}
			return compute.NewDatum(s), nil
		}
	}
}

// nullLike returns a null scalar of s's type (a struct of nulls for min_max
// and first_last).
func nullLike(s scalar.Scalar) scalar.Scalar {
	if st, ok := s.(*scalar.Struct); ok {
		fields := make([]scalar.Scalar, len(st.Value))
		for i, f := range st.Value {
			fields[i] = scalar.MakeNullScalar(f.DataType())
		}
		return scalar.NewStructScalar(fields, st.Type)
	}
	return scalar.MakeNullScalar(s.DataType())
}

func notApplicable(fn string, dt arrow.DataType) error {
	return fmt.Errorf("%w: function '%s' has no kernel matching input type (%s)", arrow.ErrNotImplemented, fn, dt)
}

// valueType is the type of an input's values (a dictionary's value type).
func valueType(dt arrow.DataType) arrow.DataType {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		return d.ValueType
	}
	return dt
}

// sumOf is the sum: 0 of the sum's type without valid values (when the
// options allow a result), an error when it overflows that type.
func sumOf(r engine.Result, dt arrow.DataType, null bool) (scalar.Scalar, error) {
	switch {
	case r.Sum == nil:
		return nil, notApplicable("sum", dt)
	case null:
		return scalar.MakeNullScalar(r.Sum.DataType()), nil
	case r.Count == 0:
		return zero(r.Sum.DataType())
	case r.SumOverflow:
		return nil, fmt.Errorf("%w: sum of %s is %s", ErrOverflow, dt, r.SumExact)
	}
	return r.Sum, nil
}

// zero is the 0 of a sum type.
func zero(dt arrow.DataType) (scalar.Scalar, error) {
	switch dt.ID() {
	case arrow.INT64:
		return scalar.NewInt64Scalar(0), nil
	case arrow.UINT64:
		return scalar.NewUint64Scalar(0), nil
	case arrow.FLOAT64:
		return scalar.NewFloat64Scalar(0), nil
	case arrow.DECIMAL128:
		return scalar.NewDecimal128Scalar(decimal128.Num{}, dt), nil
	case arrow.DURATION:
		return scalar.NewDurationScalar(0, dt), nil
	}
	return nil, fmt.Errorf("%w: no zero of sum type %s", arrow.ErrNotImplemented, dt)
}

// meanOf is the mean: a float64 (NaN without valid values when the options
// allow a result), and for decimal128(p, s) a decimal128(p, s) rounded half
// away from zero (null without valid values), as Arrow C++'s.
func meanOf(r engine.Result, dt arrow.DataType, null bool) (scalar.Scalar, error) {
	if r.Mean == nil {
		return nil, notApplicable("mean", dt)
	}
	if vt, ok := valueType(dt).(*arrow.Decimal128Type); ok {
		if null || r.Count == 0 {
			return scalar.MakeNullScalar(vt), nil
		}
		return scalar.NewDecimal128Scalar(decimal128.FromBigInt(roundedQuo(r.SumExact, r.Count)), vt), nil
	}
	switch {
	case null:
		return scalar.MakeNullScalar(arrow.PrimitiveTypes.Float64), nil
	case r.Count == 0:
		return scalar.NewFloat64Scalar(math.NaN()), nil
	}
	return r.Mean, nil
}

// roundedQuo is sum / count rounded half away from zero (count > 0).
func roundedQuo(sum *big.Int, count int64) *big.Int {
	n := big.NewInt(count)
	q, rem := new(big.Int).QuoRem(sum, n, new(big.Int))
	if rem.Abs(rem).Lsh(rem, 1).Cmp(n) >= 0 {
		q.Add(q, big.NewInt(int64(sum.Sign())))
	}
	return q
}

func minMaxOf(r engine.Result, dt arrow.DataType, null bool) (scalar.Scalar, error) {
	if r.Min == nil || r.Max == nil {
		return nil, notApplicable("min_max", dt)
	}
	return pair(r.Min, r.Max, "min", "max", null), nil
}

func firstLastOf(r engine.Result, dt arrow.DataType, null bool) (scalar.Scalar, error) {
	if r.First == nil || r.Last == nil {
		return nil, notApplicable("first_last", dt)
	}
	return pair(r.First, r.Last, "first", "last", null), nil
}

// pair is the struct scalar {an: a, bn: b}, or a struct of nulls.
func pair(a, b scalar.Scalar, an, bn string, null bool) scalar.Scalar {
	vt := a.DataType()
	st := arrow.StructOf(arrow.Field{Name: an, Type: vt, Nullable: true}, arrow.Field{Name: bn, Type: vt, Nullable: true})
	s := scalar.NewStructScalar([]scalar.Scalar{a, b}, st)
	if null {
		return nullLike(s)
	}
	return s
}

// pick returns the finish of an aggregate that is one field of the result
// (null without a valid value: the engine's).
func pick(fn string, field func(engine.Result) scalar.Scalar) finish {
	return func(r engine.Result, dt arrow.DataType, null bool) (scalar.Scalar, error) {
		s := field(r)
		if s == nil {
			return nil, notApplicable(fn, dt)
		}
		if null {
			return nullLike(s), nil
		}
		return s, nil
	}
}

// countImpl is count: the engine's counts for the types it aggregates, the
// input's own null count for the others and for structs (whose nulls Arrow
// counts, not their leaves'), a scalar's validity for a scalar.
func countImpl(e *engine.Engine) compute.MetaFunctionImpl {
	return func(ctx context.Context, opts compute.FunctionOptions, args ...compute.Datum) (compute.Datum, error) {
		mode := CountOnlyValid
		switch v := opts.(type) {
		case nil:
		case CountOptions:
			mode = v.Mode
		case *CountOptions:
			if v != nil {
				mode = v.Mode
			}
		default:
			return nil, fmt.Errorf("%w: want CountOptions, got %s", arrow.ErrInvalid, opts.TypeName())
		}
		valid, nulls, err := counts(ctx, e, args[0])
		if err != nil {
			return nil, err
		}
		n := valid
		switch mode {
		case CountOnlyNull:
			n = nulls
		case CountAll:
			n = valid + nulls
		}
		return compute.NewDatum(scalar.NewInt64Scalar(n)), nil
	}
}

// counts are the valid and null values of a datum.
func counts(ctx context.Context, e *engine.Engine, arg compute.Datum) (valid, nulls int64, err error) {
	if d, ok := arg.(*compute.ScalarDatum); ok {
		if d.Value.IsValid() {
			return 1, 0, nil
		}
		return 0, 1, nil
	}
	if ad, ok := arg.(compute.ArrayLikeDatum); ok && ad.Type().ID() != arrow.STRUCT {
		r, err := aggregate(ctx, e, agg.Count|agg.NullCount, arg)
		if err == nil {
			return r.Count, r.NullCount, nil
		}
		if !errors.Is(err, arrow.ErrNotImplemented) {
			return 0, 0, err
		}
	}
	switch d := arg.(type) {
	case *compute.ArrayDatum:
		n := int64(d.Value.NullN())
		return int64(d.Value.Len()) - n, n, nil
	case *compute.ChunkedDatum:
		n := int64(d.Value.NullN())
		return int64(d.Value.Len()) - n, n, nil
	}
	return 0, 0, fmt.Errorf("%w: count takes an array, chunked array or scalar, not %s", arrow.ErrInvalid, arg.Kind())
}
