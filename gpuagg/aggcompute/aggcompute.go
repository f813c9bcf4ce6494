// Package aggcompute plugs arrowagg's aggregates into Arrow Go's compute
// function registry: sum, min_max, count and mean, and the ordered first,
// last, first_last, arg_min and arg_max, as meta functions, with options
// equivalent to Arrow C++'s ScalarAggregateOptions and CountOptions. Arrow Go
// v17 has none of these functions.
//
//	aggcompute.Register(compute.GetFunctionRegistry(), engine)
//	out, err := compute.CallFunction(ctx, "sum", nil, compute.NewDatum(arr))
//
// Results are Arrow scalars with Arrow C++'s types: sum is int64 for signed
// integers, uint64 for unsigned ones and booleans, float64 for floats,
// decimal128(38, scale) for decimals; min_max is a struct scalar {min, max} of
// the input's type; count is int64; mean is float64; first and last are of
// the input's type and first_last a struct {first, last}; arg_min and arg_max
// are the int64 row of the first minimum / maximum (null without values). An integer sum that does
// not fit int64 / uint64 is an error wrapping ErrOverflow that gives the exact
// value (engine.Result.SumExact has it too); it never wraps around.
package aggcompute

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/compute"
	"github.com/apache/arrow/go/v17/arrow/compute/exec"
	"github.com/apache/arrow/go/v17/arrow/scalar"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/engine"
)

// ScalarAggregateOptions are the options of sum, min_max and mean, as Arrow
// C++'s: with SkipNulls false any null makes the result null; fewer than
// MinCount valid values make it null.
type ScalarAggregateOptions struct {
	SkipNulls bool
	MinCount  uint32
}

// TypeName implements compute.FunctionOptions.
func (ScalarAggregateOptions) TypeName() string { return "ScalarAggregateOptions" }

// DefaultScalarAggregateOptions are Arrow's defaults: skip nulls, min_count 1.
func DefaultScalarAggregateOptions() ScalarAggregateOptions {
	return ScalarAggregateOptions{SkipNulls: true, MinCount: 1}
}

// CountMode selects what count counts.
type CountMode uint8

// The count modes, as Arrow C++'s CountOptions.
const (
	CountOnlyValid CountMode = iota
	CountOnlyNull
	CountAll
)

// CountOptions are the options of count.
type CountOptions struct{ Mode CountMode }

// TypeName implements compute.FunctionOptions.
func (CountOptions) TypeName() string { return "CountOptions" }

// ErrOverflow is wrapped by the error of a sum that does not fit its type.
var ErrOverflow = errors.New("sum overflows its result type")

