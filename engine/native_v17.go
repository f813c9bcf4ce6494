package engine

import "github.com/apache/arrow/go/v17/arrow"

// nativeDecimal128 is, for a decimal type this Arrow version has natively
// besides decimal128 and decimal256 (in Arrow Go v18, decimal32 and
// decimal64: arrow18/engine/native_v18.go, the hand-written counterpart of
// this file), the decimal128 of the same precision and scale: the type its
// results answer in (Result), as for a NarrowDecimalType column. ok is
// false for every other type. Arrow Go v17 has none.
func nativeDecimal128(arrow.DataType) (d *arrow.Decimal128Type, ok bool) { return nil, false }
