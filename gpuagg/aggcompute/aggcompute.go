// Package aggcompute plugs arrowagg's aggregates into Arrow Go's compute
// function registry, which in Arrow Go v17 has none of them:
//
//	aggcompute.Register(compute.GetFunctionRegistry(), engine)
//	out, err := compute.CallFunction(ctx, "sum", nil, compute.NewDatum(arr))
//
// Register adds fourteen meta functions of one argument, with the names,
// options and result types of Arrow C++'s:
//
//   - sum, mean, min, max and min_max (a struct {min, max}), with
//     ScalarAggregateOptions;
//   - count, with CountOptions, and count_all, the number of rows, nulls
//     included, without options (Arrow C++ declares count_all nullary; here
//     it takes the datum whose rows it counts: see Register);
//   - any and all of booleans, with ScalarAggregateOptions and, when they
//     keep nulls, Kleene logic;
//   - the ordered first, last and first_last (a struct {first, last}), and
//     arg_min and arg_max (arrowagg's own: the int64 row of the first minimum
//     or maximum), with ScalarAggregateOptions.
//
// The argument is an array, a chunked array or a scalar. Results are Arrow
// scalars with Arrow C++'s types: sum is int64 for signed integers, uint64
// for unsigned ones and booleans, float64 for floats, decimal128(38, scale)
// for decimals; mean is float64, and for decimal128(p, s) a decimal128(p, s),
// the exact mean rounded half away from zero; min, max, first and last are of
// the input's type (a dictionary's value type); count and count_all are
// int64; any and all are boolean. decimal32(p, s) and decimal64(p, s)
// answer min, max, first, last and mean as decimal128(p, s), which Arrow Go
// has scalars of (engine.ValueType).
//
// Nulls and empty inputs follow Arrow C++. The zero ScalarAggregateOptions
// (and nil options) are Arrow's defaults: nulls skipped, and a null result
// without a valid value. With MinCount 0 the sum of an input without valid
// values is 0 and the mean NaN (null for decimals); min, max, first, last,
// arg_min and arg_max are null without a valid value whatever the options.
// any is true if a valid value is true and all is false if a valid value
// is false; otherwise, with KeepNulls, a null makes them null (Kleene
// logic), and without it any is false and all true. Fewer valid values than
// MinCount make them null whatever they are: by default, then, any and all
// of an empty or all-null input are null, and with MinCount 0 false and
// true.
//
// Errors: a type an aggregate does not apply to (the sum of a string, any of
// an integer) or that arrowagg does not read (a list; the null type, except
// for count and count_all) is an error wrapping arrow.ErrNotImplemented;
// count and count_all accept every type, and any and all only booleans (not
// dictionaries of them: Arrow C++ has no kernel for those either). An
// integer sum that does not fit int64 / uint64 is an error wrapping
// ErrOverflow that gives the exact value (engine.Result.SumWide has it too);
// it never wraps around.
//
// The package exists once per Arrow Go version, the same code over each
// version's types: github.com/arrowagg/arrowagg/gpuagg/aggcompute for arrow-go v17, and
// github.com/arrowagg/arrowagg/arrow18/gpuagg/aggcompute (module
// github.com/arrowagg/arrowagg/arrow18) for arrow-go v18, generated from
// the v17 one by scripts/gen-arrow18.sh. Both run on the same core, which
// imports no Arrow version, and their partial states merge.
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

