package aggcompute_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/compute"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/gpuagg/aggcompute"
)

// tri is an expected boolean result: null, false or true.
type tri int8

const (
	null tri = iota
	no
	yes
)

func (v tri) String() string { return [...]string{"null", "false", "true"}[v] }

// triOf is the tri of a boolean scalar.
func triOf(t *testing.T, s scalar.Scalar) tri {
	t.Helper()
	b, ok := s.(*scalar.Boolean)
	require.True(t, ok, "result %T, want a boolean scalar", s)
	switch {
	case !b.IsValid():
		return null
	case b.Value:
		return yes
	}
	return no
}

// fromJSON is an array of type dt from JSON.
func fromJSON(t *testing.T, mem memory.Allocator, dt arrow.DataType, js string) arrow.Array {
	t.Helper()
	arr, _, err := array.FromJSON(mem, dt, strings.NewReader(js))
	require.NoError(t, err, js)
	return arr
}

// chunked is a chunked array of type dt, one chunk per JSON text.
func chunked(t *testing.T, mem memory.Allocator, dt arrow.DataType, chunks ...string) *arrow.Chunked {
	t.Helper()
	arrs := make([]arrow.Array, len(chunks))
	for i, js := range chunks {
		arrs[i] = fromJSON(t, mem, dt, js)
	}
	ch := arrow.NewChunked(dt, arrs)
	for _, a := range arrs {
		a.Release()
	}
	return ch
}

// The option sets of the truth tables: Arrow C++'s
// ScalarAggregateOptions(skip_nulls, min_count) for skip_nulls true and
// false, min_count 1 (the default) and 0.
var (
	skip1 = aggcompute.ScalarAggregateOptions{}
	keep1 = aggcompute.ScalarAggregateOptions{KeepNulls: true}
	skip0 = aggcompute.ScalarAggregateOptions{MinCount: new(uint32)}
	keep0 = aggcompute.ScalarAggregateOptions{KeepNulls: true, MinCount: new(uint32)}
)

// anyAllCase is one input and its any and all under skip1, keep1, skip0 and
// keep0, in that order.
type anyAllCase struct {
	name     string
	arg      func(t *testing.T, mem memory.Allocator) any // an arrow.Array, *arrow.Chunked or scalar.Scalar
	any, all [4]tri
}