// Register adds sum, min_max, count and mean to reg, computed by e (a nil e
// means a CPU engine with default options). It fails if reg already has a
// function of one of these names.
func Register(reg compute.FunctionRegistry, e *engine.Engine) error {
	if e == nil {
		var err error
		if e, err = engine.New(engine.WithDevice(engine.DeviceCPU)); err != nil {
			return err
		}
	}
	fns := []struct {
		name, summary string
		opts          string
		impl          compute.MetaFunctionImpl
	}{
		{"sum", "Compute the sum of a numeric array", "ScalarAggregateOptions", aggregator(e, agg.Sum, sumOf)},
		{"min_max", "Compute the minimum and maximum values of an array", "ScalarAggregateOptions", aggregator(e, agg.Min|agg.Max, minMaxOf)},
		{"mean", "Compute the mean of a numeric array", "ScalarAggregateOptions", aggregator(e, agg.Mean, meanOf)},
		{"count", "Count the number of null / non-null values", "CountOptions", countImpl(e)},
		{"first", "Compute the first non-null value in row order", "ScalarAggregateOptions", aggregator(e, agg.First, pick("first", func(r engine.Result) scalar.Scalar { return r.First }))},
		{"last", "Compute the last non-null value in row order", "ScalarAggregateOptions", aggregator(e, agg.Last, pick("last", func(r engine.Result) scalar.Scalar { return r.Last }))},
		{"first_last", "Compute the first and last non-null values in row order", "ScalarAggregateOptions", aggregator(e, agg.First|agg.Last, firstLastOf)},
		{"arg_min", "Compute the index of the first minimum", "ScalarAggregateOptions", aggregator(e, agg.ArgMin, pick("arg_min", func(r engine.Result) scalar.Scalar { return r.ArgMin }))},
		{"arg_max", "Compute the index of the first maximum", "ScalarAggregateOptions", aggregator(e, agg.ArgMax, pick("arg_max", func(r engine.Result) scalar.Scalar { return r.ArgMax }))},
	}
	for _, f := range fns {
		fn := compute.NewMetaFunction(f.name, compute.Unary(), compute.FunctionDoc{
			Summary: f.summary, ArgNames: []string{"array"}, OptionsType: f.opts,
		}, f.impl)
		if !reg.AddFunction(fn, false) {
			return fmt.Errorf("aggcompute: registry already has a function %q", f.name)
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

// finish picks one aggregate out of a result.
type finish func(r engine.Result, dt arrow.DataType) (scalar.Scalar, error)

func aggregator(e *engine.Engine, aggs agg.Set, pick finish) compute.MetaFunctionImpl {
	return func(ctx context.Context, opts compute.FunctionOptions, args ...compute.Datum) (compute.Datum, error) {
		o := DefaultScalarAggregateOptions()
		switch v := opts.(type) {
		case nil:
		case ScalarAggregateOptions:
			o = v
		case *ScalarAggregateOptions:
			o = *v
		default:
			return nil, fmt.Errorf("%w: want ScalarAggregateOptions, got %s", arrow.ErrInvalid, opts.TypeName())
		}
		r, err := aggregate(ctx, e, aggs|agg.Count|agg.NullCount, args[0])
		if err != nil {
			return nil, err
		}
		dt := args[0].(compute.ArrayLikeDatum).Type()
		s, err := pick(r, dt)
		if err != nil {
			return nil, err
		}
		if (!o.SkipNulls && r.NullCount > 0) || r.Count < int64(o.MinCount) {
			s = nullLike(s)
		}
		return compute.NewDatum(s), nil
	}
}

// nullLike returns a null scalar of s's type (a struct of nulls for min_max).
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

func sumOf(r engine.Result, dt arrow.DataType) (scalar.Scalar, error) {
	if r.Sum == nil {
		return nil, notApplicable("sum", dt)
	}
	if r.SumOverflow {
		return nil, fmt.Errorf("%w: sum of %s is %s", ErrOverflow, dt, r.SumExact)
	}
	return r.Sum, nil
}

func minMaxOf(r engine.Result, dt arrow.DataType) (scalar.Scalar, error) {
	if r.Min == nil || r.Max == nil {
		return nil, notApplicable("min_max", dt)
	}
	vt := r.Min.DataType()
	st := arrow.StructOf(arrow.Field{Name: "min", Type: vt, Nullable: true}, arrow.Field{Name: "max", Type: vt, Nullable: true})
	return scalar.NewStructScalar([]scalar.Scalar{r.Min, r.Max}, st), nil
}

// pick returns the finish of an aggregate that is one field of the result.
func pick(fn string, field func(engine.Result) scalar.Scalar) finish {
	return func(r engine.Result, dt arrow.DataType) (scalar.Scalar, error) {
		s := field(r)
		if s == nil {
			return nil, notApplicable(fn, dt)
		}
		return s, nil
	}
}

func firstLastOf(r engine.Result, dt arrow.DataType) (scalar.Scalar, error) {
	if r.First == nil || r.Last == nil {
		return nil, notApplicable("first_last", dt)
	}
	vt := r.First.DataType()
	st := arrow.StructOf(arrow.Field{Name: "first", Type: vt, Nullable: true}, arrow.Field{Name: "last", Type: vt, Nullable: true})
	return scalar.NewStructScalar([]scalar.Scalar{r.First, r.Last}, st), nil
}

func meanOf(r engine.Result, dt arrow.DataType) (scalar.Scalar, error) {
	if r.Mean == nil {
		return nil, notApplicable("mean", dt)
	}
	return r.Mean, nil
}

func countImpl(e *engine.Engine) compute.MetaFunctionImpl {
	return func(ctx context.Context, opts compute.FunctionOptions, args ...compute.Datum) (compute.Datum, error) {
		mode := CountOnlyValid
		switch v := opts.(type) {
		case nil:
		case CountOptions:
			mode = v.Mode
		case *CountOptions:
			mode = v.Mode
		default:
			return nil, fmt.Errorf("%w: want CountOptions, got %s", arrow.ErrInvalid, opts.TypeName())
		}
		r, err := aggregate(ctx, e, agg.Count|agg.NullCount, args[0])
		if err != nil {
			return nil, err
		}
		n := r.Count
		switch mode {
		case CountOnlyNull:
			n = r.NullCount
		case CountAll:
			n = r.Count + r.NullCount
		}
		return compute.NewDatum(scalar.NewInt64Scalar(n)), nil
	}
}