// ScalarAggregateOptions are the options of every function but count and
// count_all:
// Arrow C++'s ScalarAggregateOptions, whose zero value is Arrow's defaults
// (skip_nulls = true, min_count = 1).
type ScalarAggregateOptions struct {
	// KeepNulls is Arrow's skip_nulls = false: any null in the input makes
	// the result null, except for any and all, whose Kleene logic keeps the
	// answer a valid true (any) or false (all) decides. The zero value skips
	// nulls.
	KeepNulls bool
	// MinCount is Arrow's min_count: with fewer valid values than
	// *MinCount the result is null. Nil means Arrow's default, 1. With 0,
	// the sum of an input without valid values is 0, its mean NaN, its any
	// false and its all true (Arrow C++'s); min, max, first, last, arg_min,
	// arg_max and the mean of decimals are null without a valid value
	// whatever MinCount is.
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

// function is one function Register adds; desc, when set, is its
// FunctionDoc's Description.
type function struct {
	name, summary, desc, opts string
	impl                      func(e *engine.Engine) compute.MetaFunctionImpl
}

// Descriptions of the functions that differ from Arrow C++'s declaration or
// need its rule spelled out (Arrow C++'s any_doc, all_doc and count_all_doc,
// cpp/src/arrow/compute/kernels/aggregate_basic.cc).
const (
	countAllDesc = "Arrow C++ declares count_all nullary, without options: it counts the rows of\n" +
		"the batches it is fed. A Go MetaFunction sees only the datums it is called with,\n" +
		"so here it takes one, the array, chunked array or scalar (one row) whose rows\n" +
		"it counts, nulls included, as count with CountOptions{Mode: CountAll} does."
	anyDesc = "Null values are ignored by default. If KeepNulls is set (skip_nulls = false),\n" +
		"Kleene logic is used: true if a value is true, else null if a value is null,\n" +
		"else false. Fewer valid values than MinCount (default 1) give null."
	allDesc = "Null values are ignored by default. If KeepNulls is set (skip_nulls = false),\n" +
		"Kleene logic is used: false if a value is false, else null if a value is null,\n" +
		"else true. Fewer valid values than MinCount (default 1) give null."
)

// functions are the functions Register adds, in the order of the package
// documentation.
var functions = []function{
	{"sum", "Compute the sum of a numeric array", "", "ScalarAggregateOptions", scalarAgg(agg.Sum, sumOf)},
	{"mean", "Compute the mean of a numeric array", "", "ScalarAggregateOptions", scalarAgg(agg.Mean, meanOf)},
	{"min", "Compute the minimum value of an array", "", "ScalarAggregateOptions", scalarAgg(agg.Min, pick("min", func(r engine.Result) scalar.Scalar { return r.Min }))},
	{"max", "Compute the maximum value of an array", "", "ScalarAggregateOptions", scalarAgg(agg.Max, pick("max", func(r engine.Result) scalar.Scalar { return r.Max }))},
	{"min_max", "Compute the minimum and maximum values of an array", "", "ScalarAggregateOptions", scalarAgg(agg.Min|agg.Max, minMaxOf)},
	{"count", "Count the number of null / non-null values", "", "CountOptions", countImpl},
	{"count_all", "Count the number of rows", countAllDesc, "", countAllImpl},
	{"any", "Test whether any element in a boolean array evaluates to true", anyDesc, "ScalarAggregateOptions",
		boolAgg("any", agg.Max, func(r engine.Result) scalar.Scalar { return r.Max }, true)},
	{"all", "Test whether all elements in a boolean array evaluate to true", allDesc, "ScalarAggregateOptions",
		boolAgg("all", agg.Min, func(r engine.Result) scalar.Scalar { return r.Min }, false)},
	{"first", "Compute the first non-null value in row order", "", "ScalarAggregateOptions", scalarAgg(agg.First, pick("first", func(r engine.Result) scalar.Scalar { return r.First }))},
	{"last", "Compute the last non-null value in row order", "", "ScalarAggregateOptions", scalarAgg(agg.Last, pick("last", func(r engine.Result) scalar.Scalar { return r.Last }))},
	{"first_last", "Compute the first and last non-null values in row order", "", "ScalarAggregateOptions", scalarAgg(agg.First|agg.Last, firstLastOf)},
	{"arg_min", "Compute the index of the first minimum", "", "ScalarAggregateOptions", scalarAgg(agg.ArgMin, pick("arg_min", func(r engine.Result) scalar.Scalar { return r.ArgMin }))},
	{"arg_max", "Compute the index of the first maximum", "", "ScalarAggregateOptions", scalarAgg(agg.ArgMax, pick("arg_max", func(r engine.Result) scalar.Scalar { return r.ArgMax }))},
}

// Register adds the fourteen functions of the package to reg: sum, mean,
// min, max, min_max, count, count_all, any, all, first, last, first_last,
// arg_min and arg_max, computed by e (a nil e means a CPU engine with default
// options).
//
// Each takes one argument. Arrow C++ declares count_all nullary: an exec
// plan feeds it batches, whose rows it counts. A Go MetaFunction is given
// nothing but the datums it is called with, so a nullary count_all would have
// no rows to count; here count_all(x) counts the rows of x (1 for a scalar),
// nulls included, the same number as count with CountOptions{Mode: CountAll}.
// It takes no options, as in Arrow C++: options given to it are an error
// wrapping arrow.ErrInvalid.
//
// It adds every one of them or none: if reg already has a function of one of
// these names (a second Register, say), it adds nothing and returns an error
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
			Summary: f.summary, Description: f.desc, ArgNames: []string{"array"}, OptionsType: f.opts,
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
	return kleeneAgg(aggs, nil, fin)
}