// The answers of the table are Arrow C++'s, derived from BooleanAnyImpl and
// BooleanAllImpl (cpp/src/arrow/compute/kernels/aggregate_basic.cc), with
// count the valid values, has_nulls whether there is a null, any whether a
// valid value is true and all whether none is false:
//
//	any: null if (!skip_nulls && !any && has_nulls) || count < min_count, else any
//	all: null if (!skip_nulls && all && has_nulls) || count < min_count, else all
//
// The inputs are those of Arrow C++'s TestAnyKernel.Basics and
// TestAllKernel.Basics (cpp/src/arrow/compute/kernels/aggregate_test.cc),
// chunked ones included, whose answers for inputs with a valid value agree
// with these; the empty and all-null inputs are null under the default
// min_count 1 (apache/arrow#38596: pc.all([None]) is null), false (any) and
// true (all) with min_count 0.
func anyAllCases() []anyAllCase {
	arr := func(js string) func(*testing.T, memory.Allocator) any {
		return func(t *testing.T, mem memory.Allocator) any {
			return fromJSON(t, mem, arrow.FixedWidthTypes.Boolean, js)
		}
	}
	chunks := func(js ...string) func(*testing.T, memory.Allocator) any {
		return func(t *testing.T, mem memory.Allocator) any {
			return chunked(t, mem, arrow.FixedWidthTypes.Boolean, js...)
		}
	}
	// long is 100 values, true but a null at 3 and a false at 77: slices of
	// it have offsets that are not multiples of 8.
	long := func(offset, n int) func(*testing.T, memory.Allocator) any {
		return func(t *testing.T, mem memory.Allocator) any {
			b := array.NewBooleanBuilder(mem)
			defer b.Release()
			for i := range 100 {
				switch i {
				case 3:
					b.AppendNull()
				case 77:
					b.Append(false)
				default:
					b.Append(true)
				}
			}
			all := b.NewArray()
			defer all.Release()
			return array.NewSlice(all, int64(offset), int64(offset+n))
		}
	}
	sc := func(s scalar.Scalar) func(*testing.T, memory.Allocator) any {
		return func(*testing.T, memory.Allocator) any { return s }
	}
	return []anyAllCase{
		// Arrow C++'s inputs.
		{"[]", arr(`[]`), [4]tri{null, null, no, no}, [4]tri{null, null, yes, yes}},
		{"[false]", arr(`[false]`), [4]tri{no, no, no, no}, [4]tri{no, no, no, no}},
		{"[true, false]", arr(`[true, false]`), [4]tri{yes, yes, yes, yes}, [4]tri{no, no, no, no}},
		{"[null, null, null]", arr(`[null, null, null]`), [4]tri{null, null, no, null}, [4]tri{null, null, yes, null}},
		{"[false, false, false]", arr(`[false, false, false]`), [4]tri{no, no, no, no}, [4]tri{no, no, no, no}},
		{"[false, false, false, null]", arr(`[false, false, false, null]`), [4]tri{no, null, no, null}, [4]tri{no, no, no, no}},
		{"[true, null, true, true]", arr(`[true, null, true, true]`), [4]tri{yes, yes, yes, yes}, [4]tri{yes, null, yes, null}},
		{"[false, null, false, true]", arr(`[false, null, false, true]`), [4]tri{yes, yes, yes, yes}, [4]tri{no, no, no, no}},
		{"[true, null, false, true]", arr(`[true, null, false, true]`), [4]tri{yes, yes, yes, yes}, [4]tri{no, no, no, no}},
		{"chunks [] [true]", chunks(`[]`, `[true]`), [4]tri{yes, yes, yes, yes}, [4]tri{yes, yes, yes, yes}},
		{"chunks [true, true, null] [true, null]", chunks(`[true, true, null]`, `[true, null]`), [4]tri{yes, yes, yes, yes}, [4]tri{yes, null, yes, null}},
		{"chunks [false, false, false] [false]", chunks(`[false, false, false]`, `[false]`), [4]tri{no, no, no, no}, [4]tri{no, no, no, no}},
		{"chunks [false, null] [null, false]", chunks(`[false, null]`, `[null, false]`), [4]tri{no, null, no, null}, [4]tri{no, no, no, no}},
		{"chunks [true, null] [null, false]", chunks(`[true, null]`, `[null, false]`), [4]tri{yes, yes, yes, yes}, [4]tri{no, no, no, no}},
		{"chunks [false, null] [null, true]", chunks(`[false, null]`, `[null, true]`), [4]tri{yes, yes, yes, yes}, [4]tri{no, no, no, no}},

		// A valid value beside a null: the Kleene cases.
		{"[true, null]", arr(`[true, null]`), [4]tri{yes, yes, yes, yes}, [4]tri{yes, null, yes, null}},
		{"[false, null]", arr(`[false, null]`), [4]tri{no, null, no, null}, [4]tri{no, no, no, no}},
		{"[true]", arr(`[true]`), [4]tri{yes, yes, yes, yes}, [4]tri{yes, yes, yes, yes}},
		{"[null]", arr(`[null]`), [4]tri{null, null, no, null}, [4]tri{null, null, yes, null}},

		// Chunked arrays without a valid value.
		{"no chunks", chunks(), [4]tri{null, null, no, no}, [4]tri{null, null, yes, yes}},
		{"chunks [] []", chunks(`[]`, `[]`), [4]tri{null, null, no, no}, [4]tri{null, null, yes, yes}},
		{"chunks [null] [null]", chunks(`[null]`, `[null]`), [4]tri{null, null, no, null}, [4]tri{null, null, yes, null}},
		{"chunks [] [null, null] []", chunks(`[]`, `[null, null]`, `[]`), [4]tri{null, null, no, null}, [4]tri{null, null, yes, null}},

		// Slices: rows 0..76 (trues and the null), 4..99 (trues and the
		// false), 70..76 (trues).
		{"slice 0+77", long(0, 77), [4]tri{yes, yes, yes, yes}, [4]tri{yes, null, yes, null}},
		{"slice 4+96", long(4, 96), [4]tri{yes, yes, yes, yes}, [4]tri{no, no, no, no}},
		{"slice 70+7", long(70, 7), [4]tri{yes, yes, yes, yes}, [4]tri{yes, yes, yes, yes}},

		// Scalars: one row (Arrow C++'s Consume of a scalar counts
		// is_valid).
		{"scalar true", sc(scalar.NewBooleanScalar(true)), [4]tri{yes, yes, yes, yes}, [4]tri{yes, yes, yes, yes}},
		{"scalar false", sc(scalar.NewBooleanScalar(false)), [4]tri{no, no, no, no}, [4]tri{no, no, no, no}},
		{"scalar null", sc(scalar.MakeNullScalar(arrow.FixedWidthTypes.Boolean)), [4]tri{null, null, no, null}, [4]tri{null, null, yes, null}},
	}
}

