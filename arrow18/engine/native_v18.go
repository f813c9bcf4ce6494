package engine

import "github.com/apache/arrow-go/v18/arrow"

// nativeDecimal128 is, for Arrow Go v18's native decimal32(p, s) and
// decimal64(p, s), decimal128(p, s): the type their min, max, first and
// last answer in, and whose sum, decimal128(38, s), is theirs. ok is false
// for every other type. (This file is written by hand: the v17 front end's
// engine/native_v17.go, which has no such types, is not generated here.)
//
// Arrow C++'s semantics, and why the results are decimal128:
//
//   - Sum: Arrow C++ (since 21.0, apache/arrow#44184, "Increase precision of
//     decimals in sum aggregates") sums a decimal into the decimal of the
//     same width and its maximum precision: SumLikeInit calls
//     WidenDecimalToMaxPrecision (cpp/src/arrow/compute/kernels/
//     aggregate_basic.inc.cc; hash_aggregate_numeric.cc for hash_sum), so
//     decimal128(p, s) sums to decimal128(38, s), and the rule would make
//     decimal32(p, s) decimal32(9, s) and decimal64(p, s) decimal64(18, s).
//     But C++ registers its sum, mean and product kernels (and hash_sum,
//     hash_mean) for decimal128 and decimal256 only (aggregate_basic.cc's
//     RegisterScalarAggregateBasic; RegisterHashAggregateNumeric: "Type
//     parameters are ignored ... decimal128(1, 1), decimal256(1, 1)"); the
//     decimal32/decimal64 logic was taken out of #44184 before it merged
//     ("Removed all the Decimal32/64 logic (except in
//     WidenDecimalToMaxPrecision)"). A C++ user sums a decimal32 column cast
//     to decimal128(p, s), which is exact, and gets decimal128(38, s): the
//     sum here.
//   - Mean: C++'s mean of a decimal is the decimal of the input's type,
//     rounded half away from zero (MeanKernelInit: PromoteDecimal false;
//     mean_doc: "a decimal with the same bit-width/precision/scale");
//     Result.Mean is float64 for every type (package gpuagg/aggcompute makes
//     the C++ decimal of it for decimal128).
//   - Min, max, first, last: of the input's type in C++ (min_max,
//     first_last). arrow-go v18 (v18.8.0) has the types and arrays of
//     decimal32 and decimal64 but no scalars of them: package scalar has no
//     Decimal32 or Decimal64, and scalar.MakeNullScalar panics for their
//     type ids. So they answer as decimal128(p, s), the exact value of the
//     same precision and scale, as NarrowDecimalType's do in the v17 front
//     end: a native column and a NarrowDecimalType one answer alike.
//
// Sums are exact as for every decimal: one past 38 digits (not reachable
// from decimal32 and decimal64 before 2^63 rows of decimal64) follows
// Result's SumOverflow and SumWide.
func nativeDecimal128(dt arrow.DataType) (*arrow.Decimal128Type, bool) {
	switch t := dt.(type) {
	case *arrow.Decimal32Type:
		return &arrow.Decimal128Type{Precision: t.Precision, Scale: t.Scale}, true
	case *arrow.Decimal64Type:
		return &arrow.Decimal128Type{Precision: t.Precision, Scale: t.Scale}, true
	}
	return nil, false
}