// kleeneAgg is scalarAgg for a function of Kleene logic, whose answer some
// valid values decide whatever the nulls are (a true decides any, a false
// all): decided says whether r's do, and then KeepNulls does not make the
// result null. MinCount still does. A nil decided decides nothing: with
// KeepNulls any null makes the result null, Arrow C++'s rule for the other
// aggregates.
func kleeneAgg(aggs agg.Set, decided func(r engine.Result) bool, fin finish) func(e *engine.Engine) compute.MetaFunctionImpl {
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
			undecided := decided == nil || !decided(r)
			null := (o.KeepNulls && r.NullCount > 0 && undecided) || r.Count < o.minCount()
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
// away from zero (null without valid values), as Arrow C++'s; for
// decimal32(p, s) and decimal64(p, s) the same decimal128(p, s).
func meanOf(r engine.Result, dt arrow.DataType, null bool) (scalar.Scalar, error) {
	if r.Mean == nil {
		return nil, notApplicable("mean", dt)
	}
	if vt, ok := engine.ValueType(dt).(*arrow.Decimal128Type); ok { // decimal32 and decimal64 as decimal128
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

// boolAgg is any (extreme agg.Max, field r.Max, decisive true) or all
// (agg.Min, r.Min, false) of booleans, Arrow C++'s BooleanAnyImpl and
// BooleanAllImpl (cpp/src/arrow/compute/kernels/aggregate_basic.cc): the
// answer is decisive when the extreme of the valid values is decisive (a
// true's maximum, a false's minimum), and then no null changes it; else it
// is !decisive, or null when the options keep a null or the valid values
// are fewer than MinCount. Their Finalize reads
//
//	any: null if (!skip_nulls && !any && has_nulls) || count < min_count
//	all: null if (!skip_nulls && all && has_nulls) || count < min_count
//
// Any type but boolean, as in Arrow C++ (whose only kernel is boolean's), is
// an error wrapping arrow.ErrNotImplemented, before any aggregation.
func boolAgg(fn string, extreme agg.Set, field func(engine.Result) scalar.Scalar, decisive bool) func(e *engine.Engine) compute.MetaFunctionImpl {
	decided := func(r engine.Result) bool {
		b, ok := field(r).(*scalar.Boolean)
		return ok && b.IsValid() && b.Value == decisive
	}
	inner := kleeneAgg(extreme, decided, func(r engine.Result, _ arrow.DataType, null bool) (scalar.Scalar, error) {
		if null {
			return scalar.MakeNullScalar(arrow.FixedWidthTypes.Boolean), nil
		}
		if decided(r) {
			return scalar.NewBooleanScalar(decisive), nil
		}
		return scalar.NewBooleanScalar(!decisive), nil
	})
	return func(e *engine.Engine) compute.MetaFunctionImpl {
		impl := inner(e)
		return func(ctx context.Context, opts compute.FunctionOptions, args ...compute.Datum) (compute.Datum, error) {
			if d, ok := args[0].(compute.ArrayLikeDatum); ok && d.Type().ID() != arrow.BOOL {
				return nil, notApplicable(fn, d.Type())
			}
			return impl(ctx, opts, args...)
		}
	}
}

// countImpl is count, of the mode its CountOptions give.
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
		if mode > CountAll {
			return nil, fmt.Errorf("%w: count mode %d (want CountOnlyValid, CountOnlyNull or CountAll)", arrow.ErrInvalid, mode)
		}
		return countOf(ctx, e, args[0], mode)
	}
}

// countAllImpl is count_all: the rows of its argument, nulls included. It
// takes no options, like Arrow C++'s (which declares none).
func countAllImpl(e *engine.Engine) compute.MetaFunctionImpl {
	return func(ctx context.Context, opts compute.FunctionOptions, args ...compute.Datum) (compute.Datum, error) {
		if opts != nil {
			return nil, fmt.Errorf("%w: function 'count_all' takes no options, got %s", arrow.ErrInvalid, opts.TypeName())
		}
		return countOf(ctx, e, args[0], CountAll)
	}
}

// countOf is the number of values of a datum that mode counts, as an int64
// scalar: the engine's counts for the types it aggregates, the input's own
// null count for the others and for structs (whose nulls Arrow counts, not
// their leaves'), a scalar's validity for a scalar.
func countOf(ctx context.Context, e *engine.Engine, arg compute.Datum, mode CountMode) (compute.Datum, error) {
	valid, nulls, err := counts(ctx, e, arg)
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
