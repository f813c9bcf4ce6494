package column

import "fmt"

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
