package column

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
)

// Kind is the physical storage of a column's values.
type Kind uint8

// The storage kinds. Temporal types map to the integer kind of their storage.
const (
	Unsupported Kind = iota
	Int8
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Float32
	Float64
	Bool
	Decimal128
	Binary      // 32-bit offsets: string, binary
	LargeBinary // 64-bit offsets: large_string, large_binary
	// Opaque values are counted, never ordered nor summed: lists, maps,
	// run-end encoded columns, unions, decimal256, views and the other types no
	// backend folds the values of. Their views carry the validity alone (no
	// Values); see KindOf.
	Opaque
	// Float16 values are IEEE half-precision floats (2 bytes), aggregated
	// as the float family does, in float64.
	Float16
	// FixedSizeBinary values are byte strings of the width of their type
	// (arrow.FixedSizeBinaryType's ByteWidth, View.ElemWidth), ordered
	// bytewise like the bytes family.
	FixedSizeBinary
	// Decimal32 and Decimal64 values are the 4- and 8-byte unscaled
	// integers of decimal32 and decimal64 (NarrowDecimalType), aggregated
	// as the decimal family does, in 128 bits.
	Decimal32
	Decimal64
)

var kindNames = [...]string{"unsupported", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
	"float32", "float64", "bool", "decimal128", "binary", "large_binary", "opaque", "float16", "fixed_size_binary",
	"decimal32", "decimal64"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Width is the size in bytes of one value of a fixed-width kind (0 for bool,
// whose values are bits, for the variable-width kinds, for FixedSizeBinary,
// whose width is its type's (View.ElemWidth), and for Opaque, whose values
// are not read).
func (k Kind) Width() int {
	switch k {
	case Int8, Uint8:
		return 1
	case Int16, Uint16, Float16:
		return 2
	case Int32, Uint32, Float32, Decimal32:
		return 4
	case Int64, Uint64, Float64, Decimal64:
		return 8
	case Decimal128:
		return 16
	}
	return 0
}

// Family groups kinds that share one aggregate state layout.
type Family uint8

// The families.
const (
	FamilyNone Family = iota
	FamilySigned
	FamilyUnsigned
	FamilyFloat
	FamilyBool
	FamilyDecimal
	FamilyBytes
	// FamilyCounts is the family of Opaque values: its states know count
	// and null_count alone.
	FamilyCounts
)

var familyNames = [...]string{"none", "signed", "unsigned", "float", "bool", "decimal", "bytes", "counts"}

func (f Family) String() string {
	if int(f) < len(familyNames) {
		return familyNames[f]
	}
	return fmt.Sprintf("family(%d)", uint8(f))
}

// Family is the aggregate family of a kind.
func (k Kind) Family() Family {
	switch k {
	case Int8, Int16, Int32, Int64:
		return FamilySigned
	case Uint8, Uint16, Uint32, Uint64:
		return FamilyUnsigned
	case Float16, Float32, Float64:
		return FamilyFloat
	case Bool:
		return FamilyBool
	case Decimal128, Decimal32, Decimal64:
		return FamilyDecimal
	case Binary, LargeBinary, FixedSizeBinary:
		return FamilyBytes
	case Opaque:
		return FamilyCounts
	}
	return FamilyNone
}

// KindOf returns the storage kind of values of type dt. For a dictionary type it
// is the kind of the dictionary's values (see IndexKind for the indices).
// NarrowDecimalType (decimal32, decimal64) is Decimal32 or Decimal64.
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
func KindOf(dt arrow.DataType) (Kind, error) {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		if _, err := KindOf(t.IndexType); err != nil {
			return Unsupported, err
		}
		return KindOf(t.ValueType)
	case *NarrowDecimalType:
		if t.BitWidth == 32 {
			return Decimal32, nil
		}
		return Decimal64, nil
	case arrow.ExtensionType:
		// Counted by the storage's validity.
		if _, err := KindOf(t.StorageType()); err != nil {
			return Unsupported, notImplemented(fmt.Sprintf("type %s (storage %s) is not supported", dt, t.StorageType()))
		}
		return Opaque, nil
	}
	switch dt.ID() {
	case arrow.INT8:
		return Int8, nil
	case arrow.INT16:
		return Int16, nil
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return Int32, nil
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return Int64, nil
	case arrow.UINT8:
		return Uint8, nil
	case arrow.UINT16:
		return Uint16, nil
	case arrow.UINT32:
		return Uint32, nil
	case arrow.UINT64:
		return Uint64, nil
	case arrow.FLOAT32:
		return Float32, nil
	case arrow.FLOAT64:
		return Float64, nil
	case arrow.BOOL:
		return Bool, nil
	case arrow.DECIMAL128:
		return Decimal128, nil
	case arrow.FLOAT16:
		return Float16, nil
	case arrow.FIXED_SIZE_BINARY:
		return FixedSizeBinary, nil
	case arrow.STRING, arrow.BINARY:
		return Binary, nil
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return LargeBinary, nil
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW, arrow.MAP,
		arrow.RUN_END_ENCODED, arrow.DECIMAL256, arrow.STRING_VIEW,
		arrow.BINARY_VIEW, arrow.INTERVAL_MONTHS, arrow.INTERVAL_DAY_TIME, arrow.INTERVAL_MONTH_DAY_NANO, arrow.NULL,
		arrow.STRUCT, arrow.SPARSE_UNION, arrow.DENSE_UNION:
		return Opaque, nil
	}
	return Unsupported, notImplemented(fmt.Sprintf("type %s is not supported", dt))
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
func IndexKind(dt *arrow.DictionaryType) (Kind, error) {
	k, err := KindOf(dt.IndexType)
	if err != nil {
		return Unsupported, err
	}
	if f := k.Family(); f != FamilySigned && f != FamilyUnsigned {
		return Unsupported, notImplemented(fmt.Sprintf("dictionary index type %s is not an integer", dt.IndexType))
	}
	return k, nil
}