// release releases an argument made by an anyAllCase.
func release(arg any) {
	switch v := arg.(type) {
	case arrow.Array:
		v.Release()
	case *arrow.Chunked:
		v.Release()
	}
}

// TestAnyAllTruthTable: any and all of arrays, chunked arrays, slices and
// scalars under both null rules and min_count 1 and 0 are Arrow C++'s.
func TestAnyAllTruthTable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	optSets := [4]aggcompute.ScalarAggregateOptions{skip1, keep1, skip0, keep0}
	optNames := [4]string{"skip_nulls, min_count 1", "keep nulls, min_count 1", "skip_nulls, min_count 0", "keep nulls, min_count 0"}
	for _, c := range anyAllCases() {
		arg := c.arg(t, mem)
		for i, o := range optSets {
			require.Equal(t, c.any[i], triOf(t, call(t, ctx, "any", o, arg)), "any(%s), %s", c.name, optNames[i])
			require.Equal(t, c.all[i], triOf(t, call(t, ctx, "all", o, arg)), "all(%s), %s", c.name, optNames[i])
		}
		// nil options are the defaults, skip_nulls and min_count 1.
		require.Equal(t, c.any[0], triOf(t, call(t, ctx, "any", nil, arg)), "any(%s), nil options", c.name)
		require.Equal(t, c.all[0], triOf(t, call(t, ctx, "all", nil, arg)), "all(%s), nil options", c.name)
		release(arg)
	}
}

// TestAnyAllMinCount: fewer valid values than min_count make any and all
// null even when a valid value decides them; as many give the answer.
// (Arrow C++: "|| this->count < options.min_count" in both Finalize.)
func TestAnyAllMinCount(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	minCount := func(keep bool, n uint32) aggcompute.ScalarAggregateOptions {
		return aggcompute.ScalarAggregateOptions{KeepNulls: keep, MinCount: &n}
	}
	for _, c := range []struct {
		js       string
		keep     bool
		min      uint32
		any, all tri
	}{
		{`[true, true, null]`, false, 3, null, null}, // 2 valid values
		{`[true, true, null]`, true, 3, null, null},
		{`[true, true, null]`, false, 2, yes, yes},
		{`[true, true, null]`, true, 2, yes, null},
		{`[false, false, null]`, true, 3, null, null}, // a false decides all, but too few values
		{`[false, false, null]`, true, 2, null, no},
		{`[true, false, true, null]`, false, 3, yes, no},
		{`[true, false, true, null]`, true, 3, yes, no},
		{`[true, false, true, null]`, true, 4, null, null},
		{`[true, true, true, null]`, true, 3, yes, null},
		{`[true, true, true, null]`, false, 3, yes, yes},
		{`[true, true, true, null]`, false, 4, null, null},
	} {
		arr := fromJSON(t, mem, arrow.FixedWidthTypes.Boolean, c.js)
		o := minCount(c.keep, c.min)
		require.Equal(t, c.any, triOf(t, call(t, ctx, "any", o, arr)), "any(%s) keep nulls %v, min_count %d", c.js, c.keep, c.min)
		require.Equal(t, c.all, triOf(t, call(t, ctx, "all", o, arr)), "all(%s) keep nulls %v, min_count %d", c.js, c.keep, c.min)
		arr.Release()
	}
}

