package arrow17

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowagg/arrowagg/column"
)

// KindOf returns the storage kind of values of type dt. For a dictionary type it
// is the kind of the dictionary's values (see IndexKind for the indices).
// NarrowDecimalType (decimal32, decimal64) is Decimal32 or Decimal64, and
// so are Arrow Go v18's native decimal32 and decimal64 (nativeKind).
// Types whose values arrowagg neither orders nor sums but whose nulls it
// counts are Opaque: lists (list, large_list, fixed_size_list, list_view,
// large_list_view), maps, run-end encoded columns, unions (sparse and dense:
// a union has no validity of its own, its nulls are those of the child
// values its elements select; see ViewOf), decimal256, string_view and
// binary_view, intervals, null, and other extension types over any of the
// types KindOf accepts. A struct is Opaque
// too, counted by its own validity, where it is the value type of a
// dictionary or the storage of an extension type (Leaves flattens struct
// columns into their fields). It returns Unsupported, with a reason (an
// error that wraps arrow.ErrNotImplemented), for the types arrow-go has
// that none of these are.
func KindOf(dt arrow.DataType) (column.Kind, error) {
	if k, ok := nativeKind(dt); ok { // this Arrow version's own types
		return k, nil
	}
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		if _, err := KindOf(t.IndexType); err != nil {
			return column.Unsupported, err
		}
		return KindOf(t.ValueType)
	case *NarrowDecimalType:
		if t.BitWidth == 32 {
			return column.Decimal32, nil
		}
		return column.Decimal64, nil
	case arrow.ExtensionType:
		// Counted by the storage's validity.
		if _, err := KindOf(t.StorageType()); err != nil {
			return column.Unsupported, notImplemented(fmt.Sprintf("type %s (storage %s) is not supported", dt, t.StorageType()))
		}
		return column.Opaque, nil
	}
	switch dt.ID() {
	case arrow.INT8:
		return column.Int8, nil
	case arrow.INT16:
		return column.Int16, nil
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return column.Int32, nil
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return column.Int64, nil
	case arrow.UINT8:
		return column.Uint8, nil
	case arrow.UINT16:
		return column.Uint16, nil
	case arrow.UINT32:
		return column.Uint32, nil
	case arrow.UINT64:
		return column.Uint64, nil
	case arrow.FLOAT32:
		return column.Float32, nil
	case arrow.FLOAT64:
		return column.Float64, nil
	case arrow.BOOL:
		return column.Bool, nil
	case arrow.DECIMAL128:
		return column.Decimal128, nil
	case arrow.FLOAT16:
		return column.Float16, nil
	case arrow.FIXED_SIZE_BINARY:
		return column.FixedSizeBinary, nil
	case arrow.STRING, arrow.BINARY:
		return column.Binary, nil
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return column.LargeBinary, nil
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW, arrow.MAP,
		arrow.RUN_END_ENCODED, arrow.DECIMAL256, arrow.STRING_VIEW,
		arrow.BINARY_VIEW, arrow.INTERVAL_MONTHS, arrow.INTERVAL_DAY_TIME, arrow.INTERVAL_MONTH_DAY_NANO, arrow.NULL,
		arrow.STRUCT, arrow.SPARSE_UNION, arrow.DENSE_UNION:
		return column.Opaque, nil
	}
	return column.Unsupported, notImplemented(fmt.Sprintf("type %s is not supported", dt))
}

// unsupportedError is why a column cannot be aggregated: its own text,
// wrapping arrow.ErrNotImplemented for errors.Is.
type unsupportedError struct{ msg string }

func (e *unsupportedError) Error() string { return e.msg }

func (e *unsupportedError) Unwrap() error { return arrow.ErrNotImplemented }

// notImplemented is an error of text msg that wraps arrow.ErrNotImplemented.
func notImplemented(msg string) error { return &unsupportedError{msg} }

// IndexKind returns the storage kind of a dictionary type's indices. Its
// errors wrap arrow.ErrNotImplemented.
func IndexKind(dt *arrow.DictionaryType) (column.Kind, error) {
	k, err := KindOf(dt.IndexType)
	if err != nil {
		return column.Unsupported, err
	}
	if f := k.Family(); f != column.FamilySigned && f != column.FamilyUnsigned {
		return column.Unsupported, notImplemented(fmt.Sprintf("dictionary index type %s is not an integer", dt.IndexType))
	}
	return k, nil
}