// TestAnyAllNotBoolean: any and all of another type, as in Arrow C++ (whose
// only kernel is boolean's), are errors wrapping arrow.ErrNotImplemented
// that name the function and the type; options of another kind are
// arrow.ErrInvalid.
func TestAnyAllNotBoolean(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	ints := fromJSON(t, mem, arrow.PrimitiveTypes.Int64, `[1, 0, null]`)
	defer ints.Release()
	strs := fromJSON(t, mem, arrow.BinaryTypes.String, `["true"]`)
	defer strs.Release()
	lists := fromJSON(t, mem, arrow.ListOf(arrow.FixedWidthTypes.Boolean), `[[true], null]`)
	defer lists.Release()
	indices := fromJSON(t, mem, arrow.PrimitiveTypes.Int8, `[0, 1, 0]`)
	defer indices.Release()
	dictValues := fromJSON(t, mem, arrow.FixedWidthTypes.Boolean, `[true, false]`)
	defer dictValues.Release()
	dict := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.FixedWidthTypes.Boolean}, indices, dictValues)
	defer dict.Release()
	nulls := array.NewNull(2)
	defer nulls.Release()
	chunkedInts := chunked(t, mem, arrow.PrimitiveTypes.Int32, `[1]`, `[0]`)
	defer chunkedInts.Release()

	for _, fn := range []string{"any", "all"} {
		for _, arg := range []any{ints, strs, lists, dict, nulls, chunkedInts, scalar.NewFloat64Scalar(1), scalar.MakeNullScalar(arrow.Null)} {
			in := compute.NewDatum(arg)
			dt := in.(compute.ArrayLikeDatum).Type()
			_, err := compute.CallFunction(ctx, fn, nil, in)
			in.Release()
			require.ErrorIs(t, err, arrow.ErrNotImplemented, "%s(%s)", fn, dt)
			require.ErrorContains(t, err, "'"+fn+"'")
			require.ErrorContains(t, err, dt.String())
		}
		bools := fromJSON(t, mem, arrow.FixedWidthTypes.Boolean, `[true]`)
		in := compute.NewDatum(bools)
		_, err := compute.CallFunction(ctx, fn, aggcompute.CountOptions{}, in)
		in.Release()
		bools.Release()
		require.ErrorIs(t, err, arrow.ErrInvalid, fn)
	}
}

// TestCountAll: count_all is the number of rows, nulls included (Arrow
// C++'s CountAllImpl adds each batch's length), of every type: the same
// number as count with CountOptions{Mode: CountAll}.
func TestCountAll(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := registryCtx(t)
	ints := fromJSON(t, mem, arrow.PrimitiveTypes.Int64, `[1, null, 3]`)
	defer ints.Release()
	empty := fromJSON(t, mem, arrow.PrimitiveTypes.Int64, `[]`)
	defer empty.Release()
	allNull := fromJSON(t, mem, arrow.PrimitiveTypes.Float64, `[null, null]`)
	defer allNull.Release()
	bools := fromJSON(t, mem, arrow.FixedWidthTypes.Boolean, `[true, null, false, null]`)
	defer bools.Release()
	strs := fromJSON(t, mem, arrow.BinaryTypes.String, `["a", null, "", "b", null]`)
	defer strs.Release()
	lists := fromJSON(t, mem, arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[1], null, [], [null]]`)
	defer lists.Release()
	structs := fromJSON(t, mem, arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), `[{"a": 1}, null, {"a": null}]`)
	defer structs.Release()
	nulls := array.NewNull(5)
	defer nulls.Release()
	slice := array.NewSlice(strs, 1, 4)
	defer slice.Release()
	ch := chunked(t, mem, arrow.PrimitiveTypes.Int64, `[1, null, 3]`, `[]`, `[null, 5]`)
	defer ch.Release()
	noChunks := chunked(t, mem, arrow.PrimitiveTypes.Int64)
	defer noChunks.Release()
	nullChunks := arrow.NewChunked(arrow.Null, []arrow.Array{nulls, nulls})
	defer nullChunks.Release()

	for _, c := range []struct {
		name string
		arg  any
		rows int64
	}{
		{"int64 with a null", ints, 3},
		{"empty", empty, 0},
		{"all null", allNull, 2},
		{"booleans", bools, 4},
		{"strings", strs, 5},
		{"lists", lists, 4},
		{"structs", structs, 3},
		{"null type", nulls, 5},
		{"slice", slice, 3},
		{"chunked", ch, 5},
		{"no chunks", noChunks, 0},
		{"null chunks", nullChunks, 10},
		{"scalar", scalar.NewInt64Scalar(7), 1},
		{"null scalar", scalar.MakeNullScalar(arrow.PrimitiveTypes.Int64), 1},
		{"null-type scalar", scalar.MakeNullScalar(arrow.Null), 1},
	} {
		got := call(t, ctx, "count_all", nil, c.arg)
		require.True(t, arrow.TypeEqual(arrow.PrimitiveTypes.Int64, got.DataType()), "%s: %s", c.name, got.DataType())
		require.Equal(t, c.rows, got.(*scalar.Int64).Value, c.name)
		require.Equal(t, c.rows, call(t, ctx, "count", aggcompute.CountOptions{Mode: aggcompute.CountAll}, c.arg).(*scalar.Int64).Value, c.name)
	}

	// No options, as in Arrow C++; one argument, as Register says.
	in := compute.NewDatum(ints)
	defer in.Release()
	for _, opts := range []compute.FunctionOptions{aggcompute.CountOptions{Mode: aggcompute.CountAll}, aggcompute.ScalarAggregateOptions{}} {
		_, err := compute.CallFunction(ctx, "count_all", opts, in)
		require.ErrorIs(t, err, arrow.ErrInvalid, "%#v", opts)
		require.ErrorContains(t, err, "no options")
	}
	_, err := compute.CallFunction(ctx, "count_all", nil)
	require.ErrorIs(t, err, arrow.ErrInvalid)
	_, err = compute.CallFunction(ctx, "count_all", nil, in, in)
	require.ErrorIs(t, err, arrow.ErrInvalid)
}

// TestNewFunctionsDocs: the registry's FunctionDoc of the new functions
// names Arrow C++'s options type (none for count_all) and says how
// count_all differs from Arrow C++'s nullary one.
func TestNewFunctionsDocs(t *testing.T) {
	reg := compute.NewRegistry()
	require.NoError(t, aggcompute.Register(reg, nil))
	for name, opts := range map[string]string{"count_all": "", "any": "ScalarAggregateOptions", "all": "ScalarAggregateOptions"} {
		fn, ok := reg.GetFunction(name)
		require.True(t, ok, name)
		require.Equal(t, opts, fn.Doc().OptionsType, name)
		require.Equal(t, compute.Unary(), fn.Arity(), name)
		require.NotEmpty(t, fn.Doc().Description, name)
	}
	fn, _ := reg.GetFunction("count_all")
	require.Contains(t, fn.Doc().Description, "nullary")
}
